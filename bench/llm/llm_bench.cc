// Benchmarks of the LLM client's streaming paths. Prints its figures; the
// LAST line is the summary:
//   1. SSE parse throughput: a synthetic llama.cpp-shaped stream through
//      SseParser alone and through SseParser + StreamAssembler (MB/s).
//   2. Peak memory of sending a 50 MB current.jsonl to maestro-fakellm with
//      the real HttpLlmClient: growth of this process's VmHWM (peak RSS, reset
//      via /proc/self/clear_refs) during the call, against the file size.
//   3. Round trip of a small streamed call on one client (its kept-alive
//      connection): the median and p90 of 200 calls, in microseconds.
//
// Usage: llm_bench [--mb N] [--fakellm PATH]
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/sse_parser.h"
#include "fakellm_process.h"
#include "llm/llm_client.h"
#include "llm/stream_assembler.h"

namespace {

using namespace maestro;
using namespace maestro::llm;
using SteadyClock = std::chrono::steady_clock;

double Seconds(SteadyClock::time_point t0) {
  return std::chrono::duration<double>(SteadyClock::now() - t0).count();
}

// "VmHWM:" of /proc/self/status in KiB.
long VmHwmKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}
long VmRssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}
void ResetHwm() { std::ofstream("/proc/self/clear_refs") << "5"; }

std::string SyntheticStream(size_t target_bytes) {
  std::string s;
  s.reserve(target_bytes + 1024);
  Json chunk = {
      {"id", "chatcmpl-bench"},
      {"object", "chat.completion.chunk"},
      {"created", 1735000000},
      {"model", "qwen3"},
      {"choices", {{{"index", 0}, {"delta", {{"content", "token"}}}, {"finish_reason", nullptr}}}}};
  int i = 0;
  while (s.size() < target_bytes) {
    chunk["choices"][0]["delta"]["content"] = " tok" + std::to_string(i++);
    s += "data: " + chunk.dump() + "\n\n";
    if (i % 50 == 0) s += ": keep-alive\n\n";
  }
  s +=
      R"(data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5}})";
  s += "\n\ndata: [DONE]\n\n";
  return s;
}

void BenchParse(double* parser_mbs, double* assembler_mbs) {
  std::string stream = SyntheticStream(32u << 20);
  const size_t piece = 16 * 1024;  // what libcurl typically hands over
  double mb = static_cast<double>(stream.size()) / (1 << 20);
  {
    size_t events = 0;
    SseParser p([&](const SseEvent&) { ++events; });
    auto t0 = SteadyClock::now();
    for (size_t i = 0; i < stream.size(); i += piece)
      p.Feed(std::string_view(stream).substr(i, piece));
    (void)p.Finish();
    *parser_mbs = mb / Seconds(t0);
    std::printf("sse_parser: %.1f MB in %zu events: %.0f MB/s\n", mb, events, *parser_mbs);
  }
  {
    size_t deltas = 0;
    StreamAssembler a([&](const LlmEvent&) { ++deltas; });
    SseParser p([&](const SseEvent& e) { (void)a.OnData(e.data); });
    auto t0 = SteadyClock::now();
    for (size_t i = 0; i < stream.size(); i += piece)
      p.Feed(std::string_view(stream).substr(i, piece));
    (void)p.Finish();
    ChatResponse r = a.Take();
    *assembler_mbs = mb / Seconds(t0);
    std::printf("sse_parser+assembler: %zu deltas, %zu content bytes: %.0f MB/s\n", deltas,
                r.content.size(), *assembler_mbs);
  }
}

// Writes a conversation of about `mb` MiB line by line (never in memory).
std::string WriteConversation(const std::filesystem::path& dir, size_t mb) {
  std::string path = (dir / "current.jsonl").string();
  std::ofstream out(path, std::ios::binary);
  out << Json{{"role", "system"}, {"content", "You are a benchmark."}}.dump() << "\n";
  std::string filler(8000, 'x');
  for (size_t i = 0; i < filler.size(); i += 9) filler[i] = ' ';
  size_t written = 0;
  for (int i = 0; written < (mb << 20); ++i) {
    std::string line =
        Json{{"role", i % 2 ? "assistant" : "user"}, {"content", filler}}.dump() + "\n";
    out << line;
    written += line.size();
  }
  return path;
}

}  // namespace

int main(int argc, char** argv) {
  size_t mb = 50;
  std::string fakellm = MAESTRO_FAKELLM_BIN;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--mb") == 0)
      mb = std::stoul(argv[++i]);
    else if (std::strcmp(argv[i], "--fakellm") == 0)
      fakellm = argv[++i];
  }
  spdlog::set_level(spdlog::level::warn);
  double parser_mbs = 0, assembler_mbs = 0;
  BenchParse(&parser_mbs, &assembler_mbs);

  auto dir =
      std::filesystem::temp_directory_path() / ("maestro_llm_bench_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string conv = WriteConversation(dir, mb);
  double file_mb = static_cast<double>(std::filesystem::file_size(conv)) / (1 << 20);

  maestro::testing::FakeLlmProcess server({"--log-level", "error"}, fakellm);
  ModelProfile profile;
  profile.base_url = server.base_url();
  profile.model = "fake-model";
  HttpLlmClient client(profile);
  ChatRequest small;
  small.messages_path = (dir / "small.jsonl").string();
  std::ofstream(small.messages_path) << R"({"role":"user","content":"warm up"})"
                                     << "\n";
  LlmCallResult warm = client.Chat(small, nullptr, nullptr);  // curl and TLS state, allocator pools
  if (!warm.ok()) {
    std::fprintf(stderr, "warm-up failed: %s\n", warm.status.ToString().c_str());
    return 1;
  }

  std::vector<double> call_us;
  for (int i = 0; i < 200; ++i) {
    auto c0 = SteadyClock::now();
    LlmCallResult c = client.Chat(small, nullptr, nullptr);
    call_us.push_back(Seconds(c0) * 1e6);
    if (!c.ok()) {
      std::fprintf(stderr, "small call failed: %s\n", c.status.ToString().c_str());
      return 1;
    }
  }
  std::sort(call_us.begin(), call_us.end());
  const double call_median_us = call_us[call_us.size() / 2];
  const double call_p90_us = call_us[call_us.size() * 9 / 10];
  std::printf("small call: %zu calls, median %.0f us, p90 %.0f us\n", call_us.size(),
              call_median_us, call_p90_us);

  ChatRequest big;
  big.messages_path = conv;
  ResetHwm();
  long rss_before = VmRssKb();
  long hwm_before = VmHwmKb();
  auto t0 = SteadyClock::now();
  LlmCallResult r = client.Chat(big, nullptr, nullptr);
  double secs = Seconds(t0);
  long hwm_after = VmHwmKb();
  std::filesystem::remove_all(dir);
  if (!r.ok()) {
    std::fprintf(stderr, "50 MB request failed: %s\n", r.status.ToString().c_str());
    return 1;
  }
  double peak_delta_mb = static_cast<double>(hwm_after - std::max(hwm_before, rss_before)) / 1024.0;
  std::printf(
      "send: %.1f MB conversation in %.2f s (%.0f MB/s); VmHWM %ld -> %ld KiB, "
      "peak growth %.2f MB = %.2f%% of the file\n",
      file_mb, secs, file_mb / secs, hwm_before, hwm_after, peak_delta_mb,
      100.0 * peak_delta_mb / file_mb);
  std::printf(
      "RESULT sse_parse_MBps=%.0f sse_parse_assemble_MBps=%.0f send_file_MB=%.1f "
      "send_peak_mem_growth_MB=%.2f send_MBps=%.0f call_median_us=%.0f call_p90_us=%.0f\n",
      parser_mbs, assembler_mbs, file_mb, peak_delta_mb, file_mb / secs, call_median_us,
      call_p90_us);
  return 0;
}
