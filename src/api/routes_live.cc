// Live and per-user routes: the job delta stream (SSE from the JobStreamHub),
// the notification inbox, token issuing (admin) and the piece catalog.
//
// The job stream: `id:` is the delta's sequence number, so a client that
// reconnects with Last-Event-ID gets the deltas it missed while they are
// still buffered (a `truncated` event says some were dropped). The handler
// only reads the hub; a client going away ends its handler and nothing else.
// The stream ends once the job is terminal and its buffered deltas are sent.
#include <httplib.h>

#include <charconv>

#include "api/api_server.h"
#include "api/http_util.h"
#include "api/notification_view.h"
#include "api/views.h"
#include "core/hash.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {

uint64_t ParseSeq(const std::string& s) {
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

std::string DeltaFrame(const JobDelta& d) {
  return "id: " + std::to_string(d.seq) + "\nevent: delta\ndata: " + DumpJson(d.data) + "\n\n";
}

}  // namespace

void ApiServer::LiveRoutes() {
  auto& srv = *server_;

  srv.Get(R"(/api/local/jobs/([0-9A-Za-z-]{26,36})/stream)",
          [this](const httplib::Request& req, httplib::Response& res) {
            std::string job_id = req.matches[1];
            auto job = store_.GetJob(job_id);
            if (!job.ok()) return ReplyError(res, job.status());
            if (auto t = VisibleTask(job->task_id, UserOf(req)); !t.ok()) {
              return ReplyError(res, NotFound("job " + job_id + " not found"));
            }
            std::string last = req.get_header_value("Last-Event-ID");
            if (last.empty()) last = req.get_param_value("after");
            auto cursor = std::make_shared<uint64_t>(ParseSeq(last));
            res.set_header("Cache-Control", "no-cache");
            res.set_header("X-Accel-Buffering", "no");
            res.set_chunked_content_provider(
                "text/event-stream", [this, job_id, cursor](size_t, httplib::DataSink& sink) {
                  // Read the status before the deltas: a delta published just
                  // before the job ended is then always sent before `end`.
                  auto job = store_.GetJob(job_id);
                  bool terminal = !job.ok() || IsTerminal(job->status);
                  auto read = hub_.ReadAfter(
                      job_id, *cursor,
                      terminal ? std::chrono::milliseconds(0) : std::chrono::milliseconds(500));
                  if (read.truncated && !read.deltas.empty()) {
                    std::string f = "event: truncated\ndata: {\"first_seq\":" +
                                    std::to_string(read.deltas.front().seq) + "}\n\n";
                    if (!sink.write(f.data(), f.size())) return false;
                  }
                  for (const auto& d : read.deltas) {
                    std::string f = DeltaFrame(d);
                    if (!sink.write(f.data(), f.size())) return false;
                    *cursor = d.seq;
                  }
                  if (!read.deltas.empty()) return true;
                  if (terminal || hub_.stopped()) {
                    Json end = {{"status", job.ok() ? std::string(JobStatusName(job->status))
                                                    : std::string("gone")}};
                    std::string f = "event: end\ndata: " + DumpJson(end) + "\n\n";
                    sink.write(f.data(), f.size());
                    sink.done();
                    return true;
                  }
                  return true;
                });
          });

  srv.Get("/api/pieces", [this](const httplib::Request&, httplib::Response& res) {
    if (!options_.pieces_json) return ReplyError(res, Unimplemented("no piece catalog"));
    Reply(res, 200, options_.pieces_json());
  });

  srv.Post("/api/local/tokens", [this](const httplib::Request& req, httplib::Response& res) {
    if (UserOf(req) != api::kAdminUser) {
      // Not 401: the caller is authenticated, just not allowed.
      return ReplyError(res, NotFound("no such route"));
    }
    auto body = api::ParseObject(req.body);
    if (!body.ok()) return ReplyError(res, body.status());
    std::string user;
    if (Status st = api::RequiredString(*body, "user", &user); !st.ok()) {
      return ReplyError(res, st);
    }
    auto token = api::NewSecretToken();
    if (!token.ok()) return ReplyError(res, token.status());
    if (Status st = store_.AddApiToken(Sha256Hex(*token), user); !st.ok()) {
      return ReplyError(res, st);
    }
    // The only time the token is shown; the store keeps its hash.
    Reply(res, 201, {{"user", user}, {"token", *token}});
  });
}

void ApiServer::InboxRoutes() {
  auto& srv = *server_;

  srv.Get("/api/local/notifications", [this](const httplib::Request& req, httplib::Response& res) {
    bool unread = req.get_param_value("unread") == "true" || req.get_param_value("unread") == "1";
    auto list = store_.ListNotifications(UserOf(req), unread, 200);
    if (!list.ok()) return ReplyError(res, list.status());
    Json arr = Json::array();
    int64_t unread_count = 0;
    for (const auto& n : *list) {
      arr.push_back(api::NotificationJson(n));
      if (!n.read) ++unread_count;
    }
    Reply(res, 200, {{"notifications", arr}, {"unread", unread_count}});
  });

  srv.Post(
      "/api/local/notifications/read", [this](const httplib::Request& req, httplib::Response& res) {
        Json body = Json::object();
        if (!req.body.empty()) {
          auto parsed = api::ParseObject(req.body);
          if (!parsed.ok()) return ReplyError(res, parsed.status());
          body = *parsed;
        }
        std::vector<std::string> ids;
        if (body.contains("ids")) {
          if (!body["ids"].is_array()) {
            return ReplyError(res, InvalidArgument("ids must be an array of strings", "ids"));
          }
          for (const auto& id : body["ids"]) {
            if (!id.is_string()) {
              return ReplyError(res, InvalidArgument("ids must be an array of strings", "ids"));
            }
            ids.push_back(id.get<std::string>());
          }
          if (ids.empty()) return Reply(res, 200, {{"marked", true}});
        }
        if (Status st = store_.MarkNotificationsRead(UserOf(req), ids); !st.ok()) {
          return ReplyError(res, st);
        }
        Reply(res, 200, {{"marked", true}});
      });
}

}  // namespace maestro
