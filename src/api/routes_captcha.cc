// The CAPTCHA pool (seed 001, WAITING_HUMAN_BROWSER with wait_reason
// captcha): jobs of one space that hit the same CAPTCHA screen park on it
// together (Store::SetCaptchaWait, by the engine); a person solves the
// screen once and marks it solved here, which requeues every job waiting on
// it in one store transaction (Store::ResumeCaptchaJobs).
//
//   POST /api/local/captcha-pool/resolve  {"space_id", "screen"} -> {"resumed": N}
//
// Bearer-authenticated like every /api/local route; a missing, empty or
// non-string field is a 400 naming it. Only the caller's own waits are
// requeued (issue 44, Store::ResumeCaptchaJobs's `resolved_by`): in a space
// the jobs of tasks they may see, without a space (the "personal" pool)
// their own tasks' jobs. When none of those waits on the screen the answer
// is 404, alike for "nobody waits" and "only another user's private task
// waits", so another user's wait is neither requeued nor revealed. A team
// space's pool (issue 49) is resolved only by its team's members whose role
// runs tasks: a non-member gets the same 404, a viewer 403.
#include "api/api_server.h"
#include "api/http_util.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {

// POST /api/local/captcha-pool/resolve: requeues the caller's jobs waiting
// on the screen; 404 when none of theirs waits (another's is not revealed).
api::HttpResponse ResolveCaptcha(Store& store, const api::Access& access,
                                 const api::HttpRequest& req) {
  auto body = api::ParseObject(req.body);
  if (!body.ok()) return ReplyError(body.status());
  std::string space_id, screen;
  if (Status st = api::RequiredString(*body, "space_id", &space_id); !st.ok()) {
    return ReplyError(st);
  }
  if (Status st = api::RequiredString(*body, "screen", &screen); !st.ok()) return ReplyError(st);
  // A team space's pool is its members' (others: the same 404 as no wait),
  // and resolving resumes jobs: the role there must allow running.
  if (!access.SpaceVisible(space_id, req.user)) {
    return ReplyError(NotFound("no job you may resolve waits on that CAPTCHA screen"));
  }
  Task in_space;
  in_space.space = space_id;
  if (Status st = access.Allow(in_space, req.user, api::kCapRun); !st.ok()) return ReplyError(st);
  auto resumed = store.ResumeCaptchaJobs(space_id, screen, req.user);
  if (!resumed.ok()) return ReplyError(resumed.status());
  if (*resumed == 0) {
    return ReplyError(NotFound("no job you may resolve waits on that CAPTCHA screen"));
  }
  return Reply(200, {{"resumed", *resumed}});
}

}  // namespace

void ApiServer::CaptchaRoutes() {
  router_.Add("POST", "/api/local/captcha-pool/resolve", api::Need::kRun,
              [this](const api::HttpRequest& r) { return ResolveCaptcha(store_, *access_, r); });
}

}  // namespace maestro
