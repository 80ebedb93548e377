// Auto Prompter (seed 000 §4.1): a person's standing rules for what an agent
// may do with its tools, applied before each regular tool call runs.
//
// A policy is a YAML file per space (`<auto_prompter.dir>/<space>.yaml`) or
// per space and piece (`<dir>/<space>/<piece>.yaml`, which wins); the
// ephemeral workspace's space is `default`. It lives outside every workspace:
// an agent must not be able to edit its own rules.
//
//   enabled: true                    # optional; false = the policy is off
//   rules:
//     - id: no-rm-rf                 # unique; named in every Policy Event
//       tool: RunCommand             # a tool name, or "*"
//       movement: implement          # optional: a name or a list of names
//       match: {command: 'rm\s+-rf'} # optional: argument -> POSIX extended regex
//       deny: "remove files one by one"   # exactly one of deny / instruct / approve_once
//     - id: test-after-edit
//       tool: WriteFile
//       instruct: "Run the tests after each edit."
//     - id: npm-test
//       tool: RunCommand
//       match: {command: '^npm test$'}
//       approve_once: true
//
// The first rule that matches decides (file order). deny answers the call
// with an `Error…` result and the call never runs; instruct lets it run and
// adds the text as a user message after the batch's tool results (the head
// of the conversation is never rewritten); approve_once creates a one-time
// grant bound to the canonical hash of exactly these arguments, so the call
// runs even where the space's Tool Policy would refuse it.
//
// The transparency boundary: each firing becomes a Policy Event in allow-list
// form — rule id, tool, movement, decision, argument hash — never the raw
// arguments (they may hold secrets), never model reasoning. A job snapshots
// the policy at its start (the text's hash is recorded), so editing the file
// affects the next run, never a running one. With no file, or `enabled:
// false`, there is no AutoPrompter for the job and the tool path is exactly
// the one without this feature.
//
// Thread safety: an AutoPrompter is immutable after Load; Evaluate may be
// called from any thread.
#pragma once

#include <regex.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/json.h"
#include "core/status.h"

namespace maestro::engine {

enum class PolicyDecision { kInstruct, kDeny, kApproveOnce };
std::string PolicyDecisionName(PolicyDecision d);

// One compiled POSIX extended regex (glibc's matcher does not recurse per
// input byte, so an argument of any length cannot exhaust the stack).
class ArgPattern {
 public:
  static Result<std::unique_ptr<ArgPattern>> Compile(const std::string& pattern);
  ~ArgPattern();
  ArgPattern(const ArgPattern&) = delete;
  ArgPattern& operator=(const ArgPattern&) = delete;
  bool Search(const std::string& text) const;

 private:
  ArgPattern() = default;
  regex_t re_{};
  bool compiled_ = false;  // regfree only what regcomp built
};

struct PolicyRule {
  std::string id;
  std::string tool;                    // "*" = every tool
  std::vector<std::string> movements;  // empty = every movement
  // Each argument's value (a string as is, anything else as its JSON) must
  // contain a match; a missing argument does not match.
  std::vector<std::pair<std::string, std::shared_ptr<ArgPattern>>> match;
  PolicyDecision decision = PolicyDecision::kInstruct;
  std::string text;  // the instruction, or the reason of a deny
};

struct PolicyFiring {
  const PolicyRule* rule = nullptr;
  std::string args_hash;  // CanonicalJsonHash of the arguments
};

class AutoPrompter {
 public:
  // Parses a policy file's text. Errors name `source:line:col`.
  // nullptr (no error) when the policy says `enabled: false`.
  static Result<std::unique_ptr<AutoPrompter>> Parse(const std::string& text,
                                                     const std::string& source);

  // The policy a job of `piece` in `space` runs under: `<dir>/<space>/<piece>.yaml`,
  // else `<dir>/<space>.yaml`. nullptr when `dir` is empty, neither file
  // exists, or the policy is disabled.
  static Result<std::unique_ptr<AutoPrompter>> Load(Env& env, const std::string& dir,
                                                    const std::string& space,
                                                    const std::string& piece);

  // The first rule matching a call of `tool` with `args` in `movement`.
  std::optional<PolicyFiring> Evaluate(const std::string& movement, const std::string& tool,
                                       const Json& args) const;

  const std::string& source() const { return source_; }
  const std::string& hash() const { return hash_; }  // SHA-256 of the file's text
  const std::vector<PolicyRule>& rules() const { return rules_; }

 private:
  AutoPrompter() = default;
  std::string source_;
  std::string hash_;
  std::vector<PolicyRule> rules_;
};

// The Policy Event's payload: the allow-list, nothing else.
Json PolicyEventPayload(const PolicyFiring& f, const std::string& tool,
                        const std::string& movement);

// The text of the user message an instruct rule adds.
std::string PolicyInstructionText(const PolicyRule& rule);
// The `Error…` result of a denied call.
std::string PolicyDenialText(const PolicyRule& rule, const std::string& tool);

}  // namespace maestro::engine
