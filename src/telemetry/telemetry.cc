#include "telemetry/telemetry.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

namespace maestro::telemetry {
namespace {

class NoopOwned final : public Tracer {
 public:
  bool enabled() const override { return false; }
  bool capture_content() const override { return false; }
  Span Start(SpanStart) override { return Span(); }
  void Shutdown(std::chrono::milliseconds) override {}
};

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

}  // namespace

OtlpTracer::OtlpTracer(std::unique_ptr<OtlpExporter> exporter, double sample_ratio,
                       bool capture_content)
    : exporter_(std::move(exporter)),
      sample_ratio_(sample_ratio),
      capture_content_(capture_content) {}

Span OtlpTracer::Start(SpanStart start) {
  SpanData d;
  if (start.parent.valid()) {
    d.context.trace_id = start.parent.trace_id;
    d.context.sampled = start.parent.sampled;  // parent-based
    d.parent_span_id = start.parent.span_id;
  } else {
    d.context.trace_id = start.trace_id ? *start.trace_id : RandomTraceId();
    d.context.sampled = SampledByRatio(d.context.trace_id, sample_ratio_);
  }
  d.context.span_id = start.span_id ? *start.span_id : RandomSpanId();
  if (!d.context.sampled) return Span(d.context);
  d.name = std::move(start.name);
  d.kind = start.kind;
  d.start_unix_nano = NowUnixNano();
  d.attributes = std::move(start.attributes);
  d.links = std::move(start.links);
  return Span(this, std::move(d));
}

std::unique_ptr<Tracer> MakeTracer(const TelemetryConfig& cfg, const std::string& service_version) {
  if (cfg.otlp_endpoint.empty()) return std::make_unique<NoopOwned>();
  OtlpExporterOptions o;
  o.endpoint = cfg.otlp_endpoint;
  for (const auto& [k, v] : cfg.headers) o.headers.emplace_back(k, v);
  o.resource = {{"service.name", cfg.service_name},
                {"service.version", service_version},
                {"host.name", HostName()},
                {"process.pid", static_cast<int64_t>(getpid())}};
  o.scope_version = service_version;
  auto exporter = std::make_unique<OtlpExporter>(std::move(o));
  exporter->Start();
  spdlog::info("telemetry: exporting traces to {} (sample_ratio {}, capture_content {})",
               RedactUrl(exporter->url()), cfg.sample_ratio, cfg.capture_content);
  return std::make_unique<OtlpTracer>(std::move(exporter), cfg.sample_ratio, cfg.capture_content);
}

}  // namespace maestro::telemetry
