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
  task_title: string;
  read: boolean;
  created_at: number;
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
