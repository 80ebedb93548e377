// BudgetExceededCard: the card for a job parked on its task's budget
// (wait_reason budget_exceeded): what was spent of which limit (the engine's
// system note), a field to raise that limit, "Raise and continue" (POST
// …/budget: the job resumes the same movement) and "Stop" (cancel). The
// raise needs `canDecide`, Stop `canRun` (the caller's role, issue 49).
import { useState } from 'react';
import { Api } from '../api';
import type { Budget, Comment, Job } from '../types';
import { useToast } from './Toasts';
import { NoDecide } from './ToolRequestApproval';

// The limit the note names, by its unit ("spent X of Y tokens …").
const UNITS: [string, keyof Budget][] = [
  ['LLM calls', 'max_llm_calls'],
  ['tokens', 'max_tokens'],
  ['USD', 'max_cost'],
  ['seconds', 'max_wall_s'],
];

interface Props {
  taskId: string;
  job: Job;
  budget?: Budget;
  comments: Comment[];
  onDone: () => void;
  canDecide?: boolean;
  canRun?: boolean;
}

export function BudgetExceededCard({ taskId, job, budget, comments, onDone, canDecide = true, canRun = true }: Props) {
  const note = [...comments].reverse().find((c) => c.author === 'system' && c.job_id === job.id && c.body.includes('raise the budget'));
  const text = note?.body ?? 'The next model call would pass the task’s budget.';
  const which = UNITS.find(([unit]) => text.includes(` ${unit}`))?.[1] ?? 'max_tokens';
  const limit = Number(budget?.[which] ?? 0);
  const [value, setValue] = useState(String(limit > 0 ? limit * 2 : ''));
  const [busy, setBusy] = useState(false);
  const toast = useToast();
  const run = async (what: () => Promise<unknown>, ok: string) => {
    setBusy(true);
    try {
      await what();
      toast(ok, 'ok');
    } catch (e) {
      toast((e as Error).message, 'error');
    } finally {
      setBusy(false);
      onDone();
    }
  };
  const raised = Number(value);
  return (
    <div className="approval card" role="group" aria-label="budget exceeded" data-testid="budget-exceeded">
      <div className="approval-title">Budget reached — the agent paused before its next model call</div>
      <p className="approval-reason">{text.replace(/^Budget reached: /, '')}</p>
      {!canDecide && <NoDecide />}
      {canDecide && (
      <label className="row wrap">
        <span className="label">New {which.replace('max_', '').replace('_', ' ')} limit</span>
        <input aria-label="New budget limit" type="number" min={1} value={value} onChange={(e) => setValue(e.target.value)} />
      </label>
      )}
      <div className="row wrap">
        {canDecide && (
        <button
          className="primary"
          disabled={busy || !(raised > 0)}
          onClick={() => void run(() => Api.raiseBudget(taskId, { [which]: raised }), 'Budget raised — the agent continues')}
        >
          Raise and continue
        </button>
        )}
        {canRun && (
        <button className="danger" disabled={busy} onClick={() => void run(() => Api.cancel(taskId), 'Stopped')}>
          Stop
        </button>
        )}
      </div>
    </div>
  );
}
