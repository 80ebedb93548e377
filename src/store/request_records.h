// RequestRecords: the approvals role of the Store (store/store.h) — tool,
// package and spawn requests a job parks on, their decisions, and the grants
// a decision (or the engine) creates and tool calls spend.
//
// Who uses it: the engine creates requests and grants (engine/); the API
// lists and decides requests (api/, TaskService's Decide); the tool
// authorizer spends grants and the re-entry check reads requests and grants
// (tools/policy.h, tools/reentry.h).
//
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "store/types.h"

namespace maestro {

class RequestRecords {
 public:
  virtual ~RequestRecords() = default;

  // ---- approval requests and grants
  virtual Result<Request> CreateRequest(const Request& request) = 0;
  virtual Result<Request> GetRequest(const std::string& request_id) = 0;
  // `kind` unset = all kinds. Oldest first.
  virtual Result<std::vector<Request>> ListRequests(const std::string& task_id,
                                                    std::optional<RequestKind> kind) = 0;
  // Compare-and-set pending -> approved|denied; a second decision gets
  // kConflict. Approving a tool request also creates its grant (scope once,
  // bound to the arguments, or task). The parked job (waiting_human) is
  // requeued in the same transaction whether approved or denied.
  virtual Result<Request> DecideRequest(const std::string& request_id, const std::string& decision,
                                        const std::string& scope,
                                        const std::string& decided_by) = 0;
  virtual Result<Grant> AddGrant(const Grant& grant) = 0;
  virtual Result<std::vector<Grant>> ListGrants(const std::string& task_id) = 0;
  // Atomically finds a live grant for (task, tool, args_hash) — a task-scope
  // grant or a once-grant bound to this hash — and spends one use. Returns
  // the grant used, or nullopt when nothing permits the call.
  virtual Result<std::optional<Grant>> ConsumeGrant(const std::string& task_id,
                                                    const std::string& tool_name,
                                                    const std::string& args_hash) = 0;
};

}  // namespace maestro
