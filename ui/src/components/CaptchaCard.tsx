// CaptchaCard: the card for a job parked on a CAPTCHA (wait_reason captcha).
// The jobs of one space that meet the same screen wait together: once a
// person has solved it, "Mark CAPTCHA solved" (POST /captcha-pool/resolve
// with the job's captcha_space_id / captcha_screen) requeues every one of
// them the person may resume (their own, and the shared ones of a space),
// and the card says how many resumed. A 404 means nothing they may resume
// waits any more (another person, or a second click, was first).
import { useState } from 'react';
import { Api, ApiError } from '../api';
import { plural } from '../format';
import type { Job } from '../types';
import { useToast } from './Toasts';

export function CaptchaCard({ job, onDone }: { job: Job; onDone: () => void }) {
  const [busy, setBusy] = useState(false);
  const [resumed, setResumed] = useState<number | null>(null);
  const toast = useToast();
  const space = job.captcha_space_id ?? '';
  const screen = job.captcha_screen ?? '';
  const resolve = async () => {
    setBusy(true);
    try {
      const r = await Api.resolveCaptcha(space, screen);
      setResumed(r.resumed);
      toast(`CAPTCHA marked solved — ${plural(r.resumed, 'job')} resumed`, 'ok');
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        setResumed(0);
        toast('Nothing of yours waits on this CAPTCHA any more', 'ok');
        return;
      }
      toast(`Not marked solved: ${(e as Error).message}`, 'error');
    } finally {
      setBusy(false);
      onDone();
    }
  };
  return (
    <div className="approval card" role="group" aria-label="CAPTCHA" data-testid="captcha">
      <div className="approval-title">A CAPTCHA blocks the agent</div>
      <p className="approval-reason">
        Solve the CAPTCHA on the screen <code data-testid="captcha-screen">{screen || '(unnamed)'}</code>, then mark it solved:
        every task you may resume that waits on that screen continues.
      </p>
      {(!space || !screen) && <p className="error">The job does not say which CAPTCHA it waits on; it cannot be marked solved here.</p>}
      <div className="row wrap">
        <button className="primary" disabled={busy || !space || !screen} onClick={() => void resolve()}>
          Mark CAPTCHA solved
        </button>
        {resumed !== null && (
          <span role="status" data-testid="captcha-resumed">
            {plural(resumed, 'job')} resumed
          </span>
        )}
      </div>
    </div>
  );
}
