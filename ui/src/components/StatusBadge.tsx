// A coloured badge for a task/job status.
const LABELS: Record<string, string> = {
  queued: 'queued',
  running: 'running',
  waiting_human: 'needs you',
  waiting_subtasks: 'waiting on subtasks',
  retry: 'retrying',
  succeeded: 'done',
  failed: 'failed',
  cancelled: 'cancelled',
};

export function StatusBadge({ status }: { status: string }) {
  return (
    <span className={`badge status-${status}`} data-status={status}>
      {LABELS[status] ?? status}
    </span>
  );
}
