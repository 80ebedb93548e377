#include "tools/ledger.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
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

Result<std::vector<LedgerRecord>> ToolLedger::Read(const std::string& dir) {
  std::vector<LedgerRecord> out;
  std::ifstream in(dir + "/tools.jsonl");
  if (!in) return out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) continue;  // a torn append
    try {
      out.push_back(FromJson(j));
    } catch (const Json::exception&) {
      continue;  // a field of the wrong type: not one of our records
    }
  }
  return out;
}

Result<std::unique_ptr<ToolLedger>> ToolLedger::Open(const std::string& dir, Clock* clock) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Internal("cannot create " + dir + ": " + ec.message());
  MAESTRO_ASSIGN_OR_RETURN(auto existing, Read(dir));
  const std::string path = dir + "/tools.jsonl";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Internal("cannot open " + path + ": " + std::strerror(errno));
  // A torn last line must not glue onto our first record: start on a new line.
  if (std::filesystem::file_size(path, ec) > 0) {
    std::ifstream tail(path, std::ios::binary);
    tail.seekg(-1, std::ios::end);
    if (tail.get() != '\n' && write(fd, "\n", 1) != 1) {
      close(fd);
      return Internal("cannot write " + path);
    }
  }
  int64_t next = existing.empty() ? 1 : existing.back().seq + 1;
  return std::unique_ptr<ToolLedger>(new ToolLedger(path, fd, next, clock));
}

ToolLedger::~ToolLedger() {
  if (fd_ >= 0) close(fd_);
}

Status ToolLedger::Append(LedgerRecord rec) {
  MutexLock lock(&mu_);
  rec.seq = next_seq_++;
  rec.ts = clock_->NowMs();
  const std::string line = DumpJson(ToJson(rec)) + "\n";
  size_t off = 0;
  while (off < line.size()) {
    ssize_t n = write(fd_, line.data() + off, line.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Internal("append to " + path_ + ": " + std::strerror(errno));
    off += static_cast<size_t>(n);
  }
  if (fdatasync(fd_) != 0) return Internal("fdatasync " + path_ + ": " + std::strerror(errno));
  return Status::Ok();
}

Status ToolLedger::Started(const IdempotencyKey& key, const std::string& tool, const Json& args,
                           bool read_only) {
  LedgerRecord r;
  r.event = "started";
  r.key = key;
  r.tool = tool;
  r.args = args;
  r.read_only = read_only;
  return Append(std::move(r));
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
  return Append(std::move(r));
}

Status ToolLedger::Reconciled(const IdempotencyKey& key, const std::string& tool,
                              const std::string& note) {
  LedgerRecord r;
  r.event = "reconciled";
  r.key = key;
  r.tool = tool;
  r.result = Truncate(note);
  return Append(std::move(r));
}

Status ToolLedger::ParkCall(const IdempotencyKey& key, const std::string& tool, const Json& args,
                            bool parked, int64_t duration_ms, const ToolResult& result) {
  LedgerRecord r;
  r.event = parked ? "parked" : result.is_error ? "error" : "finished";
  r.key = key;
  r.tool = tool;
  r.args = args.is_null() ? Json::object() : args;
  r.duration_ms = duration_ms;
  r.result = Truncate(result.content);
  return Append(std::move(r));
}

Result<RecoveryPlan> PlanRecovery(const std::string& dir, const std::string& job_id) {
  MAESTRO_ASSIGN_OR_RETURN(auto records, ToolLedger::Read(dir));
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
