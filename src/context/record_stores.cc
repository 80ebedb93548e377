#include "context/record_stores.h"

#include <filesystem>
#include <map>

#include "context/ledger.h"
#include "tools/tool_names.h"

namespace maestro::context {

// ---- SummaryStore

Result<SummaryStore> SummaryStore::Open(const std::string& dir, Clock* clock, Env* env) {
  SummaryStore s;
  s.clock_ = clock;
  MAESTRO_ASSIGN_OR_RETURN(s.log_, JsonlLog::Open(*env, dir + "/summaries.jsonl", "id"));
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
  return tool == tools::kWriteFile || tool == tools::kEditFile;
}

// The ledger writes `started` with the args, then `finished`/`error` with
// the result; a call the engine handled alone has one `finished`/`error`
// record carrying its args.
Status ToolStore::ForEach(const std::function<bool(const ToolCallRecord&)>& fn) const {
  MAESTRO_ASSIGN_OR_RETURN(std::vector<tools::LedgerRecord> records,
                           tools::ToolLedger::Read(dir_, env_));
  std::map<std::string, Json> started_args;  // job/call -> args
  for (tools::LedgerRecord& l : records) {
    const std::string call = l.key.job_id + "/" + l.key.call_id;
    if (l.event == "started") {
      started_args[call] = std::move(l.args);
      continue;
    }
    if (l.event != "finished" && l.event != "error") continue;
    ToolCallRecord r;
    r.seq = l.seq;
    r.job_id = l.key.job_id;
    r.call_id = l.key.call_id;
    r.tool = l.tool;
    r.duration_ms = l.duration_ms;
    if (auto it = started_args.find(call); it != started_args.end()) {
      r.args = std::move(it->second);
      started_args.erase(it);
    } else if (l.args.is_object()) {
      r.args = std::move(l.args);
    }
    r.status = l.event == "finished" ? "success" : "error";
    (l.event == "finished" ? r.result : r.error) = std::move(l.result);
    if (!fn(r)) break;
  }
  return Status::Ok();
}

Result<int64_t> ToolStore::CountEndedCalls() const {
  int64_t n = 0;
  MAESTRO_RETURN_IF_ERROR(ForEach([&](const ToolCallRecord&) {
    ++n;
    return true;
  }));
  return n;
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

Result<EventLog> EventLog::Open(const std::string& dir, Clock* clock, Env* env) {
  EventLog e;
  e.clock_ = clock;
  MAESTRO_ASSIGN_OR_RETURN(e.log_, JsonlLog::Open(*env, dir + "/events.jsonl"));
  return e;
}

Result<int64_t> EventLog::Append(const std::string& type, const Json& payload,
                                 const std::string& job_id) {
  Json j = {{"type", type}, {"payload", payload}, {"timestamp", FormatIso8601(clock_->NowMs())}};
  if (!job_id.empty()) j["job_id"] = job_id;
  return log_.Append(std::move(j));
}

}  // namespace maestro::context
