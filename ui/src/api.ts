// The REST client: every call carries the bearer token kept in localStorage.
// Errors come back as ApiError with the server's {"error":{code,message}}.
import type { ApprovalRequest, Comment, Job, Notification, Piece, ServerInfo, Space, Task, TaskDetail } from './types';

const TOKEN_KEY = 'maestro.token';

export function getToken(): string {
  return localStorage.getItem(TOKEN_KEY) ?? '';
}
export function setToken(token: string): void {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

export class ApiError extends Error {
  constructor(public status: number, public code: string, message: string) {
    super(message);
  }
}

// Called on a 401 so the app can ask for the token again.
let onUnauthorized: () => void = () => {};
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

export async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${getToken()}`);
  if (init.body) headers.set('Content-Type', 'application/json');
  let res: Response;
  try {
    res = await fetch(path, { ...init, headers });
  } catch (e) {
    throw new ApiError(0, 'NETWORK', `cannot reach the server (${String(e)})`);
  }
  const text = await res.text();
  const body = text ? safeParse(text) : {};
  if (!res.ok) {
    if (res.status === 401) onUnauthorized();
    const err = (body as { error?: { code?: string; message?: string } }).error ?? {};
    throw new ApiError(res.status, err.code ?? String(res.status), err.message ?? res.statusText);
  }
  return body as T;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { raw: text };
  }
}

const post = (body?: unknown): RequestInit => ({
  method: 'POST',
  body: JSON.stringify(body ?? {}),
});

export const Api = {
  info: () => api<ServerInfo>('/api/info'),
  checkToken: () => api<{ notifications: Notification[] }>('/api/local/notifications?unread=true'),
  tasks: () => api<{ tasks: Task[] }>('/api/local/tasks'),
  task: (id: string) => api<TaskDetail>(`/api/local/tasks/${id}`),
  comments: (id: string) => api<{ comments: Comment[] }>(`/api/local/tasks/${id}/comments`),
  createTask: (b: { instruction: string; piece: string; space?: string; title?: string }) =>
    api<{ task: Task; job: Job }>('/api/local/tasks', post(b)),
  comment: (id: string, body: string) =>
    api<{ comment: Comment; outcome: string; job: Job }>(`/api/local/tasks/${id}/comments`, post({ body })),
  cancel: (id: string) => api<{ cancelled: number; stopping: number }>(`/api/local/tasks/${id}/cancel`, post()),
  continueTask: (id: string, note: string) =>
    api<{ job: Job }>(`/api/local/tasks/${id}/continue`, post(note ? { note } : {})),
  decide: (r: ApprovalRequest, decision: 'approve' | 'deny', scope?: 'once' | 'task') =>
    api<{ request: ApprovalRequest; job: Job }>(
      `/api/local/tasks/${r.task_id}/${r.kind}-requests/${r.id}/decide`,
      post(scope ? { decision, scope } : { decision }),
    ),
  pieces: () => api<{ pieces: Piece[] }>('/api/pieces'),
  // The persistent spaces; a server without the route (404) has none.
  spaces: () =>
    api<{ spaces?: Space[] }>('/api/spaces').then(
      (r) => r.spaces ?? [],
      (e: unknown) => {
        if (e instanceof ApiError && e.status === 404) return [] as Space[];
        throw e;
      },
    ),
  notifications: () => api<{ notifications: Notification[]; unread: number }>('/api/local/notifications'),
  markRead: (ids: string[]) => api<{ marked: boolean }>('/api/local/notifications/read', post({ ids })),
};
