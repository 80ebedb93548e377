// ContinueDialog: "Continue with another piece" on a finished, failed or
// cancelled task (seed 000 §1 API_CONTINUE; docs/api.md "Continue") — a
// piece from GET /api/pieces (the task's own preselected; sent only when it
// differs, "" keeping the task's) and a note for the agent, then
// POST /api/local/tasks/:id/continue. The server starts a new job on the same
// task (continued_from_job_id, a handoff comment carrying the note), which
// the chat pane then shows; `onContinued` gets it. A refusal (409 while a job
// still runs, a 400 naming `piece` or `note`) stays in the dialog, with the
// named control marked invalid and focused. Escape or a press outside closes
// it (useDismiss), and the focus returns to the page.
import { useEffect, useRef, useState } from 'react';
import { Api, ApiError } from '../api';
import type { Job, Piece } from '../types';
import { useDismiss } from '../useDismiss';

export function ContinueDialog({
  taskId,
  piece: currentPiece,
  onClose,
  onContinued,
}: {
  taskId: string;
  piece: string;
  onClose: () => void;
  onContinued: (job: Job) => void;
}) {
  const [pieces, setPieces] = useState<Piece[]>([]);
  const [piece, setPiece] = useState(currentPiece);
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [errorField, setErrorField] = useState('');
  const form = useRef<HTMLFormElement>(null);
  useDismiss(true, form, onClose);

  useEffect(() => {
    Api.pieces()
      .then((r) => setPieces(r.pieces))
      .catch((e: unknown) => setError(`Cannot list the pieces: ${(e as Error).message}`));
  }, []);
  // The task's piece is always offered, even before (or without) the list.
  const options = pieces.some((p) => p.name === currentPiece) || !currentPiece ? pieces : [{ name: currentPiece, description: '' }, ...pieces];

  useEffect(() => {
    if (errorField) form.current?.querySelector<HTMLElement>(`[name="${CSS.escape(errorField)}"]`)?.focus();
  }, [errorField]);

  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    setErrorField('');
    try {
      const r = await Api.continueTask(taskId, note.trim(), piece !== currentPiece ? piece : '');
      onContinued(r.job);
    } catch (err) {
      const field = err instanceof ApiError ? err.field : '';
      setError(field ? `${field}: ${(err as Error).message}` : (err as Error).message);
      setErrorField(field);
      setBusy(false);
    }
  };
  const invalid = (name: string) =>
    errorField === name ? { 'aria-invalid': true as const, 'aria-describedby': 'continue-error' } : {};

  return (
    <div className="modal-backdrop">
      <form ref={form} className="modal card" role="dialog" aria-modal="true" aria-label="Continue with another piece" onSubmit={submit}>
        <h2>Continue with another piece</h2>
        <p className="muted">
          A new job continues this task from where it ended: the piece's movements, with the conversation so far and your note.
        </p>
        <label>
          Piece
          <select name="piece" value={piece} autoFocus onChange={(e) => setPiece(e.target.value)} aria-label="Piece" {...invalid('piece')}>
            {options.map((p) => (
              <option key={p.name} value={p.name} title={p.description}>
                {p.name}
                {p.name === currentPiece ? ' (this task’s)' : ''}
              </option>
            ))}
          </select>
        </label>
        <label htmlFor="continue-note">Note for the agent (optional)</label>
        <textarea
          id="continue-note"
          name="note"
          rows={4}
          value={note}
          onChange={(e) => setNote(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void submit(e);
          }}
          placeholder="What the next job should do differently or next (Ctrl+Enter continues)"
          {...invalid('note')}
        />
        {error && (
          <p className="error" role="alert" id="continue-error" data-field={errorField || undefined}>
            {error}
          </p>
        )}
        <div className="row end">
          <button type="button" className="ghost" onClick={onClose}>
            Close
          </button>
          <button type="submit" className="primary" disabled={busy}>
            Continue with this piece
          </button>
        </div>
      </form>
    </div>
  );
}
