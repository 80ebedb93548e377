// The live view of a job's browser (BrowseWeb, src/browser): when a page
// asks for a login the job parks (wait_reason browser_login) with its
// browser open; a person sees the page here, clicks and types into it, and
// presses Done, which requeues the job in the same movement with the
// browser session (cookies) kept.
//
//   GET  /api/local/jobs/{id}/browser/screenshot  -> image/png (404: no live browser)
//   POST /api/local/jobs/{id}/browser/input       {"type":"click","x","y"} |
//                                                 {"type":"text","text"} |
//                                                 {"type":"key","key":"Enter|Tab|Backspace"}
//   POST /api/local/jobs/{id}/browser/done        -> {"resumed": true} (409: not waiting on a
//   login)
//
// Where the browser is: in this process (`maestro serve` with workers whose
// worker ran the job) the session is used directly; in another process
// (`serve --workers 0` + `maestro worker`) the call goes through the store
// (store/browser_call_records.h): a row addressed to the worker holding the
// browser, run by that process's BrowserCallServicer, its answer waited for
// (504 after browser_call_timeout). Done there hands the login over on the
// holder and resumes the job pinned to it while it is claimed, so the
// logged-in page goes on in the same Chromium.
//
// Visibility first: another user's job is 404 "no such job" before any
// browser is touched or any call row written; input is validated
// (browser/live_input.h) before it goes anywhere.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <optional>
#include <thread>

#include "api/api_server.h"
#include "api/http_util.h"
#include "browser/browse_web_tool.h"
#include "browser/browser_call_servicer.h"
#include "browser/live_input.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {

constexpr int kMaxPendingCalls = 16;  // per job: a page's clicks, not a flood
constexpr std::chrono::milliseconds kCallPoll{50};

// What the live-browser handlers work with.
struct BrowserRouteDeps {
  api::TaskService& tasks;
  Store& store;
  const ApiOptions& options;
};

// Where a visible job's browser is: here, in the process of `holder`, or
// nowhere (both empty).
struct BrowserPlace {
  Job job;
  std::shared_ptr<browser::BrowserSession> local;
  std::optional<BrowserHolder> holder;
  bool found() const { return local || holder; }
};

Status NoLiveBrowser(const std::string& job_id) {
  return NotFound(
      fmt::format("job {} {} (no worker process has it open)", job_id, browser::kNoLiveBrowser));
}

// The job named by the route's {id}, for a job of a task the caller may see
// ("no such job" otherwise, as for a missing one) and whose role there
// grants `cap` (watching: read; clicking, typing, Done: run — else 403), and
// where its browser is.
Result<BrowserPlace> FindBrowser(const BrowserRouteDeps& d, const api::HttpRequest& req,
                                 uint32_t cap) {
  const std::string job_id = req.params[0];
  auto job = d.store.GetJob(job_id);
  if (!job.ok() && job.status().code() == StatusCode::kNotFound) {
    return NotFound("no such job: " + api::SafeEcho(job_id));
  }
  if (!job.ok()) return job.status();
  if (auto t = d.tasks.TaskAllowing(job->task_id, req.user, cap); !t.ok()) {
    if (t.status().code() == StatusCode::kPermissionDenied) return t.status();
    return NotFound("no such job: " + api::SafeEcho(job_id));
  }
  BrowserPlace place;
  place.job = *job;
  browser::BrowserService* service = d.options.browsers ? d.options.browsers() : nullptr;
  if (auto session = service ? service->Find(job_id) : nullptr; session && session->alive()) {
    place.local = std::move(session);
    return place;
  }
  auto holder = d.store.GetBrowserHolder(job_id);
  if (!holder.ok() && holder.status().code() != StatusCode::kNotFound) return holder.status();
  const TimeMs now = d.options.clock->NowMs();  // what the store stamps seen_at with
  if (holder.ok() && now - holder->seen_at <= d.options.browser_holder_fresh.count()) {
    place.holder = *holder;
  }
  return place;
}

// Asks the holder to run `kind` and waits for its answer (PNG bytes for a
// screenshot); kDeadlineExceeded (504) when it does not answer in time.
Result<std::string> CallHolder(const BrowserRouteDeps& d, const BrowserHolder& holder,
                               const std::string& kind, const Json& request) {
  BrowserCall c;
  c.job_id = holder.job_id;
  c.worker_id = holder.worker_id;
  c.kind = kind;
  c.request = request.dump();
  MAESTRO_ASSIGN_OR_RETURN(BrowserCall call, d.store.AddBrowserCall(c, kMaxPendingCalls));
  const auto deadline = std::chrono::steady_clock::now() + d.options.browser_call_timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kCallPoll);
    auto got = d.store.GetBrowserCall(call.id);
    if (!got.ok()) return got.status();
    if (got->status == "pending") continue;
    (void)d.store.DeleteBrowserCall(call.id);
    if (got->status == "done") return std::move(got->answer);
    const int code = got->error_code;
    const bool known = code > 0 && code <= static_cast<int>(StatusCode::kInternal);
    return Status(known ? static_cast<StatusCode>(code) : StatusCode::kInternal, got->error,
                  got->error_field);
  }
  (void)d.store.DeleteBrowserCall(call.id);  // a late answer finds no row
  // The worker id (host and pid) stays in the log, not in the user's reply.
  spdlog::warn("job {}: the browser's holder {} did not answer a {} call within {} ms",
               holder.job_id, holder.worker_id, kind, d.options.browser_call_timeout.count());
  return Status(StatusCode::kDeadlineExceeded,
                fmt::format("the worker holding job {}'s browser did not answer within {} ms; try "
                            "again",
                            holder.job_id, d.options.browser_call_timeout.count()));
}

// GET /api/local/jobs/{id}/browser/screenshot: a PNG of the page now.
api::HttpResponse BrowserScreenshot(const BrowserRouteDeps& d, const api::HttpRequest& req) {
  auto place = FindBrowser(d, req, api::kCapRead);
  if (!place.ok()) return ReplyError(place.status());
  if (!place->found()) return ReplyError(NoLiveBrowser(place->job.id));
  auto png = place->local ? place->local->Screenshot()
                          : CallHolder(d, *place->holder, "screenshot", Json::object());
  if (!png.ok()) return ReplyError(png.status());
  api::HttpResponse res;
  res.status = 200;
  res.content_type = "image/png";
  res.body = std::move(png).value();
  res.headers.push_back({"Cache-Control", "no-store"});
  return res;
}

// POST /api/local/jobs/{id}/browser/input: {type: click|text|key, ...}.
api::HttpResponse BrowserInput(const BrowserRouteDeps& d, const api::HttpRequest& req) {
  auto body = api::ParseObject(req.body);
  if (!body.ok()) return ReplyError(body.status());
  auto place = FindBrowser(d, req, api::kCapRun);
  if (!place.ok()) return ReplyError(place.status());
  auto in = browser::ParseLiveInput(*body);
  if (!in.ok()) return ReplyError(in.status());
  if (!place->found()) return ReplyError(NoLiveBrowser(place->job.id));
  Status st = place->local ? browser::ApplyLiveInput(*place->local, *in)
                           : CallHolder(d, *place->holder, in->type, in->ToJson()).status();
  if (!st.ok()) return ReplyError(st);
  return Reply(200, {{"ok", true}});
}

// Done on a browser another process holds: the handover reaches the holder,
// the job resumes pinned to it until a worker claims it (or, when the
// holder's worker stays busy, its browser is released and the job may run
// anywhere: the profile dir under the shared data dir keeps the cookies).
// Returns whether the holder took the job on.
Result<bool> HandOverRemote(const BrowserRouteDeps& d, const Job& job,
                            const BrowserHolder& holder) {
  auto handed = CallHolder(d, holder, "done", Json::object());
  if (!handed.ok()) {
    // The holder is not answering: resume as with no browser at all.
    MAESTRO_RETURN_IF_ERROR(d.store.ResumeParkedJob(job.id));
    return false;
  }
  MAESTRO_RETURN_IF_ERROR(d.store.ResumeBrowserLogin(job.id, holder.worker_id));
  const auto deadline = std::chrono::steady_clock::now() + d.options.browser_call_timeout / 2;
  bool claimed = false;
  while (!claimed && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kCallPoll);
    auto now = d.store.GetJob(job.id);
    claimed = !now.ok() || now->status != JobStatus::kQueued;
  }
  // Not claimed yet: the holder lets go of the task's profile first, so a
  // worker elsewhere never opens it beside a Chromium still running there.
  if (!claimed) (void)CallHolder(d, holder, "release", Json::object());
  MAESTRO_RETURN_IF_ERROR(d.store.ClearBrowserPin(job.id, holder.worker_id));
  return claimed;
}

// POST /api/local/jobs/{id}/browser/done: the person finished the login;
// the job parked on it resumes.
api::HttpResponse BrowserDone(const BrowserRouteDeps& d, const api::HttpRequest& req) {
  auto place = FindBrowser(d, req, api::kCapRun);
  if (!place.ok()) return ReplyError(place.status());
  const Job& job = place->job;
  if (job.status != JobStatus::kWaitingHuman || job.wait_reason != browser::kBrowserLoginWait) {
    return ReplyError(Conflict(fmt::format("job {} is {} ({}), not waiting on a browser login",
                                           job.id, JobStatusName(job.status),
                                           job.wait_reason.empty() ? "-" : job.wait_reason)));
  }
  if (place->holder && !place->local) {
    auto on_holder = HandOverRemote(d, job, *place->holder);
    if (!on_holder.ok()) return ReplyError(on_holder.status());
    return Reply(200, {{"resumed", true}, {"on_browser_holder", *on_holder}});
  }
  if (browser::BrowserService* service = d.options.browsers ? d.options.browsers() : nullptr) {
    service->MarkLoginHandedOver(job.id);
  }
  if (Status st = d.store.ResumeParkedJob(job.id); !st.ok()) return ReplyError(st);
  return Reply(200, {{"resumed", true}});
}

}  // namespace

void ApiServer::BrowserRoutes() {
  using api::Need;
  using Req = api::HttpRequest;
  const BrowserRouteDeps d{tasks_, store_, options_};
  router_.Add("GET", "/api/local/jobs/{id}/browser/screenshot", Need::kRead,
              [d](const Req& r) { return BrowserScreenshot(d, r); });
  router_.Add("POST", "/api/local/jobs/{id}/browser/input", Need::kRun,
              [d](const Req& r) { return BrowserInput(d, r); });
  router_.Add("POST", "/api/local/jobs/{id}/browser/done", Need::kRun,
              [d](const Req& r) { return BrowserDone(d, r); });
}

}  // namespace maestro
