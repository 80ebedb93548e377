// DiffFileView: one file of a diff — status, +/- counts and its unified
// patch with added, deleted and hunk lines marked.
import { useState } from 'react';
import type { DiffFile } from '../types';

function lineClass(l: string): string {
  if (l.startsWith('@@')) return 'diff-hunk';
  if (l.startsWith('+++') || l.startsWith('---') || l.startsWith('diff ') || l.startsWith('index ')) return 'diff-meta';
  if (l.startsWith('+')) return 'diff-add';
  if (l.startsWith('-')) return 'diff-del';
  return '';
}

export function DiffFileView({ file, onOpen }: { file: DiffFile; onOpen?: (path: string) => void }) {
  const [open, setOpen] = useState(true);
  const lines = file.patch ? file.patch.replace(/\n$/, '').split('\n') : [];
  return (
    <div className="diff-file" data-testid="diff-file" data-path={file.path}>
      <div className="row diff-file-head">
        <button type="button" className="ghost small" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
          {open ? '▾' : '▸'}
        </button>
        <span className={`diff-status diff-status-${file.status}`}>{file.status}</span>
        <code className="file-path">
          {file.old_path && file.old_path !== file.path ? `${file.old_path} → ` : ''}
          {file.path}
        </code>
        <span className="spacer" />
        <small className="diff-counts">
          <span className="diff-add-count">+{file.additions}</span> <span className="diff-del-count">−{file.deletions}</span>
        </small>
        {onOpen && file.status !== 'deleted' && (
          <button type="button" className="small" onClick={() => onOpen(file.path)}>
            View file
          </button>
        )}
      </div>
      {open &&
        (file.binary ? (
          <p className="muted small">Binary file changed.</p>
        ) : (
          <pre className="diff-patch">
            {lines.map((l, i) => (
              <div key={i} className={lineClass(l)}>
                {l || ' '}
              </div>
            ))}
            {file.patch_truncated && <div className="muted">… (patch truncated)</div>}
          </pre>
        ))}
    </div>
  );
}
