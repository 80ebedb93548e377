// Lessons (issue 21): the types of /api/local/lessons and its calls. A lesson
// is space knowledge a Reflection task (or a person) wrote; later tasks of
// its space — of one piece, with scope "piece" — get it in their instruction.
import { api } from './api';

export type LessonScope = 'space' | 'piece';

export interface Lesson {
  id: string;
  space: string; // "" = the ephemeral (no-space) tasks
  piece: string; // scope "piece": the piece it applies to; else ""
  scope: LessonScope;
  lesson: string;
  evidence: string[]; // the task ids it was learned from
  source_task_id: string; // the Reflection task that wrote it; "" = a person
  created_at: number;
  updated_at: number;
}

export interface NewLesson {
  space: string;
  scope: LessonScope;
  piece?: string;
  lesson: string;
  evidence?: string[];
}

export type LessonFields = Partial<Pick<Lesson, 'scope' | 'piece' | 'lesson' | 'evidence'>>;

const json = (method: string, body?: unknown): RequestInit => ({
  method,
  body: body === undefined ? undefined : JSON.stringify(body),
});

export const LessonsApi = {
  // `space` undefined: every space; "" : the no-space tasks.
  list: (space?: string) =>
    api<{ lessons: Lesson[] }>(
      space === undefined ? '/api/local/lessons' : `/api/local/lessons?space=${encodeURIComponent(space)}`,
    ),
  create: (l: NewLesson) => api<{ lesson: Lesson }>('/api/local/lessons', json('POST', l)),
  update: (id: string, fields: LessonFields) =>
    api<{ lesson: Lesson }>(`/api/local/lessons/${encodeURIComponent(id)}`, json('PATCH', fields)),
  remove: (id: string) => api<{ deleted: string }>(`/api/local/lessons/${encodeURIComponent(id)}`, json('DELETE')),
};

// The space's name as the page shows it.
export const spaceLabel = (space: string) => (space ? space : '(no space)');
