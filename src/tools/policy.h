// ToolPolicy and ToolAuthorizer: who may call what (seed 000 §2: the
// workspace's Tool Policy ∪ the task's grants is the ONLY source of
// permission).
//
// Where it sits: the Dispatcher asks Authorize() for every validated call
// before it is recorded or run. The policy is checked first; only when it
// does not permit the call is a grant looked up, and then it is spent
// atomically (Store::ConsumeGrant) — matched by tool name and the canonical
// hash of THESE arguments for a once-grant, never by position. A denial is a
// tool result that tells the model to ask with RequestTool.
//
// Control and park tools (complete, transition, RequestTool, ...) need no
// permission: the way to ask for permission must not itself need one.
//
// Thread safety: ToolPolicy is a value; ToolAuthorizer is stateless over the
// thread-safe Store, so Authorize may run concurrently.
#pragma once

#include <set>
#include <string>

#include "core/config.h"
#include "core/json.h"
#include "core/status.h"
#include "store/store.h"
#include "tools/tool.h"

namespace maestro::tools {

struct ToolPolicy {
  std::set<std::string> allowed_tools;  // regular and agent tools by name
  bool edit_allowed = false;            // WriteFile, EditFile
  bool shell_allowed = false;           // RunCommand
  bool network_allowed = false;         // RunCommand {network: true}
  // RunRemote's hosts (spaces.<name>.ssh, core/ssh_host.h): the only hosts
  // it reaches, and the only place their user, key secret and pinned host
  // keys come from. Empty: no RunRemote.
  std::vector<SshHostConfig> ssh_hosts;

  // {"allowed_tools": [...], "edit_allowed": bool, "shell_allowed": bool,
  //  "network_allowed": bool}; unknown keys are errors naming the key.
  static Result<ToolPolicy> FromJson(const Json& j);
  Json ToJson() const;
};

struct Permission {
  bool allowed = false;
  bool network = false;  // RunCommand may use the network
  std::string grant_id;  // the grant spent, "" when the policy alone allowed it
  std::string denial;    // the "Error: ..." text for the model when !allowed
};

class ToolAuthorizer {
 public:
  // `store` may be null: then only the policy counts (no grants).
  explicit ToolAuthorizer(RequestRecords* store) : store_(store) {}

  // A store failure is a Status; a refusal is Permission{allowed=false}.
  Result<Permission> Authorize(const ToolPolicy& policy, const std::string& task_id,
                               const ToolSpec& spec, const Json& args) const;

 private:
  RequestRecords* store_;
};

// The denial result text: names the missing permission and shows the exact
// RequestTool call to make.
std::string DenialMessage(const std::string& tool, const std::string& why, const Json& args);

}  // namespace maestro::tools
