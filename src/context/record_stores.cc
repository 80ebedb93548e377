#include "context/record_stores.h"

#include <filesystem>
#include <map>

#include "context/durable_file.h"

namespace maestro::context {

// ---- SummaryStore

Result<SummaryStore> SummaryStore::Open(const std::string& dir, Clock* clock) {
  SummaryStore s;
  s.clock_ = clock;
  MAESTRO_ASSIGN_OR_RETURN(s.log_, JsonlLog::Open(dir + "/summaries.jsonl", "id"));
  return s;
}

Result<int64_t> SummaryStore::Add(SummaryRecord r) {
  Json j = {{"start_seq", r.start_seq},
            {"end_seq", r.end_seq},
            {"summary", r.summary},
            {"original_tokens", r.original_tokens},
            {"summary_tokens", r.summary_tokens},
            {"ratio", r.ratio},
            {"tokens_before", r.tokens_before},
            {"tokens_after", r.tokens_after},
            {"job_id", r.job_id},
            {"timestamp", r.timestamp.empty() ? FormatIso8601(clock_->NowMs()) : r.timestamp}};
  return log_.Append(std::move(j), /*sync=*/true);
}

Result<std::optional<SummaryRecord>> SummaryStore::Latest() const {
  std::optional<SummaryRecord> last;
  MAESTRO_RETURN_IF_ERROR(log_.ForEach([&](const Json& j) {
    SummaryRecord r;
    r.id = j.value("id", int64_t{0});
    r.start_seq = j.value("start_seq", int64_t{0});
    r.end_seq = j.value("end_seq", int64_t{0});
    r.summary = j.value("summary", "");
    r.original_tokens = j.value("original_tokens", int64_t{0});
    r.summary_tokens = j.value("summary_tokens", int64_t{0});
    r.ratio = j.value("ratio", 0.0);
    r.tokens_before = j.value("tokens_before", int64_t{0});
    r.tokens_after = j.value("tokens_after", int64_t{0});
    r.job_id = j.value("job_id", "");
    r.timestamp = j.value("timestamp", "");
    last = std::move(r);
    return true;
  }));
  return last;
}

// ---- ToolStore

bool IsFileWritingTool(const std::string& tool) {
  return tool == "WriteFile" || tool == "EditFile";
}

Result<ToolStore> ToolStore::Open(const std::string& dir, Clock* clock) {
  ToolStore s;
  s.clock_ = clock;
  MAESTRO_ASSIGN_OR_RETURN(s.log_, JsonlLog::Open(dir + "/tools.jsonl"));
  return s;
}

Result<int64_t> ToolStore::AddToolCall(const ToolCallRecord& r) {
  Json j = {{"job_id", r.job_id},
            {"call_id", r.call_id},
            {"tool", r.tool},
            {"args", r.args},
            {"status", r.status},
            {"duration_ms", r.duration_ms},
            {"timestamp", FormatIso8601(r.started_at ? r.started_at : clock_->NowMs())}};
  if (r.status == "success") {
    j["result"] = r.result;
  } else {
    j["error"] = r.error;
  }
  if (r.finished_at) j["finished_at"] = FormatIso8601(r.finished_at);
  return log_.Append(std::move(j));
}

// Two record shapes share tools.jsonl: one line per call (AddToolCall, used
// when no Dispatcher ledger runs) and the Dispatcher's ToolLedger
// (src/tools/ledger.h): `started` with the args, then `finished`/`error` with
// the result. A ledger call is reported once, when it ends; a call still open
// (or `reconciled`) is not a fact about its outcome and is skipped.
Status ToolStore::ForEach(const std::function<bool(const ToolCallRecord&)>& fn) const {
  std::map<std::string, Json> started_args;  // job/call -> args
  return log_.ForEach([&](const Json& j) {
    const std::string event = j.value("event", "");
    ToolCallRecord r;
    r.seq = j.value("seq", int64_t{0});
    r.job_id = j.value("job_id", "");
    r.call_id = j.value("call_id", "");
    r.tool = j.value("tool", "");
    r.duration_ms = j.value("duration_ms", int64_t{0});
    if (event.empty()) {
      r.args = j.value("args", Json::object());
      r.status = j.value("status", "");
      r.result = j.value("result", "");
      r.error = j.value("error", "");
      return fn(r);
    }
    const std::string call = r.job_id + "/" + r.call_id;
    if (event == "started") {
      started_args[call] = j.value("args", Json::object());
      return true;
    }
    if (event != "finished" && event != "error") return true;
    if (auto it = started_args.find(call); it != started_args.end()) {
      r.args = std::move(it->second);
      started_args.erase(it);
    }
    r.status = event == "finished" ? "success" : "error";
    (event == "finished" ? r.result : r.error) = j.value("result", "");
    return fn(r);
  });
}

Result<std::set<std::string>> ToolStore::ChangedPaths(const std::string& job_id) const {
  std::set<std::string> paths;
  auto add = [&](const Json& args) {
    if (args.is_object() && args.contains("path") && args["path"].is_string()) {
      paths.insert(
          std::filesystem::path(args["path"].get<std::string>()).lexically_normal().string());
    }
  };
  MAESTRO_RETURN_IF_ERROR(ForEach([&](const ToolCallRecord& r) {
    if (!job_id.empty() && r.job_id != job_id) return true;
    if (IsFileWritingTool(r.tool) && r.status == "success") add(r.args);
    return true;
  }));
  return paths;
}

// ---- EventLog

Result<EventLog> EventLog::Open(const std::string& dir, Clock* clock) {
  EventLog e;
  e.clock_ = clock;
  MAESTRO_ASSIGN_OR_RETURN(e.log_, JsonlLog::Open(dir + "/events.jsonl"));
  return e;
}

Result<int64_t> EventLog::Append(const std::string& type, const Json& payload,
                                 const std::string& job_id) {
  Json j = {{"type", type}, {"payload", payload}, {"timestamp", FormatIso8601(clock_->NowMs())}};
  if (!job_id.empty()) j["job_id"] = job_id;
  return log_.Append(std::move(j));
}

// ---- PlanningHistoryStore

Result<PlanningHistoryStore> PlanningHistoryStore::Open(const std::string& planning_dir,
                                                        Clock* clock) {
  PlanningHistoryStore p;
  p.dir_ = planning_dir;
  p.clock_ = clock;
  std::error_code ec;
  std::filesystem::create_directories(planning_dir, ec);
  if (ec) return Internal("cannot create " + planning_dir + ": " + ec.message());
  MAESTRO_ASSIGN_OR_RETURN(p.log_, JsonlLog::Open(planning_dir + "/history.jsonl"));
  return p;
}

Status PlanningHistoryStore::SavePlan(const Json& plan, const std::string& job_id) {
  Json entry = {{"plan", plan}, {"job_id", job_id}};
  MAESTRO_ASSIGN_OR_RETURN(int64_t seq, AppendEntry("plan", entry));
  (void)seq;
  return ReplaceFileContent(dir_ + "/latest_plan.json", plan.dump(2) + "\n");
}

bool PlanningHistoryStore::HasPlan() const {
  return std::filesystem::exists(dir_ + "/latest_plan.json");
}

Result<Json> PlanningHistoryStore::LatestPlan() const {
  MAESTRO_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(dir_ + "/latest_plan.json"));
  return ParseJson(text);
}

Result<int64_t> PlanningHistoryStore::AppendEntry(const std::string& type, const Json& entry) {
  Json j = {{"type", type}, {"entry", entry}, {"timestamp", FormatIso8601(clock_->NowMs())}};
  return log_.Append(std::move(j));
}

}  // namespace maestro::context
