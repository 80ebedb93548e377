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
  status: string;
  error_message: string;
  llm_call_count: number;
  tool_call_count: number;
  total_tokens: number;
  created_at: number;
  updated_at: number;
  completed_at: number;
}

export interface Job {
  id: string;
  task_id: string;
  status: JobStatus;
  piece: string;
  attempt: number;
  max_attempts: number;
  wait_reason: string;
  resume_movement: string;
  error_message: string;
  result: string;
  next_retry_at: number;
  created_at: number;
  started_at: number;
  finished_at: number;
}

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
}

export interface ServerInfo {
  version: string;
  demo: boolean;
  model: string;
}

// One live delta of GET /api/local/jobs/:id/stream (src/engine/agent_loop.cc).
export interface Delta {
  seq: number;
  type: string;
  at?: number;
  [key: string]: unknown;
}

export const TERMINAL: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled']);
