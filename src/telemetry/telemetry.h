// MakeTracer: the process's Tracer from the `telemetry:` config. An empty
// otlp_endpoint (the default) gives the no-op tracer and starts nothing; an
// endpoint gives a tracer whose ended, sampled spans go to an OtlpExporter
// (its thread started here). The caller owns the tracer and calls
// Shutdown(wait) at process end, after the workers stopped.
#pragma once

#include <memory>
#include <string>

#include "core/config.h"
#include "telemetry/otlp_exporter.h"
#include "telemetry/tracer.h"

namespace maestro::telemetry {

// Sampled spans of one process, to one exporter (which it owns).
class OtlpTracer final : public Tracer, private SpanSink {
 public:
  OtlpTracer(std::unique_ptr<OtlpExporter> exporter, double sample_ratio, bool capture_content);
  bool enabled() const override { return true; }
  bool capture_content() const override { return capture_content_; }
  Span Start(SpanStart start) override;
  void Shutdown(std::chrono::milliseconds wait) override { exporter_->Shutdown(wait); }
  OtlpExporter& exporter() { return *exporter_; }

 private:
  void OnEnd(SpanData span) override { exporter_->OnEnd(std::move(span)); }

  std::unique_ptr<OtlpExporter> exporter_;
  const double sample_ratio_;
  const bool capture_content_;
};

// `service_version` is reported as service.version and the scope version.
std::unique_ptr<Tracer> MakeTracer(const TelemetryConfig& cfg, const std::string& service_version);

}  // namespace maestro::telemetry
