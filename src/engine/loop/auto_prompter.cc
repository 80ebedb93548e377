#include "engine/loop/auto_prompter.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <set>

#include "core/hash.h"

namespace maestro::engine {

std::string PolicyDecisionName(PolicyDecision d) {
  switch (d) {
    case PolicyDecision::kInstruct:
      return "instruct";
    case PolicyDecision::kDeny:
      return "deny";
    case PolicyDecision::kApproveOnce:
      return "approve_once";
  }
  return "instruct";
}

Result<std::unique_ptr<ArgPattern>> ArgPattern::Compile(const std::string& pattern) {
  std::unique_ptr<ArgPattern> p(new ArgPattern());
  int rc = regcomp(&p->re_, pattern.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc != 0) {
    char buf[256];
    regerror(rc, &p->re_, buf, sizeof buf);
    return InvalidArgument(buf);
  }
  p->compiled_ = true;
  return p;
}

ArgPattern::~ArgPattern() {
  if (compiled_) regfree(&re_);
}

bool ArgPattern::Search(const std::string& text) const {
  // The argument may hold NUL bytes; the matcher sees up to the first one,
  // which is what a shell or file API would take too.
  return regexec(&re_, text.c_str(), 0, nullptr, 0) == 0;
}

namespace {

Status At(const std::string& source, const YAML::Node& n, const std::string& what) {
  return InvalidArgument(fmt::format("{}: {}", YamlPosition(source, n), what));
}

Result<PolicyRule> ParseRule(const YAML::Node& n, const std::string& source,
                             std::set<std::string>& ids) {
  if (!n.IsMap()) return At(source, n, "a rule must be a mapping");
  static const std::set<std::string> kKeys = {"id",   "tool",     "movement",    "match",
                                              "deny", "instruct", "approve_once"};
  PolicyRule r;
  int decisions = 0;
  for (const auto& kv : n) {
    const std::string key = kv.first.as<std::string>("");
    const YAML::Node& v = kv.second;
    if (!kKeys.count(key)) {
      std::string near = NearestWord(key, {kKeys.begin(), kKeys.end()});
      return At(source, kv.first,
                fmt::format("unknown rule key '{}'{}", key,
                            near.empty() ? "" : "; did you mean '" + near + "'?"));
    }
    if (key == "id" || key == "tool") {
      if (!v.IsScalar() || v.Scalar().empty()) return At(source, v, "'" + key + "' must be a name");
      (key == "id" ? r.id : r.tool) = v.Scalar();
    } else if (key == "movement") {
      if (v.IsScalar()) {
        r.movements.push_back(v.Scalar());
      } else if (v.IsSequence()) {
        for (const auto& m : v) {
          if (!m.IsScalar()) return At(source, m, "'movement' lists movement names");
          r.movements.push_back(m.Scalar());
        }
      } else {
        return At(source, v, "'movement' must be a name or a list of names");
      }
    } else if (key == "match") {
      if (!v.IsMap()) return At(source, v, "'match' maps argument names to regular expressions");
      for (const auto& m : v) {
        if (!m.second.IsScalar()) return At(source, m.second, "a match pattern must be a string");
        auto re = ArgPattern::Compile(m.second.Scalar());
        if (!re.ok()) {
          return At(source, m.second, "bad regular expression: " + re.status().message());
        }
        r.match.emplace_back(m.first.as<std::string>(""),
                             std::shared_ptr<ArgPattern>(std::move(re).value()));
      }
    } else if (key == "approve_once") {
      if (!v.IsScalar() || v.Scalar() != "true") {
        return At(source, v, "'approve_once' must be true");
      }
      r.decision = PolicyDecision::kApproveOnce;
      ++decisions;
    } else {  // deny, instruct
      if (!v.IsScalar() || v.Scalar().empty()) {
        return At(source, v, "'" + key + "' must be a non-empty text");
      }
      r.decision = key == "deny" ? PolicyDecision::kDeny : PolicyDecision::kInstruct;
      r.text = v.Scalar();
      ++decisions;
    }
  }
  if (r.id.empty()) return At(source, n, "a rule needs an 'id'");
  if (!ids.insert(r.id).second) return At(source, n["id"], "duplicate rule id '" + r.id + "'");
  if (r.tool.empty()) return At(source, n, "rule '" + r.id + "' needs a 'tool' (a name or \"*\")");
  if (decisions != 1) {
    return At(source, n,
              "rule '" + r.id + "' needs exactly one of 'deny', 'instruct', 'approve_once'");
  }
  return r;
}

// A string argument as is; anything else as its JSON text.
std::string ArgText(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

Result<std::unique_ptr<AutoPrompter>> AutoPrompter::Parse(const std::string& text,
                                                          const std::string& source) {
  MAESTRO_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, source));
  std::unique_ptr<AutoPrompter> ap(new AutoPrompter());
  ap->source_ = source;
  ap->hash_ = Sha256Hex(text);
  if (root.IsNull()) return ap;  // an empty file: no rules
  if (!root.IsMap()) return At(source, root, "a policy is a mapping with 'rules'");
  bool enabled = true;
  std::set<std::string> ids;
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>("");
    if (key == "enabled") {
      if (!kv.second.IsScalar() ||
          (kv.second.Scalar() != "true" && kv.second.Scalar() != "false")) {
        return At(source, kv.second, "'enabled' must be true or false");
      }
      enabled = kv.second.Scalar() == "true";
    } else if (key == "rules") {
      if (!kv.second.IsSequence()) return At(source, kv.second, "'rules' must be a list");
      for (const auto& n : kv.second) {
        MAESTRO_ASSIGN_OR_RETURN(PolicyRule r, ParseRule(n, source, ids));
        ap->rules_.push_back(std::move(r));
      }
    } else {
      return At(source, kv.first, "unknown key '" + key + "' (expected 'enabled', 'rules')");
    }
  }
  if (!enabled) return std::unique_ptr<AutoPrompter>();
  return ap;
}

Result<std::unique_ptr<AutoPrompter>> AutoPrompter::Load(Env& env, const std::string& dir,
                                                         const std::string& space,
                                                         const std::string& piece) {
  if (dir.empty()) return std::unique_ptr<AutoPrompter>();
  const std::string s = space.empty() ? "default" : space;
  for (const std::string& path : {dir + "/" + s + "/" + piece + ".yaml", dir + "/" + s + ".yaml"}) {
    if (!env.FileExists(path)) continue;
    MAESTRO_ASSIGN_OR_RETURN(std::string text, ReadFileToString(env, path));
    return Parse(text, path);
  }
  return std::unique_ptr<AutoPrompter>();
}

std::optional<PolicyFiring> AutoPrompter::Evaluate(const std::string& movement,
                                                   const std::string& tool,
                                                   const Json& args) const {
  for (const PolicyRule& r : rules_) {
    if (r.tool != "*" && r.tool != tool) continue;
    if (!r.movements.empty() &&
        std::find(r.movements.begin(), r.movements.end(), movement) == r.movements.end()) {
      continue;
    }
    bool all = true;
    for (const auto& [name, re] : r.match) {
      auto it = args.is_object() ? args.find(name) : args.end();
      if (it == args.end() || !re->Search(ArgText(*it))) {
        all = false;
        break;
      }
    }
    if (all) return PolicyFiring{&r, CanonicalJsonHash(args)};
  }
  return std::nullopt;
}

Json PolicyEventPayload(const PolicyFiring& f, const std::string& tool,
                        const std::string& movement) {
  return {{"rule", f.rule->id},
          {"tool", tool},
          {"movement", movement},
          {"decision", PolicyDecisionName(f.rule->decision)},
          {"args_hash", f.args_hash}};
}

std::string PolicyInstructionText(const PolicyRule& rule) {
  return fmt::format("Policy note (rule {}): {}", rule.id, rule.text);
}

std::string PolicyDenialText(const PolicyRule& rule, const std::string& tool) {
  return fmt::format("Error: {} was denied by policy rule '{}': {}. The call did not run.", tool,
                     rule.id, rule.text);
}

}  // namespace maestro::engine
