// Tracer: the spans maestro records for OpenTelemetry (docs/operations.md
// "Telemetry"), following the GenAI semantic conventions.
//
// Where it sits: the engine (PieceExecutor, the agent loop) and the tool
// Dispatcher start spans through the `Tracer` interface they are handed in
// their options/deps; `maestro serve`/`worker`/`run` build the tracer from
// the `telemetry:` config (MakeTracer, telemetry.h). With telemetry off the
// tracer is `NoopTracer()`: every Span it returns is empty, records nothing
// and allocates nothing, and no exporter thread exists.
//
// A Span is a move-only RAII handle: it ends (and is handed to the tracer's
// sink) when End() is called or it is destroyed. Trace ids are 128-bit,
// span ids 64-bit, drawn from a per-thread mt19937_64 seeded by
// std::random_device, except where a caller asks for a derived id (a task's
// trace id is derived from its task id, so every job of a task lands in one
// trace: TraceIdForTask).
//
// Thread safety: a Tracer may be used from any thread; one Span belongs to
// the thread that uses it (no internal lock).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace maestro::telemetry {

using TraceId = std::array<uint8_t, 16>;
using SpanId = std::array<uint8_t, 8>;

// Lower-case hex of an id (32 / 16 characters).
std::string Hex(const TraceId& id);
std::string Hex(const SpanId& id);

TraceId RandomTraceId();  // never all zero
SpanId RandomSpanId();    // never all zero
// The trace of a task: the first 16 bytes of SHA-256("maestro.task:" + id).
TraceId TraceIdForTask(std::string_view task_id);
// A span id derived from `key` (SHA-256, first 8 bytes; never all zero).
SpanId SpanIdFor(std::string_view key);

// The part of a span that crosses boundaries (parent, links, traceparent).
struct SpanContext {
  TraceId trace_id{};
  SpanId span_id{};
  bool sampled = false;

  bool valid() const;
  // W3C trace context: "00-<trace>-<span>-01" (sampled) or "-00"; "" when invalid.
  std::string Traceparent() const;
};

// Parses a W3C traceparent header value; nullopt when malformed.
std::optional<SpanContext> ParseTraceparent(std::string_view value);

using AttrValue = std::variant<std::string, int64_t, double, bool, std::vector<std::string>>;
using Attributes = std::vector<std::pair<std::string, AttrValue>>;

enum class SpanKind { kInternal = 1, kServer = 2, kClient = 3, kProducer = 4, kConsumer = 5 };
enum class StatusCode { kUnset = 0, kOk = 1, kError = 2 };

struct SpanEvent {
  std::string name;
  int64_t time_unix_nano = 0;
  Attributes attributes;
};

struct SpanLink {
  SpanContext context;
  Attributes attributes;
};

// One finished (or finishing) span, as the exporter encodes it.
struct SpanData {
  std::string name;
  SpanKind kind = SpanKind::kInternal;
  SpanContext context;
  SpanId parent_span_id{};  // all zero: a root span
  int64_t start_unix_nano = 0;
  int64_t end_unix_nano = 0;
  Attributes attributes;
  std::vector<SpanEvent> events;
  std::vector<SpanLink> links;
  StatusCode status = StatusCode::kUnset;
  std::string status_message;
};

// Where ended spans go (the exporter's queue). Must not block.
class SpanSink {
 public:
  virtual ~SpanSink() = default;
  virtual void OnEnd(SpanData span) = 0;
};

int64_t NowUnixNano();

class Span {
 public:
  Span() = default;  // empty: records nothing
  Span(SpanSink* sink, SpanData data);
  // Not recording, but carrying the (unsampled) context its children inherit.
  explicit Span(SpanContext unsampled) : unsampled_(unsampled) {}
  Span(Span&& other) noexcept;
  Span& operator=(Span&& other) noexcept;
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  ~Span() { End(); }

  bool recording() const { return data_ != nullptr; }
  // Invalid for a span of the no-op tracer; not sampled for a span of an
  // unsampled trace. Children of either are not recorded.
  SpanContext context() const;

  void SetAttribute(std::string key, AttrValue value);
  void AddEvent(std::string name, Attributes attributes = {});
  void AddLink(SpanContext context, Attributes attributes = {});
  // Status ERROR with `message`, and the error.type attribute.
  void SetError(std::string error_type, std::string message);
  void SetOk();
  // Ends the span now; later calls do nothing.
  void End();

 private:
  SpanSink* sink_ = nullptr;
  std::unique_ptr<SpanData> data_;
  SpanContext unsampled_;  // the context of a span that is not recorded
};

// How a span starts.
struct SpanStart {
  std::string name;
  SpanKind kind = SpanKind::kInternal;
  SpanContext parent;               // invalid: a root span
  std::optional<TraceId> trace_id;  // a root's trace (default: random)
  std::optional<SpanId> span_id;    // default: random
  Attributes attributes;
  std::vector<SpanLink> links;
};

class Tracer {
 public:
  virtual ~Tracer() = default;
  // False for the no-op tracer: callers may skip building attributes.
  virtual bool enabled() const = 0;
  // telemetry.capture_content: prompts, completions and tool arguments and
  // results may be recorded (size-capped by the caller).
  virtual bool capture_content() const = 0;
  // A span, or an empty one when the trace is not sampled (parent-based:
  // the decision is a function of the trace id, so every span of a task's
  // trace gets the same one) or telemetry is off.
  virtual Span Start(SpanStart start) = 0;
  // Exports what is queued, waiting at most `wait`; stops the exporter.
  virtual void Shutdown(std::chrono::milliseconds wait) = 0;
};

// The tracer when telemetry is off: stateless, shared, records nothing.
Tracer& NoopTracer();

// The sampler: a trace is kept when its id's last 8 bytes, read as an
// unsigned big-endian number, are below ratio * 2^64 (the TraceIdRatioBased
// rule). 1 keeps all, 0 none.
bool SampledByRatio(const TraceId& id, double ratio);

// `text` cut to at most `max_bytes` on a UTF-8 boundary (content capture).
std::string CapContent(std::string_view text, size_t max_bytes = 16 * 1024);

}  // namespace maestro::telemetry
