// BrowserLoginCard: the card for a job parked on a login page (wait_reason
// browser_login, BrowseWeb). A live view of the task's browser — its
// screenshot (GET …/browser/screenshot, fetched with the token as a blob)
// reloaded about once a second — where a click on the picture clicks the page
// at the same spot (scaled from the shown size to the 1280×800 viewport), a
// field types text into the focused element, and Enter / Tab / Backspace are
// keys. "Done — I have logged in" (POST …/browser/done) requeues the job in
// the same movement with the browser's session. Polling stops when the card
// goes (the job left the park: the composer renders it only while parked).
import { useCallback, useEffect, useRef, useState, type MouseEvent } from 'react';
import { Api, ApiError, browserScreenshot } from '../api';
import { BROWSER_VIEWPORT, type BrowserInput, type Job } from '../types';
import { useToast } from './Toasts';

const REFRESH_MS = 1000;

// The live screenshot of the job's browser as an object URL (the previous
// one revoked when the next arrives, the last on unmount); `refresh()` asks
// for a new one now (after an input).
function useLiveScreenshot(jobId: string) {
  const [src, setSrc] = useState('');
  const [error, setError] = useState('');
  const kick = useRef<() => void>(() => {});
  useEffect(() => {
    let stopped = false;
    let current = '';
    let timer: number | undefined;
    let inFlight = false;
    let again = false;
    const ctrl = new AbortController();
    const load = async () => {
      window.clearTimeout(timer);
      // A hidden tab does not poll; it looks again a second later.
      if (document.hidden) {
        timer = window.setTimeout(() => void load(), REFRESH_MS);
        return;
      }
      inFlight = true;
      try {
        const blob = await browserScreenshot(jobId, ctrl.signal);
        if (stopped) return;
        const url = URL.createObjectURL(blob);
        setSrc(url);
        if (current) URL.revokeObjectURL(current);
        current = url;
        setError('');
      } catch (e) {
        if (stopped) return;
        setError(
          e instanceof ApiError && e.status === 404
            ? 'The agent’s browser is not open right now (it may have closed); no live view.'
            : `Live view unavailable: ${(e as Error).message}`,
        );
      } finally {
        inFlight = false;
      }
      if (stopped) return;
      if (again) {
        again = false;
        void load();
      } else {
        timer = window.setTimeout(() => void load(), REFRESH_MS);
      }
    };
    kick.current = () => {
      if (stopped) return;
      if (inFlight) again = true;
      else void load();
    };
    void load();
    return () => {
      stopped = true;
      window.clearTimeout(timer);
      ctrl.abort();
      kick.current = () => {};
      if (current) URL.revokeObjectURL(current);
    };
  }, [jobId]);
  const refresh = useCallback(() => kick.current(), []);
  return { src, error, refresh };
}

export function BrowserLoginCard({ job, onDone }: { job: Job; onDone: () => void }) {
  const live = useLiveScreenshot(job.id);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const toast = useToast();

  const send = async (input: BrowserInput) => {
    try {
      await Api.browserInput(job.id, input);
    } catch (e) {
      toast(`Not sent to the browser: ${(e as Error).message}`, 'error');
    } finally {
      live.refresh();
    }
  };
  const click = (e: MouseEvent<HTMLImageElement>) => {
    // The picture's own box (inside its border): clientLeft/Top are the
    // border widths, clientWidth/Height the shown size of the page.
    const img = e.currentTarget;
    const r = img.getBoundingClientRect();
    if (img.clientWidth <= 0 || img.clientHeight <= 0) return;
    const scale = (v: number, shown: number, full: number) => Math.min(full - 1, Math.max(0, Math.round((v * full) / shown)));
    void send({
      type: 'click',
      x: scale(e.clientX - r.left - img.clientLeft, img.clientWidth, BROWSER_VIEWPORT.width),
      y: scale(e.clientY - r.top - img.clientTop, img.clientHeight, BROWSER_VIEWPORT.height),
    });
  };
  const typeText = async () => {
    if (!text) return;
    const t = text;
    setText('');
    await send({ type: 'text', text: t });
  };
  const done = async () => {
    setBusy(true);
    try {
      await Api.browserDone(job.id);
      toast('Logged in — the agent continues with your session', 'ok');
    } catch (e) {
      toast(`Done failed: ${(e as Error).message}`, 'error');
    } finally {
      setBusy(false);
      onDone();
    }
  };

  return (
    <div className="approval card browser-login" role="group" aria-label="Log in for the agent" data-testid="browser-login">
      <div className="approval-title">Log in for the agent</div>
      <p className="approval-reason">
        A page asks for a login. Click and type in the agent’s browser below, then press Done: the agent continues with
        your session. What you type goes to the page only, not to the agent.
      </p>
      <div className="live-view">
        {live.src ? (
          <img
            src={live.src}
            alt="Live view of the agent's browser"
            width={BROWSER_VIEWPORT.width}
            height={BROWSER_VIEWPORT.height}
            onClick={click}
            draggable={false}
            data-testid="live-view"
          />
        ) : (
          !live.error && <p className="muted live-view-wait">Loading the live view…</p>
        )}
      </div>
      {live.error && (
        <p className="error live-view-error" role="status">
          {live.error}
        </p>
      )}
      <form
        className="row wrap"
        onSubmit={(e) => {
          e.preventDefault();
          void typeText();
        }}
      >
        <input
          aria-label="Text to type"
          className="live-view-text"
          type="text"
          autoComplete="off"
          value={text}
          placeholder="Text to type into the focused field"
          onChange={(e) => setText(e.target.value)}
        />
        <button type="submit" disabled={!text}>
          Type
        </button>
        {(['Enter', 'Tab', 'Backspace'] as const).map((key) => (
          <button key={key} type="button" aria-label={`Press ${key}`} title={`Press ${key} in the agent's browser`} onClick={() => void send({ type: 'key', key })}>
            {key}
          </button>
        ))}
        <button type="button" className="primary live-view-done" disabled={busy} onClick={() => void done()}>
          Done — I have logged in
        </button>
      </form>
    </div>
  );
}
