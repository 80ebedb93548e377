// The notification bell/center: what happened to the person's tasks — a
// task needs them, a question was answered, a session handed off to a fresh
// one, a task finished or failed — polled every 5 s. The server says what
// happened (`summary`) and names the task (`task_name`: its title, else the
// instruction's first line). A new unread one also raises a toast that opens
// the task; a "needs you" toast stays until the task no longer needs the
// person (App sweeps it). Escape or a press outside closes the panel.
import { useCallback, useEffect, useRef, useState } from 'react';
import { Api } from '../api';
import type { Notification } from '../types';
import { PushToggle } from './PushToggle';
import { RelativeTime } from './RelativeTime';
import { useDismiss } from '../useDismiss';
import { useToast } from './Toasts';

// Older servers send only the job's status.
const BY_STATUS: Record<string, string> = {
  waiting_human: 'needs you',
  succeeded: 'finished',
  failed: 'failed',
};

export function notificationText(n: Notification): string {
  return n.summary || BY_STATUS[n.status] || n.status;
}

const toneOf = (n: Notification): 'info' | 'ok' | 'error' => {
  const what = n.outcome ?? (n.status === 'succeeded' ? 'finished' : n.status);
  return what === 'failed' ? 'error' : what === 'finished' ? 'ok' : 'info';
};

export function notificationTask(n: Notification): string {
  return n.task_name || n.task_title || `task ${n.task_id.slice(0, 8)}`;
}

export function NotificationBell({ onOpen }: { onOpen: (taskId: string) => void }) {
  const [items, setItems] = useState<Notification[]>([]);
  const [unread, setUnread] = useState(0);
  const [open, setOpen] = useState(false);
  const seen = useRef<Set<string> | null>(null);
  const panel = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const toast = useToast();
  const close = useCallback(() => setOpen(false), []);
  useDismiss(open, panel, close, button);
  const openRef = useRef(onOpen);
  openRef.current = onOpen;

  useEffect(() => {
    let alive = true;
    const load = async () => {
      try {
        const r = await Api.notifications();
        if (!alive) return;
        setItems(r.notifications.slice(0, 30));
        setUnread(r.unread);
        if (seen.current) {
          for (const n of r.notifications) {
            if (n.read || seen.current.has(n.id)) continue;
            const needsYou = (n.outcome ?? (n.status === 'waiting_human' ? 'needs_you' : '')) === 'needs_you';
            // Already stale: a newer notification of the same task (newest first).
            if (needsYou && r.notifications.some((m) => m.task_id === n.task_id && m.created_at > n.created_at)) continue;
            toast(`${notificationTask(n)}: ${notificationText(n)}`, toneOf(n), {
              taskId: n.task_id,
              topic: needsYou ? 'needs_you' : n.outcome ?? n.status,
              sticky: needsYou,
              onClick: () => openRef.current(n.task_id),
            });
          }
        }
        seen.current = new Set(r.notifications.map((n) => n.id));
      } catch {
        /* the next poll retries */
      }
    };
    void load();
    const t = window.setInterval(load, 5000);
    return () => {
      alive = false;
      window.clearInterval(t);
    };
  }, [toast]);

  const markAll = async () => {
    await Api.markRead([]).catch(() => {});
    setItems((l) => l.map((n) => ({ ...n, read: true })));
    setUnread(0);
  };

  return (
    <div className="bell">
      <button ref={button} className="ghost" aria-label={`Notifications (${unread} unread)`} onClick={() => setOpen((o) => !o)}>
        <svg width="18" height="18" viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" strokeWidth="2">
          <path d="M18 8a6 6 0 0 0-12 0c0 7-3 9-3 9h18s-3-2-3-9" />
          <path d="M13.7 21a2 2 0 0 1-3.4 0" />
        </svg>
        {unread > 0 && <span className="bell-count">{unread}</span>}
      </button>
      {open && (
        <div ref={panel} className="bell-panel card" role="dialog" aria-label="Notifications">
          <div className="row">
            <strong>Notifications</strong>
            <span className="spacer" />
            <button className="ghost small" onClick={markAll}>
              Mark all read
            </button>
          </div>
          <PushToggle />
          {items.length === 0 && <p className="muted">Nothing yet.</p>}
          <ul>
            {items.map((n) => (
              <li key={n.id} className={n.read ? 'read' : 'unread'}>
                <button
                  className="link"
                  onClick={() => {
                    void Api.markRead([n.id]).catch(() => {});
                    setOpen(false);
                    onOpen(n.task_id);
                  }}
                >
                  <strong>{notificationTask(n)}</strong>{' — '}
                  <span className={`note-outcome outcome-${n.outcome ?? n.status}`} data-outcome={n.outcome ?? n.status}>
                    {notificationText(n)}
                  </span>
                  <small className="muted">
                    {' '}
                    <RelativeTime ms={n.created_at} />
                  </small>
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
