// The app shell: sign-in gate, header (demo banner, who is signed in,
// notification bell), the task list and the chat pane of the selected task.
// The selected task is in the address (/tasks/<id>) so a reload or a shared
// link opens it again; /schedules is the Schedules page, /lessons the Lessons
// page, /tokens the API tokens page, /audit the audit log (admins).
// Sign-in (issue 49): on start GET /api/me decides — 200 is signed in (a
// bearer token from localStorage, or the browser session an SSO sign-in
// set), 401 the Login screen (token field, and "Sign in with SSO" when the
// server has OIDC). /api/me's `can` hides what the caller's roles cannot do
// (the server enforces it regardless).
// Keyboard: n new task, / search, Escape closes the dialog.
import { useCallback, useEffect, useRef, useState } from 'react';
import { Api, ApiError, getToken, setToken, setUnauthorizedHandler } from './api';
import type { Me, ServerInfo } from './types';
import { Login } from './components/Login';
import { TokensPage } from './components/TokensPage';
import { AuditPage } from './components/AuditPage';
import { WhoAmI } from './components/WhoAmI';
import { TaskList } from './components/TaskList';
import { ChatPane } from './components/ChatPane';
import { CreateTaskDialog } from './components/CreateTaskDialog';
import { NotificationBell } from './components/NotificationBell';
import { SchedulesPage } from './components/SchedulesPage';
import { LessonsPage } from './components/LessonsPage';
import { ToastProvider, useToastSweep } from './components/Toasts';
import { useShortcuts } from './useShortcuts';
import { useTasks } from './useTasks';

function taskFromPath(): string {
  const m = window.location.pathname.match(/^\/tasks\/([^/]+)/);
  return m ? decodeURIComponent(m[1]) : '';
}

// The page beside the task list the address names.
type Page = 'tasks' | 'schedules' | 'lessons' | 'tokens' | 'audit';
function pageFromPath(): Page {
  const p = window.location.pathname;
  if (p.startsWith('/schedules')) return 'schedules';
  if (p.startsWith('/lessons')) return 'lessons';
  if (p.startsWith('/tokens')) return 'tokens';
  if (p.startsWith('/audit')) return 'audit';
  return 'tasks';
}

// Signed in or not; `me` null: signed in with a token on a server without
// /api/me (everything shown, as before issue 49).
type Auth = { state: 'loading' } | { state: 'out' } | { state: 'in'; me: Me | null };

export function App() {
  const [auth, setAuth] = useState<Auth>({ state: 'loading' });
  const [info, setInfo] = useState<ServerInfo | null>(null);
  const [taskId, setTaskId] = useState(taskFromPath());
  const [page, setPage] = useState<Page>(pageFromPath());

  const loadMe = useCallback(() => {
    Api.me().then(
      (me) => setAuth({ state: 'in', me }),
      (e: unknown) => {
        // 401: nobody (the handler below forgot the token). Anything else
        // with a token kept: an older server or a hiccup — stay signed in.
        if (e instanceof ApiError && e.status === 401) setAuth({ state: 'out' });
        else setAuth(getToken() ? { state: 'in', me: null } : { state: 'out' });
      },
    );
  }, []);

  useEffect(() => {
    setUnauthorizedHandler(() => {
      setToken('');
      setAuth({ state: 'out' });
    });
    Api.info().then(setInfo).catch(() => setInfo(null));
    loadMe();
    const onPop = () => {
      setTaskId(taskFromPath());
      setPage(pageFromPath());
    };
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, [loadMe]);

  const open = useCallback((id: string) => {
    window.history.pushState(null, '', id ? `/tasks/${encodeURIComponent(id)}` : '/');
    setTaskId(id);
    setPage('tasks');
  }, []);
  const openPage = useCallback((p: Exclude<Page, 'tasks'>) => {
    window.history.pushState(null, '', `/${p}`);
    setTaskId('');
    setPage(p);
  }, []);
  const signIn = (t: string) => {
    setToken(t);
    setAuth({ state: 'loading' });
    loadMe();
  };
  // A session ends on the server (POST /auth/logout expires both cookies);
  // a token is forgotten. Then the Login screen — or the provider's own
  // logout page when it named one.
  const signOut = async (me: Me | null) => {
    let next = '';
    if (me?.via === 'session') {
      try {
        next = (await Api.logout()).logout_url ?? '';
      } catch {
        /* the session is gone or the server is down: signed out here anyway */
      }
    }
    setToken('');
    setAuth({ state: 'out' });
    if (next) window.location.href = next;
  };

  if (auth.state === 'loading') return <div className="login muted" data-testid="auth-loading">Loading…</div>;
  if (auth.state === 'out')
    return <Login demo={info?.demo ?? false} onToken={signIn} sso={info?.auth?.oidc ? info.auth.login_url || '/auth/login' : ''} />;
  return (
    <ToastProvider>
      <Shell
        info={info}
        me={auth.me}
        taskId={taskId}
        open={open}
        page={page}
        openPage={openPage}
        onSignOut={() => void signOut(auth.me)}
      />
    </ToastProvider>
  );
}

interface ShellProps {
  info: ServerInfo | null;
  me: Me | null;
  taskId: string;
  open: (id: string) => void;
  page: Page; // the Schedules or Lessons page instead of the task list
  openPage: (p: Exclude<Page, 'tasks'>) => void;
  onSignOut: () => void;
}

// The signed-in page, inside the ToastProvider: the list's tasks also sweep
// stale toasts, and the shortcuts act on it.
function Shell({ info, me, taskId, open, page, openPage, onSignOut }: ShellProps) {
  const [creating, setCreating] = useState(false);
  const canRun = me === null || me.can.run;
  const canAdmin = me !== null && me.can.admin;
  const [listVersion, setListVersion] = useState(0);
  const listChanged = useCallback(() => setListVersion((v) => v + 1), []);
  const { tasks, loaded, error } = useTasks(listVersion);
  const search = useRef<HTMLInputElement>(null);
  const sweep = useToastSweep();
  useEffect(() => {
    if (!loaded) return;
    const status = new Map(tasks.map((t) => [t.id, t.status]));
    // "needs you" is stale once the task waits for nobody (or is gone).
    sweep((t) => t.topic === 'needs_you' && !!t.taskId && status.get(t.taskId) !== 'waiting_human');
  }, [tasks, loaded, sweep]);
  useShortcuts({
    newTask: () => canRun && setCreating(true),
    focusSearch: () => {
      if (taskId && window.matchMedia('(max-width: 760px)').matches) open('');
      window.setTimeout(() => search.current?.focus(), 0);
    },
    escape: () => setCreating(false),
  });
  return (
    <div className={`app ${taskId ? 'has-task' : ''}`}>
      <header className="topbar">
        <button className="brand" onClick={() => open('')} aria-label="All tasks">
          maestro
        </button>
        {info?.demo && (
          <span className="demo-badge" data-testid="demo-banner" title="No LLM server is configured">
            Demo model — scripted answers, not a real LLM
          </span>
        )}
        <span className="spacer" />
        {me && <WhoAmI me={me} />}
        <button className="ghost" onClick={() => openPage('schedules')} aria-current={page === 'schedules' ? 'page' : undefined}>
          Schedules
        </button>
        <button className="ghost" onClick={() => openPage('lessons')} aria-current={page === 'lessons' ? 'page' : undefined}>
          Lessons
        </button>
        <button className="ghost" onClick={() => openPage('tokens')} aria-current={page === 'tokens' ? 'page' : undefined}>
          Tokens
        </button>
        {canAdmin && (
          <button className="ghost" data-testid="nav-audit" onClick={() => openPage('audit')} aria-current={page === 'audit' ? 'page' : undefined}>
            Audit
          </button>
        )}
        {canRun && (
          <button className="primary" onClick={() => setCreating(true)} title="New task (n)" aria-keyshortcuts="n">
            New task
          </button>
        )}
        <NotificationBell onOpen={open} />
        <button
          className="ghost"
          data-testid="sign-out"
          title={me?.via === 'session' ? 'End this browser session' : 'Forget the API token'}
          onClick={onSignOut}
        >
          Sign out
        </button>
      </header>
      {page === 'schedules' ? (
        <main className="layout" style={{ gridTemplateColumns: '1fr' }}>
          <SchedulesPage onOpenTask={open} />
        </main>
      ) : page === 'lessons' ? (
        <main className="layout" style={{ gridTemplateColumns: 'minmax(0, 1fr)' }}>
          <LessonsPage onOpenTask={open} />
        </main>
      ) : page === 'tokens' ? (
        <main className="layout" style={{ gridTemplateColumns: 'minmax(0, 1fr)' }}>
          <TokensPage me={me} />
        </main>
      ) : page === 'audit' ? (
        <main className="layout" style={{ gridTemplateColumns: 'minmax(0, 1fr)' }}>
          <AuditPage onOpenTask={open} />
        </main>
      ) : (
      <main className="layout">
        <TaskList ref={search} tasks={tasks} error={error} selected={taskId} onSelect={open} />
        {taskId ? (
          <ChatPane key={taskId} taskId={taskId} onBack={() => open('')} onChanged={listChanged} />
        ) : (
          <section className="empty-pane">
            <p>Select a task, or create one.</p>
            {info?.demo && (
              <p className="muted">
                This server runs the bundled demo model. Create a task and pick one of the suggested
                instructions to see streaming, tool approvals, package requests, questions and cancel.
              </p>
            )}
          </section>
        )}
      </main>
      )}
      {creating && (
        <CreateTaskDialog
          demo={info?.demo ?? false}
          me={me}
          onClose={() => setCreating(false)}
          onCreated={(id) => {
            setCreating(false);
            listChanged();
            open(id);
          }}
        />
      )}
    </div>
  );
}
