// ActivityTimeline: the task's durable events, newest last — job status
// changes, model calls with their cache figures, requests and decisions.
import type { TaskEvent } from '../types';
import { describeEvent } from '../feed';

export function ActivityTimeline({ events }: { events: TaskEvent[] }) {
  return (
    <aside className="activity" aria-label="Activity">
      <h3>Activity</h3>
      <ol>
        {events.map((e) => (
          <li key={e.id} className={`ev ev-${e.type.replace('.', '-')}`}>
            <time className="muted">{new Date(e.created_at).toLocaleTimeString()}</time> {describeEvent(e)}
          </li>
        ))}
      </ol>
    </aside>
  );
}
