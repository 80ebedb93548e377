// The CLI's one-request commands against a running `maestro serve`:
// `maestro task create|list|show|comment|continue|cancel|approve|deny`
// (`task watch`: task_watch.h). Where it sits: in the `maestro` binary only;
// main.cc parses arguments and calls these with the resolved ClientOptions
// (api_client.h: which server, which token).
//
// Each prints a human summary (format.h) or, with ClientOptions::json, the
// server's JSON unchanged, and returns the exit code: 0 ok, 2 no server /
// token refused / refused input (4xx), 1 server error (5xx).
//
// Thread safety: each call is self-contained; no shared state.
#pragma once

#include <string>

#include "cli/api_client.h"

namespace maestro::cli {

// The task is owned by the token's user; list/show see only what that user
// may see.
int TaskCreateRemote(const ClientOptions& o, const std::string& instruction,
                     const std::string& piece, const std::string& title, int priority = 0,
                     const Json& budget = Json::object());
int TaskListRemote(const ClientOptions& o, const std::string& status);
int TaskShowRemote(const ClientOptions& o, const std::string& task_id);
int TaskComment(const ClientOptions& o, const std::string& task_id, const std::string& body);
int TaskContinue(const ClientOptions& o, const std::string& task_id, const std::string& piece,
                 const std::string& note);
int TaskCancelRemote(const ClientOptions& o, const std::string& task_id);
// decision: "approve" | "deny"; kind: tool | package | spawn.
int TaskDecide(const ClientOptions& o, const std::string& task_id, const std::string& kind,
               const std::string& request_id, const std::string& decision,
               const std::string& scope);

// Milliseconds since the epoch (the server's timestamps are the same unit).
int64_t NowMs();

}  // namespace maestro::cli
