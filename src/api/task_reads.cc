#include "api/task_reads.h"

#include <map>

#include "api/attachments.h"
#include "api/auth.h"
#include "api/usage_view.h"
#include "api/views.h"

namespace maestro::api {

Result<Json> TaskReads::TaskDetail(const std::string& task_id, const std::string& user) {
  auto task = tasks_.VisibleTask(task_id, user);
  if (!task.ok()) return task.status();
  auto jobs = store_.ListJobs(task_id);
  if (!jobs.ok()) return jobs.status();
  auto requests = store_.ListRequests(task_id, std::nullopt);
  if (!requests.ok()) return requests.status();
  auto usage = store_.ListJobUsage({task_id});
  if (!usage.ok()) return usage.status();
  const budget::PriceTable& prices = tasks_.options().prices;
  std::map<std::string, UsageTotals> by_job;
  UsageTotals total;
  for (const auto& u : *usage) {
    UsageTotals t = JobTotals(u, prices);
    AddTotals(&total, t);
    by_job[u.job_id] = t;
  }
  auto job_json = [&](const Job& j) {
    Json out = JobJson(j);
    auto it = by_job.find(j.id);
    out["usage"] = UsageJson(it == by_job.end() ? UsageTotals{} : it->second);
    return out;
  };
  Json pending = Json::array();
  for (const auto& r : *requests) {
    if (r.status == RequestStatus::kPending) pending.push_back(RequestJson(r));
  }
  Json all_jobs = Json::array();
  for (const auto& j : *jobs) all_jobs.push_back(job_json(j));
  Json task_json = TaskJson(*task);
  task_json["usage"] = UsageJson(total);
  task_json["budget"] = BudgetJson(*task, *usage, prices, tasks_.options().clock->NowMs());
  return Json{{"task", task_json},
              {"latest_job", jobs->empty() ? Json(nullptr) : job_json(jobs->back())},
              {"jobs", all_jobs},
              {"pending_requests", pending}};
}

Result<Json> TaskReads::TasksWithUsage(const std::vector<Task>& tasks) {
  std::vector<std::string> ids;
  ids.reserve(tasks.size());
  for (const auto& t : tasks) ids.push_back(t.id);
  auto usage = store_.ListJobUsage(ids);
  if (!usage.ok()) return usage.status();
  const budget::PriceTable& prices = tasks_.options().prices;
  std::map<std::string, UsageTotals> by_task;
  std::map<std::string, std::vector<JobUsage>> usage_of;
  for (const auto& u : *usage) {
    AddTotals(&by_task[u.task_id], JobTotals(u, prices));
    usage_of[u.task_id].push_back(u);
  }
  const TimeMs now = tasks_.options().clock->NowMs();
  Json arr = Json::array();
  for (const auto& t : tasks) {
    Json j = TaskJson(t);
    auto it = by_task.find(t.id);
    j["usage"] = UsageJson(it == by_task.end() ? UsageTotals{} : it->second);
    j["budget"] = BudgetJson(t, usage_of[t.id], prices, now);
    arr.push_back(std::move(j));
  }
  return arr;
}

Result<Json> TaskReads::VisibleTasks(std::optional<JobStatus> status, const std::string& user) {
  auto tasks = store_.ListTasks(status, 200);
  if (!tasks.ok()) return tasks.status();
  std::vector<Task> visible;
  for (auto& t : *tasks) {
    if (tasks_.access().Visible(t, user)) visible.push_back(std::move(t));
  }
  auto arr = TasksWithUsage(visible);
  if (!arr.ok()) return arr.status();
  return Json{{"tasks", *arr}};
}

Result<Json> TaskReads::AttachmentsJson(const std::string& task_id, const std::string& comment_id) {
  auto all = store_.ListAttachments(task_id);
  if (!all.ok()) return all.status();
  Json arr = Json::array();
  for (const Attachment& a : *all) {
    if (comment_id.empty() || a.comment_id == comment_id) arr.push_back(AttachmentJson(a));
  }
  return arr;
}

Json CommentedJson(const TaskService::Commented& c) {
  Json attached = Json::array();
  for (const Attachment& a : c.attachments) attached.push_back(AttachmentJson(a));
  return Json{{"comment", CommentJson(c.result.comment)},
              {"outcome", CommentOutcomeName(c.result.outcome)},
              {"job", JobJson(c.result.job)},
              {"attachments", attached}};
}

Json DecidedJson(const TaskService::Decided& d) {
  Json out = {{"request", RequestJson(d.request)}};
  if (d.job) out["job"] = JobJson(*d.job);
  return out;
}

}  // namespace maestro::api
