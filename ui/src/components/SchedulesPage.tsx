// The Schedules page (/schedules): every schedule the user may see with its
// next fire, a form to create one, pause/resume, run now, delete, and the
// history of the tasks it started (a click opens the task).
import { useCallback, useEffect, useState } from 'react';
import { ApiError } from '../api';
import { SchedulesApi } from '../schedules';
import type { NewSchedule, Schedule, ScheduleFire } from '../schedules';

function when(ms: number): string {
  return ms ? new Date(ms).toLocaleString() : '—';
}

function message(e: unknown): string {
  return e instanceof ApiError || e instanceof Error ? e.message : String(e);
}

const blank = (): NewSchedule => ({
  name: '',
  cron: '0 9 * * mon-fri',
  timezone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC',
  instruction: '',
  piece: 'chat',
  overlap: 'skip',
  catch_up: 'none',
  visibility: 'private',
});

export function SchedulesPage({ onOpenTask }: { onOpenTask: (id: string) => void }) {
  const [schedules, setSchedules] = useState<Schedule[]>([]);
  const [error, setError] = useState('');
  const [form, setForm] = useState<NewSchedule>(blank());
  const [formError, setFormError] = useState('');
  const [historyOf, setHistoryOf] = useState('');
  const [fires, setFires] = useState<ScheduleFire[]>([]);

  const reload = useCallback(() => {
    SchedulesApi.list()
      .then((r) => {
        setSchedules(r.schedules);
        setError('');
      })
      .catch((e) => setError(message(e)));
  }, []);
  useEffect(() => {
    reload();
    const t = window.setInterval(reload, 15000);
    return () => window.clearInterval(t);
  }, [reload]);

  const showHistory = useCallback((id: string) => {
    setHistoryOf(id);
    SchedulesApi.history(id)
      .then((r) => setFires(r.fires))
      .catch((e) => setError(message(e)));
  }, []);

  const act = (p: Promise<unknown>, after?: () => void) =>
    p
      .then(() => {
        reload();
        after?.();
      })
      .catch((e) => setError(message(e)));

  const submit = (ev: React.FormEvent) => {
    ev.preventDefault();
    SchedulesApi.create(form)
      .then(() => {
        setForm(blank());
        setFormError('');
        reload();
      })
      .catch((e) => setFormError(message(e)));
  };
  const field = (k: keyof NewSchedule) => ({
    value: form[k],
    onChange: (e: React.ChangeEvent<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>) =>
      setForm({ ...form, [k]: e.target.value }),
  });

  return (
    <section className="schedules-page" data-testid="schedules-page" style={{ padding: '1rem', overflow: 'auto' }}>
      <h2>Schedules</h2>
      {error && <p className="error" role="alert">{error}</p>}
      <table className="schedules" style={{ width: '100%', borderCollapse: 'collapse' }}>
        <thead>
          <tr>
            <th align="left">Name</th>
            <th align="left">When</th>
            <th align="left">Next fire</th>
            <th align="left">State</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {schedules.length === 0 && (
            <tr>
              <td colSpan={5} className="muted">No schedules yet.</td>
            </tr>
          )}
          {schedules.map((s) => (
            <tr key={s.id} data-testid="schedule-row">
              <td title={s.instruction}>{s.name}</td>
              <td>
                <code>{s.cron}</code> <span className="muted">{s.timezone}</span>
              </td>
              <td data-testid="next-fire">{s.enabled ? when(s.next_fires[0] ?? 0) : 'paused'}</td>
              <td>{s.enabled ? 'active' : 'paused'}</td>
              <td style={{ whiteSpace: 'nowrap' }}>
                <button className="ghost" onClick={() => act(SchedulesApi.update(s.id, { enabled: !s.enabled }))}>
                  {s.enabled ? 'Pause' : 'Resume'}
                </button>
                <button className="ghost" onClick={() => act(SchedulesApi.run(s.id), () => showHistory(s.id))}>
                  Run now
                </button>
                <button className="ghost" onClick={() => showHistory(s.id)}>
                  History
                </button>
                <button
                  className="ghost"
                  onClick={() => {
                    if (window.confirm(`Delete the schedule "${s.name}"? Its tasks stay.`)) {
                      act(SchedulesApi.remove(s.id), () => historyOf === s.id && setHistoryOf(''));
                    }
                  }}
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>

      {historyOf && (
        <div className="schedule-history" data-testid="schedule-history">
          <h3>History of {schedules.find((s) => s.id === historyOf)?.name ?? 'the schedule'}</h3>
          {fires.length === 0 ? (
            <p className="muted">It has not fired yet.</p>
          ) : (
            <ul>
              {fires.map((f) => (
                <li key={`${f.fire_at}-${f.manual}`}>
                  {when(f.fire_at)} {f.manual ? '(run now)' : ''} — {f.outcome}
                  {f.task && (
                    <>
                      {' '}
                      <button className="ghost" onClick={() => onOpenTask(f.task!.id)}>
                        {f.task.title || f.task.id}
                      </button>{' '}
                      <span className="muted">{f.task.status}</span>
                    </>
                  )}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}

      <form className="schedule-form" onSubmit={submit} style={{ display: 'grid', gap: '0.5rem', maxWidth: '40rem' }}>
        <h3>New schedule</h3>
        <label>
          Name <input required {...field('name')} />
        </label>
        <label>
          Cron (minute hour day month weekday, or @daily…) <input required {...field('cron')} />
        </label>
        <label>
          Time zone (IANA) <input required {...field('timezone')} />
        </label>
        <label>
          Instruction <textarea required rows={3} {...field('instruction')} />
        </label>
        <label>
          Piece <input {...field('piece')} />
        </label>
        <label>
          While the previous task runs{' '}
          <select {...field('overlap')}>
            <option value="skip">skip the fire</option>
            <option value="queue">queue one fire</option>
            <option value="allow">start another task</option>
          </select>
        </label>
        <label>
          Fires missed while the server was down{' '}
          <select {...field('catch_up')}>
            <option value="none">skip them</option>
            <option value="one">run once</option>
          </select>
        </label>
        <label>
          Visibility{' '}
          <select {...field('visibility')}>
            <option value="private">private</option>
            <option value="shared">shared</option>
          </select>
        </label>
        {formError && <p className="error" role="alert">{formError}</p>}
        <button className="primary" type="submit">
          Create schedule
        </button>
      </form>
    </section>
  );
}
