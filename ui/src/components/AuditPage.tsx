// The audit log page (/audit, issue 49; the nav shows it when /api/me says
// can.admin): who did what — task creations, comments, decisions with the
// arguments' hash, budget raises, cancels, tokens, sign-ins — newest first
// (GET /api/local/audit), filtered by actor, action, task and a time range;
// "Load more" pages back with before_id; "Export JSON lines" downloads every
// matching entry (GET /api/local/audit/export, oldest first) with the
// caller's credentials. The server decides which entries the caller sees.
import { useCallback, useEffect, useState } from 'react';
import { Api, ApiError, auditQuery, downloadUrl } from '../api';
import type { AuditEntry, AuditFilters } from '../types';

const ACTIONS = [
  'task.create', 'task.comment', 'task.continue', 'task.cancel', 'task.rename', 'request.decide', 'budget.raise',
  'token.create', 'token.revoke', 'auth.login', 'auth.logout', 'config.change',
];

function message(e: unknown): string {
  if (e instanceof ApiError) return e.field ? `${e.field}: ${e.message}` : e.message;
  return e instanceof Error ? e.message : String(e);
}

// A datetime-local value ("2026-12-07T21:00") as ms since the epoch ("" stays "").
function toMs(v: string): string {
  if (!v) return '';
  const ms = new Date(v).getTime();
  return Number.isFinite(ms) ? String(ms) : v;
}

// One line for the detail object: key: value pairs, hashes shortened.
export function detailSummary(d: Record<string, unknown> | null | undefined): string {
  if (!d || typeof d !== 'object') return '';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(d)) {
    let s = typeof v === 'string' ? v : JSON.stringify(v);
    if (/sha256/.test(k) && typeof v === 'string' && v.length > 16) s = `${v.slice(0, 12)}…`;
    if (s.length > 60) s = `${s.slice(0, 57)}…`;
    parts.push(`${k}: ${s}`);
  }
  const line = parts.join(' · ');
  return line.length > 240 ? `${line.slice(0, 237)}…` : line;
}

export function AuditPage({ onOpenTask }: { onOpenTask: (id: string) => void }) {
  const [form, setForm] = useState<AuditFilters>({});
  const [applied, setApplied] = useState<AuditFilters>({});
  const [entries, setEntries] = useState<AuditEntry[]>([]);
  const [next, setNext] = useState<number | string | null>(null);
  const [error, setError] = useState('');
  const [loading, setLoading] = useState(false);

  const load = useCallback((f: AuditFilters, before: number | string | null) => {
    setLoading(true);
    Api.audit(f, before)
      .then((r) => {
        setEntries((old) => (before === null ? r.entries : [...old, ...r.entries]));
        setNext(r.next_before_id ?? null);
        setError('');
      })
      .catch((e) => setError(message(e)))
      .finally(() => setLoading(false));
  }, []);
  useEffect(() => load({}, null), [load]);

  const apply = (ev: React.FormEvent) => {
    ev.preventDefault();
    const f: AuditFilters = { ...form, since: toMs(form.since ?? ''), until: toMs(form.until ?? '') };
    setApplied(f);
    load(f, null);
  };
  const field = (k: keyof AuditFilters) => ({
    name: k,
    value: form[k] ?? '',
    onChange: (e: React.ChangeEvent<HTMLInputElement>) => setForm({ ...form, [k]: e.target.value }),
  });
  const exportUrl = `/api/local/audit/export${auditQuery(applied)}`;

  return (
    <section className="audit-page page" data-testid="audit-page" style={{ padding: '1rem', overflow: 'auto' }}>
      <h2>Audit log</h2>
      <form className="audit-filters row wrap" onSubmit={apply} aria-label="Audit filters">
        <label>
          Actor <input {...field('actor')} placeholder="user" />
        </label>
        <label>
          Action <input {...field('action')} list="audit-actions" placeholder="e.g. request.decide" />
          <datalist id="audit-actions">
            {ACTIONS.map((a) => (
              <option key={a} value={a} />
            ))}
          </datalist>
        </label>
        <label>
          Task <input {...field('task_id')} placeholder="task id" />
        </label>
        <label>
          Since <input type="datetime-local" {...field('since')} />
        </label>
        <label>
          Until <input type="datetime-local" {...field('until')} />
        </label>
        <button className="primary" type="submit">
          Filter
        </button>
        <a
          className="button ghost"
          href={exportUrl}
          data-testid="audit-export"
          download="maestro-audit.jsonl"
          onClick={(e) => {
            // A plain link would not carry a bearer token: fetch with the
            // caller's credentials and save the bytes.
            e.preventDefault();
            downloadUrl(exportUrl, 'maestro-audit.jsonl').catch((err) => setError(message(err)));
          }}
        >
          Export JSON lines
        </a>
      </form>
      {error && <p className="error" role="alert">{error}</p>}
      <table className="data-table" data-testid="audit-table">
        <thead>
          <tr>
            <th align="left">Time</th>
            <th align="left">Actor</th>
            <th align="left">Action</th>
            <th align="left">Task</th>
            <th align="left">Team</th>
            <th align="left">Detail</th>
          </tr>
        </thead>
        <tbody>
          {entries.length === 0 && !loading && (
            <tr>
              <td colSpan={6} className="muted">
                No entries.
              </td>
            </tr>
          )}
          {entries.map((e) => (
            <tr key={String(e.id)} data-testid="audit-row" data-actor={e.actor} data-action={e.action} data-task={e.task_id}>
              <td data-part="at" title={e.at ? new Date(e.at).toISOString() : ''}>
                {e.at ? new Date(e.at).toLocaleString() : '—'}
              </td>
              <td data-part="actor">{e.actor}</td>
              <td data-part="action">
                <code>{e.action}</code>
              </td>
              <td data-part="task">
                {e.task_id ? (
                  <button className="ghost small" onClick={() => onOpenTask(e.task_id)} title={e.task_id}>
                    {e.task_id.slice(0, 8)}…
                  </button>
                ) : (
                  ''
                )}
              </td>
              <td data-part="team">{e.team}</td>
              <td data-part="detail" className="audit-detail" title={JSON.stringify(e.detail)}>
                {detailSummary(e.detail)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {next !== null && (
        <button className="load-more" disabled={loading} onClick={() => load(applied, next)}>
          Load more
        </button>
      )}
    </section>
  );
}
