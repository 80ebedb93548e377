#include "cli/run.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <thread>

#include "api/task_service.h"
#include "cli/format.h"
#include "cli/runtime.h"
#include "core/log.h"

namespace maestro::cli {
namespace {

// The live view: text on stdout, movement changes and tool results on stderr.
void PrintDelta(const std::string&, const Json& d) {
  const std::string type = d.value("type", "");
  if (type == "text") std::cout << d.value("text", "") << std::flush;
  // std::cerr is unbuffered: one string, one write.
  if (type == "movement") std::cerr << "\n[movement " + d.value("movement", "") + "]\n";
  if (type == "tool_result") std::cerr << "\n[" + d.value("name", "") + "]\n";
}

// Says on stderr when the task moves on to a job the user did not start (a
// handoff continuation, a follow-up), so the output does not look doubled.
void ReportNewJobs(const std::vector<Job>& jobs, std::set<std::string>* seen) {
  for (const Job& j : jobs) {
    if (!seen->insert(j.id).second || seen->size() == 1) continue;
    std::string why =
        j.continued_from_job_id.empty() ? "" : " (continues job " + j.continued_from_job_id + ")";
    std::cerr << "\n[next job " << j.id << why << "]\n";
  }
}

// Polls the task until it settles; returns its jobs, oldest first.
Result<std::vector<Job>> FollowTask(Store& store, const std::string& task_id) {
  std::set<std::string> seen;
  for (;;) {
    auto jobs = store.ListJobs(task_id);
    if (!jobs.ok()) return jobs.status();
    ReportNewJobs(*jobs, &seen);
    if (TaskSettled(*jobs)) return jobs;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// How to go on after `run` stopped at a wait: the task stays parked in the
// data dir; a server started on that data dir takes the answer or decision
// and runs the rest (its admin_token file there is what the client reads).
std::string ContinueHint(const Config& cfg, const std::string& config_path, Store& store,
                         const Job& job) {
  std::error_code ec;
  std::string dir = std::filesystem::absolute(cfg.data_dir, ec).lexically_normal().string();
  std::string env = "MAESTRO_DATA_DIR=" + dir + " ";
  // The server needs the same model: the same config file (also the
  // implicit ./maestro.yaml, named absolutely) and MAESTRO_LLM_BASE_URL.
  std::string file = config_path;
  if (file.empty() && std::filesystem::exists("maestro.yaml", ec)) {
    file = std::filesystem::absolute("maestro.yaml", ec).string();
  }
  std::string cfg_flag = file.empty() ? "" : " --config " + file;
  const char* llm = std::getenv("MAESTRO_LLM_BASE_URL");
  std::string serve_env = env + (llm && *llm ? fmt::format("MAESTRO_LLM_BASE_URL={} ", llm) : "");
  std::string out = fmt::format(
      "to go on: start a server on the same data dir (in another shell):\n"
      "  {}maestro{} serve\nthen, in this shell:\n",
      serve_env, cfg_flag);
  if (job.wait_reason == "ask" || job.wait_reason == "reconcile") {
    out += "  " + env + AnswerCommand(job.task_id) + "\n";
  } else if (auto requests = store.ListRequests(job.task_id, std::nullopt); requests.ok()) {
    for (const Request& r : *requests) {
      if (r.status != RequestStatus::kPending) continue;
      out += fmt::format("  {} request {}: {}{}\n", RequestKindName(r.kind), r.id, r.name,
                         r.reason.empty() ? "" : " — " + r.reason);
      out += DecideCommands(job.task_id, {{"id", r.id}, {"kind", RequestKindName(r.kind)}},
                            "    " + env);
    }
  }
  out += fmt::format("  {}maestro task watch {}\n", env, job.task_id);
  return out;
}

// The agent's question, when the job waits on one.
std::string QuestionOf(Store& store, const Job& job) {
  std::string out;
  if (job.wait_reason != "ask" && job.wait_reason != "reconcile") return out;
  auto comments = store.ListComments(job.task_id);
  if (comments.ok()) {
    for (const Comment& c : *comments) {
      if (c.job_id == job.id && c.kind == CommentKind::kQuestion) out = c.body;
    }
  }
  return out;
}

// Prints the final job's outcome and maps it to the exit code.
int ReportEnd(const Config& cfg, const std::string& config_path, Store& store, const Job& job) {
  std::cout << "\n";
  if (job.status == JobStatus::kSucceeded) {
    std::cout << job.result << "\n";
    return 0;
  }
  if (job.status == JobStatus::kWaitingHuman) {
    std::string what = QuestionOf(store, job);
    std::cerr << fmt::format("maestro: task {} needs you: job {} is waiting_human ({}){}\n{}",
                             job.task_id, job.id, job.wait_reason,
                             what.empty() ? "" : "\nquestion: " + what,
                             ContinueHint(cfg, config_path, store, job));
    return kRunExitWaitingHuman;
  }
  auto comments = store.ListComments(job.task_id);
  std::string last = comments.ok() && !comments->empty() ? comments->back().body : "";
  std::cerr << fmt::format(
      "maestro: task {} job {} ended {}{}{}\n", job.task_id, job.id, JobStatusName(job.status),
      job.error_message.empty() ? "" : ": " + job.error_message, last.empty() ? "" : "\n" + last);
  return 1;
}

}  // namespace

bool TaskSettled(const std::vector<Job>& jobs) {
  if (jobs.empty()) return false;
  for (const Job& j : jobs) {
    if (!IsTerminal(j.status) && j.status != JobStatus::kWaitingHuman) return false;
  }
  return true;
}

int RunInForeground(const std::string& config_path, const std::string& piece,
                    const std::string& instruction) {
  auto cfg = LoadEffectiveConfig(config_path);
  if (!cfg.ok()) return Fail(cfg.status());
  if (cfg->llm.base_url.empty()) {
    return Fail(InvalidArgument("maestro run needs an LLM server: set MAESTRO_LLM_BASE_URL"));
  }
  if (Status st = InitLogging("warn", cfg->log_format); !st.ok()) return Fail(st);
  auto task_options = LocalTaskServiceOptions(*cfg);
  if (!task_options.ok()) return Fail(task_options.status());
  NewTask t;
  t.instruction = instruction;
  t.piece = piece;
  // Before anything starts: an unknown piece writes nothing (the
  // TaskService's own check, which Create runs again).
  if (Status st = api::TaskService::CheckChoices(task_options->choices, &t); !st.ok()) {
    return Fail(st);
  }
  cfg->workers = 1;
  auto rt = OpenRuntime(*cfg);
  if (!rt.ok()) return Fail(rt.status());
  if (Status st = StartWorkers(*rt, *cfg, PrintDelta, /*git_spares=*/false); !st.ok())
    return Fail(st);
  // No title: the store names it (AutoTitle), as on every create path.
  // Local: no owner, so the task is everyone's who opens this data dir.
  api::TaskService tasks(*rt->store, *std::move(task_options));
  auto created = tasks.Create(t, /*asked=*/{}, /*user=*/"", /*files=*/{});
  if (!created.ok()) return Fail(created.status());
  rt->pool->Notify();
  auto jobs = FollowTask(*rt->store, created->task.id);
  rt->Stop();
  if (!jobs.ok()) return Fail(jobs.status());
  return ReportEnd(*cfg, config_path, *rt->store, jobs->back());
}

}  // namespace maestro::cli
