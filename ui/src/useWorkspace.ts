// useWorkspace: a task's workspace listing and diff for the workspace pane.
// Probes the files route once (a server without it answers 404: no pane),
// and while the pane is open reloads both whenever `version` moves (a tool
// call finished, a job changed status).
import { useEffect, useState } from 'react';
import { Api, ApiError } from './api';
import type { TaskDiff, WorkspaceListing } from './types';

export interface Workspace {
  available: boolean | null; // null: not known yet
  listing: WorkspaceListing | null;
  diff: TaskDiff | null;
  error: string;
}

export function useWorkspace(taskId: string, open: boolean, version: number): Workspace {
  const [available, setAvailable] = useState<boolean | null>(null);
  const [listing, setListing] = useState<WorkspaceListing | null>(null);
  const [diff, setDiff] = useState<TaskDiff | null>(null);
  const [error, setError] = useState('');

  useEffect(() => {
    let alive = true;
    setAvailable(null);
    Api.files(taskId).then(
      (l) => {
        if (!alive) return;
        setAvailable(true);
        setListing(l);
      },
      (e: unknown) => alive && setAvailable(!(e instanceof ApiError && e.status === 404)),
    );
    return () => {
      alive = false;
    };
  }, [taskId]);

  useEffect(() => {
    if (!open || available === false) return;
    let alive = true;
    Promise.all([
      Api.files(taskId),
      Api.diff(taskId).catch((e: unknown) => {
        if (e instanceof ApiError && e.status === 404) return null;
        throw e;
      }),
    ]).then(
      ([l, d]) => {
        if (!alive) return;
        setListing(l);
        setDiff(d);
        setError('');
      },
      (e: unknown) => alive && setError((e as Error).message),
    );
    return () => {
      alive = false;
    };
  }, [taskId, open, available, version]);

  return { available, listing, diff, error };
}
