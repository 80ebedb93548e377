// A2aEndpoint: maestro as an A2A agent (Agent2Agent protocol v0.3, JSON-RPC
// transport; docs/api.md "A2A").
//
//   GET  /.well-known/agent-card.json  open: the Agent Card (a2a_task_view.h)
//   POST /a2a                          bearer auth like /api/local/*: one
//                                      JSON-RPC request (a2a_protocol.h)
//
// Where it sits: beside the REST routes and /mcp on the HTTP edge; it runs
// every method on the same task operations as they do (A2aTaskOps, given by
// ApiServer in routes_a2a.cc), so the write gate, visibility and choices
// checks are one code path. A message without taskId creates a task (its
// text is the instruction, metadata.piece / metadata.space choose); one with
// taskId is a comment through the write gate (the answer to a question
// resumes the job). message/stream and tasks/resubscribe answer with an SSE
// stream pulled like the task event stream — woken by EventSignal, no
// thread held: the Task, then a status-update per change (an
// artifact-update with the result before `completed`), ending with
// final = true at a terminal, input-required or auth-required state.
// message/send with configuration.blocking (the spec's default) waits on
// the handler thread for such a state, at most kBlockingWait and for at
// most max_blocking_waits requests at a time (half the handler pool, so the
// REST routes always have threads); past either bound it answers at once
// with the task as it is, which the spec allows (the client polls
// tasks/get or resubscribes).
//
// Thread safety: Card and Post may run concurrently on the handler pool.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "api/a2a_protocol.h"
#include "api/a2a_push.h"
#include "api/a2a_task_view.h"
#include "api/http.h"
#include "core/mutex.h"
#include "notify/event_signal.h"
#include "notify/job_stream.h"
#include "store/store.h"

namespace maestro::api::a2a {

// The ApiServer operations the methods run on; `user` is the caller, and a
// task it may not see is kNotFound.
struct A2aTaskOps {
  // body: the fields of POST /api/local/tasks.
  std::function<Result<Store::CreatedTask>(const Json& body, const std::string& user)> create;
  std::function<Result<Task>(const std::string& task_id, const std::string& user)> visible_task;
  // The write gate.
  std::function<Result<Json>(const std::string& task_id, const std::string& user,
                             const std::string& body)>
      comment;
  std::function<Result<CancelReport>(const std::string& task_id, const std::string& user)> cancel;
  // GET /api/pieces's body ({pieces: [{name, description}]}); unset: no skills.
  std::function<Json()> pieces_json;
};

struct A2aOptions {
  std::string version;
  // host:port for the card's url when a request has no Host header.
  std::string listen;
  size_t max_blocking_waits = 1;
  // Concurrent streams are capped per key (HttpResponse::stream_key).
  std::function<std::string(const HttpRequest&)> stream_key;
  // Push notifications: the egress policy of their URLs, the senders and
  // their timeouts (a2a_push.h).
  PushOptions push;
  // The running jobs' live deltas (the Notifier's hub, fed by this process's
  // workers and, on PostgreSQL, by other hosts' through the relay): a stream
  // sends the newest job's text as it is written. Null: status changes only.
  JobStreamHub* live = nullptr;
};

class A2aEndpoint : public std::enable_shared_from_this<A2aEndpoint> {
 public:
  static constexpr std::chrono::seconds kBlockingWait{60};

  A2aEndpoint(Store& store, notify::EventSignal& signal, A2aTaskOps ops, A2aOptions options);

  HttpResponse Card(const HttpRequest& req) const;
  HttpResponse Post(const HttpRequest& req);
  // Ends the blocking message/send waits now (each answers with its task as
  // it is) and refuses new ones; before the HTTP server drains (SIGTERM).
  void Stop() EXCLUDES(wait_mu_);

  // The task's facts if `user` may see it (user "" = no visibility check).
  Result<TaskFacts> ReadFacts(const std::string& task_id, const std::string& user) const;

 private:
  HttpResponse Dispatch(const HttpRequest& req, Method method, const RpcRequest& rpc);
  // The error answer: JSON, or for a streaming method (whose client reads
  // SSE) one event holding the error response.
  HttpResponse Fail(const HttpRequest& req, const Json& id, bool streaming,
                    const RpcError& error) const;
  HttpResponse Send(const HttpRequest& req, const RpcRequest& rpc, bool stream);
  HttpResponse Stream(const HttpRequest& req, const Json& id, const std::string& task_id);
  HttpResponse PushConfigMethod(Method method, const RpcRequest& rpc, const std::string& user);
  // Waits for a state that ends a stream (bounded, see above); the facts at
  // the end.
  Result<TaskFacts> WaitSettled(const std::string& task_id, const std::string& user)
      EXCLUDES(wait_mu_);

  Store& store_;
  notify::EventSignal& signal_;
  const A2aTaskOps ops_;
  const A2aOptions options_;
  A2aPushNotifier push_;
  // The blocking waits sleep on wait_cv_; a commit of their task or Stop()
  // wakes them.
  Mutex wait_mu_;
  CondVar wait_cv_;
  size_t blocking_waits_ GUARDED_BY(wait_mu_) = 0;
  bool stopping_ GUARDED_BY(wait_mu_) = false;
};

}  // namespace maestro::api::a2a
