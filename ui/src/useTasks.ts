// useTasks: the task list (GET /api/local/tasks), polled every 3 s and
// reloaded when `version` moves (a local change).
import { useEffect, useState } from 'react';
import { Api } from './api';
import type { Task } from './types';

export function useTasks(version: number): { tasks: Task[]; loaded: boolean; error: string } {
  const [tasks, setTasks] = useState<Task[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState('');
  useEffect(() => {
    let alive = true;
    const load = () =>
      Api.tasks()
        .then((r) => {
          if (!alive) return;
          setTasks(r.tasks);
          setLoaded(true);
          setError('');
        })
        .catch((e) => alive && setError((e as Error).message));
    void load();
    const t = window.setInterval(load, 3000);
    return () => {
      alive = false;
      window.clearInterval(t);
    };
  }, [version]);
  return { tasks, loaded, error };
}
