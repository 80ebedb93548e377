// Toasts: short notices ("approved", "cancelled", errors) in the bottom-left
// dock. The dock takes its own room — the page reserves its height
// (--toast-space: under the task list on wide screens, under the whole page
// on a phone) — so a toast never covers a control. Plain toasts fade by
// themselves; a toast about a task (e.g. "needs you") stays until it is
// dismissed, clicked, or gone stale (dismissStale: the task no longer needs
// the person).
import { createContext, useCallback, useContext, useLayoutEffect, useRef, useState, type ReactNode } from 'react';

type Tone = 'info' | 'ok' | 'error';
export interface ToastOptions {
  taskId?: string;
  // What the toast is about: 'needs_you' toasts go stale once the task no
  // longer waits for the person.
  topic?: string;
  onClick?: () => void;
  sticky?: boolean;
}
export interface Toast extends ToastOptions {
  id: number;
  text: string;
  tone: Tone;
}

type Push = (text: string, tone?: Tone, opts?: ToastOptions) => void;
type Sweep = (stale: (t: Toast) => boolean) => void;

const ToastContext = createContext<Push>(() => {});
const SweepContext = createContext<Sweep>(() => {});

export function useToast(): Push {
  return useContext(ToastContext);
}
export function useToastSweep(): Sweep {
  return useContext(SweepContext);
}

let nextId = 1;
const STICKY_MS = 120000;

export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const dock = useRef<HTMLDivElement>(null);
  const remove = useCallback((id: number) => setToasts((t) => t.filter((x) => x.id !== id)), []);
  const push = useCallback<Push>(
    (text, tone = 'info', opts = {}) => {
      const id = nextId++;
      setToasts((t) => [...t.slice(-3), { id, text, tone, ...opts }]);
      const sticky = opts.sticky ?? Boolean(opts.taskId);
      window.setTimeout(() => remove(id), sticky ? STICKY_MS : tone === 'error' ? 8000 : 4000);
    },
    [remove],
  );
  const sweep = useCallback<Sweep>((stale) => {
    setToasts((t) => {
      const kept = t.filter((x) => !stale(x));
      return kept.length === t.length ? t : kept;
    });
  }, []);
  // Reserve the dock's height so the layout keeps controls out from under it.
  useLayoutEffect(() => {
    const h = toasts.length && dock.current ? dock.current.getBoundingClientRect().height + 8 : 0;
    document.documentElement.style.setProperty('--toast-space', `${Math.ceil(h)}px`);
  }, [toasts]);

  return (
    <ToastContext.Provider value={push}>
      <SweepContext.Provider value={sweep}>
        {children}
        <div className="toasts" ref={dock} aria-live="polite" data-testid="toasts">
          {toasts.map((t) => (
            <div key={t.id} className={`toast toast-${t.tone}`} role="status" data-topic={t.topic} data-task-id={t.taskId}>
              {t.onClick ? (
                <button
                  type="button"
                  className="link toast-text"
                  onClick={() => {
                    remove(t.id);
                    t.onClick?.();
                  }}
                >
                  {t.text}
                </button>
              ) : (
                <span className="toast-text">{t.text}</span>
              )}
              <button type="button" className="ghost small toast-close" aria-label="Dismiss" onClick={() => remove(t.id)}>
                ✕
              </button>
            </div>
          ))}
        </div>
      </SweepContext.Provider>
    </ToastContext.Provider>
  );
}
