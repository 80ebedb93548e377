// Event routes: the task's persisted events as SSE with Last-Event-ID resume
// (or as JSON for polling clients), and /metrics.
//
// The SSE handler holds no events in memory: it reads "events after id N"
// from the store, writes them, and sleeps on the EventSignal until the next
// commit (or 15 s, then a keep-alive comment). A client that disconnects
// only ends its own handler; the jobs never notice.
#include <httplib.h>

#include <sstream>

#include "api/api_server.h"
#include "api/http_util.h"
#include "api/views.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {

std::string SseFrame(const Event& e) {
  std::string out = "id: " + e.id + "\nevent: " + e.type + "\ndata: ";
  out += DumpJson(api::EventJson(e));
  out += "\n\n";
  return out;
}

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

}  // namespace

void ApiServer::StreamRoutes() {
  auto& srv = *server_;

  srv.Get(R"(/api/local/tasks/([0-9a-fA-F-]{36})/events)", [this](const httplib::Request& req,
                                                                  httplib::Response& res) {
    std::string task_id = req.matches[1];
    if (auto t = VisibleTask(task_id, UserOf(req)); !t.ok()) {
      return ReplyError(res, t.status());
    }
    std::string after = req.get_header_value("Last-Event-ID");
    if (after.empty()) after = req.get_param_value("after");
    bool sse = req.get_header_value("Accept").find("text/event-stream") != std::string::npos;
    if (!sse) {
      auto events = store_.ListEvents(task_id, after, 500);
      if (!events.ok()) return ReplyError(res, events.status());
      Json arr = Json::array();
      for (const auto& e : *events) arr.push_back(api::EventJson(e));
      return Reply(res, 200, {{"events", arr}});
    }
    if (auto probe = store_.ListEvents(task_id, after, 1); !probe.ok()) {
      return ReplyError(res, probe.status());
    }
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    auto cursor = std::make_shared<std::string>(after);
    res.set_chunked_content_provider(
        "text/event-stream", [this, task_id, cursor](size_t, httplib::DataSink& sink) {
          uint64_t seen = signal_.generation();
          auto events = store_.ListEvents(task_id, *cursor, 200);
          if (!events.ok()) return false;
          for (const auto& e : *events) {
            std::string frame = SseFrame(e);
            if (!sink.write(frame.data(), frame.size())) return false;
            *cursor = e.id;
          }
          if (!events->empty()) return true;  // more may be waiting
          if (signal_.stopped()) {
            sink.done();
            return true;
          }
          if (signal_.WaitNewer(seen, std::chrono::seconds(15)) == seen) {
            static const char kPing[] = ": keep-alive\n\n";
            return sink.write(kPing, sizeof(kPing) - 1);
          }
          return true;
        });
  });

  srv.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    auto counts = store_.CountJobsByStatus();
    if (!counts.ok()) return ReplyError(res, counts.status());
    std::ostringstream out;
    out << "# HELP maestro_jobs Jobs by status.\n# TYPE maestro_jobs gauge\n";
    for (const char* s : {"queued", "running", "waiting_human", "waiting_subtasks", "retry",
                          "succeeded", "failed", "cancelled"}) {
      auto it = counts->find(s);
      out << "maestro_jobs{status=\"" << s << "\"} " << (it == counts->end() ? 0 : it->second)
          << "\n";
    }
    auto m = store_.ComputeApiMetrics();
    if (!m.ok()) return ReplyError(res, m.status());
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
    res.set_content(out.str(), "text/plain; version=0.0.4");
  });
}

}  // namespace maestro
