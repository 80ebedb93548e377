// PackageRequestApproval: the card for a RequestPackage park (ecosystem,
// package, version, reason) with approve / deny. Spawn requests (SpinOffTask
// into another space) use the same card with their own title. Without
// `canDecide` (issue 49): the request, no buttons.
import type { ApprovalRequest } from '../types';
import { NoDecide, useDecide } from './ToolRequestApproval';

export function PackageRequestApproval({ request, onDone, canDecide = true }: { request: ApprovalRequest; onDone: () => void; canDecide?: boolean }) {
  const { busy, decide } = useDecide(onDone);
  const a = (request.args ?? {}) as Record<string, unknown>;
  const isPackage = request.kind === 'package';
  return (
    <div className="approval card" role="group" aria-label={`${request.kind} request ${request.name}`} data-testid={`${request.kind}-request`}>
      <div className="approval-title">
        {isPackage ? (
          <>
            The agent asks to install <code>{String(a.name ?? request.name)}</code>
            {a.version ? <> version <code>{String(a.version)}</code></> : null} from <strong>{String(a.ecosystem ?? '')}</strong>
          </>
        ) : (
          <>
            The agent asks to start a task in another space: <code>{request.name}</code>
          </>
        )}
      </div>
      {request.reason && <p className="approval-reason">{request.reason}</p>}
      <div className="label">Exact request</div>
      <pre className="approval-args">{JSON.stringify(request.args, null, 2)}</pre>
      {!canDecide && <NoDecide />}
      {canDecide && (
      <div className="row wrap">
        <button className="primary" disabled={busy} onClick={() => decide(request, 'approve')}>
          Approve
        </button>
        <button className="danger" disabled={busy} onClick={() => decide(request, 'deny')}>
          Deny
        </button>
      </div>
      )}
    </div>
  );
}
