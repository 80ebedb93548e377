#include "telemetry/tracer.h"

#include <random>

#include "core/hash.h"
#include "core/utf8.h"

namespace maestro::telemetry {
namespace {

template <size_t N>
std::string HexOf(const std::array<uint8_t, N>& id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(N * 2, '0');
  for (size_t i = 0; i < N; ++i) {
    out[2 * i] = kDigits[id[i] >> 4];
    out[2 * i + 1] = kDigits[id[i] & 0xf];
  }
  return out;
}

template <size_t N>
bool AllZero(const std::array<uint8_t, N>& id) {
  for (uint8_t b : id) {
    if (b != 0) return false;
  }
  return true;
}

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng = [] {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd(), rd(), rd(), rd(), rd()};
    return std::mt19937_64(seq);
  }();
  return rng;
}

template <size_t N>
std::array<uint8_t, N> RandomId() {
  std::array<uint8_t, N> id{};
  do {
    for (size_t i = 0; i < N; i += 8) {
      uint64_t v = Rng()();
      for (size_t k = 0; k < 8 && i + k < N; ++k) id[i + k] = static_cast<uint8_t>(v >> (8 * k));
    }
  } while (AllZero(id));
  return id;
}

template <size_t N>
std::array<uint8_t, N> DerivedId(std::string_view key) {
  std::string hex = Sha256Hex(key);
  std::array<uint8_t, N> id{};
  for (size_t i = 0; i < N; ++i)
    id[i] = static_cast<uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  if (AllZero(id)) id[N - 1] = 1;
  return id;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

template <size_t N>
bool ParseHex(std::string_view text, std::array<uint8_t, N>* out) {
  if (text.size() != 2 * N) return false;
  for (size_t i = 0; i < N; ++i) {
    int hi = HexDigit(text[2 * i]), lo = HexDigit(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return !AllZero(*out);
}

class Noop final : public Tracer {
 public:
  bool enabled() const override { return false; }
  bool capture_content() const override { return false; }
  Span Start(SpanStart) override { return Span(); }
  void Shutdown(std::chrono::milliseconds) override {}
};

}  // namespace

std::string Hex(const TraceId& id) { return HexOf(id); }
std::string Hex(const SpanId& id) { return HexOf(id); }
TraceId RandomTraceId() { return RandomId<16>(); }
SpanId RandomSpanId() { return RandomId<8>(); }
TraceId TraceIdForTask(std::string_view task_id) {
  return DerivedId<16>(std::string("maestro.task:") + std::string(task_id));
}
SpanId SpanIdFor(std::string_view key) { return DerivedId<8>(key); }

bool SpanContext::valid() const { return !AllZero(trace_id) && !AllZero(span_id); }

std::string SpanContext::Traceparent() const {
  if (!valid()) return "";
  return "00-" + Hex(trace_id) + "-" + Hex(span_id) + (sampled ? "-01" : "-00");
}

std::optional<SpanContext> ParseTraceparent(std::string_view v) {
  // 00-<32 hex>-<16 hex>-<2 hex>
  if (v.size() != 55 || v.substr(0, 3) != "00-" || v[35] != '-' || v[52] != '-') {
    return std::nullopt;
  }
  SpanContext c;
  std::array<uint8_t, 1> flags{};
  if (!ParseHex(v.substr(3, 32), &c.trace_id) || !ParseHex(v.substr(36, 16), &c.span_id)) {
    return std::nullopt;
  }
  int hi = HexDigit(v[53]), lo = HexDigit(v[54]);
  if (hi < 0 || lo < 0) return std::nullopt;
  flags[0] = static_cast<uint8_t>(hi * 16 + lo);
  c.sampled = (flags[0] & 1) != 0;
  return c;
}

int64_t NowUnixNano() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Span::Span(SpanSink* sink, SpanData data)
    : sink_(sink), data_(std::make_unique<SpanData>(std::move(data))) {}

Span::Span(Span&& other) noexcept
    : sink_(other.sink_), data_(std::move(other.data_)), unsampled_(other.unsampled_) {}

Span& Span::operator=(Span&& other) noexcept {
  if (this != &other) {
    End();
    sink_ = other.sink_;
    data_ = std::move(other.data_);
    unsampled_ = other.unsampled_;
  }
  return *this;
}

SpanContext Span::context() const { return data_ ? data_->context : unsampled_; }

void Span::SetAttribute(std::string key, AttrValue value) {
  if (!data_) return;
  for (auto& [k, v] : data_->attributes) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  data_->attributes.emplace_back(std::move(key), std::move(value));
}

void Span::AddEvent(std::string name, Attributes attributes) {
  if (!data_) return;
  data_->events.push_back({std::move(name), NowUnixNano(), std::move(attributes)});
}

void Span::AddLink(SpanContext context, Attributes attributes) {
  if (!data_ || !context.valid()) return;
  data_->links.push_back({context, std::move(attributes)});
}

void Span::SetError(std::string error_type, std::string message) {
  if (!data_) return;
  data_->status = StatusCode::kError;
  data_->status_message = std::move(message);
  SetAttribute("error.type", std::move(error_type));
}

void Span::SetOk() {
  if (data_ && data_->status == StatusCode::kUnset) data_->status = StatusCode::kOk;
}

void Span::End() {
  if (!data_) return;
  data_->end_unix_nano = NowUnixNano();
  std::unique_ptr<SpanData> d = std::move(data_);
  if (sink_) sink_->OnEnd(std::move(*d));
}

Tracer& NoopTracer() {
  static Noop noop;  // stateless
  return noop;
}

bool SampledByRatio(const TraceId& id, double ratio) {
  if (ratio >= 1.0) return true;
  if (ratio <= 0.0) return false;
  uint64_t v = 0;
  for (size_t i = 8; i < 16; ++i) v = (v << 8) | id[i];
  // ratio * 2^64, computed in long double to keep the low end exact enough.
  const long double bound = static_cast<long double>(ratio) * 18446744073709551616.0L;
  return static_cast<long double>(v) < bound;
}

std::string CapContent(std::string_view text, size_t max_bytes) {
  return ValidUtf8(Utf8Prefix(text, max_bytes));
}

}  // namespace maestro::telemetry
