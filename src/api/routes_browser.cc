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
// The browser lives in the process whose worker ran the job: the live view
// reaches it when the API and that worker share the process (`maestro
// serve` with workers), else 404.
#include <fmt/format.h>

#include "api/api_server.h"
#include "api/http_util.h"
#include "browser/browse_web_tool.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {

// What the live-browser handlers work with.
struct BrowserRouteDeps {
  api::TaskService& tasks;
  Store& store;
  const ApiOptions& options;
};

// The live browser of the job named by the route's {id}, for a job of a
// task the caller may see ("no such job" otherwise, as for a missing one);
// `job_out` gets the job when it exists and is visible.
Result<std::shared_ptr<browser::BrowserSession>> LiveBrowser(const BrowserRouteDeps& d,
                                                             const api::HttpRequest& req,
                                                             Job* job_out) {
  const std::string job_id = req.params[0];
  auto job = d.store.GetJob(job_id);
  if (!job.ok()) return job.status();
  if (auto t = d.tasks.VisibleTask(job->task_id, req.user); !t.ok()) {
    return NotFound("no such job: " + api::SafeEcho(job_id));
  }
  if (job_out) *job_out = *job;
  browser::BrowserService* service = d.options.browsers ? d.options.browsers() : nullptr;
  auto session = service ? service->Find(job_id) : nullptr;
  if (!session || !session->alive()) {
    return NotFound("job " + job_id + " has no live browser in this server process");
  }
  return session;
}

// GET /api/local/jobs/{id}/browser/screenshot: a PNG of the page now.
api::HttpResponse BrowserScreenshot(const BrowserRouteDeps& d, const api::HttpRequest& req) {
  auto session = LiveBrowser(d, req, nullptr);
  if (!session.ok()) return ReplyError(session.status());
  auto png = (*session)->Screenshot();
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
  std::string type;
  if (Status st = api::RequiredString(*body, "type", &type); !st.ok()) return ReplyError(st);
  auto session = LiveBrowser(d, req, nullptr);
  if (!session.ok()) return ReplyError(session.status());
  Status st;
  if (type == "click") {
    const Json& x = body->value("x", Json());
    const Json& y = body->value("y", Json());
    if (!x.is_number() || !y.is_number()) {
      return ReplyError(InvalidArgument("x and y must be numbers (viewport pixels)", "x"));
    }
    st = (*session)->InputClick(static_cast<int>(x.get<double>()),
                                static_cast<int>(y.get<double>()));
  } else if (type == "text") {
    std::string text;
    if (st = api::RequiredString(*body, "text", &text); !st.ok()) return ReplyError(st);
    st = (*session)->InputText(text);
  } else if (type == "key") {
    std::string key;
    if (st = api::RequiredString(*body, "key", &key); !st.ok()) return ReplyError(st);
    st = (*session)->InputKey(key);
  } else {
    return ReplyError(InvalidArgument("type must be click, text or key", "type"));
  }
  if (!st.ok()) return ReplyError(st);
  return Reply(200, {{"ok", true}});
}

// POST /api/local/jobs/{id}/browser/done: the person finished the login;
// the job parked on it resumes.
api::HttpResponse BrowserDone(const BrowserRouteDeps& d, const api::HttpRequest& req) {
  Job job;
  auto session = LiveBrowser(d, req, &job);
  if (!session.ok() && session.status().code() != StatusCode::kNotFound) {
    return ReplyError(session.status());
  }
  if (job.id.empty()) return ReplyError(session.status());  // no such job
  if (job.status != JobStatus::kWaitingHuman || job.wait_reason != browser::kBrowserLoginWait) {
    return ReplyError(Conflict(fmt::format("job {} is {} ({}), not waiting on a browser login",
                                           job.id, JobStatusName(job.status),
                                           job.wait_reason.empty() ? "-" : job.wait_reason)));
  }
  if (browser::BrowserService* service = d.options.browsers ? d.options.browsers() : nullptr) {
    service->MarkLoginHandedOver(job.id);
  }
  if (Status st = d.store.ResumeParkedJob(job.id); !st.ok()) return ReplyError(st);
  return Reply(200, {{"resumed", true}});
}

}  // namespace

void ApiServer::BrowserRoutes() {
  using api::Access;
  using Req = api::HttpRequest;
  const BrowserRouteDeps d{tasks_, store_, options_};
  router_.Add("GET", "/api/local/jobs/{id}/browser/screenshot", Access::kToken,
              [d](const Req& r) { return BrowserScreenshot(d, r); });
  router_.Add("POST", "/api/local/jobs/{id}/browser/input", Access::kToken,
              [d](const Req& r) { return BrowserInput(d, r); });
  router_.Add("POST", "/api/local/jobs/{id}/browser/done", Access::kToken,
              [d](const Req& r) { return BrowserDone(d, r); });
}

}  // namespace maestro
