// The CAPTCHA pool (seed 001, WAITING_HUMAN_BROWSER with wait_reason
// captcha): jobs of one space that hit the same CAPTCHA screen park on it
// together (Store::SetCaptchaWait, by the engine); a person solves the
// screen once and marks it solved here, which requeues every job waiting on
// it in one store transaction (Store::ResumeCaptchaJobs).
//
//   POST /api/local/captcha-pool/resolve  {"space_id", "screen"} -> {"resumed": N}
//
// Bearer-authenticated like every /api/local route; a missing, empty or
// non-string field is a 400 naming it.
#include "api/api_server.h"
#include "api/http_util.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

void ApiServer::CaptchaRoutes() {
  router_.Add("POST", "/api/local/captcha-pool/resolve", [this](const api::HttpRequest& req) {
    auto body = api::ParseObject(req.body);
    if (!body.ok()) return ReplyError(body.status());
    std::string space_id, screen;
    if (Status st = api::RequiredString(*body, "space_id", &space_id); !st.ok()) {
      return ReplyError(st);
    }
    if (Status st = api::RequiredString(*body, "screen", &screen); !st.ok()) {
      return ReplyError(st);
    }
    auto resumed = store_.ResumeCaptchaJobs(space_id, screen);
    if (!resumed.ok()) return ReplyError(resumed.status());
    return Reply(200, {{"resumed", *resumed}});
  });
}

}  // namespace maestro
