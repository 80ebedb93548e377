// ChatPane (seed 000 §4: ChatPane → ChatMessageFeed → ChatMessage): one
// task's live conversation — header with status and Cancel / Continue, the
// feed, the composer with approval cards, and the activity timeline.
import { useEffect, useMemo, useState } from 'react';
import { Api } from '../api';
import { buildFeed } from '../feed';
import { useTaskLive } from '../useTaskLive';
import { TERMINAL } from '../types';
import { ActivityTimeline } from './ActivityTimeline';
import { ChatComposerPanel } from './ChatComposerPanel';
import { ChatMessageFeed } from './ChatMessageFeed';
import { StatusBadge } from './StatusBadge';
import { useToast } from './Toasts';

export function ChatPane({ taskId, onBack, onChanged }: { taskId: string; onBack: () => void; onChanged: () => void }) {
  const live = useTaskLive(taskId);
  const [showActivity, setShowActivity] = useState(false);
  const toast = useToast();
  const { detail } = live;
  const jobs = detail?.jobs ?? [];
  const latest = detail?.latest_job ?? null;
  const feed = useMemo(() => buildFeed(jobs, live.comments, live.deltas), [jobs, live.comments, live.deltas]);
  const active = latest !== null && !TERMINAL.has(latest.status);
  // The task list shows statuses too: refresh it when this task's changes.
  const latestStatus = latest ? `${latest.id}:${latest.status}` : '';
  useEffect(() => {
    if (latestStatus) onChanged();
  }, [latestStatus, onChanged]);

  const cancel = async () => {
    try {
      const r = await Api.cancel(taskId);
      toast(r.stopping ? 'Stopping the running job…' : 'Task cancelled', 'ok');
      live.refresh();
      onChanged();
    } catch (e) {
      toast(`Cancel failed: ${(e as Error).message}`, 'error');
    }
  };
  const doContinue = async () => {
    try {
      await Api.continueTask(taskId, '');
      toast('Continuing in a new job', 'ok');
      live.refresh();
      onChanged();
    } catch (e) {
      toast(`Continue failed: ${(e as Error).message}`, 'error');
    }
  };

  return (
    <section className="chat-pane" aria-label="Chat">
      <div className="chat-header">
        <button className="ghost back" onClick={onBack} aria-label="Back to tasks">
          ←
        </button>
        <div className="chat-title">
          <h2>{detail ? detail.task.title || detail.task.instruction.slice(0, 80) : 'Loading…'}</h2>
          {detail && (
            <small className="muted">
              {detail.task.piece}
              {detail.task.space ? ` · space ${detail.task.space}` : ''} · {detail.task.llm_call_count} model calls ·{' '}
              {detail.task.tool_call_count} tool calls
            </small>
          )}
        </div>
        {detail && <StatusBadge status={latest?.status ?? detail.task.status} />}
        <span className={`conn conn-${live.connection}`} title="live connection" data-testid="connection">
          {live.connection === 'open' ? 'live' : live.connection}
        </span>
        {active && (
          <button className="danger" onClick={cancel}>
            Cancel
          </button>
        )}
        {latest && !active && (
          <button onClick={doContinue} title="Start a new job that continues from this conversation">
            Continue
          </button>
        )}
        <button className="ghost" aria-pressed={showActivity} onClick={() => setShowActivity((s) => !s)}>
          Activity
        </button>
      </div>
      {live.error && <p className="error pad">{live.error}</p>}
      <div className="chat-body">
        <ChatMessageFeed items={feed} />
        {showActivity && <ActivityTimeline events={live.events} />}
      </div>
      {detail && (
        <ChatComposerPanel
          taskId={taskId}
          job={latest}
          requests={detail.pending_requests}
          comments={live.comments}
          onChanged={() => {
            live.refresh();
            onChanged();
          }}
        />
      )}
    </section>
  );
}
