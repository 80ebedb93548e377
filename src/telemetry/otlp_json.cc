#include "telemetry/otlp_json.h"

namespace maestro::telemetry {

Json EncodeAnyValue(const AttrValue& value) {
  struct Visit {
    Json operator()(const std::string& s) const { return {{"stringValue", s}}; }
    Json operator()(int64_t i) const { return {{"intValue", std::to_string(i)}}; }
    Json operator()(double d) const { return {{"doubleValue", d}}; }
    Json operator()(bool b) const { return {{"boolValue", b}}; }
    Json operator()(const std::vector<std::string>& list) const {
      Json values = Json::array();
      for (const auto& s : list) values.push_back({{"stringValue", s}});
      return {{"arrayValue", {{"values", std::move(values)}}}};
    }
  };
  return std::visit(Visit{}, value);
}

Json EncodeAttributes(const Attributes& attributes) {
  Json out = Json::array();
  for (const auto& [key, value] : attributes) {
    out.push_back({{"key", key}, {"value", EncodeAnyValue(value)}});
  }
  return out;
}

Json EncodeSpan(const SpanData& s) {
  Json span = {{"traceId", Hex(s.context.trace_id)},
               {"spanId", Hex(s.context.span_id)},
               {"name", s.name},
               {"kind", static_cast<int>(s.kind)},
               {"startTimeUnixNano", std::to_string(s.start_unix_nano)},
               {"endTimeUnixNano", std::to_string(s.end_unix_nano)},
               {"attributes", EncodeAttributes(s.attributes)}};
  bool root = true;
  for (uint8_t b : s.parent_span_id) root = root && b == 0;
  if (!root) span["parentSpanId"] = Hex(s.parent_span_id);
  if (!s.events.empty()) {
    Json events = Json::array();
    for (const SpanEvent& e : s.events) {
      events.push_back({{"name", e.name},
                        {"timeUnixNano", std::to_string(e.time_unix_nano)},
                        {"attributes", EncodeAttributes(e.attributes)}});
    }
    span["events"] = std::move(events);
  }
  if (!s.links.empty()) {
    Json links = Json::array();
    for (const SpanLink& l : s.links) {
      links.push_back({{"traceId", Hex(l.context.trace_id)},
                       {"spanId", Hex(l.context.span_id)},
                       {"attributes", EncodeAttributes(l.attributes)}});
    }
    span["links"] = std::move(links);
  }
  Json status = {{"code", static_cast<int>(s.status)}};
  if (!s.status_message.empty()) status["message"] = s.status_message;
  span["status"] = std::move(status);
  return span;
}

Json EncodeExportRequest(const Attributes& resource, const std::string& scope_version,
                         const std::vector<SpanData>& spans) {
  Json encoded = Json::array();
  for (const SpanData& s : spans) encoded.push_back(EncodeSpan(s));
  Json scope = {{"scope", {{"name", "maestro"}, {"version", scope_version}}},
                {"spans", std::move(encoded)}};
  Json rs = {{"resource", {{"attributes", EncodeAttributes(resource)}}},
             {"scopeSpans", Json::array({std::move(scope)})}};
  return {{"resourceSpans", Json::array({std::move(rs)})}};
}

}  // namespace maestro::telemetry
