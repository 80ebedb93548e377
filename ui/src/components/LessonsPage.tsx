// The Lessons page (/lessons): what Reflection tasks (and people) learned,
// grouped by space — each lesson's text, scope, evidence tasks (a click opens
// the task), who wrote it and when; edit the text and scope in place, delete
// with a confirm, and add one with the form. Later tasks of the space get
// the lessons in their instruction (issue 21).
import { useCallback, useEffect, useMemo, useState } from 'react';
import { Api, ApiError } from '../api';
import { LessonsApi, spaceLabel } from '../lessons';
import type { Lesson, LessonScope, NewLesson } from '../lessons';
import type { Piece, Space } from '../types';
import { RelativeTime } from './RelativeTime';

const ALL = '*'; // the filter's "every space" (no space name holds a '*')

interface Failure {
  message: string;
  field: string;
}

function failure(e: unknown): Failure {
  if (e instanceof ApiError) return { message: e.message, field: e.field };
  return { message: e instanceof Error ? e.message : String(e), field: '' };
}

interface Draft {
  space: string;
  scope: LessonScope;
  piece: string;
  lesson: string;
  evidence: string; // task ids, comma or space separated
}

const blank = (space: string, piece: string): Draft => ({ space, scope: 'space', piece, lesson: '', evidence: '' });

const taskIds = (s: string) => s.split(/[\s,]+/).filter(Boolean);

function PieceSelect({ id, value, pieces, onChange, invalid }: {
  id: string;
  value: string;
  pieces: Piece[];
  onChange: (v: string) => void;
  invalid: boolean;
}) {
  const names = pieces.map((p) => p.name);
  if (value && !names.includes(value)) names.unshift(value);
  return (
    <select id={id} value={value} onChange={(e) => onChange(e.target.value)} aria-invalid={invalid || undefined}>
      {names.map((n) => (
        <option key={n} value={n}>
          {n}
        </option>
      ))}
    </select>
  );
}

export function LessonsPage({ onOpenTask }: { onOpenTask: (id: string) => void }) {
  const [lessons, setLessons] = useState<Lesson[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState('');
  const [spaces, setSpaces] = useState<Space[]>([]);
  const [pieces, setPieces] = useState<Piece[]>([]);
  const [filter, setFilter] = useState(ALL);
  const [form, setForm] = useState<Draft>(blank('', 'chat'));
  const [formError, setFormError] = useState<Failure | null>(null);
  const [editing, setEditing] = useState('');
  const [edit, setEdit] = useState<Draft>(blank('', 'chat'));
  const [editError, setEditError] = useState<Failure | null>(null);

  const reload = useCallback(() => {
    LessonsApi.list(filter === ALL ? undefined : filter)
      .then((r) => {
        setLessons(r.lessons);
        setLoaded(true);
        setError('');
      })
      .catch((e) => setError(failure(e).message));
  }, [filter]);
  useEffect(() => {
    reload();
    const t = window.setInterval(reload, 30000);
    return () => window.clearInterval(t);
  }, [reload]);
  useEffect(() => {
    Api.spaces().then(setSpaces).catch(() => setSpaces([]));
    Api.pieces()
      .then((r) => {
        setPieces(r.pieces);
        const first = r.pieces.find((p) => p.name === 'chat')?.name ?? r.pieces[0]?.name;
        if (first) setForm((f) => (r.pieces.some((p) => p.name === f.piece) ? f : { ...f, piece: first }));
      })
      .catch(() => setPieces([]));
  }, []);

  // Groups in the order of the configured spaces, then spaces only the
  // lessons name (no longer configured), then the no-space tasks.
  const groups = useMemo(() => {
    const by = new Map<string, Lesson[]>();
    for (const l of lessons) by.set(l.space, [...(by.get(l.space) ?? []), l]);
    const order = spaces.map((s) => s.name).filter((n) => by.has(n));
    for (const n of [...by.keys()].sort()) if (n && !order.includes(n)) order.push(n);
    if (by.has('')) order.push('');
    return order.map((space) => ({ space, lessons: by.get(space)! }));
  }, [lessons, spaces]);

  const startEdit = (l: Lesson) => {
    setEditing(l.id);
    setEditError(null);
    setEdit({
      space: l.space,
      scope: l.scope,
      piece: l.piece || (pieces.find((p) => p.name === 'chat')?.name ?? pieces[0]?.name ?? ''),
      lesson: l.lesson,
      evidence: l.evidence.join(', '),
    });
  };
  const saveEdit = (ev: React.FormEvent, l: Lesson) => {
    ev.preventDefault();
    LessonsApi.update(l.id, {
      lesson: edit.lesson,
      scope: edit.scope,
      piece: edit.scope === 'piece' ? edit.piece : '',
    })
      .then(() => {
        setEditing('');
        reload();
      })
      .catch((e) => setEditError(failure(e)));
  };
  const remove = (l: Lesson) => {
    const short = l.lesson.length > 60 ? `${l.lesson.slice(0, 60)}…` : l.lesson;
    if (!window.confirm(`Delete the lesson "${short}"? Later tasks no longer get it.`)) return;
    LessonsApi.remove(l.id)
      .then(() => {
        if (editing === l.id) setEditing('');
        reload();
      })
      .catch((e) => setError(failure(e).message));
  };
  const submit = (ev: React.FormEvent) => {
    ev.preventDefault();
    const body: NewLesson = { space: form.space, scope: form.scope, lesson: form.lesson };
    if (form.scope === 'piece') body.piece = form.piece;
    const evidence = taskIds(form.evidence);
    if (evidence.length) body.evidence = evidence;
    LessonsApi.create(body)
      .then(() => {
        setForm({ ...blank(form.space, form.piece), scope: form.scope });
        setFormError(null);
        reload();
      })
      .catch((e) => setFormError(failure(e)));
  };

  const spaceOptions = (
    <>
      {spaces.map((s) => (
        <option key={s.name} value={s.name}>
          {s.name}
        </option>
      ))}
      <option value="">(no space)</option>
    </>
  );
  const bad = (f: Failure | null, field: string) => (f?.field === field ? true : undefined);

  return (
    <section className="lessons-page" data-testid="lessons-page" aria-labelledby="lessons-heading">
      <h2 id="lessons-heading">Lessons</h2>
      <p className="muted">
        What reflection tasks and people learned about a space. Later tasks of the space (of the piece, for a
        piece lesson) get these in their instruction.
      </p>
      <div className="lessons-filter">
        <label htmlFor="lessons-filter">Show lessons of</label>{' '}
        <select id="lessons-filter" value={filter} onChange={(e) => setFilter(e.target.value)}>
          <option value={ALL}>every space</option>
          {spaceOptions}
        </select>
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {loaded && groups.length === 0 && (
        <p className="muted">{filter === ALL ? 'No lessons yet.' : `No lessons for ${spaceLabel(filter)}.`}</p>
      )}
      {groups.map((g) => (
        <section
          key={g.space || '(none)'}
          className="lesson-group"
          data-testid="lesson-group"
          aria-label={`Lessons of ${spaceLabel(g.space)}`}
        >
          <h3>{spaceLabel(g.space)}</h3>
          <ul className="lesson-list">
            {g.lessons.map((l) => (
              <li key={l.id} className="lesson card" data-testid="lesson">
                {editing === l.id ? (
                  <form className="lesson-edit" onSubmit={(ev) => saveEdit(ev, l)} aria-label="Edit the lesson">
                    <label htmlFor={`edit-text-${l.id}`}>Lesson text</label>
                    <textarea
                      id={`edit-text-${l.id}`}
                      rows={3}
                      required
                      value={edit.lesson}
                      aria-invalid={bad(editError, 'lesson')}
                      onChange={(e) => setEdit({ ...edit, lesson: e.target.value })}
                    />
                    <div className="lesson-fields">
                      <span>
                        <label htmlFor={`edit-scope-${l.id}`}>Scope</label>{' '}
                        <select
                          id={`edit-scope-${l.id}`}
                          value={edit.scope}
                          aria-invalid={bad(editError, 'scope')}
                          onChange={(e) => setEdit({ ...edit, scope: e.target.value as LessonScope })}
                        >
                          <option value="space">the whole space</option>
                          <option value="piece">one piece</option>
                        </select>
                      </span>
                      {edit.scope === 'piece' && (
                        <span>
                          <label htmlFor={`edit-piece-${l.id}`}>Piece</label>{' '}
                          <PieceSelect
                            id={`edit-piece-${l.id}`}
                            value={edit.piece}
                            pieces={pieces}
                            invalid={!!bad(editError, 'piece')}
                            onChange={(piece) => setEdit({ ...edit, piece })}
                          />
                        </span>
                      )}
                    </div>
                    {editError && (
                      <p className="error" role="alert">
                        {editError.message}
                      </p>
                    )}
                    <div className="row wrap">
                      <button className="primary" type="submit">
                        Save
                      </button>
                      <button type="button" onClick={() => setEditing('')}>
                        Cancel
                      </button>
                    </div>
                  </form>
                ) : (
                  <>
                    <p className="lesson-text" data-testid="lesson-text">
                      {l.lesson}
                    </p>
                    <div className="lesson-meta muted">
                      <span className="badge" data-testid="lesson-scope">
                        {l.scope === 'piece' ? `piece ${l.piece}` : 'whole space'}
                      </span>
                      <span>
                        by{' '}
                        {l.source_task_id ? (
                          <button
                            className="ghost inline"
                            onClick={() => onOpenTask(l.source_task_id)}
                            title="Open the reflection task"
                          >
                            reflection task {l.source_task_id}
                          </button>
                        ) : (
                          'a person'
                        )}
                      </span>
                      <span>
                        <RelativeTime ms={l.created_at} />
                        {l.updated_at > l.created_at && (
                          <>
                            {' '}
                            <span data-testid="lesson-edited">
                              · edited <RelativeTime ms={l.updated_at} />
                            </span>
                          </>
                        )}
                      </span>
                    </div>
                    {l.evidence.length > 0 && (
                      <div className="lesson-evidence">
                        <span className="muted">Evidence:</span>
                        <ul aria-label="Evidence tasks">
                          {l.evidence.map((id) => (
                            <li key={id}>
                              <button className="ghost inline" onClick={() => onOpenTask(id)} title="Open the task">
                                task {id}
                              </button>
                            </li>
                          ))}
                        </ul>
                      </div>
                    )}
                    <div className="row wrap">
                      <button className="ghost" onClick={() => startEdit(l)}>
                        Edit
                      </button>
                      <button className="ghost danger" onClick={() => remove(l)}>
                        Delete
                      </button>
                    </div>
                  </>
                )}
              </li>
            ))}
          </ul>
        </section>
      ))}

      <form className="lesson-form" onSubmit={submit} aria-labelledby="lesson-form-heading">
        <h3 id="lesson-form-heading">Add lesson</h3>
        <label htmlFor="lesson-form-space">Space</label>
        <select
          id="lesson-form-space"
          value={form.space}
          aria-invalid={bad(formError, 'space')}
          onChange={(e) => setForm({ ...form, space: e.target.value })}
        >
          {spaceOptions}
        </select>
        <label htmlFor="lesson-form-scope">Scope</label>
        <select
          id="lesson-form-scope"
          value={form.scope}
          aria-invalid={bad(formError, 'scope')}
          onChange={(e) => setForm({ ...form, scope: e.target.value as LessonScope })}
        >
          <option value="space">the whole space</option>
          <option value="piece">one piece</option>
        </select>
        {form.scope === 'piece' && (
          <>
            <label htmlFor="lesson-form-piece">Piece</label>
            <PieceSelect
              id="lesson-form-piece"
              value={form.piece}
              pieces={pieces}
              invalid={!!bad(formError, 'piece')}
              onChange={(piece) => setForm({ ...form, piece })}
            />
          </>
        )}
        <label htmlFor="lesson-form-text">Lesson</label>
        <textarea
          id="lesson-form-text"
          required
          rows={3}
          maxLength={2000}
          value={form.lesson}
          aria-invalid={bad(formError, 'lesson')}
          onChange={(e) => setForm({ ...form, lesson: e.target.value })}
        />
        <label htmlFor="lesson-form-evidence">Evidence (task ids, optional)</label>
        <input
          id="lesson-form-evidence"
          value={form.evidence}
          aria-invalid={bad(formError, 'evidence')}
          onChange={(e) => setForm({ ...form, evidence: e.target.value })}
        />
        {formError && (
          <p className="error" role="alert">
            {formError.message}
          </p>
        )}
        <button className="primary" type="submit">
          Add lesson
        </button>
      </form>
    </section>
  );
}
