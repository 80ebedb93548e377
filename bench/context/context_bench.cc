// Memory of one long task: file-based context (seed 002) against the
// in-memory way. Prints its figures; the LAST line is the summary.
//
// One task's conversation grows from 10k to 1M estimated tokens (compression
// off): each iteration appends an assistant tool call and its tool result
// (~1.5k tokens of code-like text with some Japanese) and records the call
// in the tool ledger. At each checkpoint the next request is produced:
//   files   the real stores (messages.jsonl, current.jsonl, transcript.jsonl,
//           tools.jsonl) and src/llm's RequestBody streaming current.jsonl +
//           tools into a sink, teeing request.json as seed 002 does;
//   memory  the conversation held as a std::vector<nlohmann::json>, the
//           request built as one JSON object and serialized to a string —
//           how in-memory agents send it.
// Each mode runs in its own forked child so the peak-RSS high-water marks
// (VmHWM of /proc/self/status) do not mix. Growth = VmHWM at a size minus
// VmHWM at the first checkpoint. Pass: files growth 10k -> 1M < 5 MB.
//
// Usage: context_bench [--max-tokens N] [--dir PATH]
// Run the release build: sanitizers keep freed memory and inflate RSS.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "context/ledger.h"
#include "context/message_store.h"
#include "context/record_stores.h"
#include "context/token_estimate.h"
#include "core/clock.h"
#include "llm/request_body.h"

namespace {

using namespace maestro;
using namespace maestro::context;

long StatusKb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  size_t n = std::strlen(key);
  while (std::getline(in, line)) {
    if (line.compare(0, n, key) == 0) return std::stol(line.substr(n));
  }
  return -1;
}

// Deterministic content: a file listing of `lines` code lines.
std::string ToolResult(int i) {
  std::string s;
  s.reserve(6400);
  for (int k = 0; s.size() < 6000; ++k) {
    s += "  int value_" + std::to_string(i) + "_" + std::to_string(k) + " = compute(input[" +
         std::to_string(k) + "], options);  // ";
    s += (k % 5 == 0) ? "入力を検証してから計算する\n" : "apply the transformation\n";
  }
  return s;
}

Json CallMessage(int i) {
  std::string id = "call_" + std::to_string(i);
  return {{"role", "assistant"},
          {"content", "Reading the next file to understand the interface."},
          {"tool_calls",
           {{{"id", id},
             {"type", "function"},
             {"function",
              {{"name", "ReadFile"},
               {"arguments", "{\"path\":\"src/module_" + std::to_string(i) + ".cc\"}"}}}}}}};
}

Json ResultMessage(int i) {
  return {
      {"role", "tool"}, {"tool_call_id", "call_" + std::to_string(i)}, {"content", ToolResult(i)}};
}

const Json kSystem = {{"role", "system"},
                      {"content", "You are maestro, a coding agent. Work in the workspace."}};
const Json kUser = {{"role", "user"}, {"content", "Read the code base and document every module."}};

std::string ToolsJson() {
  Json tools = Json::array();
  for (const char* name :
       {"ReadFile", "WriteFile", "EditFile", "ListDir", "Glob", "Grep", "RunCommand", "complete"}) {
    tools.push_back({{"type", "function"},
                     {"function",
                      {{"name", name},
                       {"description", std::string("The ") + name + " tool."},
                       {"parameters",
                        {{"type", "object"}, {"properties", {{"path", {{"type", "string"}}}}}}}}}});
  }
  return tools.dump();
}

struct Point {
  int64_t tokens = 0;
  long hwm_kb = 0;
  long rss_kb = 0;
  uint64_t body_bytes = 0;
  double seconds = 0;
};

void Emit(FILE* out, const Point& p) {
  std::fprintf(out, "%lld %ld %ld %llu %.3f\n", static_cast<long long>(p.tokens), p.hwm_kb,
               p.rss_kb, static_cast<unsigned long long>(p.body_bytes), p.seconds);
  std::fflush(out);
}

int RunFiles(const std::string& dir, const std::vector<int64_t>& sizes, FILE* out) {
  FakeClock clock;
  std::filesystem::create_directories(dir);
  const std::string tools_path = dir + "/tools.json";
  std::ofstream(tools_path) << ToolsJson();
  const int64_t tools_tokens = EstimateToolsTokens(ToolsJson());
  auto ms = MessageStore::Open(dir, &clock);
  auto ledger = tools::ToolLedger::Open(dir, &clock);
  if (!ms.ok() || !ledger.ok()) return 2;
  if (!ms->StartThread("job", kSystem).ok() || !ms->AddMessage(kUser, "job").ok()) return 2;
  auto t0 = std::chrono::steady_clock::now();
  int i = 0;
  std::vector<char> sink(64 * 1024);
  for (int64_t target : sizes) {
    while (ms->EstimatePromptTokens(tools_tokens) < target) {
      ++i;
      if (!ms->AddMessage(CallMessage(i), "job").ok()) return 3;
      if (!ms->AddMessage(ResultMessage(i), "job", "ReadFile").ok()) return 3;
      const Json args = {{"path", "src/module_" + std::to_string(i) + ".cc"}};
      if (!(*ledger)
               ->RecordEnded({"task", "job", "call_" + std::to_string(i)}, "ReadFile", args, 0,
                             tools::ToolResult::Ok("(6 KB)"))
               .ok()) {
        return 3;
      }
    }
    llm::RequestBodySpec spec;
    spec.model = "bench-model";
    spec.tools_path = tools_path;
    spec.messages_path = ms->current_path();
    spec.request_json_path = dir + "/request.json";
    auto body = llm::RequestBody::Open(spec);
    if (!body.ok()) return 4;
    uint64_t sent = 0;
    while (size_t n = (*body)->Read(sink.data(), sink.size())) sent += n;
    if (!(*body)->error().ok() || sent != (*body)->size()) return 5;
    Point p{ms->EstimatePromptTokens(tools_tokens), StatusKb("VmHWM:"), StatusKb("VmRSS:"), sent,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
    Emit(out, p);
  }
  return 0;
}

int RunMemory(const std::vector<int64_t>& sizes, FILE* out) {
  Json tools = Json::parse(ToolsJson());
  const int64_t tools_tokens = EstimateToolsTokens(ToolsJson());
  std::vector<Json> messages = {kSystem, kUser};
  int64_t raw = EstimateMessageTokens(kSystem) + EstimateMessageTokens(kUser);
  auto t0 = std::chrono::steady_clock::now();
  int i = 0;
  for (int64_t target : sizes) {
    while (raw + tools_tokens + kReplyPrimingTokens < target) {
      ++i;
      messages.push_back(CallMessage(i));
      raw += EstimateMessageTokens(messages.back());
      messages.push_back(ResultMessage(i));
      raw += EstimateMessageTokens(messages.back());
    }
    uint64_t sent;
    {
      Json req = {
          {"model", "bench-model"}, {"stream", true}, {"tools", tools}, {"messages", messages}};
      std::string body = req.dump();
      sent = body.size();
    }
    Point p{raw + tools_tokens + kReplyPrimingTokens, StatusKb("VmHWM:"), StatusKb("VmRSS:"), sent,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
    Emit(out, p);
  }
  return 0;
}

// Runs `fn` in a forked child; returns the points it reported.
template <typename Fn>
std::vector<Point> InChild(Fn fn, int* exit_code) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    FILE* out = fdopen(fds[1], "w");
    int rc = fn(out);
    std::fclose(out);
    _exit(rc);
  }
  close(fds[1]);
  std::vector<Point> pts;
  FILE* in = fdopen(fds[0], "r");
  long long tok;
  unsigned long long bytes;
  Point p;
  while (std::fscanf(in, "%lld %ld %ld %llu %lf", &tok, &p.hwm_kb, &p.rss_kb, &bytes, &p.seconds) ==
         5) {
    p.tokens = tok;
    p.body_bytes = bytes;
    pts.push_back(p);
  }
  std::fclose(in);
  int status = 0;
  waitpid(pid, &status, 0);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return pts;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t max_tokens = 1'000'000;
  std::string dir =
      (std::filesystem::temp_directory_path() / ("context_bench_" + std::to_string(getpid())))
          .string();
  for (int a = 1; a + 1 < argc; a += 2) {
    if (std::strcmp(argv[a], "--max-tokens") == 0) max_tokens = std::stoll(argv[a + 1]);
    if (std::strcmp(argv[a], "--dir") == 0) dir = argv[a + 1];
  }
  std::vector<int64_t> sizes;
  for (int64_t s : {10'000, 50'000, 100'000, 250'000, 500'000, 750'000, 1'000'000}) {
    if (s <= max_tokens) sizes.push_back(s);
  }
  if (sizes.empty() || sizes.back() != max_tokens) sizes.push_back(max_tokens);

  int rc_files = 0, rc_mem = 0;
  auto files = InChild([&](FILE* out) { return RunFiles(dir, sizes, out); }, &rc_files);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  auto mem = InChild([&](FILE* out) { return RunMemory(sizes, out); }, &rc_mem);
  if (rc_files != 0 || rc_mem != 0 || files.size() != sizes.size() || mem.size() != sizes.size()) {
    std::printf("FAILED: files child exit %d (%zu points), memory child exit %d (%zu points)\n",
                rc_files, files.size(), rc_mem, mem.size());
    return 1;
  }
  std::printf("%12s %12s | %14s %14s %12s | %14s %14s\n", "target_tok", "est_tokens",
              "files_hwm_MB", "files_grow_MB", "body_MB", "memory_hwm_MB", "memory_grow_MB");
  for (size_t k = 0; k < sizes.size(); ++k) {
    std::printf("%12lld %12lld | %14.2f %14.2f %12.2f | %14.2f %14.2f\n",
                static_cast<long long>(sizes[k]), static_cast<long long>(files[k].tokens),
                files[k].hwm_kb / 1024.0, (files[k].hwm_kb - files[0].hwm_kb) / 1024.0,
                static_cast<double>(files[k].body_bytes) / 1048576.0, mem[k].hwm_kb / 1024.0,
                (mem[k].hwm_kb - mem[0].hwm_kb) / 1024.0);
  }
  double fg = (files.back().hwm_kb - files.front().hwm_kb) / 1024.0;
  double mg = (mem.back().hwm_kb - mem.front().hwm_kb) / 1024.0;
  bool pass = fg < 5.0;
  std::printf("time: files %.2fs, memory %.2fs\n", files.back().seconds, mem.back().seconds);
  std::printf(
      "context_bench: %lldk->%lldk est. tokens, request %.1f MB: peak RSS growth files %.2f MB vs "
      "in-memory JSON %.2f MB (saving %.1f%%) — %s (limit 5 MB)\n",
      static_cast<long long>(sizes.front() / 1000), static_cast<long long>(sizes.back() / 1000),
      static_cast<double>(files.back().body_bytes) / 1048576.0, fg, mg,
      mg > 0 ? 100.0 * (1.0 - fg / mg) : 0.0, pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
