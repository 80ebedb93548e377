#include "engine/loop/policy_step.h"

#include <spdlog/spdlog.h>

namespace maestro::engine {

PolicyVerdict ApplyAutoPrompter(AgentLoopDeps& d, const std::string& movement,
                                const tools::ToolCall& call) {
  PolicyVerdict v;
  if (d.scope.auto_prompter == nullptr) return v;
  std::optional<PolicyFiring> f =
      d.scope.auto_prompter->Evaluate(movement, call.name, call.arguments);
  if (!f) return v;
  const PolicyRule& rule = *f->rule;
  Json payload = PolicyEventPayload(*f, call.name, movement);
  spdlog::info("job {}: policy rule {} ({}) on {}", d.scope.job_id, rule.id,
               PolicyDecisionName(rule.decision), call.name);
  Event e;
  e.task_id = d.scope.task_id;
  e.job_id = d.scope.job_id;
  e.type = "policy.fired";
  e.payload = payload;
  if (auto added = d.services.store->AppendEvent(e); !added.ok()) {
    spdlog::warn("job {}: policy event: {}", d.scope.job_id, added.status().ToString());
  }
  payload["type"] = "policy";
  EmitDelta(d, payload);
  switch (rule.decision) {
    case PolicyDecision::kDeny:
      v.denial = PolicyDenialText(rule, call.name);
      break;
    case PolicyDecision::kInstruct:
      v.instruction = PolicyInstructionText(rule);
      break;
    case PolicyDecision::kApproveOnce: {
      Grant g;
      g.task_id = d.scope.task_id;
      g.tool_name = call.name;
      g.scope = GrantScope::kOnce;
      g.args_hash = f->args_hash;
      g.uses_left = 1;
      if (auto added = d.services.store->AddGrant(g); !added.ok()) {
        // No grant: the call meets the Tool Policy alone, as without the rule.
        spdlog::warn("job {}: policy grant: {}", d.scope.job_id, added.status().ToString());
      }
      break;
    }
  }
  return v;
}

}  // namespace maestro::engine
