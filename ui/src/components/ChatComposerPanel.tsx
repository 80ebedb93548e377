// ChatComposerPanel: where the person answers. Shows pending approval cards
// (the write gate refuses comments until they are decided, and says so), an
// ASK question as a question awaiting the answer, the cards of the other
// parks (budget, a browser login's live view, a CAPTCHA), and the message box:
// Enter sends, Shift+Enter is a newline. A comment while the job runs is an
// interjection the agent reads at its next step. Files attach by the picker,
// a drop onto the composer or a paste (AttachmentPicker); a message may be
// files alone. The caller's role on the task (`can`, issue 49) decides what
// is offered: approval cards without can.decide show the request but no
// buttons; without can.run there is no message box (and no live view or
// CAPTCHA card to act on) — a read-only note says why.
import { useEffect, useState } from 'react';
import { Api, ApiError } from '../api';
import type { ApprovalRequest, Budget, Comment, Job, TaskCan } from '../types';
import { AttachButton, AttachmentChips, useAttachments } from './AttachmentPicker';
import { BrowserLoginCard } from './BrowserLoginCard';
import { BudgetExceededCard } from './BudgetExceededCard';
import { CaptchaCard } from './CaptchaCard';
import { MarkdownView } from './MarkdownView';
import { PackageRequestApproval } from './PackageRequestApproval';
import { ToolRequestApproval } from './ToolRequestApproval';
import { useToast } from './Toasts';

const OUTCOME: Record<string, string> = {
  interjection: 'Sent — the agent reads it at its next step',
  reused: 'Sent — added to the queued job',
  followup: 'Sent — a new job picks it up',
};

interface Props {
  taskId: string;
  job: Job | null;
  requests: ApprovalRequest[];
  comments: Comment[];
  budget?: Budget;
  can?: TaskCan;
  onChanged: () => void;
}

export function ChatComposerPanel({ taskId, job, requests, comments, budget, can = { run: true, decide: true }, onChanged }: Props) {
  const [text, setText] = useState('');
  const [gate, setGate] = useState('');
  const [busy, setBusy] = useState(false);
  const toast = useToast();
  const attached = useAttachments();
  const pending = requests.filter((r) => r.status === 'pending');
  // The gate's refusal is about the pending request: gone with it.
  useEffect(() => {
    if (pending.length === 0) setGate('');
  }, [pending.length]);
  const asking = job?.status === 'waiting_human' && job.wait_reason === 'ask';
  const overBudget = job?.status === 'waiting_human' && job.wait_reason === 'budget_exceeded';
  const loginPark = job?.status === 'waiting_human' && job.wait_reason === 'browser_login';
  const captchaPark = job?.status === 'waiting_human' && job.wait_reason === 'captcha';
  const question = asking ? [...comments].reverse().find((c) => c.kind === 'question' && c.job_id === job?.id) : undefined;

  const send = async () => {
    const body = text.trim();
    if ((!body && attached.files.length === 0) || busy) return;
    setBusy(true);
    try {
      const r = await Api.comment(taskId, body, attached.files);
      setText('');
      attached.clear();
      setGate('');
      toast(OUTCOME[r.outcome] ?? 'Sent', 'ok');
      onChanged();
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) {
        setGate(`Not sent: the agent is waiting for your decision on the request above. Approve or deny it first; your text is kept. (${e.message})`);
      } else {
        toast(`Not sent: ${(e as Error).message}`, 'error');
      }
      onChanged();
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="composer" data-testid="composer" {...attached.dropProps}>
      {pending.map((r) =>
        r.kind === 'tool' ? (
          <ToolRequestApproval key={r.id} request={r} onDone={onChanged} canDecide={can.decide} />
        ) : (
          <PackageRequestApproval key={r.id} request={r} onDone={onChanged} canDecide={can.decide} />
        ),
      )}
      {pending.length > 0 && !gate && can.run && <p className="gate-note muted">Messages are held until the request above is decided.</p>}
      {gate && <p className="gate-note error" role="alert">{gate}</p>}
      {overBudget && job && (
        <BudgetExceededCard taskId={taskId} job={job} budget={budget} comments={comments} onDone={onChanged} canDecide={can.decide} canRun={can.run} />
      )}
      {loginPark && job && can.run && <BrowserLoginCard key={job.id} job={job} onDone={onChanged} />}
      {captchaPark && job && can.run && <CaptchaCard key={job.id} job={job} onDone={onChanged} />}
      {asking && (
        <div className="ask card" data-testid="ask-question">
          <div className="label">The agent asks — awaiting your answer</div>
          <MarkdownView className="msg-body" text={question?.body ?? job?.result ?? 'The agent needs your input.'} />
        </div>
      )}
      {!can.run && (
        <p className="muted read-only-note" data-testid="read-only-note">
          {can.decide
            ? 'Your role on this task can decide its requests but not write to it or run it.'
            : 'Your role on this task is read-only: you can follow it, not write to it or decide its requests.'}
        </p>
      )}
      {can.run && (
      <>
      <div className="composer-row">
        <textarea
          aria-label="Message"
          rows={2}
          value={text}
          placeholder={asking ? 'Type your answer…' : job && job.status === 'running' ? 'Tell the agent something while it works…' : 'Write a message…'}
          onChange={(e) => setText(e.target.value)}
          onPaste={attached.onPaste}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              void send();
            }
          }}
        />
        <AttachButton onFiles={attached.add} disabled={busy} />
        <button className="primary" onClick={() => void send()} disabled={busy || (!text.trim() && attached.files.length === 0)}>
          {asking ? 'Answer' : 'Send'}
        </button>
      </div>
      <AttachmentChips files={attached.files} onRemove={attached.remove} />
      <small className="muted hint">Enter sends · Shift+Enter for a new line · drop or paste files to attach them</small>
      </>
      )}
    </div>
  );
}
