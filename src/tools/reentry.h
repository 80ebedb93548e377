// Re-entrancy of the request-creating park tools (RequestTool,
// RequestPackage, SpinOffTask to another space).
//
// Why: a park ends the movement; on resume the movement starts again from its
// head and the model calls the SAME tool with the SAME arguments again (seed
// 001 iron rule). Without a short circuit an approval would produce a second
// card and a denial an endless ask → deny → ask loop. So before creating a
// request the engine asks CheckReentry(): a request of this job with the same
// key (kind, name, canonical hash of the arguments — never the position of
// the call) that is already decided answers the call.
//
// Where it sits: engine, tool-call classification, before CreateRequest and
// the park. kApproved → proceed (the tool result says so; a once-grant for
// exactly those arguments is already in the store); kDenied → an `Error:`
// result with the denial, no park; kPending → park again without a new
// request; kNew → create the request and park.
//
// Thread safety: pure functions over values; CheckReentry reads the store.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "store/store.h"
#include "tools/tool.h"

namespace maestro::tools {

// What identifies "the same request" across a resume.
struct RequestKey {
  RequestKind kind = RequestKind::kTool;
  std::string name;       // requested tool / "ecosystem:package" / spawned task title
  Json args;              // what the request is about (stored on the Request)
  std::string args_hash;  // CanonicalJsonHash(args)
};

// The key of a request-creating park call, or kInvalidArgument when `call`
// is not one (SpinOffTask without `space` creates no request).
Result<RequestKey> RequestKeyFor(const ToolCall& call);

enum class ReentryState { kNew, kPending, kApproved, kDenied };

struct ReentryOutcome {
  ReentryState state = ReentryState::kNew;
  std::optional<Request> request;  // the matching request (not for kNew)
  ToolResult result;               // for kApproved / kDenied: the tool result to return
};

// The newest request in `requests` of `job_id` matching `key` decides.
ReentryOutcome FindDecidedRequest(const std::vector<Request>& requests, const std::string& job_id,
                                  const RequestKey& key);

// Reads the task's requests of key.kind from `store` and applies
// FindDecidedRequest. An approved tool request whose grant is used up
// (Store::ListGrants) counts as kNew: the approval was for one call.
Result<ReentryOutcome> CheckReentry(RequestRecords& store, const std::string& task_id,
                                    const std::string& job_id, const ToolCall& call);

// The Request to create for a kNew outcome.
Request NewRequestFor(const RequestKey& key, const std::string& task_id, const std::string& job_id,
                      const ToolCall& call);

}  // namespace maestro::tools
