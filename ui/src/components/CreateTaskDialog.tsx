// The create-task dialog: instruction, piece (from GET /api/pieces) and
// space — a picker filled from GET /api/spaces whose first option is the
// task's own ephemeral workspace (no space sent); a server without the route
// (404) or without spaces offers only that. In demo mode it offers
// instructions that trigger each demo feature; choosing one also picks the
// `chat` piece the demo script answers for. Files may come along (a picker,
// drop onto the dialog, or paste into the instruction; AttachmentPicker).
// Escape or a press on the backdrop closes it.
import { useEffect, useState } from 'react';
import { Api } from '../api';
import type { Piece, Space } from '../types';
import { AttachButton, AttachmentChips, useAttachments } from './AttachmentPicker';
import { useToast } from './Toasts';

export const DEMO_PROMPTS: { label: string; text: string }[] = [
  { label: 'Streamed answer', text: 'Demo: explain what maestro does' },
  { label: 'Tool approval', text: 'Demo: save a note about the meeting' },
  { label: 'Package request', text: 'Demo: plot a chart of the sales data' },
  { label: 'A question for you', text: 'Demo: design a logo for the team' },
  { label: 'Long slow stream', text: 'Demo: tell a long story' },
  { label: 'Retry after a model error', text: 'Demo: survive a flaky model' },
];

export function CreateTaskDialog({ onClose, onCreated, demo }: { onClose: () => void; onCreated: (id: string) => void; demo: boolean }) {
  const [instruction, setInstruction] = useState('');
  const [piece, setPiece] = useState('chat');
  const [space, setSpace] = useState('');
  const [pieces, setPieces] = useState<Piece[]>([]);
  const [spaces, setSpaces] = useState<Space[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const toast = useToast();
  const attached = useAttachments();

  useEffect(() => {
    Api.pieces()
      .then((r) => setPieces(r.pieces))
      .catch(() => setPieces([{ name: 'chat', description: '' }]));
    Api.spaces()
      .then(setSpaces)
      .catch(() => setSpaces([]));
  }, []);
  const chosen = spaces.find((s) => s.name === space);

  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (!instruction.trim()) {
      setError('Write what the agent should do.');
      return;
    }
    setBusy(true);
    try {
      const r = await Api.createTask({ instruction: instruction.trim(), piece, ...(space ? { space } : {}) }, attached.files);
      toast(attached.files.length ? `Task created with ${attached.files.length} file(s)` : 'Task created', 'ok');
      onCreated(r.task.id);
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };

  return (
    <div className="modal-backdrop" onClick={onClose}>
      <form className="modal card" role="dialog" aria-modal="true" aria-label="New task" onSubmit={submit} onClick={(e) => e.stopPropagation()}
        {...attached.dropProps}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.stopPropagation();
            onClose();
          }
        }}>
        <h2>New task</h2>
        <label htmlFor="instruction">Instruction</label>
        <textarea id="instruction" autoFocus rows={5} value={instruction} onChange={(e) => setInstruction(e.target.value)}
          onPaste={attached.onPaste}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void submit(e);
          }}
          placeholder="What should the agent do? (drop or paste files to attach them)" />
        <div className="row wrap attachments-row">
          <AttachButton onFiles={attached.add} />
          <AttachmentChips files={attached.files} onRemove={attached.remove} />
        </div>
        {demo && (
          <div className="demo-prompts" aria-label="Demo instructions">
            {DEMO_PROMPTS.map((p) => (
              <button
                type="button"
                className="chip"
                key={p.label}
                onClick={() => {
                  setInstruction(p.text);
                  setPiece('chat');
                }}
              >
                {p.label}
              </button>
            ))}
          </div>
        )}
        <div className="row wrap">
          <label>
            Piece
            <select value={piece} onChange={(e) => setPiece(e.target.value)} aria-label="Piece">
              {pieces.map((p) => (
                <option key={p.name} value={p.name} title={p.description}>
                  {p.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Space
            <select value={space} onChange={(e) => setSpace(e.target.value)} aria-label="Space">
              <option value="">ephemeral workspace (new for this task)</option>
              {spaces.map((s) => (
                <option key={s.name} value={s.name} title={s.description}>
                  {s.name}
                </option>
              ))}
            </select>
          </label>
        </div>
        {chosen && (
          <p className="space-hint" data-testid="space-hint">
            {chosen.description ? `${chosen.description} · ` : ''}
            {chosen.path} · {chosen.edit_allowed ? 'edits allowed' : 'read-only'} · {chosen.shell_allowed ? 'shell' : 'no shell'} ·{' '}
            {chosen.network_allowed ? 'network' : 'no network'}
          </p>
        )}
        {error && <p className="error" role="alert">{error}</p>}
        <div className="row end">
          <button type="button" className="ghost" onClick={onClose}>
            Close
          </button>
          <button type="submit" className="primary" disabled={busy}>
            Create task
          </button>
        </div>
      </form>
    </div>
  );
}
