// loop_bench: the agent loop's own overhead per iteration (CPU time of this
// process, excluding the LLM) at 1k, 10k and 100k tokens of context.
//
// A zero-latency LlmClient answers every call with one ReadFile call (a
// different path each time, so the loop guard never fires) whose handler
// returns a fixed 400-byte result. Each iteration therefore does the real
// work of one loop turn: interjection query (SQLite), prompt estimate,
// request setup, usage recording (event + task stats in SQLite), assistant
// and tool messages appended to messages.jsonl / current.jsonl /
// transcript.jsonl, and a Dispatcher call with its ledger records. The fake does not read the
// request files, so their streaming cost (the LLM client's) is excluded.
//
// Usage: loop_bench [iterations=200]
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "context/task_context.h"
#include "engine/loop/movement_runner.h"
#include "engine/piece/piece_catalog.h"
#include "engine/prompt/prompt_builder.h"
#include "store/sqlite/sqlite_store.h"
#include "tools/park_tools.h"

namespace maestro::engine {
namespace {

class ZeroLatencyLlm : public llm::LlmClient {
 public:
  explicit ZeroLatencyLlm(int calls) : left_(calls) { profile_.context_length = 10'000'000; }
  llm::LlmCallResult Chat(const llm::ChatRequest&, const llm::LlmEventFn&, CancelToken*) override {
    llm::LlmCallResult r;
    r.attempts = 1;
    std::string name = left_-- > 0 ? "ReadFile" : "complete";
    std::string args = name == "ReadFile" ? "{\"path\":\"f" + std::to_string(n_++) + ".cc\"}"
                                          : "{\"status\":\"success\",\"result\":\"done\"}";
    r.response.tool_calls.push_back({0, "call_" + std::to_string(n_), name, args});
    r.response.usage.prompt_tokens = 1000;
    r.response.usage.cached_tokens = 990;
    r.response.usage.completion_tokens = 10;
    r.response.usage.reported = true;
    return r;
  }
  const llm::ModelProfile& profile() const override { return profile_; }

 private:
  int left_;
  int n_ = 0;
  llm::ModelProfile profile_;
};

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int Bench(int64_t context_tokens, int iterations, bool dedup) {
  std::string dir = std::filesystem::temp_directory_path() /
                    ("maestro-loop-bench-" + std::to_string(context_tokens));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto store = SqliteStore::Open(dir + "/maestro.db", {});
  if (!store.ok()) return 1;
  NewTask nt;
  nt.instruction = "bench";
  nt.piece = "chat";
  auto created = (*store)->CreateTask(nt);
  ClaimFilter filter;
  filter.worker_id = "w";
  auto claimed = (*store)->ClaimNextJob(filter, 600'000);
  if (!created.ok() || !claimed.ok() || !*claimed) return 1;
  Job job = **claimed;
  context::ContextDirs dirs(dir);
  context::ContextConfig cc;
  cc.context_length = 10'000'000;
  auto ctx = context::TaskContext::Start(dirs, {store->get(), SystemClock::Default()},
                                         created->task, job, cc);
  if (!ctx.ok()) return 1;
  // Pre-fill ~context_tokens of conversation (4 chars/token).
  auto thread = (*ctx)->messages().StartThread(job.id, {{"role", "system"}, {"content", "bench"}});
  if (!thread.ok()) {
    std::fprintf(stderr, "%s\n", thread.status().ToString().c_str());
    return 1;
  }
  std::string chunk(4000, 'x');
  for (int64_t t = 0; t < context_tokens; t += 1000) {
    (void)(*ctx)->messages().AddMessage(UserMessage(chunk), job.id);
  }
  tools::ToolRegistry reg;
  tools::ToolSpec read;
  read.name = "ReadFile";
  read.read_only = true;
  read.parameters = {{"type", "object"}, {"properties", {{"path", {{"type", "string"}}}}}};
  std::string result(400, 'r');
  (void)reg.Register(
      read, [&](const Json&, const tools::ToolContext&) { return tools::ToolResult::Ok(result); });
  tools::Dispatcher dispatcher(&reg, tools::ToolAuthorizer(nullptr));
  PieceCatalog catalog = PieceCatalog::Load({});
  const Piece* piece = catalog.Find("chat");
  auto pt = BuildPieceTools(*piece, {tools::ToolEntry(*reg.Find("ReadFile"))});
  if (!pt.ok()) return 1;
  std::ofstream((*ctx)->dir() + "/tools.json") << pt->bytes;
  ZeroLatencyLlm llm(iterations);
  LoopServices services;
  services.llm = &llm;
  services.store = store->get();
  services.dispatcher = &dispatcher;
  JobScope scope;
  scope.task_id = created->task.id;
  scope.job_id = job.id;
  scope.workspace_root = dir;
  scope.policy.allowed_tools = {"ReadFile"};
  scope.ledger = &(*ctx)->ledger();  // as PieceExecutor runs every job
  scope.limits.max_iterations = iterations + 10;
  AgentLoopDeps d{services, scope,
                  LoopState{.ctx = ctx->get(),
                            .piece = piece,
                            .piece_tools = &*pt,
                            .tools_path = (*ctx)->dir() + "/tools.json"}};
  // Over the guard threshold the prompt guard rewrites sent.jsonl each request.
  d.loop.guard.dedup_active = dedup;
  double cpu0 = CpuSeconds();
  MovementResult r = RunMovement(d, "chat");
  double cpu = CpuSeconds() - cpu0;
  std::printf("context %7lld tokens%s: %d iterations, %.1f us CPU per iteration (%s)\n",
              static_cast<long long>(context_tokens), dedup ? " dedup on" : "", iterations + 1,
              cpu * 1e6 / (iterations + 1),
              (r.next.value_or("unset") + " " + r.abort_reason + " " + r.result).c_str());
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace maestro::engine

int main(int argc, char** argv) {
  int iterations = argc > 1 ? std::atoi(argv[1]) : 200;
  for (bool dedup : {false, true}) {
    for (int64_t tokens : {1'000, 10'000, 100'000}) {
      if (maestro::engine::Bench(tokens, iterations, dedup) != 0) return 1;
    }
  }
  return 0;
}
