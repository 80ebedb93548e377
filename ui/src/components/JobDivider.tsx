// JobDivider: the line that opens each job in the feed — its number, piece,
// status, when it started and what it cost.
import type { Job } from '../types';
import { plural } from '../format';
import { RelativeTime } from './RelativeTime';
import { UsageSummary } from './UsageSummary';

export function JobDivider({ job, index }: { job: Job; index: number }) {
  return (
    <div className="job-divider" role="separator" data-testid="job-divider" data-job-id={job.id}>
      <span>
        <strong>Job {index + 1}</strong> · {job.piece} · {job.status.replace('_', ' ')}
        {job.created_at ? <> · <RelativeTime ms={job.created_at} /></> : null}
        {job.usage && job.usage.llm_calls > 0 && (
          <>
            {' · '}
            {plural(job.usage.llm_calls, 'model call')} · <UsageSummary usage={job.usage} />
          </>
        )}
      </span>
    </div>
  );
}
