#include "context/ledger.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace maestro::tools {

namespace {

Json ToJson(const LedgerRecord& r) {
  Json j = {{"seq", r.seq},
            {"event", r.event},
            {"task_id", r.key.task_id},
            {"job_id", r.key.job_id},
            {"call_id", r.key.call_id},
            {"tool", r.tool},
            {"read_only", r.read_only},
            {"ts", r.ts}};
  if (r.event == "started" || !r.args.is_null()) j["args"] = r.args;
  if (r.event != "started") j["duration_ms"] = r.duration_ms;
  if (!r.result.empty()) j["result"] = r.result;
  return j;
}

LedgerRecord FromJson(const Json& j) {
  LedgerRecord r;
  r.seq = j.value("seq", int64_t{0});
  r.event = j.value("event", "");
  r.key = {j.value("task_id", ""), j.value("job_id", ""), j.value("call_id", "")};
  r.tool = j.value("tool", "");
  r.args = j.value("args", Json());
  r.read_only = j.value("read_only", false);
  r.ts = j.value("ts", TimeMs{0});
  r.duration_ms = j.value("duration_ms", int64_t{0});
  r.result = j.value("result", "");
  return r;
}

std::string Truncate(const std::string& s) {
  if (s.size() <= kLedgerResultBytes) return s;
  size_t n = kLedgerResultBytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "…";
}

}  // namespace

Result<std::vector<LedgerRecord>> ToolLedger::Read(const std::string& dir, Env* env) {
  std::vector<LedgerRecord> out;
  MAESTRO_RETURN_IF_ERROR(
      ForEachLine(*env, dir + "/tools.jsonl", [&](std::string_view line, uint64_t) {
        if (line.empty()) return true;
        Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
        // Not a record: a torn append, or a line of the pre-ledger shape (no event).
        if (j.is_discarded() || !j.is_object() || !j.contains("event")) return true;
        try {
          out.push_back(FromJson(j));
        } catch (const Json::exception&) {
          // a field of the wrong type: not one of our records
        }
        return true;
      }));
  return out;
}

Result<std::unique_ptr<ToolLedger>> ToolLedger::Open(const std::string& dir, Clock* clock,
                                                     Env* env) {
  MAESTRO_RETURN_IF_ERROR(env->CreateDirs(dir));
  const std::string path = dir + "/tools.jsonl";
  // A torn last line must not glue onto our first record.
  MAESTRO_RETURN_IF_ERROR(CutTornTail(*env, path).status());
  // The sequence continues after every numbered line, records or not, so no
  // seq is ever given twice in one file.
  int64_t last = 0;
  MAESTRO_RETURN_IF_ERROR(ForEachLine(*env, path, [&](std::string_view line, uint64_t) {
    Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_object()) {
      auto it = j.find("seq");
      if (it != j.end() && it->is_number_integer()) last = std::max(last, it->get<int64_t>());
    }
    return true;
  }));
  MAESTRO_ASSIGN_OR_RETURN(AppendFile file, AppendFile::Open(*env, path));
  return std::unique_ptr<ToolLedger>(new ToolLedger(path, std::move(file), last + 1, clock));
}

Result<int64_t> ToolLedger::Append(LedgerRecord rec) {
  MutexLock lock(&mu_);
  rec.seq = next_seq_;
  rec.ts = clock_->NowMs();
  // A read-only call's records need no fdatasync: lost in an OS crash, the
  // call is just run again (PlanRecovery); a later synced record flushes
  // them anyway. Everything a side effect depends on is synced.
  MAESTRO_RETURN_IF_ERROR(file_.Append(DumpJson(ToJson(rec)) + "\n", /*sync=*/!rec.read_only));
  ++next_seq_;
  return rec.seq;
}

Status ToolLedger::Started(const IdempotencyKey& key, const std::string& tool, const Json& args,
                           bool read_only) {
  LedgerRecord r;
  r.event = "started";
  r.key = key;
  r.tool = tool;
  r.args = args;
  r.read_only = read_only;
  return Append(std::move(r)).status();
}

Status ToolLedger::Finished(const IdempotencyKey& key, const std::string& tool, bool read_only,
                            int64_t duration_ms, const ToolResult& result) {
  LedgerRecord r;
  r.event = result.is_error ? "error" : "finished";
  r.key = key;
  r.tool = tool;
  r.read_only = read_only;
  r.duration_ms = duration_ms;
  r.result = Truncate(result.content);
  return Append(std::move(r)).status();
}

Status ToolLedger::Reconciled(const IdempotencyKey& key, const std::string& tool,
                              const std::string& note) {
  LedgerRecord r;
  r.event = "reconciled";
  r.key = key;
  r.tool = tool;
  r.result = Truncate(note);
  return Append(std::move(r)).status();
}

Status ToolLedger::ParkCall(const IdempotencyKey& key, const std::string& tool, const Json& args,
                            bool parked, int64_t duration_ms, const ToolResult& result) {
  if (!parked) return RecordEnded(key, tool, args, duration_ms, result).status();
  LedgerRecord r;
  r.event = "parked";
  r.key = key;
  r.tool = tool;
  r.args = args.is_null() ? Json::object() : args;
  r.duration_ms = duration_ms;
  r.result = Truncate(result.content);
  return Append(std::move(r)).status();
}

Result<int64_t> ToolLedger::RecordEnded(const IdempotencyKey& key, const std::string& tool,
                                        const Json& args, int64_t duration_ms,
                                        const ToolResult& result) {
  LedgerRecord r;
  r.event = result.is_error ? "error" : "finished";
  r.key = key;
  r.tool = tool;
  r.args = args.is_null() ? Json::object() : args;
  r.duration_ms = duration_ms;
  r.result = Truncate(result.content);
  return Append(std::move(r));
}

Result<RecoveryPlan> PlanRecovery(const std::string& dir, const std::string& job_id, Env* env) {
  MAESTRO_ASSIGN_OR_RETURN(auto records, ToolLedger::Read(dir, env));
  // call id -> its `started` record while open; closing events erase it.
  std::map<std::string, LedgerRecord> open;
  std::vector<std::string> order;
  for (auto& r : records) {
    if (r.key.job_id != job_id) continue;
    if (r.event == "started") {
      if (!open.count(r.key.call_id)) order.push_back(r.key.call_id);
      open[r.key.call_id] = r;
    } else {
      open.erase(r.key.call_id);
    }
  }
  RecoveryPlan plan;
  for (const auto& id : order) {
    auto it = open.find(id);
    if (it == open.end()) continue;
    (it->second.read_only ? plan.rerun : plan.reconcile).push_back(it->second);
  }
  return plan;
}

std::string ReconcileComment(const RecoveryPlan& plan) {
  std::string out =
      "The worker stopped while these tool calls were running; they may or may not have taken "
      "effect, so they were not repeated. Check the workspace, then reply to resume:\n";
  for (const auto& r : plan.reconcile) {
    out += fmt::format("- call {} ({}) {} started at {}\n", r.key.call_id, r.tool, r.args.dump(),
                       FormatIso8601(r.ts));
  }
  return out;
}

}  // namespace maestro::tools
