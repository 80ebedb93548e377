// The OTLP/HTTP JSON encoding of spans (opentelemetry-proto
// ExportTraceServiceRequest, JSON mapping): what OtlpExporter POSTs to
// <endpoint>/v1/traces.
//
// {"resourceSpans":[{"resource":{"attributes":[...]},
//   "scopeSpans":[{"scope":{"name":"maestro","version":...},"spans":[...]}]}]}
// Ids are lower-case hex (traceId 32, spanId 16 characters), times are
// decimal strings of nanoseconds since the epoch, 64-bit integers are
// strings (intValue), enums are their numbers (kind, status.code).
#pragma once

#include <string>
#include <vector>

#include "core/json.h"
#include "telemetry/tracer.h"

namespace maestro::telemetry {

// One AnyValue ({"stringValue": ...}, {"intValue": "42"}, ...).
Json EncodeAnyValue(const AttrValue& value);
// [{"key": k, "value": AnyValue}, ...]
Json EncodeAttributes(const Attributes& attributes);
Json EncodeSpan(const SpanData& span);
// The whole request body for `spans` under one resource.
Json EncodeExportRequest(const Attributes& resource, const std::string& scope_version,
                         const std::vector<SpanData>& spans);

}  // namespace maestro::telemetry
