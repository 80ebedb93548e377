// Live and per-user routes: the job delta stream (SSE from the JobStreamHub),
// the notification inbox and the piece catalog (tokens: routes_tokens.cc).
//
// The job stream: `id:` is the delta's sequence number, so a client that
// reconnects with Last-Event-ID gets the deltas it missed while they are
// still buffered (a `truncated` event says some were dropped). The source
// only reads the hub; a client going away ends its source and nothing else.
// The stream ends once the job is terminal and its buffered deltas are sent.
#include <charconv>

#include "api/api_server.h"
#include "api/http_util.h"
#include "api/notification_view.h"
#include "api/views.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {

uint64_t ParseSeq(const std::string& s) {
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// A job's live deltas from the JobStreamHub, pulled when the hub has a new
// one. The job's status is read fresh when a `job.status` event of this job
// was committed here, and otherwise once a second through the shared
// JobStatusCache (a job another process finished) — a thousand viewers of
// one job cost no database reads per delta.
class JobDeltasSource : public api::StreamSource {
 public:
  JobDeltasSource(Store& store, JobStreamHub& hub, notify::EventSignal& signal,
                  api::JobStatusCache& statuses, std::string job_id, uint64_t after)
      : store_(store),
        hub_(hub),
        signal_(signal),
        statuses_(statuses),
        job_id_(std::move(job_id)),
        cursor_(after) {}
  ~JobDeltasSource() override {
    if (hub_watch_ != 0) hub_.Unwatch(hub_watch_);
    if (status_watch_ != 0) signal_.Unwatch(status_watch_);
  }
  void Watch(std::function<void()> wake) override {
    hub_watch_ = hub_.Watch(job_id_, wake);
    // The flag outlives this source: a wake may still run after Unwatch.
    status_watch_ = signal_.WatchJobStatus(job_id_, [dirty = status_dirty_, wake] {
      dirty->store(true);
      wake();
    });
  }
  Step Pull(bool periodic, std::string* out) override {
    // Status before deltas: a delta published just before the job ended is
    // then always read (and sent) before `end`.
    const bool fresh = status_dirty_->exchange(false);
    if (fresh || periodic) {
      auto job = statuses_.Get(store_, job_id_, kPollInterval, fresh);
      terminal_ = !job.found || IsTerminal(job.status);
      status_ = job.found ? std::string(JobStatusName(job.status)) : "gone";
    }
    auto read = hub_.ReadJsonAfter(job_id_, cursor_);
    if (read.truncated && !read.deltas.empty()) {
      out->append(
          api::SseFrame("", "truncated", DumpJson(Json{{"first_seq", read.deltas.front().seq}})));
    }
    for (const auto& d : read.deltas) {
      out->append(api::SseFrame(std::to_string(d.seq), "delta", d.json));
      cursor_ = d.seq;
    }
    const bool over = terminal_ || hub_.stopped();
    if (!read.deltas.empty()) return over ? Step::kMore : Step::kIdle;
    if (!over) return Step::kIdle;
    out->append(api::SseFrame("", "end", DumpJson(Json{{"status", status_}})));
    return Step::kEnd;
  }
  std::chrono::milliseconds poll_interval() const override { return kPollInterval; }
  // Deltas come from memory; only a status read needs the store.
  bool PullsInMemory(bool periodic) const override { return !periodic && !status_dirty_->load(); }

 private:
  static constexpr std::chrono::milliseconds kPollInterval{1000};
  Store& store_;
  JobStreamHub& hub_;
  notify::EventSignal& signal_;
  api::JobStatusCache& statuses_;
  const std::string job_id_;
  uint64_t cursor_;
  std::shared_ptr<std::atomic<bool>> status_dirty_ = std::make_shared<std::atomic<bool>>(true);
  bool terminal_ = false;
  std::string status_ = "running";
  uint64_t hub_watch_ = 0;
  uint64_t status_watch_ = 0;
};

// The handlers, one per route (docs/api.md).

// GET /api/local/jobs/{id}/stream: the job's live deltas (SSE) after
// Last-Event-ID / ?after; another user's job is "no such job".
api::HttpResponse JobStream(api::TaskService& tasks, Store& store, JobStreamHub& hub,
                            notify::EventSignal& signal, api::JobStatusCache& statuses,
                            std::string stream_key, const api::HttpRequest& req) {
  std::string job_id = req.params[0];
  auto job = store.GetJob(job_id);
  if (!job.ok()) return ReplyError(job.status());
  if (auto t = tasks.VisibleTask(job->task_id, req.user); !t.ok()) {
    return ReplyError(NotFound("no such job: " + api::SafeEcho(job_id)));
  }
  std::string last = req.Header("Last-Event-ID");
  if (last.empty()) last = req.Query("after");
  api::HttpResponse res;
  res.stream =
      std::make_shared<JobDeltasSource>(store, hub, signal, statuses, job_id, ParseSeq(last));
  res.stream_key = std::move(stream_key);
  return res;
}

// GET /api/pieces: the piece catalog.
api::HttpResponse ListPieces(const ApiOptions& options) {
  if (!options.pieces_json) return ReplyError(Unimplemented("no piece catalog"));
  return Reply(200, options.pieces_json());
}

// GET /api/local/notifications[?unread=true]: the caller's inbox.
api::HttpResponse ListNotifications(Store& store, const api::HttpRequest& req) {
  bool unread = req.Query("unread") == "true" || req.Query("unread") == "1";
  auto list = store.ListNotifications(req.user, unread, 200);
  if (!list.ok()) return ReplyError(list.status());
  Json arr = Json::array();
  int64_t unread_count = 0;
  for (const auto& n : *list) {
    arr.push_back(api::NotificationJson(n));
    if (!n.read) ++unread_count;
  }
  return Reply(200, {{"notifications", arr}, {"unread", unread_count}});
}

// POST /api/local/notifications/read: {ids?} — those, or all, of the
// caller's notifications read.
api::HttpResponse MarkNotificationsRead(Store& store, const api::HttpRequest& req) {
  Json body = Json::object();
  if (!req.body.empty()) {
    auto parsed = api::ParseObject(req.body);
    if (!parsed.ok()) return ReplyError(parsed.status());
    body = *parsed;
  }
  std::vector<std::string> ids;
  if (body.contains("ids")) {
    if (!body["ids"].is_array()) {
      return ReplyError(InvalidArgument("ids must be an array of strings", "ids"));
    }
    for (const auto& id : body["ids"]) {
      if (!id.is_string()) {
        return ReplyError(InvalidArgument("ids must be an array of strings", "ids"));
      }
      ids.push_back(id.get<std::string>());
    }
    if (ids.empty()) return Reply(200, {{"marked", true}});
  }
  if (Status st = store.MarkNotificationsRead(req.user, ids); !st.ok()) return ReplyError(st);
  return Reply(200, {{"marked", true}});
}

}  // namespace

void ApiServer::LiveRoutes() {
  using api::Need;
  using Req = api::HttpRequest;
  router_.Add("GET", "/api/local/jobs/{id}/stream", Need::kRead, [this](const Req& r) {
    return JobStream(tasks_, store_, hub_, signal_, statuses_, StreamKey(r), r);
  });
  router_.Add("GET", "/api/pieces", Need::kRead,
              [this](const Req&) { return ListPieces(options_); });
}

void ApiServer::InboxRoutes() {
  using api::Need;
  using Req = api::HttpRequest;
  router_.Add("GET", "/api/local/notifications", Need::kRead,
              [this](const Req& r) { return ListNotifications(store_, r); });
  router_.Add("POST", "/api/local/notifications/read", Need::kRead,
              [this](const Req& r) { return MarkNotificationsRead(store_, r); });
}

}  // namespace maestro
