// The task list: title (the server auto-titles tasks), status badge, piece,
// cost (or tokens) and a relative time per row; a status filter and a text
// search over title and instruction.
import { forwardRef, useMemo, useState } from 'react';
import type { Task } from '../types';
import { RelativeTime } from './RelativeTime';
import { StatusBadge } from './StatusBadge';
import { taskName } from './TaskTitle';
import { UsageSummary } from './UsageSummary';

const FILTERS = ['all', 'active', 'waiting_human', 'succeeded', 'failed', 'cancelled'];
const ACTIVE = new Set(['queued', 'running', 'retry', 'waiting_subtasks', 'waiting_human']);

interface Props {
  tasks: Task[];
  error: string;
  selected: string;
  onSelect: (id: string) => void;
}

export const TaskList = forwardRef<HTMLInputElement, Props>(function TaskList({ tasks, error, selected, onSelect }, searchRef) {
  const [filter, setFilter] = useState('all');
  const [query, setQuery] = useState('');

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
        <input
          ref={searchRef}
          type="search"
          placeholder="Search  /"
          aria-label="Search tasks"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Escape') {
              setQuery('');
              e.currentTarget.blur();
            }
          }}
        />
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
              <span className="task-title" title={t.instruction}>
                {taskName(t)}
              </span>
              <span className="task-meta">
                <StatusBadge status={t.status} />
                <small className="muted">
                  {t.piece} · <RelativeTime ms={t.created_at} />
                </small>
                {t.usage && t.usage.llm_calls > 0 && <UsageSummary usage={t.usage} compact />}
              </span>
            </button>
          </li>
        ))}
        {shown.length === 0 && <li className="muted pad">No tasks{query || filter !== 'all' ? ' match' : ' yet'}.</li>}
      </ul>
    </nav>
  );
});
