#include "store/budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace maestro::budget {
namespace {

constexpr int64_t kDayMs = 24LL * 3600 * 1000;

Status BadValue(const std::string& field, const std::string& what) {
  return InvalidArgument(fmt::format("{} must be {}", field, what), field);
}

Result<int64_t> PositiveInt(const Json& v, const std::string& field) {
  if (v.is_number_integer() && v.get<int64_t>() > 0) return v.get<int64_t>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d > 0 && d == std::floor(d) && d < 9e18) return static_cast<int64_t>(d);
  }
  return BadValue(field, "a positive whole number");
}

Result<double> PositiveNumber(const Json& v, const std::string& field) {
  if (v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0) {
    return v.get<double>();
  }
  return BadValue(field, "a positive number");
}

// A section entry's errors carry the config position.
Status AtPosition(const std::string& where, const Status& st) {
  if (st.ok() || where.empty()) return st;
  return InvalidArgument(fmt::format("{}: {}", where, st.message()), st.field());
}

Result<std::map<std::string, Limits>> ParseLimitsMap(const Json& j, const std::string& prefix) {
  std::map<std::string, Limits> out;
  if (j.is_null()) return out;
  if (!j.is_object()) return BadValue(prefix, "a mapping of names to limits");
  for (const auto& [name, v] : j.items()) {
    auto l = ParseLimits(v, prefix + "." + name);
    if (!l.ok()) return l.status();
    out[name] = *l;
  }
  return out;
}

Result<QuotaLimits> ParseQuota(const Json& j, const std::string& prefix) {
  QuotaLimits q;
  if (j.is_null()) return q;
  if (!j.is_object()) {
    return BadValue(prefix, "a mapping of max_tasks_per_day, max_tokens_per_day, max_schedules");
  }
  for (const auto& [key, v] : j.items()) {
    const std::string field = prefix + "." + key;
    std::optional<int64_t>* slot = key == "max_tasks_per_day"    ? &q.max_tasks_per_day
                                   : key == "max_tokens_per_day" ? &q.max_tokens_per_day
                                   : key == "max_schedules"      ? &q.max_schedules
                                                                 : nullptr;
    if (!slot) {
      return InvalidArgument(fmt::format("unknown key '{}'; quotas have max_tasks_per_day, "
                                         "max_tokens_per_day, max_schedules",
                                         field),
                             field);
    }
    auto n = PositiveInt(v, field);
    if (!n.ok()) return n.status();
    *slot = *n;
  }
  return q;
}

template <typename T>
std::optional<T> Pick(const std::optional<T>& over, const std::optional<T>& base) {
  return over ? over : base;
}

std::string Number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{:.4f}", v);
}

}  // namespace

Result<Limits> ParseLimits(const Json& j, const std::string& prefix) {
  Limits l;
  if (j.is_null()) return l;
  if (!j.is_object()) {
    return BadValue(prefix, "an object of max_tokens, max_cost, max_llm_calls, max_wall_s");
  }
  for (const auto& [key, v] : j.items()) {
    const std::string field = prefix.empty() ? key : prefix + "." + key;
    if (key == "max_tokens" || key == "max_llm_calls") {
      auto n = PositiveInt(v, field);
      if (!n.ok()) return n.status();
      (key == "max_tokens" ? l.max_tokens : l.max_llm_calls) = *n;
    } else if (key == "max_cost" || key == "max_wall_s") {
      auto n = PositiveNumber(v, field);
      if (!n.ok()) return n.status();
      (key == "max_cost" ? l.max_cost : l.max_wall_s) = *n;
    } else {
      return InvalidArgument(
          fmt::format("unknown key '{}'; a budget has max_tokens, max_cost, max_llm_calls, "
                      "max_wall_s",
                      field),
          field);
    }
  }
  return l;
}

Json LimitsJson(const Limits& l) {
  Json j = Json::object();
  if (l.max_tokens) j["max_tokens"] = *l.max_tokens;
  if (l.max_cost) j["max_cost"] = *l.max_cost;
  if (l.max_llm_calls) j["max_llm_calls"] = *l.max_llm_calls;
  if (l.max_wall_s) j["max_wall_s"] = *l.max_wall_s;
  return j;
}

Limits Overlay(const Limits& base, const Limits& over) {
  Limits l;
  l.max_tokens = Pick(over.max_tokens, base.max_tokens);
  l.max_cost = Pick(over.max_cost, base.max_cost);
  l.max_llm_calls = Pick(over.max_llm_calls, base.max_llm_calls);
  l.max_wall_s = Pick(over.max_wall_s, base.max_wall_s);
  return l;
}

Limits Effective(const Defaults& d, const std::string& piece, const std::string& user,
                 const Limits& task) {
  Limits l = d.all;
  if (auto it = d.pieces.find(piece); it != d.pieces.end()) l = Overlay(l, it->second);
  if (auto it = d.users.find(user); it != d.users.end()) l = Overlay(l, it->second);
  return Overlay(l, task);
}

QuotaLimits Quotas::For(const std::string& user) const {
  auto it = users.find(user);
  if (it == users.end()) return all;
  return {Pick(it->second.max_tasks_per_day, all.max_tasks_per_day),
          Pick(it->second.max_tokens_per_day, all.max_tokens_per_day),
          Pick(it->second.max_schedules, all.max_schedules)};
}

Result<Settings> SettingsFromConfig(const Config& cfg) {
  Settings s;
  if (!cfg.budgets.is_null() && !cfg.budgets.empty()) {
    for (const auto& [key, v] : cfg.budgets.items()) {
      const std::string field = "budgets." + key;
      Status st;
      if (key == "default") {
        auto l = ParseLimits(v, field);
        st = l.status();
        if (l.ok()) s.budgets.all = *l;
      } else if (key == "pieces" || key == "users") {
        auto m = ParseLimitsMap(v, field);
        st = m.status();
        if (m.ok()) (key == "pieces" ? s.budgets.pieces : s.budgets.users) = *m;
      } else {
        st = InvalidArgument(
            fmt::format("unknown key '{}'; budgets has default, pieces, users", field), field);
      }
      MAESTRO_RETURN_IF_ERROR(AtPosition(cfg.budgets_where, st));
    }
  }
  if (!cfg.quotas.is_null() && !cfg.quotas.empty()) {
    for (const auto& [key, v] : cfg.quotas.items()) {
      const std::string field = "quotas." + key;
      Status st;
      if (key == "default") {
        auto q = ParseQuota(v, field);
        st = q.status();
        if (q.ok()) s.quotas.all = *q;
      } else if (key == "users" && v.is_object()) {
        for (const auto& [user, uq] : v.items()) {
          auto q = ParseQuota(uq, field + "." + user);
          st = q.status();
          if (!q.ok()) break;
          s.quotas.users[user] = *q;
        }
      } else {
        st = InvalidArgument(
            fmt::format("unknown or malformed key '{}'; quotas has default, users", field), field);
      }
      MAESTRO_RETURN_IF_ERROR(AtPosition(cfg.quotas_where, st));
    }
  }
  return s;
}

PriceTable PricesFromConfig(const Config& cfg) {
  PriceTable out;
  if (cfg.llm.price) out["default"] = *cfg.llm.price;
  for (const auto& [name, llm] : cfg.llm_profiles) {
    if (llm.price) out[name] = *llm.price;
  }
  return out;
}

double CostUsd(const JobUsage& u, const LlmPrice& price) {
  const int64_t cached = std::min(u.cached_tokens, u.prompt_tokens);
  const int64_t written = std::min(u.cache_write_tokens, u.prompt_tokens - cached);
  const double uncached = static_cast<double>(u.prompt_tokens - cached - written);
  return (uncached * price.input + static_cast<double>(cached) * price.cached_input +
          static_cast<double>(written) * price.cache_write +
          static_cast<double>(u.completion_tokens) * price.output) /
         1e6;
}

std::optional<double> JobCost(const JobUsage& u, const PriceTable& prices) {
  if (u.llm_calls == 0) return 0.0;
  auto it = prices.find(u.profile.empty() ? "default" : u.profile);
  if (it == prices.end()) return std::nullopt;
  return CostUsd(u, it->second);
}

Json CostJson(double usd, bool known) {
  return known ? Json(std::round(usd * 1e10) / 1e10) : Json(nullptr);
}

Spent SpentFrom(const std::vector<JobUsage>& usage, const PriceTable& prices, TimeMs first_started,
                TimeMs now) {
  Spent s;
  for (const JobUsage& u : usage) {
    s.tokens += u.prompt_tokens + u.completion_tokens;
    s.llm_calls += u.llm_calls;
    if (auto cost = JobCost(u, prices)) {
      s.cost += *cost;
    } else {
      s.cost_known = false;
    }
  }
  if (first_started > 0 && now > first_started) {
    s.wall_s = static_cast<double>(now - first_started) / 1000.0;
  }
  return s;
}

Json SpentJson(const Spent& s) {
  return {{"tokens", s.tokens},
          {"llm_calls", s.llm_calls},
          {"cost", CostJson(s.cost, s.cost_known)},
          {"wall_s", std::round(s.wall_s * 10) / 10}};
}

Verdict Check(const Limits& l, const Spent& s, int64_t next_prompt_estimate) {
  Verdict v;
  auto over = [&](const char* which, double spent, double next, double limit, bool passes,
                  const char* unit) {
    v = {passes, which, spent, limit, next, unit};
    return passes;
  };
  if (l.max_tokens &&
      over("max_tokens", static_cast<double>(s.tokens), static_cast<double>(next_prompt_estimate),
           static_cast<double>(*l.max_tokens),
           s.tokens + std::max<int64_t>(next_prompt_estimate, 0) > *l.max_tokens, "tokens")) {
    return v;
  }
  if (l.max_llm_calls && over("max_llm_calls", static_cast<double>(s.llm_calls), 1,
                              static_cast<double>(*l.max_llm_calls),
                              s.llm_calls + 1 > *l.max_llm_calls, "LLM calls")) {
    return v;
  }
  if (l.max_cost && s.cost_known &&
      over("max_cost", s.cost, 0, *l.max_cost, s.cost >= *l.max_cost, "USD")) {
    return v;
  }
  if (l.max_wall_s &&
      over("max_wall_s", s.wall_s, 0, *l.max_wall_s, s.wall_s >= *l.max_wall_s, "seconds")) {
    return v;
  }
  return Verdict{};
}

std::string ExceededText(const Verdict& v) {
  std::string next;
  if (v.which == "max_tokens") {
    next = fmt::format(" (the next call needs about {})", Number(v.next));
  }
  return fmt::format("spent {} of {} {}{} — raise the budget or stop", Number(v.spent),
                     Number(v.limit), v.unit, next);
}

Limits Remaining(const Limits& l, const Spent& s) {
  Limits r;
  if (l.max_tokens) r.max_tokens = std::max<int64_t>(*l.max_tokens - s.tokens, 1);
  if (l.max_llm_calls) r.max_llm_calls = std::max<int64_t>(*l.max_llm_calls - s.llm_calls, 1);
  if (l.max_cost) r.max_cost = std::max(*l.max_cost - (s.cost_known ? s.cost : 0.0), 1e-9);
  if (l.max_wall_s) r.max_wall_s = std::max(*l.max_wall_s - s.wall_s, 0.001);
  return r;
}

TimeMs UtcDayStart(TimeMs now) { return now - ((now % kDayMs) + kDayMs) % kDayMs; }

int64_t SecondsToUtcMidnight(TimeMs now) { return (UtcDayStart(now) + kDayMs - now + 999) / 1000; }

std::optional<std::string> QuotaRefusal(const QuotaLimits& q, const std::string& user,
                                        int64_t tasks_today, int64_t tokens_today) {
  if (q.max_tasks_per_day && tasks_today >= *q.max_tasks_per_day) {
    return fmt::format("daily quota of {} tasks reached for user {}; resets at 00:00 UTC",
                       *q.max_tasks_per_day, user);
  }
  if (q.max_tokens_per_day && tokens_today >= *q.max_tokens_per_day) {
    return fmt::format(
        "daily quota of {} tokens reached for user {} ({} used); resets at 00:00 UTC",
        *q.max_tokens_per_day, user, tokens_today);
  }
  return std::nullopt;
}

std::optional<std::string> ScheduleLimitRefusal(const QuotaLimits& q, const std::string& user,
                                                int64_t owned) {
  const int64_t max = q.max_schedules.value_or(kDefaultMaxSchedules);
  if (owned < max) return std::nullopt;
  return fmt::format(
      "user {} owns {} schedules, the limit (quotas.max_schedules) is {}; delete one first", user,
      owned, max);
}

}  // namespace maestro::budget
