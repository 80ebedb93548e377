// Event routes: the task's persisted events as SSE with Last-Event-ID resume
// (or as JSON for polling clients), and /metrics.
//
// The SSE stream holds no events in memory: its source reads "events after
// id N" from the store when the EventSignal says the task got a commit (or
// on the 15 s keep-alive tick). A client that disconnects only ends its own
// source; the jobs never notice.
#include <sstream>
#include <string_view>

#include "api/api_server.h"
#include "api/http_util.h"
#include "api/views.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {

// The task's events after a cursor, read from the store whenever the task
// got a commit (or on the keep-alive tick), at most kBatch per pull.
class TaskEventsSource : public api::StreamSource {
 public:
  TaskEventsSource(Store& store, notify::EventSignal& signal, std::string task_id,
                   std::string after)
      : store_(store), signal_(signal), task_id_(std::move(task_id)), cursor_(std::move(after)) {}
  ~TaskEventsSource() override {
    if (watch_ != 0) signal_.Unwatch(watch_);
  }
  void Watch(std::function<void()> wake) override {
    watch_ = signal_.WatchTask(task_id_, std::move(wake));
  }
  Step Pull(bool, std::string* out) override {
    auto events = store_.ListEvents(task_id_, cursor_, kBatch);
    // The client reconnects with Last-Event-ID and loses nothing.
    if (!events.ok()) return Step::kEnd;
    for (const auto& e : *events) {
      out->append(api::SseFrame(e.id, e.type, DumpJson(api::EventJson(e))));
      cursor_ = e.id;
    }
    return events->size() == kBatch ? Step::kMore : Step::kIdle;
  }

 private:
  static constexpr size_t kBatch = 200;
  Store& store_;
  notify::EventSignal& signal_;
  const std::string task_id_;
  std::string cursor_;
  uint64_t watch_ = 0;
};

}  // namespace

namespace {

// maestro_tool_duration_seconds{tool} as a Prometheus histogram (cumulative
// buckets, _sum, _count) plus maestro_tool_errors_total{tool}.
void WriteToolDurations(std::ostream& out, const std::map<std::string, ToolDurationStats>& tools) {
  out << "# HELP maestro_tool_duration_seconds Duration of regular tool calls by tool.\n"
      << "# TYPE maestro_tool_duration_seconds histogram\n";
  for (const auto& [tool, s] : tools) {
    for (size_t i = 0; i < s.buckets.size(); ++i) {
      out << "maestro_tool_duration_seconds_bucket{tool=\"" << tool << "\",le=\""
          << kToolDurationBuckets[i] << "\"} " << s.buckets[i] << "\n";
    }
    out << "maestro_tool_duration_seconds_bucket{tool=\"" << tool << "\",le=\"+Inf\"} " << s.count
        << "\nmaestro_tool_duration_seconds_sum{tool=\"" << tool << "\"} "
        << static_cast<double>(s.sum_ms) / 1000.0 << "\nmaestro_tool_duration_seconds_count{tool=\""
        << tool << "\"} " << s.count << "\n";
  }
  out << "# HELP maestro_tool_errors_total Tool calls that returned an error, by tool.\n"
      << "# TYPE maestro_tool_errors_total counter\n";
  for (const auto& [tool, s] : tools) {
    out << "maestro_tool_errors_total{tool=\"" << tool << "\"} " << s.errors << "\n";
  }
}

// A histogram of LLM call durations from the llm.call events (so it counts
// the calls of workers in every process sharing the store).
void WriteLlmHistogram(std::ostream& out, const char* name, const char* help,
                       const LlmDurationStats& s) {
  out << "# HELP " << name << " " << help << "\n# TYPE " << name << " histogram\n";
  for (size_t i = 0; i < s.buckets.size(); ++i) {
    out << name << "_bucket{le=\"" << kLlmDurationBuckets[i] << "\"} " << s.buckets[i] << "\n";
  }
  out << name << "_bucket{le=\"+Inf\"} " << s.count << "\n"
      << name << "_sum " << static_cast<double>(s.sum_ms) / 1000.0 << "\n"
      << name << "_count " << s.count << "\n";
}

// Prometheus label value: backslash, quote and newline escaped.
std::string LabelValue(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// maestro_http_requests_total{method,route,code}: counted by the Router in
// this process (route = the matched pattern, or "unmatched").
void WriteHttpRequests(std::ostream& out, const std::vector<api::Router::RequestCount>& counts) {
  out << "# HELP maestro_http_requests_total HTTP requests answered by this process, by method, "
         "route pattern and status code.\n"
      << "# TYPE maestro_http_requests_total counter\n";
  for (const auto& c : counts) {
    out << "maestro_http_requests_total{method=\"" << c.method << "\",route=\""
        << LabelValue(c.route) << "\",code=\"" << c.code << "\"} " << c.count << "\n";
  }
}

// The handlers, one per route (docs/api.md).

// GET /api/local/tasks/{id}/events: the task's events after Last-Event-ID /
// ?after — a JSON page, or an SSE stream when asked for one.
api::HttpResponse TaskEvents(api::TaskService& tasks, Store& store, notify::EventSignal& signal,
                             std::string stream_key, const api::HttpRequest& req) {
  std::string task_id = req.params[0];
  if (auto t = tasks.VisibleTask(task_id, req.user); !t.ok()) return ReplyError(t.status());
  std::string after = req.Header("Last-Event-ID");
  if (after.empty()) after = req.Query("after");
  bool sse = req.Header("Accept").find("text/event-stream") != std::string::npos;
  if (!sse) {
    auto events = store.ListEvents(task_id, after, 500);
    if (!events.ok()) return ReplyError(events.status());
    Json arr = Json::array();
    for (const auto& e : *events) arr.push_back(api::EventJson(e));
    return Reply(200, {{"events", arr}});
  }
  if (auto probe = store.ListEvents(task_id, after, 1); !probe.ok()) {
    return ReplyError(probe.status());
  }
  api::HttpResponse res;
  res.stream = std::make_shared<TaskEventsSource>(store, signal, task_id, after);
  res.stream_key = std::move(stream_key);
  return res;
}

// GET /metrics: Prometheus text — jobs by status, the store's counters, the
// HTTP edge's requests (`requests`) and connections (`edge`).
api::HttpResponse Metrics(Store& store, const ApiOptions& options,
                          const std::vector<api::Router::RequestCount>& requests,
                          const api::HttpServerStats& edge) {
  auto counts = store.CountJobsByStatus();
  if (!counts.ok()) return ReplyError(counts.status());
  std::ostringstream out;
  out << "# HELP maestro_build_info The running maestro: version, schema version, store "
         "backend.\n# TYPE maestro_build_info gauge\nmaestro_build_info{version=\""
      << LabelValue(options.version) << "\",schema=\"" << options.schema_version << "\",backend=\""
      << LabelValue(options.backend) << "\"} 1\n";
  out << "# HELP maestro_jobs Jobs by status.\n# TYPE maestro_jobs gauge\n";
  for (const char* s : {"queued", "running", "waiting_human", "waiting_subtasks", "retry",
                        "succeeded", "failed", "cancelled"}) {
    auto it = counts->find(s);
    out << "maestro_jobs{status=\"" << s << "\"} " << (it == counts->end() ? 0 : it->second)
        << "\n";
  }
  auto m = store.ComputeApiMetrics();
  if (!m.ok()) return ReplyError(m.status());
  out << "# HELP maestro_queue_wait_seconds Time from job creation to start.\n"
      << "# TYPE maestro_queue_wait_seconds summary\n"
      << "maestro_queue_wait_seconds_sum " << static_cast<double>(m->queue_wait_sum_ms) / 1000.0
      << "\nmaestro_queue_wait_seconds_count " << m->queue_wait_count << "\n";
  out << "# HELP maestro_llm_calls_total LLM calls recorded as llm.call events.\n"
      << "# TYPE maestro_llm_calls_total counter\nmaestro_llm_calls_total " << m->llm_calls
      << "\n# HELP maestro_llm_tokens_total LLM tokens by kind.\n"
      << "# TYPE maestro_llm_tokens_total counter\n"
      << "maestro_llm_tokens_total{kind=\"prompt\"} " << m->prompt_tokens << "\n"
      << "maestro_llm_tokens_total{kind=\"cached_prompt\"} " << m->cached_prompt_tokens << "\n"
      << "maestro_llm_tokens_total{kind=\"completion\"} " << m->completion_tokens << "\n";
  out << "# HELP maestro_budget_exceeded_total Jobs parked because the next LLM call would pass "
         "the task's budget.\n# TYPE maestro_budget_exceeded_total counter\n"
      << "maestro_budget_exceeded_total " << m->budget_exceeded
      << "\n# HELP maestro_quota_refusals_total New tasks refused by a daily quota.\n"
      << "# TYPE maestro_quota_refusals_total counter\nmaestro_quota_refusals_total "
      << m->quota_refusals << "\n";
  double ratio = m->prompt_tokens > 0 ? static_cast<double>(m->cached_prompt_tokens) /
                                            static_cast<double>(m->prompt_tokens)
                                      : 0.0;
  out << "# HELP maestro_llm_cache_reuse_ratio Cached prompt tokens / prompt tokens.\n"
      << "# TYPE maestro_llm_cache_reuse_ratio gauge\nmaestro_llm_cache_reuse_ratio " << ratio
      << "\n# HELP maestro_webhook_deliveries_total Webhook delivery attempts by result.\n"
      << "# TYPE maestro_webhook_deliveries_total counter\n"
      << "maestro_webhook_deliveries_total{result=\"ok\"} " << m->webhook_deliveries_ok
      << "\nmaestro_webhook_deliveries_total{result=\"failed\"} " << m->webhook_deliveries_failed
      << "\n";
  WriteToolDurations(out, m->tool_durations);
  WriteLlmHistogram(out, "maestro_llm_request_duration_seconds",
                    "Duration of LLM calls (retries included), from llm.call events.",
                    m->llm_duration);
  WriteLlmHistogram(out, "maestro_llm_ttft_seconds",
                    "Time to the first token of LLM calls that reported one.", m->llm_ttft);
  WriteHttpRequests(out, requests);
  out << "# HELP maestro_http_connections Open HTTP connections.\n"
      << "# TYPE maestro_http_connections gauge\nmaestro_http_connections " << edge.connections
      << "\n# HELP maestro_http_streams Open SSE streams.\n"
      << "# TYPE maestro_http_streams gauge\nmaestro_http_streams " << edge.streams << "\n";
  api::HttpResponse res;
  res.content_type = "text/plain; version=0.0.4";
  res.body = out.str();
  return res;
}

}  // namespace

void ApiServer::StreamRoutes() {
  using api::Need;
  using Req = api::HttpRequest;
  router_.Add("GET", "/api/local/tasks/{uuid}/events", Need::kRead, [this](const Req& r) {
    return TaskEvents(tasks_, store_, signal_, StreamKey(r), r);
  });
  router_.Add("GET", "/metrics", Need::kRead, [this](const Req&) {
    return Metrics(store_, options_, router_.RequestCounts(), server_->stats());
  });
}

}  // namespace maestro
