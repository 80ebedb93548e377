#include "telemetry/otlp_exporter.h"

#include <spdlog/spdlog.h>

#include "telemetry/otlp_json.h"

namespace maestro::telemetry {
namespace {

std::string TracesUrl(std::string endpoint) {
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  return endpoint + "/v1/traces";
}

bool Retryable(int status) { return status == 429 || status >= 500; }

}  // namespace

OtlpExporter::OtlpExporter(OtlpExporterOptions options)
    : opt_(std::move(options)),
      url_(TracesUrl(opt_.endpoint)),
      http_(HttpClientOptions{5'000, opt_.timeout_ms, 0, 1 << 20, /*egress=*/nullptr}) {}

OtlpExporter::~OtlpExporter() { Shutdown(std::chrono::milliseconds(0)); }

void OtlpExporter::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void OtlpExporter::OnEnd(SpanData span) {
  MutexLock lock(&mu_);
  if (stopping_ || queue_.size() >= opt_.max_queue) {
    ++dropped_;
    return;
  }
  queue_.push_back(std::move(span));
  if (queue_.size() >= opt_.max_batch) cv_.Signal();
}

size_t OtlpExporter::queued() const {
  MutexLock lock(&mu_);
  return queue_.size();
}

void OtlpExporter::Loop() {
  MutexLock lock(&mu_);
  while (true) {
    cv_.WaitFor(&mu_, opt_.flush_interval,
                [&]() REQUIRES(mu_) { return stopping_ || queue_.size() >= opt_.max_batch; });
    if (queue_.empty() || abort_) {
      if (stopping_) break;
      continue;
    }
    std::vector<SpanData> batch;
    while (!queue_.empty() && batch.size() < opt_.max_batch) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    lock.Unlock();
    if (Send(batch)) {
      exported_ += batch.size();
    } else {
      failed_ += batch.size();
    }
    lock.Lock();
  }
  done_ = true;
  cv_.SignalAll();
}

bool OtlpExporter::WaitBackoff(std::chrono::milliseconds delay) {
  const auto until = std::chrono::steady_clock::now() + delay;
  while (!abort_ && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return !abort_;
}

bool OtlpExporter::Send(const std::vector<SpanData>& batch) {
  const std::string body = EncodeExportRequest(opt_.resource, opt_.scope_version, batch).dump();
  HttpHeaders headers = opt_.headers;
  headers.emplace_back("Content-Type", "application/json");
  std::string last_error;
  for (int attempt = 1; attempt <= opt_.max_attempts; ++attempt) {
    if (attempt > 1 && !WaitBackoff(opt_.backoff_base * (1 << (attempt - 2)))) break;
    std::string reply_body;
    auto reply = http_.Stream(
        "POST", url_, headers, body, {},
        [&](std::string_view chunk) {
          if (reply_body.size() < 4096) reply_body.append(chunk.substr(0, 4096));
          return true;
        },
        [this] { return abort_.load(); });
    if (reply.ok() && reply->stopped) break;  // aborted at shutdown
    if (reply.ok() && reply->status >= 200 && reply->status < 300) return true;
    if (reply.ok()) {
      last_error = "HTTP " + std::to_string(reply->status) + " " + reply_body.substr(0, 200);
      if (!Retryable(reply->status)) break;
    } else {
      last_error = reply.status().ToString();
    }
  }
  spdlog::warn("telemetry: {} spans not exported to {}: {}", batch.size(), RedactUrl(url_),
               last_error.empty() ? "stopped" : last_error);
  return false;
}

void OtlpExporter::Shutdown(std::chrono::milliseconds wait) {
  {
    MutexLock lock(&mu_);
    if (!thread_.joinable()) return;
    stopping_ = true;
    cv_.SignalAll();
    cv_.WaitFor(&mu_, wait, [&]() REQUIRES(mu_) { return done_; });
  }
  abort_ = true;  // an exchange still running ends within ~50 ms
  cv_.SignalAll();
  thread_.join();
  MutexLock lock(&mu_);
  dropped_ += queue_.size();
  queue_.clear();
}

}  // namespace maestro::telemetry
