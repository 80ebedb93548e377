// ChatPane (seed 000 §4: ChatPane → ChatMessageFeed → ChatMessage): one
// task's live conversation — header (editable title, status, tokens and
// cost, Cancel / Continue / Continue with another piece, Files, Activity),
// the feed, the composer with approval cards, the activity timeline and the
// workspace pane. What the caller's role on the task cannot do (the task's
// `can`, issue 49) is not offered: no Cancel/Continue/rename/composer without
// can.run, no Approve/Deny/raise without can.decide (the server refuses
// them anyway).
import { useCallback, useEffect, useMemo, useState } from 'react';
import { Api } from '../api';
import { buildFeed } from '../feed';
import { plural } from '../format';
import { useTaskLive } from '../useTaskLive';
import { useWorkspace } from '../useWorkspace';
import { OpenFileContext } from '../workspaceLink';
import { TERMINAL } from '../types';
import { ActivityTimeline } from './ActivityTimeline';
import { ChatComposerPanel } from './ChatComposerPanel';
import { ChatMessageFeed } from './ChatMessageFeed';
import { ContinueDialog } from './ContinueDialog';
import { NotFoundPage } from './NotFoundPage';
import { StatusBadge } from './StatusBadge';
import { TaskTitle, taskName } from './TaskTitle';
import { useToast } from './Toasts';
import { UsageSummary } from './UsageSummary';
import { WorkspacePane, type WorkspaceTab } from './WorkspacePane';

export function ChatPane({ taskId, onBack, onChanged }: { taskId: string; onBack: () => void; onChanged: () => void }) {
  const live = useTaskLive(taskId);
  const [showActivity, setShowActivity] = useState(false);
  const [wsOpen, setWsOpen] = useState(false);
  const [wsTab, setWsTab] = useState<WorkspaceTab>('files');
  const [wsPath, setWsPath] = useState('');
  const [continuing, setContinuing] = useState(false);
  const toast = useToast();
  const { detail } = live;
  const jobs = detail?.jobs ?? [];
  const latest = detail?.latest_job ?? null;
  const feed = useMemo(() => buildFeed(jobs, live.comments, live.deltas, live.ledger), [jobs, live.comments, live.deltas, live.ledger]);
  const active = latest !== null && !TERMINAL.has(latest.status);
  // Logical calls (one per card) once the ledger is known; else the server's count.
  const toolCards = live.ledger.length ? feed.filter((i) => i.kind === 'tool').length : undefined;
  // The workspace reloads when a tool call or a job status is recorded.
  const wsVersion = live.events.filter((e) => e.type === 'tool.call' || e.type === 'job.status').length;
  const ws = useWorkspace(taskId, wsOpen, wsVersion);
  // The task list shows statuses too: refresh it when this task's changes.
  const latestStatus = latest ? `${latest.id}:${latest.status}` : '';
  useEffect(() => {
    if (latestStatus) onChanged();
  }, [latestStatus, onChanged]);
  const name = detail ? taskName(detail.task) : '';
  useEffect(() => {
    document.title = live.notFound ? 'Task not found — maestro' : name ? `${name} — maestro` : 'maestro';
    return () => {
      document.title = 'maestro';
    };
  }, [name, live.notFound]);

  const openFile = useCallback((path: string) => {
    setWsPath(path);
    setWsTab('files');
    setWsOpen(true);
  }, []);

  if (live.notFound) return <NotFoundPage taskId={taskId} onBack={onBack} />;

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

  const t = detail?.task;
  // An older server sends no `can`: everything, as before.
  const can = t?.can ?? { run: true, decide: true };
  return (
    <OpenFileContext.Provider value={ws.available ? openFile : null}>
      <section className="chat-pane" aria-label="Chat">
        <div className="chat-header">
          <button className="ghost back" onClick={onBack} aria-label="Back to tasks">
            ←
          </button>
          <div className="chat-title">
            {t ? (
              <TaskTitle
                task={t}
                canRename={can.run}
                onSaved={() => {
                  live.refresh();
                  onChanged();
                }}
              />
            ) : (
              <h2>Loading…</h2>
            )}
            {t && (
              <small className="muted chat-meta" data-testid="chat-meta">
                {t.piece}
                {t.space ? ` · space ${t.space}` : ''}
                {t.team ? ` · team ${t.team}` : ''}
                {t.visibility === 'shared' ? ' · shared' : ''}
                {latest?.profile && latest.profile !== 'default' ? ` · profile ${latest.profile}` : ''} · {plural(t.usage?.llm_calls ?? t.llm_call_count, 'model call')} ·{' '}
                {plural(toolCards ?? t.tool_call_count, 'tool call')}
                {t.usage && t.usage.llm_calls > 0 && (
                  <>
                    {' · '}
                    <UsageSummary usage={t.usage} />
                  </>
                )}
              </small>
            )}
          </div>
          {detail && <StatusBadge status={latest?.status ?? detail.task.status} />}
          <span className={`conn conn-${live.connection}`} title="live connection" data-testid="connection">
            {live.connection === 'open' ? 'live' : live.connection}
          </span>
          {active && can.run && (
            <button className="danger" onClick={cancel}>
              Cancel
            </button>
          )}
          {latest && !active && can.run && (
            <button onClick={doContinue} title="Start a new job that continues from this conversation">
              Continue
            </button>
          )}
          {latest && !active && can.run && (
            <button className="ghost" onClick={() => setContinuing(true)} aria-label="Continue with another piece" title="Pick a piece and write a note for a new job">
              Continue with…
            </button>
          )}
          {ws.available && (
            <button className="ghost" aria-pressed={wsOpen} onClick={() => setWsOpen((o) => !o)}>
              Files
            </button>
          )}
          <button className="ghost" aria-pressed={showActivity} onClick={() => setShowActivity((s) => !s)}>
            Activity
          </button>
        </div>
        {live.error && <p className="error pad">{live.error}</p>}
        <div className="chat-body">
          <div className="chat-main">
            <ChatMessageFeed items={feed} />
            {detail && (
              <ChatComposerPanel
                taskId={taskId}
                job={latest}
                requests={detail.pending_requests}
                comments={live.comments}
                budget={detail.task.budget}
                can={can}
                onChanged={() => {
                  live.refresh();
                  onChanged();
                }}
              />
            )}
          </div>
          {wsOpen && ws.available && (
            <WorkspacePane
              taskId={taskId}
              ws={ws}
              tab={wsTab}
              path={wsPath}
              version={wsVersion}
              onTab={setWsTab}
              onPath={setWsPath}
              onClose={() => setWsOpen(false)}
            />
          )}
          {showActivity && <ActivityTimeline events={live.events} />}
        </div>
        {continuing && t && (
          <ContinueDialog
            taskId={taskId}
            piece={latest?.piece || t.piece}
            onClose={() => setContinuing(false)}
            onContinued={(job) => {
              setContinuing(false);
              toast(`Continuing with ${job.piece} in a new job`, 'ok');
              live.refresh();
              onChanged();
            }}
          />
        )}
      </section>
    </OpenFileContext.Provider>
  );
}
