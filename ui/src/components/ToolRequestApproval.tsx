// ToolRequestApproval: the card for a RequestTool park — the tool, the exact
// arguments the agent will call it with, its reason, and approve once
// (bound to these arguments) / approve for this task / deny. (A tool the
// movement forbids never gets here: the server refuses that RequestTool.)
// Without `canDecide` (the caller's role on the task, issue 49) the card
// shows the request and says who may decide, with no buttons.
import { useState } from 'react';
import { Api } from '../api';
import type { ApprovalRequest } from '../types';
import { useToast } from './Toasts';

export function useDecide(onDone: () => void) {
  const toast = useToast();
  const [busy, setBusy] = useState(false);
  const decide = async (r: ApprovalRequest, decision: 'approve' | 'deny', scope?: 'once' | 'task') => {
    setBusy(true);
    try {
      await Api.decide(r, decision, scope);
      toast(decision === 'approve' ? `Approved ${r.name}${scope === 'task' ? ' for this task' : ''}` : `Denied ${r.name}`, 'ok');
    } catch (e) {
      toast(`Decision failed: ${(e as Error).message}`, 'error');
    } finally {
      setBusy(false);
      onDone();
    }
  };
  return { busy, decide };
}

function toolArgs(r: ApprovalRequest): unknown {
  const a = r.args as { arguments?: unknown } | null;
  return a && typeof a === 'object' && 'arguments' in a ? a.arguments : r.args;
}

// What a card shows instead of its buttons when the caller may not decide.
export function NoDecide() {
  return (
    <p className="muted" data-testid="cannot-decide">
      Waiting for an approver: your role on this task cannot decide requests.
    </p>
  );
}

export function ToolRequestApproval({ request, onDone, canDecide = true }: { request: ApprovalRequest; onDone: () => void; canDecide?: boolean }) {
  const { busy, decide } = useDecide(onDone);
  return (
    <div className="approval card" role="group" aria-label={`Tool request ${request.name}`} data-testid="tool-request">
      <div className="approval-title">
        The agent asks to use <code>{request.name}</code>
      </div>
      {request.reason && <p className="approval-reason">{request.reason}</p>}
      <div className="label">Exact arguments</div>
      <pre className="approval-args">{JSON.stringify(toolArgs(request), null, 2)}</pre>
      {!canDecide && <NoDecide />}
      {canDecide && (
      <div className="row wrap">
        <button className="primary" disabled={busy} onClick={() => decide(request, 'approve', 'once')}>
          Approve once
        </button>
        <button disabled={busy} onClick={() => decide(request, 'approve', 'task')} title="Any arguments, for the rest of this task">
          Approve for this task
        </button>
        <button className="danger" disabled={busy} onClick={() => decide(request, 'deny')}>
          Deny
        </button>
      </div>
      )}
    </div>
  );
}
