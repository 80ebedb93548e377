// The app shell: token gate, header (demo banner, notification bell), the
// task list and the chat pane of the selected task. The selected task is in
// the address (/tasks/<id>) so a reload or a shared link opens it again;
// /schedules is the Schedules page, /lessons the Lessons page.
// Keyboard: n new task, / search, Escape closes the dialog.
import { useCallback, useEffect, useRef, useState } from 'react';
import { Api, getToken, setToken, setUnauthorizedHandler } from './api';
import type { ServerInfo } from './types';
import { Login } from './components/Login';
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
type Page = 'tasks' | 'schedules' | 'lessons';
function pageFromPath(): Page {
  const p = window.location.pathname;
  if (p.startsWith('/schedules')) return 'schedules';
  if (p.startsWith('/lessons')) return 'lessons';
  return 'tasks';
}

export function App() {
  const [token, setTok] = useState(getToken());
  const [info, setInfo] = useState<ServerInfo | null>(null);
  const [taskId, setTaskId] = useState(taskFromPath());
  const [page, setPage] = useState<Page>(pageFromPath());

  useEffect(() => {
    setUnauthorizedHandler(() => {
      setToken('');
      setTok('');
    });
    Api.info().then(setInfo).catch(() => setInfo(null));
    const onPop = () => {
      setTaskId(taskFromPath());
      setPage(pageFromPath());
    };
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);

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
    setTok(t);
  };

  if (!token) return <Login demo={info?.demo ?? false} onToken={signIn} />;
  return (
    <ToastProvider>
      <Shell
        info={info}
        taskId={taskId}
        open={open}
        page={page}
        openPage={openPage}
        onSignOut={() => signIn('')}
      />
    </ToastProvider>
  );
}

interface ShellProps {
  info: ServerInfo | null;
  taskId: string;
  open: (id: string) => void;
  page: Page; // the Schedules or Lessons page instead of the task list
  openPage: (p: Exclude<Page, 'tasks'>) => void;
  onSignOut: () => void;
}

// The signed-in page, inside the ToastProvider: the list's tasks also sweep
// stale toasts, and the shortcuts act on it.
function Shell({ info, taskId, open, page, openPage, onSignOut }: ShellProps) {
  const [creating, setCreating] = useState(false);
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
    newTask: () => setCreating(true),
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
        <button className="ghost" onClick={() => openPage('schedules')} aria-current={page === 'schedules' ? 'page' : undefined}>
          Schedules
        </button>
        <button className="ghost" onClick={() => openPage('lessons')} aria-current={page === 'lessons' ? 'page' : undefined}>
          Lessons
        </button>
        <button className="primary" onClick={() => setCreating(true)} title="New task (n)" aria-keyshortcuts="n">
          New task
        </button>
        <NotificationBell onOpen={open} />
        <button className="ghost" title="Forget the API token" onClick={onSignOut}>
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
