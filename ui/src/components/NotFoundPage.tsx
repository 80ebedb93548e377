// NotFoundPage: a deep link to a task that does not exist (or that this
// token may not see, or a malformed id).
export function NotFoundPage({ taskId, onBack }: { taskId: string; onBack: () => void }) {
  return (
    <section className="not-found" data-testid="not-found" aria-label="Task not found">
      <h2>Task not found</h2>
      <p className="muted">
        No task <code>{taskId.slice(0, 80)}</code> here: it does not exist, or it belongs to someone else.
      </p>
      <button className="primary" onClick={onBack}>
        All tasks
      </button>
    </section>
  );
}
