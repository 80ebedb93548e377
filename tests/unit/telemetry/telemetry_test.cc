// The telemetry module: ids, the sampler, the OTLP JSON shape, the
// exporter's bounded queue, retries and shutdown, content capture, the
// `telemetry:` config, and that telemetry off starts no thread.
#include "telemetry/telemetry.h"

#include <dirent.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "core/config.h"
#include "support/otlp_receiver.h"
#include "support/temp_dir.h"
#include "telemetry/genai.h"
#include "telemetry/otlp_exporter.h"
#include "telemetry/otlp_json.h"

namespace maestro::telemetry {
namespace {

using maestro::testing::OtlpAttr;
using maestro::testing::OtlpReceiver;
using maestro::testing::StrictOtlpErrors;

int ThreadCount() {
  int n = 0;
  DIR* d = opendir("/proc/self/task");
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

SpanStart Named(const std::string& name) {
  SpanStart s;
  s.name = name;
  return s;
}

SpanData Sample(const std::string& name) {
  SpanData s;
  s.name = name;
  s.context = {RandomTraceId(), RandomSpanId(), true};
  s.start_unix_nano = 1'700'000'000'000'000'000;
  s.end_unix_nano = s.start_unix_nano + 5;
  return s;
}

std::unique_ptr<OtlpExporter> ExporterTo(const OtlpReceiver& rx, size_t max_queue = 2048) {
  OtlpExporterOptions o;
  o.endpoint = rx.endpoint() + "/";
  o.headers = {{"X-Test-Auth", "t0k"}};
  o.resource = {{"service.name", std::string("maestro-test")}};
  o.max_queue = max_queue;
  o.flush_interval = std::chrono::milliseconds(50);
  o.backoff_base = std::chrono::milliseconds(10);
  return std::make_unique<OtlpExporter>(std::move(o));
}

TEST(TelemetryIds, RandomIdsAreDistinctNonZeroHex) {
  std::set<std::string> traces, spans;
  for (int i = 0; i < 2000; ++i) {
    traces.insert(Hex(RandomTraceId()));
    spans.insert(Hex(RandomSpanId()));
  }
  EXPECT_EQ(traces.size(), 2000u);
  EXPECT_EQ(spans.size(), 2000u);
  EXPECT_EQ(traces.begin()->size(), 32u);
  EXPECT_EQ(spans.begin()->size(), 16u);
  EXPECT_EQ(traces.count(std::string(32, '0')), 0u);
}

TEST(TelemetryIds, ATaskHasOneTraceIdAndTraceparentRoundTrips) {
  EXPECT_EQ(Hex(TraceIdForTask("t_1")), Hex(TraceIdForTask("t_1")));
  EXPECT_NE(Hex(TraceIdForTask("t_1")), Hex(TraceIdForTask("t_2")));
  SpanContext c{TraceIdForTask("t_1"), SpanIdFor("j:1"), true};
  const std::string tp = c.Traceparent();
  EXPECT_EQ(tp, "00-" + Hex(c.trace_id) + "-" + Hex(c.span_id) + "-01");
  auto back = ParseTraceparent(tp);
  ASSERT_TRUE(back);
  EXPECT_EQ(Hex(back->trace_id), Hex(c.trace_id));
  EXPECT_EQ(Hex(back->span_id), Hex(c.span_id));
  EXPECT_TRUE(back->sampled);
  EXPECT_FALSE(ParseTraceparent("00-" + std::string(32, '0') + "-" + Hex(c.span_id) + "-01"));
  EXPECT_FALSE(ParseTraceparent("garbage"));
  EXPECT_EQ(SpanContext{}.Traceparent(), "");
}

TEST(TelemetrySampler, RatioIsRespectedAndStablePerTrace) {
  int kept = 0;
  for (int i = 0; i < 20000; ++i) kept += SampledByRatio(RandomTraceId(), 0.25);
  EXPECT_GT(kept, 20000 * 0.22);
  EXPECT_LT(kept, 20000 * 0.28);
  TraceId t = TraceIdForTask("task-x");
  for (int i = 0; i < 10; ++i) EXPECT_EQ(SampledByRatio(t, 0.5), SampledByRatio(t, 0.5));
  EXPECT_TRUE(SampledByRatio(t, 1.0));
  EXPECT_FALSE(SampledByRatio(t, 0.0));
}

TEST(TelemetryJson, SpanEncodingHasTheOtlpJsonShape) {
  SpanData s = Sample("chat fake");
  s.kind = SpanKind::kClient;
  s.parent_span_id = RandomSpanId();
  s.attributes = {{"gen_ai.usage.input_tokens", int64_t{42}},
                  {"gen_ai.request.model", std::string("fake")},
                  {"ok", true},
                  {"ratio", 0.5},
                  {"gen_ai.response.finish_reasons", std::vector<std::string>{"stop"}}};
  s.events.push_back({"park", s.start_unix_nano + 1, {{"maestro.wait_reason", std::string("x")}}});
  s.links.push_back({{RandomTraceId(), RandomSpanId(), true}, {}});
  s.status = StatusCode::kError;
  s.status_message = "boom";
  Json body = EncodeExportRequest({{"service.name", std::string("maestro")}}, "1.0", {s});
  EXPECT_TRUE(StrictOtlpErrors(body).empty()) << body.dump(2);
  const Json& span = body["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
  EXPECT_EQ(span["traceId"], Hex(s.context.trace_id));
  EXPECT_EQ(span["spanId"], Hex(s.context.span_id));
  EXPECT_EQ(span["parentSpanId"], Hex(s.parent_span_id));
  EXPECT_EQ(span["kind"], 3);
  EXPECT_EQ(span["startTimeUnixNano"], "1700000000000000000");
  EXPECT_EQ(span["endTimeUnixNano"], "1700000000000000005");
  EXPECT_EQ(OtlpAttr(span, "gen_ai.usage.input_tokens"), Json({{"intValue", "42"}}));
  EXPECT_EQ(OtlpAttr(span, "gen_ai.request.model"), Json({{"stringValue", "fake"}}));
  EXPECT_EQ(OtlpAttr(span, "ok"), Json({{"boolValue", true}}));
  EXPECT_EQ(OtlpAttr(span, "gen_ai.response.finish_reasons")["arrayValue"]["values"][0],
            Json({{"stringValue", "stop"}}));
  EXPECT_EQ(span["events"][0]["name"], "park");
  EXPECT_EQ(span["links"].size(), 1u);
  EXPECT_EQ(span["status"], Json({{"code", 2}, {"message", "boom"}}));
  EXPECT_EQ(body["resourceSpans"][0]["scopeSpans"][0]["scope"]["name"], "maestro");
  // A root has no parentSpanId at all (not an empty string).
  Json root = EncodeSpan(Sample("root"));
  EXPECT_FALSE(root.contains("parentSpanId"));
  EXPECT_FALSE(root.contains("events"));
}

TEST(TelemetryExporter, AFullQueueDropsAndCountsWithoutBlocking) {
  OtlpReceiver rx;
  auto ex = ExporterTo(rx, /*max_queue=*/3);  // not started: nothing drains the queue
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) ex->OnEnd(Sample("s" + std::to_string(i)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
  EXPECT_EQ(ex->queued(), 3u);
  EXPECT_EQ(ex->dropped(), 2u);
  EXPECT_TRUE(rx.requests().empty());
}

TEST(TelemetryExporter, BatchesArePostedWithTheHeadersAndFlushedAtShutdown) {
  OtlpReceiver rx;
  auto ex = ExporterTo(rx);
  ex->Start();
  for (int i = 0; i < 3; ++i) ex->OnEnd(Sample("s" + std::to_string(i)));
  ex->Shutdown(std::chrono::seconds(5));
  EXPECT_EQ(ex->exported(), 3u);
  EXPECT_EQ(ex->dropped(), 0u);
  EXPECT_TRUE(rx.errors().empty()) << rx.errors().front();
  Json spans = rx.Spans();
  ASSERT_EQ(spans.size(), 3u);
  ASSERT_FALSE(rx.requests().empty());
  EXPECT_EQ(rx.requests()[0].headers.at("X-Test-Auth"), "t0k");
  EXPECT_EQ(ex->url(), rx.endpoint() + "/v1/traces");
}

TEST(TelemetryExporter, RetriesA503ButNotA400) {
  OtlpReceiver rx;
  rx.FailNext(2, 503);
  auto ex = ExporterTo(rx);
  ex->Start();
  ex->OnEnd(Sample("retried"));
  ex->Shutdown(std::chrono::seconds(5));
  EXPECT_EQ(rx.failed(), 2);
  EXPECT_EQ(ex->exported(), 1u);
  ASSERT_EQ(rx.Spans().size(), 1u);

  OtlpReceiver rx2;
  rx2.FailNext(5, 400);
  auto ex2 = ExporterTo(rx2);
  ex2->Start();
  ex2->OnEnd(Sample("refused"));
  ex2->Shutdown(std::chrono::seconds(5));
  EXPECT_EQ(rx2.failed(), 1) << "a 400 is not retried";
  EXPECT_EQ(ex2->failed(), 1u);
}

TEST(TelemetryExporter, ShutdownIsBoundedWhenTheReceiverIsGone) {
  OtlpExporterOptions o;
  o.endpoint = "http://127.0.0.1:9";  // discard port: refused
  o.backoff_base = std::chrono::milliseconds(2000);
  OtlpExporter ex(o);
  ex.Start();
  ex.OnEnd(Sample("lost"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // first attempt failed
  const auto start = std::chrono::steady_clock::now();
  ex.Shutdown(std::chrono::milliseconds(200));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1000));
}

TEST(TelemetryTracer, TelemetryOffStartsNoThreadAndRecordsNothing) {
  const int before = ThreadCount();
  TelemetryConfig off;  // no endpoint
  auto tracer = MakeTracer(off, "test");
  EXPECT_FALSE(tracer->enabled());
  Span s = tracer->Start(Named("invoke_agent x"));
  EXPECT_FALSE(s.recording());
  EXPECT_FALSE(s.context().valid());
  EXPECT_EQ(ThreadCount(), before) << "no exporter thread with telemetry off";
  tracer->Shutdown(std::chrono::milliseconds(10));

  OtlpReceiver rx;
  const int with_rx = ThreadCount();
  TelemetryConfig on;
  on.otlp_endpoint = rx.endpoint();
  auto live = MakeTracer(on, "test");
  EXPECT_TRUE(live->enabled());
  EXPECT_EQ(ThreadCount(), with_rx + 1) << "one exporter thread with telemetry on";
  live->Shutdown(std::chrono::seconds(2));
  EXPECT_EQ(ThreadCount(), with_rx);
}

TEST(TelemetryTracer, ChildrenShareTheTraceAndUnsampledTracesRecordNothing) {
  OtlpReceiver rx;
  OtlpTracer tracer(ExporterTo(rx), /*sample_ratio=*/1.0, /*capture_content=*/false);
  SpanStart root_start = Named("invoke_agent p");
  root_start.trace_id = TraceIdForTask("t1");
  Span root = tracer.Start(root_start);
  SpanStart child_start = Named("plan");
  child_start.parent = root.context();
  Span child = tracer.Start(child_start);
  EXPECT_EQ(Hex(child.context().trace_id), Hex(TraceIdForTask("t1")));
  child.End();
  root.End();
  EXPECT_EQ(tracer.exporter().queued(), 2u);

  OtlpTracer none(ExporterTo(rx), /*sample_ratio=*/0.0, false);
  Span r = none.Start(root_start);
  EXPECT_FALSE(r.recording());
  EXPECT_TRUE(r.context().valid());
  EXPECT_FALSE(r.context().sampled);
  SpanStart c2 = Named("child");
  c2.parent = r.context();
  EXPECT_FALSE(none.Start(c2).recording()) << "parent-based: an unsampled trace stays unsampled";
  EXPECT_EQ(none.exporter().queued(), 0u);
}

TEST(TelemetryTracer, ToolContentIsCapturedOnlyWhenAskedFor) {
  for (bool capture : {false, true}) {
    OtlpReceiver rx;
    OtlpTracer tracer(ExporterTo(rx), 1.0, capture);
    tracer.exporter().Start();
    Span parent = tracer.Start(Named("m"));
    Span tool = genai::StartToolSpan(tracer, parent.context(), "ReadFile", "call_1");
    genai::EndToolSpan(tracer, tool, /*is_error=*/true, R"({"path":"SECRET-ARG"})",
                       "Error: SECRET-RESULT");
    parent.End();
    tracer.Shutdown(std::chrono::seconds(5));
    Json spans = rx.Spans();
    ASSERT_EQ(spans.size(), 2u);
    const Json& t = spans[0];
    EXPECT_EQ(t["name"], "execute_tool ReadFile");
    EXPECT_EQ(t["parentSpanId"], spans[1]["spanId"]);
    EXPECT_EQ(OtlpAttr(t, "gen_ai.tool.call.id"), Json({{"stringValue", "call_1"}}));
    EXPECT_EQ(OtlpAttr(t, "gen_ai.tool.type"), Json({{"stringValue", "function"}}));
    EXPECT_EQ(t["status"]["code"], 2);
    const std::string all = rx.AllBodies();
    EXPECT_EQ(all.find("SECRET-ARG") != std::string::npos, capture) << all;
    EXPECT_EQ(all.find("SECRET-RESULT") != std::string::npos, capture) << all;
  }
}

std::string WriteYaml(const maestro::testing::TempDir& dir, const std::string& text) {
  std::string path = dir.File("maestro.yaml");
  std::ofstream(path) << text;
  return path;
}

TEST(TelemetryConfigTest, SettingsParseAndBadValuesNameTheKeyAndPosition) {
  maestro::testing::TempDir dir;
  auto cfg = LoadConfig(WriteYaml(dir,
                                  "telemetry:\n"
                                  "  otlp_endpoint: http://127.0.0.1:4318\n"
                                  "  headers:\n    Authorization: Bearer x\n"
                                  "  sample_ratio: 0.5\n"
                                  "  capture_content: true\n"
                                  "  service_name: maestro-a\n"),
                        {});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->telemetry.otlp_endpoint, "http://127.0.0.1:4318");
  EXPECT_EQ(cfg->telemetry.headers.at("Authorization"), "Bearer x");
  EXPECT_DOUBLE_EQ(cfg->telemetry.sample_ratio, 0.5);
  EXPECT_TRUE(cfg->telemetry.capture_content);
  EXPECT_EQ(cfg->telemetry.service_name, "maestro-a");

  auto def = LoadConfig(std::nullopt, {});
  ASSERT_TRUE(def.ok());
  EXPECT_TRUE(def->telemetry.otlp_endpoint.empty()) << "off by default";
  EXPECT_FALSE(def->telemetry.capture_content);
  EXPECT_DOUBLE_EQ(def->telemetry.sample_ratio, 1.0);

  auto env = LoadConfig(std::nullopt, {{"MAESTRO_OTLP_ENDPOINT", "https://otel.example:4318"}});
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ(env->telemetry.otlp_endpoint, "https://otel.example:4318");
  EXPECT_TRUE(env->warnings.empty());

  auto ratio = LoadConfig(WriteYaml(dir, "telemetry:\n  sample_ratio: 1.5\n"), {});
  ASSERT_FALSE(ratio.ok());
  EXPECT_NE(ratio.status().message().find("maestro.yaml:2:3"), std::string::npos)
      << ratio.status().message();
  EXPECT_NE(ratio.status().message().find("telemetry.sample_ratio"), std::string::npos)
      << ratio.status().message();

  auto url = LoadConfig(WriteYaml(dir, "telemetry:\n  otlp_endpoint: ftp://x\n"), {});
  ASSERT_FALSE(url.ok());
  EXPECT_NE(url.status().message().find("telemetry.otlp_endpoint"), std::string::npos)
      << url.status().message();
  auto typo = LoadConfig(WriteYaml(dir, "telemetry:\n  sample_rate: 1\n"), {});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("telemetry.sample_ratio"), std::string::npos)
      << typo.status().message();
}

}  // namespace
}  // namespace maestro::telemetry
