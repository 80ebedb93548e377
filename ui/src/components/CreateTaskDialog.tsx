// The create-task dialog: instruction, piece (from GET /api/pieces) and
// space — a picker filled from GET /api/spaces whose first option is the
// task's own ephemeral workspace (no space sent); a server without the route
// (404) or without spaces offers only that. The model profile (from
// GET /api/profiles: names and models, "default" first; the default is sent
// as no `profile`) and the visibility (private / shared) are what the API's
// create takes (seed 000 §1 VALIDATE). A 4xx naming a field is shown in the
// form and marks that control invalid (aria-invalid, focused). In demo mode
// it offers instructions that trigger each demo feature; choosing one also
// picks the `chat` piece the demo script answers for. Files may come along (a
// picker, drop onto the dialog, or paste into the instruction;
// AttachmentPicker). Escape or a press on the backdrop closes it. The
// server lists only the spaces the caller may see (issue 49); a team's space
// shows its team beside the name, and one where the caller's role cannot run
// tasks (viewer, approver: /api/me's teams, else its default_role) is
// offered disabled with the role named.
import { useEffect, useRef, useState } from 'react';
import { Api, ApiError } from '../api';
import type { Me, Piece, Profile, Space, Visibility } from '../types';
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

// The caller's role where a task in `space` would run ("" when unknown).
function roleIn(me: Me | null | undefined, space: Space): string {
  if (!me || me.admin) return '';
  if (!space.team) return me.default_role;
  return me.teams.find((t) => t.team === space.team)?.role ?? 'none';
}
const RUNS = new Set(['', 'operator', 'admin']);
// Whether the caller may run a task outside team spaces (the ephemeral workspace).
const runsOutside = (me: Me | null | undefined) => !me || me.admin || RUNS.has(me.default_role);

export function CreateTaskDialog({
  onClose,
  onCreated,
  demo,
  me,
}: {
  onClose: () => void;
  onCreated: (id: string) => void;
  demo: boolean;
  me?: Me | null;
}) {
  const [instruction, setInstruction] = useState('');
  const [piece, setPiece] = useState('chat');
  const [space, setSpace] = useState('');
  const [profile, setProfile] = useState(''); // "": the default profile
  const [visibility, setVisibility] = useState<Visibility>('private');
  const [pieces, setPieces] = useState<Piece[]>([]);
  const [spaces, setSpaces] = useState<Space[]>([]);
  const [profiles, setProfiles] = useState<Profile[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  // The request field the server's refusal named ("" for none).
  const [errorField, setErrorField] = useState('');
  const form = useRef<HTMLFormElement>(null);
  const toast = useToast();
  const attached = useAttachments();

  useEffect(() => {
    Api.pieces()
      .then((r) => setPieces(r.pieces))
      .catch(() => setPieces([{ name: 'chat', description: '' }]));
    Api.spaces()
      .then((list) => {
        setSpaces(list);
        // Outside team spaces the caller cannot run: preselect a space it can.
        if (!runsOutside(me)) {
          const first = list.find((s) => RUNS.has(roleIn(me, s)));
          if (first) setSpace(first.name);
        }
      })
      .catch(() => setSpaces([]));
    Api.profiles()
      .then(setProfiles)
      .catch(() => setProfiles([]));
    // Once, when the dialog opens (`me` does not change meanwhile).
  }, []);
  const chosen = spaces.find((s) => s.name === space);
  const defaultModel = profiles.find((p) => p.name === 'default')?.model ?? '';

  // Focus the control the server named, once it is marked.
  useEffect(() => {
    if (errorField) form.current?.querySelector<HTMLElement>(`[name="${CSS.escape(errorField)}"]`)?.focus();
  }, [errorField]);

  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (!instruction.trim()) {
      setError('Write what the agent should do.');
      setErrorField('instruction');
      return;
    }
    setBusy(true);
    setErrorField('');
    try {
      const r = await Api.createTask(
        { instruction: instruction.trim(), piece, ...(space ? { space } : {}), ...(profile ? { profile } : {}), visibility },
        attached.files,
      );
      toast(attached.files.length ? `Task created with ${attached.files.length} file(s)` : 'Task created', 'ok');
      onCreated(r.task.id);
    } catch (err) {
      const field = err instanceof ApiError ? err.field : '';
      setError(field ? `${field}: ${(err as Error).message}` : (err as Error).message);
      setErrorField(field);
      setBusy(false);
    }
  };
  // aria-invalid / aria-describedby for the control named `name`.
  const invalid = (name: string) =>
    errorField === name ? { 'aria-invalid': true as const, 'aria-describedby': 'create-task-error' } : {};

  return (
    <div className="modal-backdrop" onClick={onClose}>
      <form ref={form} className="modal card" role="dialog" aria-modal="true" aria-label="New task" onSubmit={submit} onClick={(e) => e.stopPropagation()}
        {...attached.dropProps}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.stopPropagation();
            // Leave the focus on the page (useDismiss says why).
            if (document.activeElement instanceof HTMLElement) document.activeElement.blur();
            onClose();
          }
        }}>
        <h2>New task</h2>
        <label htmlFor="instruction">Instruction</label>
        <textarea id="instruction" name="instruction" autoFocus rows={5} value={instruction} onChange={(e) => setInstruction(e.target.value)}
          {...invalid('instruction')}
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
            <select name="piece" value={piece} onChange={(e) => setPiece(e.target.value)} aria-label="Piece" {...invalid('piece')}>
              {pieces.map((p) => (
                <option key={p.name} value={p.name} title={p.description}>
                  {p.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Space
            <select name="space" value={space} onChange={(e) => setSpace(e.target.value)} aria-label="Space" {...invalid('space')}>
              <option value="" disabled={!runsOutside(me)}>
                ephemeral workspace (new for this task){runsOutside(me) ? '' : ` (your role: ${me?.default_role})`}
              </option>
              {spaces.map((s) => {
                const role = roleIn(me, s);
                return (
                  <option key={s.name} value={s.name} title={s.description} disabled={!RUNS.has(role)}>
                    {s.name}
                    {s.team ? ` · team ${s.team}` : ''}
                    {RUNS.has(role) ? '' : ` (your role: ${role})`}
                  </option>
                );
              })}
            </select>
          </label>
        </div>
        <div className="row wrap">
          <label>
            Model profile
            <select name="profile" value={profile} onChange={(e) => setProfile(e.target.value)} aria-label="Model profile" {...invalid('profile')}>
              <option value="">default{defaultModel ? ` · ${defaultModel}` : ''}</option>
              {profiles
                .filter((p) => p.name !== 'default')
                .map((p) => (
                  <option key={p.name} value={p.name}>
                    {p.name}
                    {p.model ? ` · ${p.model}` : ''}
                  </option>
                ))}
            </select>
          </label>
          <label>
            Visibility
            <select name="visibility" value={visibility} onChange={(e) => setVisibility(e.target.value as Visibility)} aria-label="Visibility"
              {...invalid('visibility')}>
              <option value="private">private — only you</option>
              <option value="shared">shared — every user</option>
            </select>
          </label>
        </div>
        {chosen && (
          <p className="space-hint" data-testid="space-hint">
            {chosen.team ? `team ${chosen.team} · ` : ''}
            {chosen.description ? `${chosen.description} · ` : ''}
            {chosen.path} · {chosen.edit_allowed ? 'edits allowed' : 'read-only'} · {chosen.shell_allowed ? 'shell' : 'no shell'} ·{' '}
            {chosen.network_allowed ? 'network' : 'no network'}
          </p>
        )}
        {error && (
          <p className="error" role="alert" id="create-task-error" data-field={errorField || undefined}>
            {error}
          </p>
        )}
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
