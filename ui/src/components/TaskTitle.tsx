// TaskTitle: the chat header's title; "Rename" turns it into a field —
// Enter saves (PATCH /tasks/:id), Escape cancels; the server's refusal
// (empty, too long) is shown under it. No "Rename" without `canRename`
// (the caller's role on the task cannot run it).
import { useEffect, useState } from 'react';
import { Api } from '../api';
import type { Task } from '../types';
import { useToast } from './Toasts';

export function taskName(t: Task): string {
  return t.title || t.instruction.split('\n')[0].slice(0, 80);
}

export function TaskTitle({ task, onSaved, canRename = true }: { task: Task; onSaved: () => void; canRename?: boolean }) {
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState(task.title);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const toast = useToast();
  useEffect(() => {
    if (!editing) setValue(task.title);
  }, [task.title, editing]);

  const save = async () => {
    setBusy(true);
    try {
      await Api.renameTask(task.id, value.trim());
      setEditing(false);
      setError('');
      toast('Title saved', 'ok');
      onSaved();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  if (!editing) {
    return (
      <div className="title-row">
        <h2 title={task.instruction}>{taskName(task)}</h2>
        {canRename && (
          <button className="ghost small" aria-label="Rename task" title="Rename" onClick={() => setEditing(true)}>
            ✎
          </button>
        )}
      </div>
    );
  }
  return (
    <form
      className="title-row"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <input
        aria-label="Task title"
        autoFocus
        value={value}
        maxLength={200}
        onChange={(e) => setValue(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.stopPropagation();
            setEditing(false);
            setError('');
          }
        }}
      />
      <button type="submit" className="small primary" disabled={busy}>
        Save
      </button>
      <button type="button" className="small ghost" onClick={() => setEditing(false)}>
        Cancel
      </button>
      {error && (
        <small className="error" role="alert">
          {error}
        </small>
      )}
    </form>
  );
}
