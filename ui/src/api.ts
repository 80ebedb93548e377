// The REST client. Two ways to be signed in (issue 49): a bearer token kept
// in localStorage (sent as Authorization), or — with no token — the browser
// session an SSO sign-in set (the HttpOnly maestro_session cookie goes along
// same-origin; every state-changing request carries X-CSRF-Token, the value
// of the readable maestro_csrf cookie, which the server compares with the
// session's). Errors come back as ApiError with the server's
// {"error":{code,message,field}}.
import type {
  ApiToken, ApprovalRequest, Attachment, AuditEntry, AuditFilters, BrowserInput, Comment, Job, LedgerCall, Me, Notification, Piece, Profile,
  Scope, ServerInfo, Space, Task, TaskDetail, TaskDiff, Visibility, WorkspaceFile, WorkspaceListing,
} from './types';

const TOKEN_KEY = 'maestro.token';

export function getToken(): string {
  return localStorage.getItem(TOKEN_KEY) ?? '';
}
export function setToken(token: string): void {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

// The maestro_csrf cookie an SSO sign-in set ("" when there is none).
export function csrfToken(): string {
  for (const part of document.cookie.split(';')) {
    const c = part.trim();
    if (c.startsWith('maestro_csrf=')) return decodeURIComponent(c.slice('maestro_csrf='.length));
  }
  return '';
}

// The credential headers of a request: the bearer token when one is kept
// (none otherwise: the session cookie speaks), and X-CSRF-Token on every
// method but GET/HEAD when the session's csrf cookie is there.
export function authHeaders(method = 'GET', headers: Headers = new Headers()): Headers {
  const t = getToken();
  if (t) headers.set('Authorization', `Bearer ${t}`);
  const m = method.toUpperCase();
  if (m !== 'GET' && m !== 'HEAD') {
    const c = csrfToken();
    if (c) headers.set('X-CSRF-Token', c);
  }
  return headers;
}

export class ApiError extends Error {
  // `field`: the request field a 400 names (`{"error":{"field"}}`), if any.
  constructor(public status: number, public code: string, message: string, public field = '') {
    super(message);
  }
}

// Called on a 401 so the app can ask for the token again.
let onUnauthorized: () => void = () => {};
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

export async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  const headers = authHeaders(init.method ?? 'GET', new Headers(init.headers));
  // A FormData body gets its multipart Content-Type (with the boundary) from fetch.
  if (init.body && !(init.body instanceof FormData)) headers.set('Content-Type', 'application/json');
  let res: Response;
  try {
    res = await fetch(path, { ...init, headers, credentials: 'same-origin' });
  } catch (e) {
    throw new ApiError(0, 'NETWORK', `cannot reach the server (${String(e)})`);
  }
  const text = await res.text();
  const body = text ? safeParse(text) : {};
  if (!res.ok) {
    if (res.status === 401) onUnauthorized();
    const err = (body as { error?: { code?: string; message?: string; field?: string } }).error ?? {};
    throw new ApiError(res.status, err.code ?? String(res.status), err.message ?? res.statusText, err.field ?? '');
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

// A POST with files: multipart/form-data, the fields as one `json` part and
// one part per file (docs/api.md "Attachments"); without files, plain JSON.
const postWithFiles = (fields: Record<string, unknown>, files: File[]): RequestInit => {
  if (files.length === 0) return post(fields);
  const form = new FormData();
  form.append('json', JSON.stringify(fields));
  for (const f of files) form.append('file', f, f.name);
  return { method: 'POST', body: form };
};

export const Api = {
  info: () => api<ServerInfo>('/api/info'),
  // Who is signed in (401: nobody — the Login screen).
  me: () => api<Me>('/api/me'),
  // Ends the browser session; logout_url: the provider's end-session page or "".
  logout: () => api<{ logout_url?: string }>('/auth/logout', post()),
  tokens: () => api<{ tokens: ApiToken[] }>('/api/local/tokens'),
  createToken: (b: { name: string; scopes: Scope[]; expires_in_s?: number }) =>
    api<ApiToken & { token: string }>('/api/local/tokens', post(b)),
  revokeToken: (id: string) => api<unknown>(`/api/local/tokens/${encodeURIComponent(id)}`, { method: 'DELETE' }),
  audit: (f: AuditFilters, beforeId?: number | string | null) =>
    api<{ entries: AuditEntry[]; next_before_id: number | string | null }>(
      `/api/local/audit${auditQuery(f, beforeId !== null && beforeId !== undefined ? { before_id: String(beforeId), limit: '100' } : { limit: '100' })}`,
    ),
  checkToken: () => api<{ notifications: Notification[] }>('/api/local/notifications?unread=true'),
  tasks: () => api<{ tasks: Task[] }>('/api/local/tasks'),
  task: (id: string) => api<TaskDetail>(`/api/local/tasks/${id}`),
  comments: (id: string) => api<{ comments: Comment[] }>(`/api/local/tasks/${id}/comments`),
  createTask: (
    b: { instruction: string; piece: string; space?: string; title?: string; profile?: string; visibility?: Visibility },
    files: File[] = [],
  ) =>
    api<{ task: Task; job: Job; attachments: Attachment[] }>('/api/local/tasks', postWithFiles(b, files)),
  comment: (id: string, body: string, files: File[] = []) =>
    api<{ comment: Comment; outcome: string; job: Job; attachments: Attachment[] }>(
      `/api/local/tasks/${id}/comments`,
      postWithFiles(body ? { body } : {}, files),
    ),
  attachments: (id: string) => api<{ attachments: Attachment[] }>(`/api/local/tasks/${id}/attachments`),
  raiseBudget: (id: string, limits: Record<string, number>) =>
    api<{ job: Job }>(`/api/local/tasks/${id}/budget`, post(limits)),
  cancel: (id: string) => api<{ cancelled: number; stopping: number }>(`/api/local/tasks/${id}/cancel`, post()),
  // A new job continuing the finished one; `piece` "" keeps the task's piece.
  continueTask: (id: string, note: string, piece = '') =>
    api<{ job: Job; comment: Comment }>(`/api/local/tasks/${id}/continue`, post({ ...(note ? { note } : {}), ...(piece ? { piece } : {}) })),
  decide: (r: ApprovalRequest, decision: 'approve' | 'deny', scope?: 'once' | 'task') =>
    api<{ request: ApprovalRequest; job: Job }>(
      `/api/local/tasks/${r.task_id}/${r.kind}-requests/${r.id}/decide`,
      post(scope ? { decision, scope } : { decision }),
    ),
  renameTask: (id: string, title: string) =>
    api<{ task: Task }>(`/api/local/tasks/${id}`, { method: 'PATCH', body: JSON.stringify({ title }) }),
  // The tool ledger, every page (the route pages with ?after=).
  toolCalls: async (id: string) => {
    const all: LedgerCall[] = [];
    let after: number | null = null;
    for (let page = 0; page < 50; page++) {
      const q: string = after === null ? '?limit=500' : `?limit=500&after=${after}`;
      const r = await api<{ tool_calls: LedgerCall[]; next_after: number | null }>(`/api/local/tasks/${id}/tool-calls${q}`);
      all.push(...r.tool_calls);
      if (r.next_after === null || r.next_after === undefined || r.tool_calls.length === 0) break;
      after = r.next_after;
    }
    return all;
  },
  files: (id: string) => api<WorkspaceListing>(`/api/local/tasks/${id}/files`),
  file: (id: string, path: string) => api<WorkspaceFile>(`/api/local/tasks/${id}/files/${encodePath(path)}`),
  diff: (id: string) => api<TaskDiff>(`/api/local/tasks/${id}/diff`),
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
  // The LLM profiles a task may name (names and models only); a server
  // without the route (404) offers only its default.
  profiles: () =>
    api<{ profiles?: Profile[] }>('/api/profiles').then(
      (r) => r.profiles ?? [],
      (e: unknown) => {
        if (e instanceof ApiError && e.status === 404) return [] as Profile[];
        throw e;
      },
    ),
  notifications: () => api<{ notifications: Notification[]; unread: number }>('/api/local/notifications'),
  markRead: (ids: string[]) => api<{ marked: boolean }>('/api/local/notifications/read', post({ ids })),
  // The live view of a job parked on a login (wait_reason browser_login):
  // input into its browser, then Done requeues the job with the session.
  browserInput: (jobId: string, input: BrowserInput) =>
    api<{ ok: boolean }>(`/api/local/jobs/${jobId}/browser/input`, post(input)),
  browserDone: (jobId: string) => api<{ resumed: boolean }>(`/api/local/jobs/${jobId}/browser/done`, post()),
  // Requeues every job of the space waiting on this CAPTCHA screen.
  resolveCaptcha: (spaceId: string, screen: string) =>
    api<{ resumed: number }>('/api/local/captcha-pool/resolve', post({ space_id: spaceId, screen })),
};

// The task browser's current page as a PNG blob (GET …/browser/screenshot
// needs the bearer token, so an <img src> could not load it). `signal` aborts.
export async function browserScreenshot(jobId: string, signal?: AbortSignal): Promise<Blob> {
  let res: Response;
  try {
    res = await fetch(`/api/local/jobs/${jobId}/browser/screenshot?t=${Date.now()}`, {
      headers: authHeaders(),
      credentials: 'same-origin',
      cache: 'no-store',
      signal,
    });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(0, 'NETWORK', `cannot reach the server (${String(e)})`);
  }
  if (!res.ok) {
    if (res.status === 401) onUnauthorized();
    const body = safeParse(await res.text()) as { error?: { code?: string; message?: string } };
    throw new ApiError(res.status, body.error?.code ?? String(res.status), body.error?.message ?? `HTTP ${res.status}`);
  }
  return res.blob();
}

// A workspace path in a URL: each segment encoded, the slashes kept.
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

// Downloads a workspace file's bytes (?raw=1) with the bearer token — a plain
// link could not send it — and saves them under the file's name.
export async function downloadFile(taskId: string, path: string): Promise<void> {
  await downloadUrl(`/api/local/tasks/${taskId}/files/${encodePath(path)}?raw=1`, path.split('/').pop() || 'download');
}

// Fetches `url` with the caller's credentials and saves the bytes as `name`.
export async function downloadUrl(url: string, name: string): Promise<void> {
  const res = await fetch(url, { headers: authHeaders(), credentials: 'same-origin' });
  if (!res.ok) throw new ApiError(res.status, String(res.status), `download failed (HTTP ${res.status})`);
  const blob = await res.blob();
  const href = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = href;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  window.setTimeout(() => URL.revokeObjectURL(href), 10000);
}

// The audit filters as a query string (empty ones left out).
export function auditQuery(f: AuditFilters, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...f, ...extra })) if (v) q.set(k, String(v).trim());
  const s = q.toString();
  return s ? `?${s}` : '';
}
