// DiffView: what the task changed — the total, each job's commit, or what
// is not committed yet — one DiffFileView per file.
import { useState } from 'react';
import type { DiffFile, TaskDiff } from '../types';
import { DiffFileView } from './DiffFileView';

export function DiffView({ diff, onOpen }: { diff: TaskDiff; onOpen: (path: string) => void }) {
  const [scope, setScope] = useState('total');
  if (diff.repository === false) return <p className="muted pad">This workspace is not a git repository: no changes to show.</p>;
  const scopes: { key: string; label: string; files: DiffFile[] }[] = [
    { key: 'total', label: 'All changes', files: diff.total.files },
    ...diff.jobs.map((j, i) => ({
      key: `job:${j.job_id}:${i}`,
      label: `Job ${i + 1}${j.message ? `: ${j.message.split('\n')[0].slice(0, 40)}` : ''}`,
      files: j.files,
    })),
  ];
  if (diff.uncommitted.files.length) scopes.push({ key: 'uncommitted', label: 'Not committed', files: diff.uncommitted.files });
  const chosen = scopes.find((s) => s.key === scope) ?? scopes[0];
  return (
    <div className="diff-view" data-testid="diff-view">
      <label className="row diff-scope">
        <span className="muted small">Show</span>
        <select aria-label="Diff scope" value={chosen.key} onChange={(e) => setScope(e.target.value)}>
          {scopes.map((s) => (
            <option key={s.key} value={s.key}>
              {s.label} ({s.files.length})
            </option>
          ))}
        </select>
      </label>
      {chosen.files.length === 0 && <p className="muted pad">No changes.</p>}
      {chosen.files.map((f) => (
        <DiffFileView key={`${chosen.key}:${f.path}`} file={f} onOpen={onOpen} />
      ))}
    </div>
  );
}
