// Schedules (issue 20): the types of /api/local/schedules and its calls.
// A schedule fires a new task on a cron rule in an IANA time zone; the
// server computes next_fires, so the UI never does time-zone maths.
import { api } from './api';
import type { Job, Task } from './types';

export type Overlap = 'skip' | 'queue' | 'allow';
export type CatchUp = 'none' | 'one';

export interface Schedule {
  id: string;
  name: string;
  cron: string;
  timezone: string;
  instruction: string;
  piece: string;
  space: string;
  profile: string;
  visibility: 'private' | 'shared';
  owner: string;
  enabled: boolean;
  overlap: Overlap;
  catch_up: CatchUp;
  last_fire_at: number;
  last_task_id: string;
  created_at: number;
  updated_at: number;
  next_fires: number[]; // ms since the epoch, the next five (none while paused)
}

export interface NewSchedule {
  name: string;
  cron: string;
  timezone: string;
  instruction: string;
  piece: string;
  overlap: Overlap;
  catch_up: CatchUp;
  visibility: 'private' | 'shared';
}

export interface ScheduleFire {
  fire_at: number;
  manual: boolean;
  outcome: 'created' | 'skipped' | 'held';
  task: Task | null;
}

const json = (method: string, body?: unknown): RequestInit => ({
  method,
  body: body === undefined ? undefined : JSON.stringify(body),
});

export const SchedulesApi = {
  list: () => api<{ schedules: Schedule[] }>('/api/local/schedules'),
  create: (s: NewSchedule) => api<{ schedule: Schedule }>('/api/local/schedules', json('POST', s)),
  update: (id: string, fields: Partial<NewSchedule> & { enabled?: boolean }) =>
    api<{ schedule: Schedule }>(`/api/local/schedules/${id}`, json('PATCH', fields)),
  remove: (id: string) => api<{ deleted: string }>(`/api/local/schedules/${id}`, json('DELETE')),
  run: (id: string) => api<{ task: Task; job: Job }>(`/api/local/schedules/${id}/run`, json('POST', {})),
  history: (id: string) => api<{ fires: ScheduleFire[] }>(`/api/local/schedules/${id}/tasks`),
};
