#include "tools/policy.h"

#include <fmt/format.h>

#include "core/hash.h"

namespace maestro::tools {

Result<ToolPolicy> ToolPolicy::FromJson(const Json& j) {
  if (!j.is_object()) return InvalidArgument("tool policy must be an object", "tool_policy");
  ToolPolicy p;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    const std::string field = "tool_policy." + k;
    if (k == "allowed_tools") {
      if (!it->is_array()) return InvalidArgument(field + " must be a list of tool names", field);
      for (const auto& n : *it) {
        if (!n.is_string()) return InvalidArgument(field + " must be a list of tool names", field);
        p.allowed_tools.insert(n.get<std::string>());
      }
    } else if (k == "edit_allowed" || k == "shell_allowed" || k == "network_allowed") {
      if (!it->is_boolean()) return InvalidArgument(field + " must be true or false", field);
      bool v = it->get<bool>();
      (k == "edit_allowed"    ? p.edit_allowed
       : k == "shell_allowed" ? p.shell_allowed
                              : p.network_allowed) = v;
    } else {
      std::string near =
          NearestWord(k, {"allowed_tools", "edit_allowed", "shell_allowed", "network_allowed"});
      return InvalidArgument(
          "unknown key '" + k + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?"),
          field);
    }
  }
  return p;
}

Json ToolPolicy::ToJson() const {
  return Json{{"allowed_tools", allowed_tools},
              {"edit_allowed", edit_allowed},
              {"shell_allowed", shell_allowed},
              {"network_allowed", network_allowed}};
}

std::string DenialMessage(const std::string& tool, const std::string& why, const Json& args) {
  return fmt::format(
      "Error: permission denied: {} ({}). To ask the user for it, call RequestTool with "
      "{{\"tool\": \"{}\", \"arguments\": {}, \"reason\": \"<why you need it>\"}}.",
      tool, why, tool, args.dump());
}

namespace {

// Why the policy alone does not permit the call, or "" when it does.
std::string PolicyGap(const ToolPolicy& p, const ToolSpec& spec, bool wants_network) {
  if (!p.allowed_tools.count(spec.name)) return "not in this workspace's allowed tools";
  switch (spec.tool_class) {
    case ToolClass::kEdit:
      return p.edit_allowed ? "" : "editing is not allowed in this workspace";
    case ToolClass::kShell:
      if (!p.shell_allowed) return "shell commands are not allowed in this workspace";
      if (wants_network && !p.network_allowed)
        return "network access is not allowed in this workspace";
      return "";
    default:
      return "";
  }
}

}  // namespace

Result<Permission> ToolAuthorizer::Authorize(const ToolPolicy& policy, const std::string& task_id,
                                             const ToolSpec& spec, const Json& args) const {
  Permission perm;
  if (spec.tool_class == ToolClass::kControl) {
    perm.allowed = true;
    return perm;
  }
  const bool wants_network = spec.tool_class == ToolClass::kShell && args.value("network", false);
  const std::string gap = PolicyGap(policy, spec, wants_network);
  if (gap.empty()) {
    perm.allowed = true;
    perm.network = policy.network_allowed;
    return perm;
  }
  if (store_ != nullptr) {
    auto g = store_->ConsumeGrant(task_id, spec.name, CanonicalJsonHash(args));
    if (!g.ok()) return g.status();
    if (g->has_value()) {
      // A task-wide grant of RunCommand does not open the network: that needs
      // a once-grant bound to arguments that ask for it, or the policy.
      const bool net_ok =
          !wants_network || policy.network_allowed || (*g)->scope == GrantScope::kOnce;
      const bool scope_ok = !spec.approve_each_call || (*g)->scope == GrantScope::kOnce;
      if (net_ok && scope_ok) {
        perm.allowed = true;
        perm.network = wants_network;
        perm.grant_id = (*g)->id;
        return perm;
      }
    }
  }
  perm.denial = DenialMessage(spec.name, gap, args);
  return perm;
}

}  // namespace maestro::tools
