#include "cli/run.h"

#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <set>
#include <thread>

#include "api/notification_view.h"
#include "cli/runtime.h"
#include "core/log.h"

namespace maestro::cli {
namespace {

// The live view: text on stdout, movement changes and tool results on stderr.
void PrintDelta(const std::string&, const Json& d) {
  const std::string type = d.value("type", "");
  if (type == "text") std::cout << d.value("text", "") << std::flush;
  if (type == "movement") std::cerr << "\n[movement " << d.value("movement", "") << "]\n";
  if (type == "tool_result") std::cerr << "\n[" << d.value("name", "") << "]\n";
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

// What the person is asked for: the agent's question, or the pending
// requests to decide.
std::string WaitingFor(Store& store, const Job& job) {
  std::string out;
  if (job.wait_reason == "ask" || job.wait_reason == "reconcile") {
    auto comments = store.ListComments(job.task_id);
    if (comments.ok()) {
      for (const Comment& c : *comments) {
        if (c.job_id == job.id && c.author != "user") out = c.body;
      }
    }
    return out;
  }
  auto requests = store.ListRequests(job.task_id, "");
  if (requests.ok()) {
    for (const Request& r : *requests) {
      if (r.status != "pending") continue;
      out += fmt::format("{}{} request {}: {}{}", out.empty() ? "" : "\n", r.kind, r.id, r.name,
                         r.reason.empty() ? "" : " — " + r.reason);
    }
  }
  return out;
}

// Prints the final job's outcome and maps it to the exit code.
int ReportEnd(Store& store, const Job& job) {
  std::cout << "\n";
  if (job.status == JobStatus::kSucceeded) {
    std::cout << job.result << "\n";
    return 0;
  }
  if (job.status == JobStatus::kWaitingHuman) {
    std::string what = WaitingFor(store, job);
    std::cerr << fmt::format(
        "maestro: task {} needs you: job {} is waiting_human ({}){}\n"
        "answer or decide with `maestro serve` running: maestro task comment|approve|deny {} …\n",
        job.task_id, job.id, job.wait_reason, what.empty() ? "" : "\n" + what, job.task_id);
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
  // Before anything starts: an unknown piece writes no task.
  if (Status st = CheckPieceName(*cfg, piece); !st.ok()) return Fail(st);
  cfg->workers = 1;
  auto hooks = std::make_shared<Hooks>();
  auto rt = OpenRuntime(*cfg, hooks);
  if (!rt.ok()) return Fail(rt.status());
  if (Status st = StartWorkers(*rt, *cfg, hooks, PrintDelta); !st.ok()) return Fail(st);
  NewTask t;
  t.instruction = instruction;
  t.piece = piece;
  t.title = api::TaskDisplayName("", instruction);  // first line, cut at a character
  auto created = rt->store->CreateTask(t);
  if (!created.ok()) return Fail(created.status());
  rt->pool->Notify();
  auto jobs = FollowTask(*rt->store, created->task.id);
  rt->Stop();
  if (!jobs.ok()) return Fail(jobs.status());
  return ReportEnd(*rt->store, jobs->back());
}

}  // namespace maestro::cli
