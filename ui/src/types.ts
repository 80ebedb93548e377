// Shapes of the maestro REST API (docs/api.md) as the UI uses them.

export type JobStatus =
  | 'queued' | 'running' | 'waiting_human' | 'waiting_subtasks'
  | 'retry' | 'succeeded' | 'failed' | 'cancelled';

export interface Task {
  id: string;
  title: string;
  instruction: string;
  piece: string;
  space: string;
  owner: string;
  visibility?: Visibility;
  status: string;
  error_message: string;
  llm_call_count: number;
  tool_call_count: number;
  total_tokens: number;
  usage?: Usage;
  budget?: Budget;
  created_at: number;
  updated_at: number;
  completed_at: number;
  // Issue 49: the team whose space the task runs in ("" for none) and what
  // the caller may do on it (absent from older servers: everything).
  team?: string;
  can?: TaskCan;
}

// What the caller may do on one task: run (continue, cancel, comment,
// rename) and decide (approvals, budget raises). Hiding is UX only.
export interface TaskCan {
  run: boolean;
  decide: boolean;
}

// The task's effective budget limits and what it spent (docs/api.md "Budget").
export interface Budget {
  max_tokens?: number;
  max_cost?: number;
  max_llm_calls?: number;
  max_wall_s?: number;
  spent?: { tokens: number; llm_calls: number; cost: number | null; wall_s: number };
}

export interface Job {
  id: string;
  task_id: string;
  status: JobStatus;
  piece: string;
  // The LLM profile the job runs on (GET /api/profiles).
  profile?: string;
  // Set on a job a Continue started: the job it continues from.
  continued_from_job_id?: string;
  attempt: number;
  max_attempts: number;
  wait_reason: string;
  // wait_reason captcha: the space and the screen the job waits on (a
  // resumed job keeps the screen, its space id is "").
  captcha_space_id?: string;
  captcha_screen?: string;
  resume_movement: string;
  error_message: string;
  result: string;
  next_retry_at: number;
  usage?: Usage;
  created_at: number;
  started_at: number;
  finished_at: number;
}

// One input into a parked job's browser (POST /jobs/:id/browser/input);
// click coordinates are viewport CSS pixels of the 1280×800 page.
export type BrowserInput =
  | { type: 'click'; x: number; y: number }
  | { type: 'text'; text: string }
  | { type: 'key'; key: 'Enter' | 'Tab' | 'Backspace' };

// The task browser's viewport (the screenshot's CSS size).
export const BROWSER_VIEWPORT = { width: 1280, height: 800 } as const;

export interface Comment {
  id: string;
  task_id: string;
  job_id: string;
  author: string;
  kind: string;
  body: string;
  // When the comment reached an LLM prompt (ms); 0 or null: not yet.
  delivered_at?: number | null;
  created_at: number;
}

// A file sent with the task or a comment (GET /api/local/tasks/:id/attachments).
export interface Attachment {
  id: string;
  name: string;
  path: string; // in the workspace: attachments/<name>
  size: number;
  content_type: string;
  sha256: string;
  comment_id: string;
  created_at: number;
  delivered: boolean; // listed in a prompt yet
}

export interface ApprovalRequest {
  id: string;
  task_id: string;
  job_id: string;
  kind: 'tool' | 'package' | 'spawn';
  name: string;
  args: unknown;
  reason: string;
  status: string;
  scope: string;
  // false: the server will not grant this (e.g. a tool outside the space's
  // policy); only Deny is offered, with the reason.
  created_at: number;
}

export interface TaskEvent {
  id: string;
  type: string;
  task_id: string;
  job_id: string;
  payload: Record<string, unknown>;
  created_at: number;
}

export interface TaskDetail {
  task: Task;
  latest_job: Job | null;
  jobs: Job[];
  pending_requests: ApprovalRequest[];
}

export interface Piece {
  name: string;
  description: string;
}

// Who sees a task: its owner only, or every user (docs/api.md "Visibility").
export type Visibility = 'private' | 'shared';

// A configured LLM profile as GET /api/profiles lists it ("default" first).
export interface Profile {
  name: string;
  model: string;
}

export interface Notification {
  id: string;
  task_id: string;
  job_id: string;
  status: string;
  // What happened to the task (the job's status alone says "succeeded" also
  // for an answered question or a handoff). Absent from older servers.
  outcome?: 'question_answered' | 'handed_off' | 'finished' | 'failed' | 'needs_you';
  summary?: string;
  wait_reason?: string;
  task_title: string;
  task_name?: string; // the title, else the instruction's first line, shortened
  read: boolean;
  created_at: number;
}

// One persistent space of GET /api/spaces (a task may run in it instead of
// its own ephemeral workspace).
export interface Space {
  name: string;
  description: string;
  path: string;
  network_allowed: boolean;
  edit_allowed: boolean;
  shell_allowed: boolean;
  tools: string[];
  team?: string; // the team the space belongs to ("" or absent: none)
}

export interface ServerInfo {
  version: string;
  demo: boolean;
  model: string;
  // Issue 49: oidc true offers "Sign in with SSO" (GET login_url).
  auth?: { oidc: boolean; login_url?: string };
}

// GET /api/me (issue 49): who the caller is and what it may do anywhere.
export type Role = 'viewer' | 'approver' | 'operator' | 'admin';
export interface Me {
  user: string;
  via: 'session' | 'token' | 'admin_token' | 'open' | string;
  scopes: string[];
  admin: boolean;
  default_role: Role | string;
  teams: { team: string; role: Role | string }[];
  can: { read: boolean; run: boolean; decide: boolean; admin: boolean };
}

// One scoped API token of GET /api/local/tokens (times ms; 0 = none).
export type Scope = 'read' | 'run' | 'decide' | 'admin';
export interface ApiToken {
  id: string;
  name: string;
  user: string;
  scopes: Scope[] | string[];
  created_at: number;
  expires_at: number;
  revoked_at: number;
}

// One entry of the audit log (GET /api/local/audit), newest first.
export interface AuditEntry {
  id: number | string;
  at: number;
  actor: string;
  action: string;
  task_id: string;
  team: string;
  detail: Record<string, unknown>;
}
export interface AuditFilters {
  actor?: string;
  action?: string;
  task_id?: string;
  since?: string;
  until?: string;
}

// One live delta of GET /api/local/jobs/:id/stream (src/engine/agent_loop.cc).
export interface Delta {
  seq: number;
  type: string;
  at?: number;
  [key: string]: unknown;
}

export const TERMINAL: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled']);

// What a task or job cost: model calls, tokens, cache reuse and the price
// (null when the server has no price table).
export interface Usage {
  llm_calls: number;
  prompt_tokens: number;
  cached_tokens: number;
  // Written to the provider's cache (Anthropic's cache_creation_input_tokens; 0 elsewhere).
  cache_write_tokens?: number;
  completion_tokens: number;
  cache_hit_pct: number;
  model_ms: number;
  cost: number | null;
  currency: string;
}

// One entry of the task's tool ledger (GET /tasks/:id/tool-calls).
export interface LedgerCall {
  job_id: string;
  call_id: string;
  tool: string;
  args: Record<string, unknown>;
  read_only?: boolean;
  status: 'running' | 'finished' | 'error' | 'waiting' | 'reconciled' | string;
  result?: string | null;
  duration_ms?: number | null;
  started_at?: number | null;
  finished_at?: number | null;
}

// GET /tasks/:id/files
export interface WorkspaceEntry {
  path: string;
  type: 'file' | 'dir' | 'symlink';
  size: number;
  modified_at: number;
}
export interface WorkspaceListing {
  root_kind: 'ephemeral' | 'space' | string;
  space: string;
  files: WorkspaceEntry[];
  truncated: boolean;
}
export interface WorkspaceFile {
  path: string;
  size: number;
  binary: boolean;
  truncated: boolean;
  content: string | null;
}

// GET /tasks/:id/diff
export interface DiffFile {
  path: string;
  old_path?: string;
  status: 'added' | 'modified' | 'deleted' | 'renamed' | string;
  binary: boolean;
  additions: number;
  deletions: number;
  patch: string;
  patch_truncated: boolean;
}
export interface TaskDiff {
  repository?: boolean;
  jobs: { job_id: string; commit: string; message: string; files: DiffFile[] }[];
  uncommitted: { files: DiffFile[] };
  total: { files: DiffFile[] };
}
