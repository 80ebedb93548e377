// OtlpExporter: ships ended spans to an OTLP/HTTP receiver as JSON
// (POST <endpoint>/v1/traces, Content-Type: application/json; otlp_json.h).
//
// Why not opentelemetry-cpp: Debian bookworm main has no package for it
// (only bookworm-backports, not configured here), and its OTLP exporter
// brings protobuf, gRPC and abseil for what is one JSON POST over the
// libcurl client maestro already has (core's HttpClient).
//
// Design: Enqueue() appends to a bounded queue under a mutex and never
// waits: when the queue holds max_queue spans the span is dropped and
// counted (dropped()). One background thread (started by Start(); none
// before, so an exporter that is never started costs no thread) sends a
// batch when max_batch spans are queued or every flush_interval, retrying a
// 429/5xx reply or a transport error with doubling backoff up to
// max_attempts, then dropping the batch (counted in failed()). Shutdown()
// sends what is queued within a bounded wait, then aborts an exchange still
// in flight and joins the thread.
//
// Thread safety: Enqueue, the counters and Shutdown may be called from any
// thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "core/http_client.h"
#include "core/mutex.h"
#include "telemetry/tracer.h"

namespace maestro::telemetry {

struct OtlpExporterOptions {
  std::string endpoint;  // e.g. http://127.0.0.1:4318 ("/v1/traces" is appended)
  HttpHeaders headers;   // extra request headers (auth)
  Attributes resource;   // service.name, ...
  std::string scope_version;
  size_t max_queue = 2048;
  size_t max_batch = 512;
  std::chrono::milliseconds flush_interval{1000};
  int64_t timeout_ms = 10'000;  // one POST
  int max_attempts = 3;         // per batch, retries included
  std::chrono::milliseconds backoff_base{200};
};

class OtlpExporter final : public SpanSink {
 public:
  explicit OtlpExporter(OtlpExporterOptions options);
  ~OtlpExporter() override;  // Shutdown(0) when still running
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;

  // Starts the sending thread. Call once.
  void Start();
  // Never blocks on the network; drops (and counts) when the queue is full.
  void OnEnd(SpanData span) override;
  // Sends what is queued, waiting at most `wait`, then stops the thread.
  void Shutdown(std::chrono::milliseconds wait);

  std::string url() const { return url_; }
  uint64_t dropped() const { return dropped_.load(); }    // queue full
  uint64_t exported() const { return exported_.load(); }  // accepted by the receiver
  uint64_t failed() const { return failed_.load(); }      // given up after retries
  size_t queued() const;

 private:
  void Loop();
  // One batch, with retries. False when it was given up.
  bool Send(const std::vector<SpanData>& batch);
  bool WaitBackoff(std::chrono::milliseconds delay);

  const OtlpExporterOptions opt_;
  const std::string url_;
  HttpClient http_;
  mutable Mutex mu_;
  CondVar cv_;
  std::deque<SpanData> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  bool done_ GUARDED_BY(mu_) = false;  // the thread left its loop
  std::atomic<bool> abort_{false};     // past the shutdown wait: stop sending now
  std::atomic<uint64_t> dropped_{0}, exported_{0}, failed_{0};
  std::thread thread_;
};

}  // namespace maestro::telemetry
