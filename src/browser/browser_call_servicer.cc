#include "browser/browser_call_servicer.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <set>
#include <thread>

#include "browser/live_input.h"

namespace maestro::browser {

BrowserCallServicer::BrowserCallServicer(Store& store, BrowserService& browsers,
                                         std::string worker_id_prefix,
                                         BrowserCallServicerOptions options)
    : store_(store),
      browsers_(browsers),
      prefix_(std::move(worker_id_prefix) + ":"),
      options_(options) {}

BrowserCallServicer::~BrowserCallServicer() { Stop(); }

void BrowserCallServicer::Start() {
  browsers_.SetBeforeLaunch([this](const std::string& job_id) { ReleaseElsewhere(job_id); });
  loop_.Start(options_.poll, PeriodicTask::FirstRun::kAfterInterval, [this] { Tick(); });
}

void BrowserCallServicer::Stop() {
  browsers_.SetBeforeLaunch(nullptr);
  loop_.Stop();
  for (const auto& [job, worker] : held_) (void)store_.DropBrowserHolder(job, worker);
  held_.clear();
}

void BrowserCallServicer::Forget(const std::string& job_id) {
  auto it = held_.find(job_id);
  if (it == held_.end()) return;
  if (Status st = store_.DropBrowserHolder(job_id, it->second); !st.ok()) {
    spdlog::warn("job {}: browser holder row not dropped: {}", job_id, st.ToString());
  }
  held_.erase(it);
}

void BrowserCallServicer::Tick() {
  const std::vector<std::string> open = browsers_.OpenJobs();
  if (open.empty() && held_.empty()) return;  // no browser here: the store is not read
  const std::set<std::string> open_set(open.begin(), open.end());
  std::vector<std::string> closed;
  for (const auto& [job, worker] : held_) {
    if (!open_set.count(job)) closed.push_back(job);
  }
  for (const auto& job : closed) Forget(job);

  const auto now = std::chrono::steady_clock::now();
  const bool beat = now - last_beat_ >= options_.heartbeat;
  bool changed = false;
  for (const auto& job_id : open) {
    // Every round, not only on the heartbeat: a job claimed by another
    // process is let go of within one round, before its BrowseWeb there
    // has started a Chromium on the same profile (a launch takes ~1 s).
    auto job = store_.GetJob(job_id);
    if (!job.ok()) continue;  // gone: the BrowserService's sweep closes it
    if (job->worker_id.rfind(prefix_, 0) != 0) {
      // The job ran on another process since this browser opened (its pin
      // ran out, or this process was taken for gone): that process owns the
      // task's profile now.
      spdlog::info("job {}: now runs on {}; its browser here closes", job_id, job->worker_id);
      Forget(job_id);
      browsers_.CloseJob(job_id);
      continue;
    }
    auto [it, added] = held_.insert_or_assign(job_id, job->worker_id);
    changed = changed || added;
  }
  if ((beat || changed) && !held_.empty()) {
    std::vector<BrowserHolder> rows;
    for (const auto& [job, worker] : held_) rows.push_back({job, worker, 0});
    if (Status st = store_.PutBrowserHolders(rows); !st.ok()) {
      spdlog::warn("browser holders not refreshed: {}", st.ToString());
    }
  }
  if (beat) last_beat_ = now;

  // A copy: a release call erases from held_.
  const std::map<std::string, std::string> held = held_;
  for (const auto& [job, worker] : held) {
    auto calls = store_.PendingBrowserCalls(job, worker, options_.calls_per_round);
    if (!calls.ok()) {
      spdlog::warn("job {}: live-view calls not read: {}", job, calls.status().ToString());
      continue;
    }
    for (const auto& call : *calls) RunCall(call);
  }
}

void BrowserCallServicer::ReleaseElsewhere(const std::string& job_id) {
  auto holder = store_.GetBrowserHolder(job_id);
  if (!holder.ok() || holder->worker_id.rfind(prefix_, 0) == 0) return;  // none, or ours
  if (options_.clock->NowMs() - holder->seen_at > options_.holder_fresh.count()) return;
  BrowserCall c;
  c.job_id = job_id;
  c.worker_id = holder->worker_id;
  c.kind = "release";
  c.request = "{}";
  auto call = store_.AddBrowserCall(c, /*max_pending=*/64);
  if (!call.ok()) {
    spdlog::warn("job {}: the browser {} holds was not asked to close: {}", job_id,
                 holder->worker_id, call.status().ToString());
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + options_.release_wait;
  bool answered = false;
  while (!answered && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto got = store_.GetBrowserCall(call->id);
    // Answered, or the holder let go by itself (it saw the job move here).
    auto still = store_.GetBrowserHolder(job_id);
    answered = !got.ok() || got->status != "pending" || !still.ok() ||
               still->worker_id != holder->worker_id;
  }
  (void)store_.DeleteBrowserCall(call->id);
  spdlog::info("job {}: the browser {} held {} before this launch", job_id, holder->worker_id,
               answered ? "was closed" : "did not answer");
}

Result<std::string> BrowserCallServicer::Answer(const BrowserCall& call) {
  if (call.kind == "done") {  // the session may be gone: the handover still counts
    browsers_.MarkLoginHandedOver(call.job_id);
    return std::string();
  }
  if (call.kind == "release") {
    Forget(call.job_id);
    browsers_.CloseJob(call.job_id);
    return std::string();
  }
  auto session = browsers_.Find(call.job_id);
  if (!session || !session->alive()) {
    return NotFound(fmt::format("job {} {}", call.job_id, kNoLiveBrowser));
  }
  if (call.kind == "screenshot") return session->Screenshot();
  const Json request = Json::parse(call.request, nullptr, false);
  MAESTRO_ASSIGN_OR_RETURN(LiveInput in, ParseLiveInput(request));
  if (in.type != call.kind) return InvalidArgument("the call's kind and input differ", "type");
  MAESTRO_RETURN_IF_ERROR(ApplyLiveInput(*session, in));
  return std::string();
}

void BrowserCallServicer::RunCall(const BrowserCall& call) {
  Result<std::string> answer = Answer(call);
  const Status st = answer.ok() ? Status::Ok() : answer.status();
  auto written =
      store_.AnswerBrowserCall(call.id, call.worker_id, st, answer.ok() ? *answer : std::string());
  if (!written.ok()) {
    spdlog::warn("job {}: live-view call {} not answered: {}", call.job_id, call.id,
                 written.status().ToString());
  }
}

}  // namespace maestro::browser
