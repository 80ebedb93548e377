#include "api/a2a_endpoint.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>

#include "api/http_util.h"

namespace maestro::api::a2a {

namespace {

constexpr std::chrono::milliseconds kStreamPoll{1000};

HttpResponse Rpc(int http_status, const Json& message) {
  HttpResponse r;
  r.status = http_status;
  r.body = DumpJson(message);
  return r;
}

// A store or gate refusal as the A2A error a client can act on. Task
// operations name a missing (or invisible) task -32001; a field error keeps
// its field, renamed to where the A2A request carries it.
RpcError ErrorFor(const Status& st) {
  switch (st.code()) {
    case StatusCode::kNotFound:
      return {kTaskNotFound, st.message()};
    case StatusCode::kInvalidArgument: {
      std::string field = st.field();
      if (field == "instruction") field = "message.parts";
      if (field == "piece" || field == "space") field = "metadata." + field;
      return {kInvalidParams, "invalid params: " + st.message(), field};
    }
    case StatusCode::kConflict:
      return {kUnsupportedOperation, st.message()};
    case StatusCode::kResourceExhausted:
      return {kInvalidRequest, st.message(), st.field()};
    case StatusCode::kInternal:
      spdlog::error("a2a: {}", st.ToString());
      return {kInternalError, "internal error"};
    default:
      return {kInternalError, st.message()};
  }
}

// A push config refusal names the field where the request carries it
// (`prefix` "configuration." for message/send): a refused URL is
// pushNotificationConfig.url.
Status PushField(const Status& st, const std::string& prefix) {
  if (st.code() != StatusCode::kInvalidArgument || st.field() != "url") return st;
  return Status(st.code(), st.message(), prefix + "pushNotificationConfig.url");
}

// An SSE answer of one JSON-RPC message (an error of a streaming method:
// the client reads it where it reads the stream's events).
class OneMessageSource : public StreamSource {
 public:
  explicit OneMessageSource(const Json& message) : frame_(SseFrame("", "", DumpJson(message))) {}
  void Watch(std::function<void()>) override {}  // the server's first pull sends it
  Step Pull(bool, std::string* out) override {
    out->append(frame_);
    return Step::kEnd;
  }
  bool PullsInMemory(bool) const override { return true; }

 private:
  const std::string frame_;
};

// message/stream and tasks/resubscribe: the Task first, then one
// status-update per change of its A2A status (an artifact-update with the
// result before `completed`), the last with final = true. It keeps only the
// last status key: a pull reads the task's rows when the task got a commit
// (and once a second for other processes' commits). Between them, the
// newest job's text streams as it is written: artifact-update chunks of the
// artifact `live-<job id>` (append after the first, lastChunk false; the
// result artifact stays the whole answer), read from the JobStreamHub —
// which on PostgreSQL also holds the deltas of jobs other hosts run — so a
// delta costs no database read.
class A2aTaskStream : public StreamSource {
 public:
  A2aTaskStream(std::shared_ptr<const A2aEndpoint> endpoint, notify::EventSignal& signal,
                JobStreamHub* live, Json request_id, std::string task_id, std::string user)
      : endpoint_(std::move(endpoint)),
        signal_(signal),
        live_(live),
        request_id_(std::move(request_id)),
        task_id_(std::move(task_id)),
        user_(std::move(user)) {}
  ~A2aTaskStream() override {
    if (watch_ != 0) signal_.Unwatch(watch_);
    if (live_watch_ != 0) live_->Unwatch(live_watch_);
  }
  void Watch(std::function<void()> wake) override {
    wake_ = wake;
    // The flag outlives this source: a wake may still run after Unwatch.
    watch_ = signal_.WatchTask(task_id_, [dirty = task_dirty_, wake] {
      dirty->store(true);
      wake();
    });
  }
  Step Pull(bool periodic, std::string* out) override {
    const bool read_task = task_dirty_->exchange(false) || periodic || key_.empty();
    if (!read_task) {
      SendLiveText(out);
      return Step::kIdle;
    }
    auto facts = endpoint_->ReadFacts(task_id_, user_);
    if (!facts.ok()) {
      Send(RpcErrorJson(request_id_, ErrorFor(facts.status())), out);
      return Step::kEnd;
    }
    const std::string key = StatusKey(*facts);
    const bool final = EndsStream(StateOf(*facts));
    if (key_.empty()) {
      Send(RpcResult(request_id_, TaskJson(*facts, std::nullopt)), out);
      key_ = key;
      task_sent_.store(true);
      FollowNewestJob(*facts);
      SendLiveText(out);
      if (!final) return Step::kIdle;
    } else {
      FollowNewestJob(*facts);
      // The text written before the status changed goes first.
      SendLiveText(out);
      if (key == key_) return Step::kIdle;
    }
    key_ = key;
    if (auto artifact = ResultArtifact(*facts)) {
      Send(RpcResult(request_id_, ArtifactUpdateJson(*facts, *artifact)), out);
    }
    Send(RpcResult(request_id_, StatusUpdateJson(*facts, final)), out);
    return final ? Step::kEnd : Step::kIdle;
  }
  std::chrono::milliseconds poll_interval() const override { return kStreamPoll; }
  // Live text comes from memory; only a task read needs the store.
  bool PullsInMemory(bool periodic) const override {
    return !periodic && task_sent_.load() && !task_dirty_->load();
  }

 private:
  static void Send(const Json& message, std::string* out) {
    out->append(SseFrame("", "", DumpJson(message)));
  }

  // Watches the hub for the task's newest job (a follow-up or a retry makes
  // a new one).
  void FollowNewestJob(const TaskFacts& facts) {
    if (!live_ || facts.jobs.empty() || facts.jobs.back().id == live_job_) return;
    if (live_watch_ != 0) live_->Unwatch(live_watch_);
    live_job_ = facts.jobs.back().id;
    live_cursor_ = 0;
    live_started_ = false;
    live_watch_ = live_->Watch(live_job_, wake_);
  }

  // The job's text deltas since the last pull as one chunk (a delegate's
  // text is its own conversation: left out).
  void SendLiveText(std::string* out) {
    if (!live_ || live_job_.empty()) return;
    auto read = live_->ReadJsonAfter(live_job_, live_cursor_);
    std::string text;
    for (const auto& d : read.deltas) {
      live_cursor_ = d.seq;
      auto delta = ParseJson(d.json);
      if (!delta.ok() || !delta->is_object() || delta->value("type", "") != "text" ||
          delta->contains("delegate") || !(*delta)["text"].is_string()) {
        continue;
      }
      text += (*delta)["text"].get<std::string>();
    }
    if (text.empty()) return;
    Json update = {{"kind", "artifact-update"},
                   {"taskId", task_id_},
                   {"contextId", ContextId(task_id_)},
                   {"artifact",
                    {{"artifactId", "live-" + live_job_},
                     {"name", "live text"},
                     {"description", "the text of maestro job " + live_job_ + " as it is written"},
                     {"parts", Json::array({{{"kind", "text"}, {"text", text}}})}}},
                   {"append", live_started_},
                   {"lastChunk", false}};
    live_started_ = true;
    Send(RpcResult(request_id_, update), out);
  }

  const std::shared_ptr<const A2aEndpoint> endpoint_;
  notify::EventSignal& signal_;
  JobStreamHub* const live_;
  const Json request_id_;
  const std::string task_id_;
  const std::string user_;
  std::function<void()> wake_;
  std::shared_ptr<std::atomic<bool>> task_dirty_ = std::make_shared<std::atomic<bool>>(true);
  std::string key_;                     // StatusKey of the last event sent ("" = nothing sent)
  std::atomic<bool> task_sent_{false};  // read by PullsInMemory on the I/O thread
  uint64_t watch_ = 0;
  std::string live_job_;  // the job whose text streams ("" = none yet)
  uint64_t live_cursor_ = 0;
  bool live_started_ = false;
  uint64_t live_watch_ = 0;
};

}  // namespace

A2aEndpoint::A2aEndpoint(Store& store, notify::EventSignal& signal, A2aTaskOps ops,
                         A2aOptions options)
    : store_(store),
      signal_(signal),
      ops_(std::move(ops)),
      options_(std::move(options)),
      push_(
          store, signal, [this](const std::string& task_id) { return ReadFacts(task_id, ""); },
          options_.push) {}

Result<TaskFacts> A2aEndpoint::ReadFacts(const std::string& task_id,
                                         const std::string& user) const {
  TaskFacts f;
  if (user.empty()) {
    MAESTRO_ASSIGN_OR_RETURN(f.task, store_.GetTask(task_id));
  } else {
    MAESTRO_ASSIGN_OR_RETURN(f.task, ops_.visible_task(task_id, user));
  }
  MAESTRO_ASSIGN_OR_RETURN(f.jobs, store_.ListJobs(task_id));
  MAESTRO_ASSIGN_OR_RETURN(f.comments, store_.ListComments(task_id));
  return f;
}

HttpResponse A2aEndpoint::Card(const HttpRequest& req) const {
  CardInfo info;
  const std::string host = req.Header("Host");
  info.url = "http://" + (host.empty() ? options_.listen : host) + "/a2a";
  info.version = options_.version;
  if (ops_.pieces_json) {
    for (const auto& p : ops_.pieces_json().value("pieces", Json::array())) {
      info.skills.push_back({p.value("name", ""), p.value("description", "")});
    }
  }
  HttpResponse res = Rpc(200, AgentCard(info));
  res.headers.emplace_back("Cache-Control", "no-cache");
  return res;
}

HttpResponse A2aEndpoint::Post(const HttpRequest& req) {
  RpcRequest rpc;
  if (auto e = ParseRequest(req.body, &rpc)) {
    return Rpc(e->code == kInvalidParams ? 200 : 400, RpcErrorJson(rpc.id, *e));
  }
  auto method = ParseMethod(rpc.method);
  if (!method) {
    return Rpc(
        200, RpcErrorJson(rpc.id, {kMethodNotFound, "Method not found: " + SafeEcho(rpc.method)}));
  }
  try {
    return Dispatch(req, *method, rpc);
  } catch (const std::exception& e) {
    spdlog::error("a2a: {} failed: {}", rpc.method, e.what());
    return Rpc(500, RpcErrorJson(rpc.id, {kInternalError, "internal error"}));
  }
}

HttpResponse A2aEndpoint::Dispatch(const HttpRequest& req, Method method, const RpcRequest& rpc) {
  const bool streaming = IsStreaming(method);
  auto fail = [&](const RpcError& e) { return Fail(req, rpc.id, streaming, e); };
  switch (method) {
    case Method::kMessageSend:
    case Method::kMessageStream:
      return Send(req, rpc, streaming);
    case Method::kTasksGet:
    case Method::kTasksCancel:
    case Method::kTasksResubscribe: {
      TaskQuery q;
      if (auto e = ParseTaskQuery(rpc.params, method == Method::kTasksGet, &q)) return fail(*e);
      if (method == Method::kTasksCancel) {
        auto report = ops_.cancel(q.id, req.user);
        if (!report.ok()) return fail(ErrorFor(report.status()));
        if (report->cancelled + report->flagged == 0) {
          return fail({kTaskNotCancelable, "task " + q.id + " has no open job to cancel"});
        }
      }
      auto facts = ReadFacts(q.id, req.user);
      if (!facts.ok()) return fail(ErrorFor(facts.status()));
      if (method == Method::kTasksResubscribe) return Stream(req, rpc.id, q.id);
      return Rpc(200, RpcResult(rpc.id, TaskJson(*facts, q.history_length)));
    }
    case Method::kPushConfigSet:
    case Method::kPushConfigGet:
    case Method::kPushConfigList:
    case Method::kPushConfigDelete:
      return PushConfigMethod(method, rpc, req.user);
  }
  return fail({kMethodNotFound, "Method not found: " + SafeEcho(rpc.method)});
}

HttpResponse A2aEndpoint::Fail(const HttpRequest& req, const Json& id, bool streaming,
                               const RpcError& error) const {
  if (!streaming) return Rpc(200, RpcErrorJson(id, error));
  HttpResponse res;
  res.stream = std::make_shared<OneMessageSource>(RpcErrorJson(id, error));
  res.stream_key = options_.stream_key(req);
  return res;
}

HttpResponse A2aEndpoint::Send(const HttpRequest& req, const RpcRequest& rpc, bool stream) {
  auto fail = [&](const RpcError& e) { return Fail(req, rpc.id, stream, e); };
  SendParams p;
  if (auto e = ParseSendParams(rpc.params, &p)) return fail(*e);
  // A refused push URL fails the request before it creates or comments.
  if (p.push) {
    static const EgressPolicy kStrict;  // a null policy is the strict one (a2a_push.h)
    const EgressPolicy& egress = options_.push.egress ? *options_.push.egress : kStrict;
    if (auto checked = egress.Check(p.push->url); !checked.ok()) {
      return fail(ErrorFor(
          PushField(InvalidArgument(checked.status().message(), "url"), "configuration.")));
    }
  }
  std::string task_id = p.task_id;
  if (task_id.empty()) {
    Json body = {{"instruction", p.text}};
    if (!p.piece.empty()) body["piece"] = p.piece;
    if (!p.space.empty()) body["space"] = p.space;
    auto created = ops_.create(body, req.user);
    if (!created.ok()) return fail(ErrorFor(created.status()));
    task_id = created->task.id;
  } else {
    // The write gate: an answer resumes an asking job, a comment reaches a
    // running one, a finished task gets a follow-up job.
    auto commented = ops_.comment(task_id, req.user, p.text);
    if (!commented.ok()) return fail(ErrorFor(commented.status()));
  }
  if (p.push) {
    auto set = push_.Set(task_id, req.user, *p.push);
    if (!set.ok()) return fail(ErrorFor(PushField(set.status(), "configuration.")));
  }
  if (stream) return Stream(req, rpc.id, task_id);
  auto facts = p.blocking ? WaitSettled(task_id, req.user) : ReadFacts(task_id, req.user);
  if (!facts.ok()) return fail(ErrorFor(facts.status()));
  return Rpc(200, RpcResult(rpc.id, TaskJson(*facts, p.history_length)));
}

HttpResponse A2aEndpoint::Stream(const HttpRequest& req, const Json& id,
                                 const std::string& task_id) {
  HttpResponse res;
  res.stream = std::make_shared<A2aTaskStream>(shared_from_this(), signal_, options_.live, id,
                                               task_id, req.user);
  res.stream_key = options_.stream_key(req);
  return res;
}

HttpResponse A2aEndpoint::PushConfigMethod(Method method, const RpcRequest& rpc,
                                           const std::string& user) {
  auto fail = [&](const RpcError& e) { return Rpc(200, RpcErrorJson(rpc.id, e)); };
  PushConfigParams p;
  if (auto e = ParsePushConfigParams(method, rpc.params, &p)) return fail(*e);
  if (auto task = ops_.visible_task(p.task_id, user); !task.ok()) {
    return fail(ErrorFor(task.status()));
  }
  switch (method) {
    case Method::kPushConfigSet: {
      auto set = push_.Set(p.task_id, user, p.config);
      if (!set.ok()) return fail(ErrorFor(PushField(set.status(), "")));
      return Rpc(200, RpcResult(rpc.id, PushConfigJson(p.task_id, *set)));
    }
    case Method::kPushConfigGet: {
      auto config = push_.Get(p.task_id, user, p.config_id);
      if (!config.ok() && config.status().code() != StatusCode::kNotFound) {
        return fail(ErrorFor(config.status()));
      }
      if (!config.ok()) {
        return fail({kInvalidParams,
                     "task " + p.task_id + " has no push notification config" +
                         (p.config_id.empty() ? "" : " " + SafeEcho(p.config_id)),
                     "pushNotificationConfigId"});
      }
      return Rpc(200, RpcResult(rpc.id, PushConfigJson(p.task_id, *config)));
    }
    case Method::kPushConfigList: {
      auto configs = push_.List(p.task_id, user);
      if (!configs.ok()) return fail(ErrorFor(configs.status()));
      Json all = Json::array();
      for (const auto& c : *configs) all.push_back(PushConfigJson(p.task_id, c));
      return Rpc(200, RpcResult(rpc.id, std::move(all)));
    }
    default:
      if (Status deleted = push_.Delete(p.task_id, user, p.config_id); !deleted.ok()) {
        if (deleted.code() != StatusCode::kNotFound) return fail(ErrorFor(deleted));
        return fail(
            {kInvalidParams,
             "task " + p.task_id + " has no push notification config " + SafeEcho(p.config_id),
             "pushNotificationConfigId"});
      }
      return Rpc(200, RpcResult(rpc.id, nullptr));
  }
}

void A2aEndpoint::Stop() {
  MutexLock lock(&wait_mu_);
  stopping_ = true;
  wait_cv_.SignalAll();
}

Result<TaskFacts> A2aEndpoint::WaitSettled(const std::string& task_id, const std::string& user) {
  auto facts = ReadFacts(task_id, user);
  if (!facts.ok() || EndsStream(StateOf(*facts))) return facts;
  {
    MutexLock lock(&wait_mu_);
    if (stopping_ || blocking_waits_ >= options_.max_blocking_waits) return facts;
    ++blocking_waits_;
  }
  // Set by the task's commits; the wake holds the endpoint weakly, as a
  // wake may still run after Unwatch.
  auto woken = std::make_shared<std::atomic<bool>>(false);
  const uint64_t watch = signal_.WatchTask(task_id, [weak = weak_from_this(), woken] {
    if (auto self = weak.lock()) {
      MutexLock lock(&self->wait_mu_);
      woken->store(true);
      self->wait_cv_.SignalAll();
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + kBlockingWait;
  while (facts.ok() && !EndsStream(StateOf(*facts))) {
    {
      MutexLock lock(&wait_mu_);
      // A second at most: a commit of another process wakes no one here.
      const auto until = std::min(deadline, std::chrono::steady_clock::now() + kStreamPoll);
      wait_cv_.WaitUntil(&wait_mu_, until,
                         [&]() REQUIRES(wait_mu_) { return stopping_ || woken->load(); });
      woken->store(false);
      if (stopping_ || std::chrono::steady_clock::now() >= deadline) break;
    }
    facts = ReadFacts(task_id, user);
  }
  signal_.Unwatch(watch);
  MutexLock lock(&wait_mu_);
  --blocking_waits_;
  return facts;
}

}  // namespace maestro::api::a2a
