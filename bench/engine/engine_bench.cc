// Cost of the engine's pure start-up work, per job start, at growing
// transcript sizes. Prints its figures; the LAST line is the summary:
//   1. Transcript replay (read transcript.jsonl + clean + renumber) of a
//      3-thread transcript of ~1k, ~10k and ~100k tokens (4 bytes/token).
//   2. SeedConversation for a same-piece Continue over the same files
//      (system + replay + final user message): the prompt work of a Continue.
//   3. BuildPieceTools and lint+load of the builtin `coding` piece.
// Each figure is the median of repeated runs (wall time, single thread).
//
// Usage: engine_bench [--reps N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/piece/piece_catalog.h"
#include "engine/prompt/prompt_paths.h"

namespace {

using namespace maestro;
using namespace maestro::engine;
using Clock = std::chrono::steady_clock;

Json ToolDef(const std::string& name) {
  return {
      {"type", "function"},
      {"function",
       {{"name", name},
        {"description", "Benchmark tool " + name + ". Does things."},
        {"parameters", {{"type", "object"}, {"properties", {{"path", {{"type", "string"}}}}}}}}}};
}

// A transcript of about `tokens` tokens in 3 threads (jobs): each turn is a
// ReadFile call with a ~400-byte result; each thread ends with a transition
// and a complete, as a real coding job would.
size_t WriteTranscript(const std::string& path, int tokens) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const std::string body(400, 'x');
  size_t bytes = 0, target = static_cast<size_t>(tokens) * 4;
  auto emit = [&](const Json& j) {
    std::string line = j.dump();
    out << line << "\n";
    bytes += line.size() + 1;
  };
  for (int t = 0; t < 3; ++t) {
    emit({{"role", "system"}, {"content", "static preamble"}});
    emit({{"role", "user"}, {"content", "instruction of job " + std::to_string(t)}});
    int n = 0;
    while (bytes < target * (t + 1) / 3) {
      std::string id = "gen_call_" + std::to_string(++n);
      emit({{"role", "assistant"},
            {"content", ""},
            {"tool_calls",
             {{{"id", id},
               {"type", "function"},
               {"function", {{"name", "ReadFile"}, {"arguments", R"({"path":"a.cc"})"}}}}}}});
      emit({{"role", "tool"}, {"tool_call_id", id}, {"content", body}});
    }
    for (const char* name : {"transition", "complete"}) {
      std::string id = "gen_call_" + std::to_string(++n);
      emit({{"role", "assistant"},
            {"content", ""},
            {"tool_calls",
             {{{"id", id},
               {"type", "function"},
               {"function", {{"name", name}, {"arguments", "{}"}}}}}}});
      emit({{"role", "tool"}, {"tool_call_id", id}, {"content", "ok"}});
    }
  }
  return bytes;
}

template <typename F>
double MedianMs(int reps, F&& f) {
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    auto t0 = Clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 21;
  for (int i = 1; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps")) reps = std::max(1, std::atoi(argv[++i]));
  }
  auto dir = std::filesystem::temp_directory_path() / "maestro-engine-bench";
  std::filesystem::create_directories(dir);
  PieceCatalog cat = PieceCatalog::Load({});
  const Piece& coding = *cat.Find("coding");
  std::vector<Json> policy;
  for (const char* n :
       {"WriteFile", "ReadFile", "RunCommand", "Grep", "EditFile", "ListDir", "Glob"}) {
    policy.push_back(ToolDef(n));
  }
  PieceTools tools = *BuildPieceTools(coding, policy);

  std::string summary = "engine_bench:";
  for (int tokens : {1'000, 10'000, 100'000, 200'000}) {
    std::string path = (dir / ("transcript_" + std::to_string(tokens) + ".jsonl")).string();
    size_t bytes = WriteTranscript(path, tokens);
    size_t kept = 0;
    double replay = MedianMs(reps, [&] { kept = ReplayTranscriptFile(path, {})->messages.size(); });
    PromptInputs in;
    in.piece = &coding;
    in.tools = &tools;
    in.preamble.working_directory = "/ws";
    in.dynamic.datetime = "2026-07-24 10:00 UTC";
    in.task_instruction = "continue";
    double seed = MedianMs(reps, [&] {
      auto r = SeedConversation(in, {PromptPath::kSamePieceContinue, path});
      if (!r.ok() || r->messages.size() != kept + 2) std::abort();
    });
    std::printf(
        "replay %6d tokens (%7zu bytes, %5zu messages kept): replay %8.3f ms (%.0f MB/s), "
        "seed same-piece Continue %8.3f ms\n",
        tokens, bytes, kept, replay, bytes / 1e6 / (replay / 1e3), seed);
    summary += " replay_" + std::to_string(tokens / 1000) +
               "k=" + std::to_string(replay).substr(0, 6) + "ms";
  }
  double build_tools = MedianMs(reps * 10, [&] { (void)BuildPieceTools(coding, policy); });
  const char* coding_text = nullptr;
  for (const auto& f : BuiltinPieceFiles()) {
    if (std::string(f.file_name) == "coding.yaml") coding_text = f.text;
  }
  double lint = MedianMs(reps * 10, [&] { (void)LoadPieceText(coding_text, "coding.yaml"); });
  std::printf(
      "BuildPieceTools(coding, 7 tools): %.3f ms (%zu bytes); lint+load coding.yaml: %.3f ms\n",
      build_tools, tools.bytes.size(), lint);
  std::filesystem::remove_all(dir);
  std::printf("%s tools=%.3fms lint=%.3fms\n", summary.c_str(), build_tools, lint);
  return 0;
}
