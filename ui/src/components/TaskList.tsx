// The task list: status badges, a status filter and a text search over
// title and instruction; refreshed every 3 s and after local changes.
import { useEffect, useMemo, useState } from 'react';
import { Api } from '../api';
import type { Task } from '../types';
import { StatusBadge } from './StatusBadge';

const FILTERS = ['all', 'active', 'waiting_human', 'succeeded', 'failed', 'cancelled'];
const ACTIVE = new Set(['queued', 'running', 'retry', 'waiting_subtasks', 'waiting_human']);

export function TaskList({ selected, onSelect, version }: { selected: string; onSelect: (id: string) => void; version: number }) {
  const [tasks, setTasks] = useState<Task[]>([]);
  const [filter, setFilter] = useState('all');
  const [query, setQuery] = useState('');
  const [error, setError] = useState('');

  useEffect(() => {
    let alive = true;
    const load = () =>
      Api.tasks()
        .then((r) => {
          if (!alive) return;
          setTasks(r.tasks);
          setError('');
        })
        .catch((e) => alive && setError((e as Error).message));
    void load();
    const t = window.setInterval(load, 3000);
    return () => {
      alive = false;
      window.clearInterval(t);
    };
  }, [version]);

  const shown = useMemo(() => {
    const q = query.trim().toLowerCase();
    return tasks.filter((t) => {
      if (filter === 'active' && !ACTIVE.has(t.status)) return false;
      if (filter !== 'all' && filter !== 'active' && t.status !== filter) return false;
      return !q || `${t.title} ${t.instruction}`.toLowerCase().includes(q);
    });
  }, [tasks, filter, query]);

  return (
    <nav className="task-list" aria-label="Tasks">
      <div className="task-tools">
        <input type="search" placeholder="Search tasks" aria-label="Search tasks" value={query} onChange={(e) => setQuery(e.target.value)} />
        <select aria-label="Filter by status" value={filter} onChange={(e) => setFilter(e.target.value)}>
          {FILTERS.map((f) => (
            <option key={f} value={f}>
              {f.replace('_', ' ')}
            </option>
          ))}
        </select>
      </div>
      {error && <p className="error">{error}</p>}
      <ul>
        {shown.map((t) => (
          <li key={t.id}>
            <button className={`task-item ${t.id === selected ? 'selected' : ''}`} onClick={() => onSelect(t.id)} data-task-id={t.id}>
              <span className="task-title">{t.title || t.instruction.slice(0, 80)}</span>
              <span className="task-meta">
                <StatusBadge status={t.status} />
                <small className="muted">
                  {t.piece} · {new Date(t.created_at).toLocaleString()}
                </small>
              </span>
            </button>
          </li>
        ))}
        {shown.length === 0 && <li className="muted pad">No tasks{query || filter !== 'all' ? ' match' : ' yet'}.</li>}
      </ul>
    </nav>
  );
}
