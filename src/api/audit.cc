#include "api/audit.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <array>
#include <charconv>
#include <utility>

#include "api/http_util.h"
#include "core/utf8.h"

namespace maestro::api {

AuditLog::AuditLog(IdentityRecords& store, Clock* clock) : store_(store), clock_(clock) {}

void AuditLog::Record(std::string actor, std::string action, std::string task_id, std::string team,
                      Json detail) {
  AuditEntry e;
  e.at = clock_->NowMs();
  e.actor = std::move(actor);
  e.action = std::move(action);
  e.task_id = std::move(task_id);
  e.team = std::move(team);
  if (!detail.is_object()) detail = Json{{"value", std::move(detail)}};
  e.detail = DumpJson(detail);
  auto id = store_.AppendAudit(e);
  if (!id.ok()) {
    // The action already happened (or is about to): losing its audit row is
    // logged loudly, never turned into the caller's error.
    spdlog::warn("audit: cannot record {} by {}: {}", e.action, e.actor, id.status().message());
  }
}

Json AuditJson(const AuditEntry& e) {
  Json detail = Json::parse(e.detail, nullptr, false);
  if (detail.is_discarded() || !detail.is_object()) detail = Json{{"value", e.detail}};
  return {{"id", e.id},           {"at", e.at},     {"actor", e.actor}, {"action", e.action},
          {"task_id", e.task_id}, {"team", e.team}, {"detail", detail}};
}

namespace {
namespace audit_parse {  // distinct names in the unity build

constexpr size_t kMaxFilterText = 200;

// Days from 1970-01-01 to y-m-d (proleptic Gregorian; H. Hinnant's
// days_from_civil).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool LeapYear(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// Reads exactly `n` digits at *pos into *out.
bool Digits(std::string_view s, size_t* pos, size_t n, int* out) {
  if (*pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    const char c = s[*pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

bool Expect(std::string_view s, size_t* pos, char c) {
  if (*pos >= s.size() || s[*pos] != c) return false;
  ++*pos;
  return true;
}

// RFC 3339 date-time ("2026-12-07T21:00:00.5+01:00"); nullopt when not one.
std::optional<TimeMs> ParseRfc3339(std::string_view s) {
  size_t p = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!Digits(s, &p, 4, &year) || !Expect(s, &p, '-') || !Digits(s, &p, 2, &month) ||
      !Expect(s, &p, '-') || !Digits(s, &p, 2, &day)) {
    return std::nullopt;
  }
  if (p >= s.size() || (s[p] != 'T' && s[p] != 't' && s[p] != ' ')) return std::nullopt;
  ++p;
  if (!Digits(s, &p, 2, &hour) || !Expect(s, &p, ':') || !Digits(s, &p, 2, &minute) ||
      !Expect(s, &p, ':') || !Digits(s, &p, 2, &second)) {
    return std::nullopt;
  }
  int64_t ms = 0;
  if (p < s.size() && s[p] == '.') {
    ++p;
    size_t n = 0;
    int64_t scale = 100;
    while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
      if (n < 3) ms += (s[p] - '0') * scale;
      scale /= 10;
      ++p;
      ++n;
    }
    if (n == 0) return std::nullopt;
  }
  int64_t offset_min = 0;
  if (p < s.size() && (s[p] == 'Z' || s[p] == 'z')) {
    ++p;
  } else if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
    const int sign = s[p] == '-' ? -1 : 1;
    ++p;
    int oh = 0, om = 0;
    if (!Digits(s, &p, 2, &oh) || !Expect(s, &p, ':') || !Digits(s, &p, 2, &om) || oh > 23 ||
        om > 59) {
      return std::nullopt;
    }
    offset_min = sign * (oh * 60 + om);
  } else {
    return std::nullopt;  // RFC 3339 requires the offset
  }
  if (p != s.size()) return std::nullopt;
  static constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1) return std::nullopt;
  const int month_days = kDays[month - 1] + (month == 2 && LeapYear(year) ? 1 : 0);
  // Second 60: a leap second, as RFC 3339 allows (counted as the next one).
  if (day > month_days || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  const int64_t days =
      DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  const int64_t secs = days * 86400 + hour * 3600 + minute * 60 + second - offset_min * 60;
  return secs * 1000 + ms;
}

Status TextParam(const HttpRequest& req, const char* name, std::string* out) {
  *out = req.Query(name);
  if (out->size() > kMaxFilterText) {
    return InvalidArgument(fmt::format("{} is longer than {} bytes", name, kMaxFilterText), name);
  }
  if (!IsValidUtf8(*out)) return InvalidArgument(std::string(name) + " is not UTF-8", name);
  for (unsigned char c : *out) {
    if (c < 0x20 || c == 0x7f) {
      return InvalidArgument(std::string(name) + " has a control character", name);
    }
  }
  return Status::Ok();
}

// A decimal integer in [min, max], digits only.
std::optional<int64_t> Integer(std::string_view s, int64_t min, int64_t max) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  int64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  if (v < min || v > max) return std::nullopt;
  return v;
}

}  // namespace audit_parse
}  // namespace

Result<TimeMs> ParseAuditTime(std::string_view text, const char* field) {
  if (auto ms = audit_parse::Integer(text, 0, 999'999'999'999'999)) return *ms;
  if (auto t = audit_parse::ParseRfc3339(text); t && *t >= 0) return *t;
  return InvalidArgument(fmt::format("{} must be milliseconds since the epoch or an RFC 3339 time "
                                     "(2026-12-07T21:00:00Z), not '{}'",
                                     field, SafeEcho(text)),
                         field);
}

Result<AuditFilter> ParseAuditFilter(const HttpRequest& req) {
  static const char* const kKnown[] = {"actor", "action",    "task_id", "since",
                                       "until", "before_id", "limit"};
  for (const auto& [name, value] : req.query) {
    bool known = false;
    for (const char* k : kKnown) known = known || name == k;
    if (!known) {
      return InvalidArgument(fmt::format("unknown filter '{}'; known: actor, action, task_id, "
                                         "since, until, before_id, limit",
                                         SafeEcho(name)),
                             SafeEcho(name));
    }
  }
  AuditFilter f;
  MAESTRO_RETURN_IF_ERROR(audit_parse::TextParam(req, "actor", &f.actor));
  MAESTRO_RETURN_IF_ERROR(audit_parse::TextParam(req, "action", &f.action));
  MAESTRO_RETURN_IF_ERROR(audit_parse::TextParam(req, "task_id", &f.task_id));
  // Actions are dotted names; anything else (a LIKE wildcard among them)
  // can never match one.
  for (char c : f.action) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) {
      return InvalidArgument("action may hold only letters, digits, '.', '_' and '-'", "action");
    }
  }
  if (std::string s = req.Query("since"); !s.empty()) {
    auto t = ParseAuditTime(s, "since");
    if (!t.ok()) return t.status();
    f.since = *t;
  }
  if (std::string s = req.Query("until"); !s.empty()) {
    auto t = ParseAuditTime(s, "until");
    if (!t.ok()) return t.status();
    f.until = *t;
    if (f.until <= f.since) return InvalidArgument("until must be later than since", "until");
  }
  if (std::string s = req.Query("before_id"); !s.empty()) {
    auto v = audit_parse::Integer(s, 1, INT64_MAX);
    if (!v) return InvalidArgument("before_id must be an entry id (an integer >= 1)", "before_id");
    f.before_id = *v;
  }
  if (std::string s = req.Query("limit"); !s.empty()) {
    auto v = audit_parse::Integer(s, 1, 1000);
    if (!v) return InvalidArgument("limit must be an integer between 1 and 1000", "limit");
    f.limit = static_cast<int>(*v);
  }
  return f;
}

}  // namespace maestro::api
