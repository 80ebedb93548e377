#include "tools/reentry.h"

#include <fmt/format.h>

#include "core/hash.h"
#include "tools/tool_names.h"

namespace maestro::tools {

Result<RequestKey> RequestKeyFor(const ToolCall& call) {
  const Json& a = call.arguments;
  RequestKey k;
  if (call.name == kRequestTool) {
    k.kind = RequestKind::kTool;
    k.name = a.value("tool", "");
    // The request (and its once-grant) is bound to the arguments of the
    // REQUESTED tool call, so the grant authorizes exactly that call.
    k.args = a.value("arguments", Json::object());
  } else if (call.name == kRequestPackage) {
    k.kind = RequestKind::kPackage;
    k.name = a.value("ecosystem", "") + ":" + a.value("name", "");
    k.args = {{"ecosystem", a.value("ecosystem", "")},
              {"name", a.value("name", "")},
              {"version", a.value("version", "")}};
  } else if (call.name == kSpinOffTask && !a.value("space", "").empty()) {
    k.kind = RequestKind::kSpawn;
    k.name = a.value("title", "");
    k.args = {{"title", k.name},
              {"instruction", a.value("instruction", "")},
              {"piece", a.value("piece", "")},
              {"space", a.value("space", "")}};
  } else {
    return InvalidArgument(call.name + " does not create an approval request", "name");
  }
  if (k.name.empty() || k.name == ":") return InvalidArgument("the request names nothing", "name");
  k.args_hash = CanonicalJsonHash(k.args);
  return k;
}

namespace {

std::string What(const Request& r) {
  if (r.kind == RequestKind::kTool) return "to use " + r.name + " with " + r.args.dump();
  if (r.kind == RequestKind::kPackage) return "to install the package " + r.name;
  return "to start the task '" + r.name + "' in space '" + r.args.value("space", "") + "'";
}

ToolResult Approved(const Request& r) {
  if (r.kind == RequestKind::kTool) {
    return ToolResult::Ok(fmt::format(
        "Approved (request {}, scope {}): call {} now with exactly these arguments: {}", r.id,
        GrantScopeName(r.scope.value_or(GrantScope::kOnce)), r.name, r.args.dump()));
  }
  if (r.kind == RequestKind::kPackage) {
    return ToolResult::Ok(
        fmt::format("Approved (request {}): the package {} is installed.", r.id, r.name));
  }
  return ToolResult::Ok(
      fmt::format("Approved (request {}): the task '{}' was started.", r.id, r.name));
}

ToolResult Denied(const Request& r) {
  return ToolResult::Error(fmt::format(
      "the user denied the request {} (request {}{}). Do not ask again; continue without it or "
      "finish with complete(status=error).",
      What(r), r.id, r.decided_by.empty() ? "" : ", decided by " + r.decided_by));
}

}  // namespace

ReentryOutcome FindDecidedRequest(const std::vector<Request>& requests, const std::string& job_id,
                                  const RequestKey& key) {
  ReentryOutcome out;
  for (auto it = requests.rbegin(); it != requests.rend(); ++it) {
    const Request& r = *it;
    if (r.job_id != job_id || r.kind != key.kind || r.name != key.name ||
        r.args_hash != key.args_hash) {
      continue;
    }
    out.request = r;
    if (r.status == RequestStatus::kApproved) {
      out.state = ReentryState::kApproved;
      out.result = Approved(r);
    } else if (r.status == RequestStatus::kDenied) {
      out.state = ReentryState::kDenied;
      out.result = Denied(r);
    } else {
      out.state = ReentryState::kPending;
    }
    return out;
  }
  return out;
}

Result<ReentryOutcome> CheckReentry(RequestRecords& store, const std::string& task_id,
                                    const std::string& job_id, const ToolCall& call) {
  MAESTRO_ASSIGN_OR_RETURN(RequestKey key, RequestKeyFor(call));
  MAESTRO_ASSIGN_OR_RETURN(auto requests, store.ListRequests(task_id, key.kind));
  ReentryOutcome out = FindDecidedRequest(requests, job_id, key);
  if (out.state == ReentryState::kApproved && key.kind == RequestKind::kTool) {
    // An approval whose once-grant was already spent (the model made the
    // approved call) does not approve a second identical call: that is a new
    // request, or the model would loop "approved" → denied → "approved".
    MAESTRO_ASSIGN_OR_RETURN(auto grants, store.ListGrants(task_id));
    bool live = false;
    for (const auto& g : grants) {
      if (g.request_id == out.request->id && g.uses_left != 0) live = true;
    }
    if (!live) out = ReentryOutcome{};
  }
  out.result.call_id = call.id;
  return out;
}

Request NewRequestFor(const RequestKey& key, const std::string& task_id, const std::string& job_id,
                      const ToolCall& call) {
  Request r;
  r.task_id = task_id;
  r.job_id = job_id;
  r.kind = key.kind;
  r.name = key.name;
  r.args = key.args;
  r.args_hash = key.args_hash;
  r.reason = call.arguments.value("reason", "");
  return r;
}

}  // namespace maestro::tools
