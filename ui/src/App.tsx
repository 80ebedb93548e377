// The app shell: token gate, header (demo banner, notification bell), the
// task list and the chat pane of the selected task. The selected task is in
// the address (/tasks/<id>) so a reload or a shared link opens it again.
import { useCallback, useEffect, useState } from 'react';
import { Api, getToken, setToken, setUnauthorizedHandler } from './api';
import type { ServerInfo } from './types';
import { Login } from './components/Login';
import { TaskList } from './components/TaskList';
import { ChatPane } from './components/ChatPane';
import { CreateTaskDialog } from './components/CreateTaskDialog';
import { NotificationBell } from './components/NotificationBell';
import { ToastProvider } from './components/Toasts';

function taskFromPath(): string {
  const m = window.location.pathname.match(/^\/tasks\/([^/]+)/);
  return m ? decodeURIComponent(m[1]) : '';
}

export function App() {
  const [token, setTok] = useState(getToken());
  const [info, setInfo] = useState<ServerInfo | null>(null);
  const [taskId, setTaskId] = useState(taskFromPath());
  const [creating, setCreating] = useState(false);
  const [listVersion, setListVersion] = useState(0);

  useEffect(() => {
    setUnauthorizedHandler(() => {
      setToken('');
      setTok('');
    });
    Api.info().then(setInfo).catch(() => setInfo(null));
    const onPop = () => setTaskId(taskFromPath());
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);

  const listChanged = useCallback(() => setListVersion((v) => v + 1), []);
  const open = useCallback((id: string) => {
    window.history.pushState(null, '', id ? `/tasks/${encodeURIComponent(id)}` : '/');
    setTaskId(id);
  }, []);

  if (!token) {
    return (
      <Login
        demo={info?.demo ?? false}
        onToken={(t) => {
          setToken(t);
          setTok(t);
        }}
      />
    );
  }

  return (
    <ToastProvider>
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
          <button className="primary" onClick={() => setCreating(true)}>
            New task
          </button>
          <NotificationBell onOpen={open} />
          <button
            className="ghost"
            title="Forget the API token"
            onClick={() => {
              setToken('');
              setTok('');
            }}
          >
            Sign out
          </button>
        </header>
        <main className="layout">
          <TaskList selected={taskId} onSelect={open} version={listVersion} />
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
        {creating && (
          <CreateTaskDialog
            demo={info?.demo ?? false}
            onClose={() => setCreating(false)}
            onCreated={(id) => {
              setCreating(false);
              setListVersion((v) => v + 1);
              open(id);
            }}
          />
        )}
      </div>
    </ToastProvider>
  );
}
