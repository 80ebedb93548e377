// Traces end to end: a real `maestro serve` + `maestro-fakellm`, exporting to
// a test OTLP receiver (tests/support/otlp_receiver.h, which decodes every
// request strictly). A `coding` task that calls a tool, moves through three
// movements and parks on a RequestTool until it is approved must give ONE
// trace: two runs of its job (before the park, after the resume) as
// invoke_agent roots, the second linked to the first, with movement, chat
// and execute_tool spans under them — and by default no prompt or tool
// argument text anywhere in what was sent.
#include <map>
#include <set>

#include "serve_fixture.h"
#include "support/otlp_receiver.h"

namespace maestro::testing {
namespace {

const char kPromptSecret[] = "SECRET-PROMPT-4242";
const char kArgSecret[] = "SECRET-ARG-7731";

class TraceTest : public ServeEngineTest {
 protected:
  // Runs the task to success; returns its task id.
  std::string RunParkedTask(bool capture_content) {
    extra_config_ = "telemetry:\n  otlp_endpoint: " + rx_.endpoint() +
                    "\n  headers:\n    X-Otlp-Token: tr4ce\n  capture_content: " +
                    (capture_content ? "true" : "false") + "\n";
    Json request = ToolCallReply("RequestTool", {{"tool", "RunCommand"},
                                                 {"arguments", {{"command", kArgSecret}}},
                                                 {"reason", "needs the shell"}});
    Start(Json::array(
        {ToolCallReply("ListDir", {{"path", std::string(".") + ""}, {"note", kArgSecret}}),
         ToolCallReply("transition", {{"next", "implement"}}), request,
         request,  // re-issued after the resume: answered from the approval
         ToolCallReply("transition", {{"next", "review"}}),
         ToolCallReply("complete", {{"status", "success"}, {"result", "done"}})}));
    Json c = Create(std::string("change it: ") + kPromptSecret, "coding");
    WaitStatus(c, "waiting_human");
    Json reqs = Get(TaskPath(c) + "/tool-requests")["requests"];
    EXPECT_EQ(reqs.size(), 1u) << reqs.dump();
    if (reqs.empty()) return "";
    auto [code, body] =
        Post(TaskPath(c) + "/tool-requests/" + reqs[0]["id"].get<std::string>() + "/decide",
             {{"decision", "approve"}, {"scope", "once"}});
    EXPECT_EQ(code, 200) << body.dump();
    WaitStatus(c, "succeeded", 30s);
    // The exporter sends every second; the last job span ends with the job.
    const auto end = std::chrono::steady_clock::now() + 15s;
    while (std::chrono::steady_clock::now() < end && CountNamed("invoke_agent coding") < 2) {
      std::this_thread::sleep_for(50ms);
    }
    return c["task"]["id"].get<std::string>();
  }

  size_t CountNamed(const std::string& name) const {
    size_t n = 0;
    for (const auto& s : rx_.Spans()) n += s["name"] == name;
    return n;
  }

  static std::string Str(const Json& span, const std::string& key) {
    Json v = OtlpAttr(span, key);
    return v.is_object() && v.contains("stringValue") ? v["stringValue"].get<std::string>() : "";
  }

  OtlpReceiver rx_;
};

TEST_F(TraceTest, AParkedMultiMovementTaskIsOneLinkedTraceWithoutContent) {
  const std::string task_id = RunParkedTask(/*capture_content=*/false);
  ASSERT_FALSE(task_id.empty());
  EXPECT_TRUE(rx_.errors().empty()) << rx_.errors().front();
  Json spans = rx_.Spans();
  ASSERT_FALSE(spans.empty()) << LogTail();
  EXPECT_EQ(rx_.requests().front().headers.at("X-Otlp-Token"), "tr4ce");

  std::set<std::string> traces;
  std::map<std::string, Json> by_id;
  for (const auto& s : spans) {
    traces.insert(s["traceId"].get<std::string>());
    by_id[s["spanId"].get<std::string>()] = s;
  }
  EXPECT_EQ(traces.size(), 1u) << "one trace for the task's jobs";

  // The job's two runs: roots, the park on the first, the resume on the
  // second, which links to the first.
  std::vector<Json> jobs;
  for (const auto& s : spans) {
    if (s["name"] == "invoke_agent coding") jobs.push_back(s);
  }
  ASSERT_EQ(jobs.size(), 2u) << spans.dump(1).substr(0, 3000);
  std::sort(jobs.begin(), jobs.end(), [](const Json& a, const Json& b) {
    return std::stoull(a["startTimeUnixNano"].get<std::string>()) <
           std::stoull(b["startTimeUnixNano"].get<std::string>());
  });
  for (const auto& j : jobs) {
    EXPECT_FALSE(j.contains("parentSpanId"));
    EXPECT_EQ(Str(j, "gen_ai.operation.name"), "invoke_agent");
    EXPECT_EQ(Str(j, "gen_ai.agent.name"), "coding");
    EXPECT_EQ(Str(j, "gen_ai.conversation.id"), task_id);
    EXPECT_EQ(Str(j, "maestro.task.id"), task_id);
    EXPECT_FALSE(Str(j, "maestro.job.id").empty());
  }
  EXPECT_EQ(Str(jobs[0], "maestro.job.id"), Str(jobs[1], "maestro.job.id"));
  ASSERT_TRUE(jobs[0].contains("events")) << jobs[0].dump();
  EXPECT_EQ(jobs[0]["events"][0]["name"], "park");
  EXPECT_EQ(Str(jobs[0]["events"][0], "maestro.wait_reason"), "tool_request");
  ASSERT_TRUE(jobs[1].contains("events")) << jobs[1].dump();
  EXPECT_EQ(jobs[1]["events"][0]["name"], "resume");
  EXPECT_EQ(Str(jobs[1]["events"][0], "maestro.movement"), "implement");
  ASSERT_TRUE(jobs[1].contains("links")) << jobs[1].dump();
  EXPECT_EQ(jobs[1]["links"][0]["spanId"], jobs[0]["spanId"]);
  EXPECT_EQ(jobs[1]["links"][0]["traceId"], jobs[0]["traceId"]);

  // Movements under the job runs; chat and tool spans under a movement.
  std::multiset<std::string> movements;
  std::set<std::string> tools;
  size_t chats = 0;
  for (const auto& s : spans) {
    const std::string name = s["name"];
    const std::string parent = s.value("parentSpanId", "");
    if (name == "plan" || name == "implement" || name == "review") {
      movements.insert(name);
      ASSERT_TRUE(by_id.count(parent)) << name;
      EXPECT_EQ(by_id[parent]["name"], "invoke_agent coding") << name;
      EXPECT_EQ(s["status"]["code"], 1) << name;
    } else if (name.rfind("chat ", 0) == 0) {
      ++chats;
      EXPECT_EQ(name, "chat fake");
      EXPECT_EQ(s["kind"], 3);
      EXPECT_EQ(Str(s, "gen_ai.operation.name"), "chat");
      EXPECT_EQ(Str(s, "gen_ai.provider.name"), "openai");
      EXPECT_EQ(Str(s, "gen_ai.request.model"), "fake");
      EXPECT_EQ(Str(s, "gen_ai.conversation.id"), task_id);
      EXPECT_TRUE(OtlpAttr(s, "gen_ai.usage.input_tokens").contains("intValue")) << s.dump();
      EXPECT_TRUE(OtlpAttr(s, "gen_ai.usage.output_tokens").contains("intValue")) << s.dump();
      EXPECT_TRUE(OtlpAttr(s, "gen_ai.usage.cache_read.input_tokens").contains("intValue"));
      EXPECT_TRUE(OtlpAttr(s, "gen_ai.response.finish_reasons").contains("arrayValue"));
      ASSERT_TRUE(by_id.count(parent));
      EXPECT_NE(by_id[parent]["name"].get<std::string>().rfind("invoke_agent", 0), 0u);
    } else if (name.rfind("execute_tool ", 0) == 0) {
      const std::string tool = Str(s, "gen_ai.tool.name");
      tools.insert(tool);
      EXPECT_EQ(name, "execute_tool " + tool);
      EXPECT_EQ(Str(s, "gen_ai.operation.name"), "execute_tool");
      EXPECT_FALSE(Str(s, "gen_ai.tool.call.id").empty());
      EXPECT_EQ(Str(s, "gen_ai.tool.type"), "function");
      ASSERT_TRUE(by_id.count(parent));
      const std::string pn = by_id[parent]["name"];
      EXPECT_TRUE(pn == "plan" || pn == "implement" || pn == "review") << pn;
    }
  }
  EXPECT_EQ(movements.count("plan"), 1u);
  EXPECT_EQ(movements.count("implement"), 2u) << "entered, parked, resumed";
  EXPECT_EQ(movements.count("review"), 1u);
  EXPECT_EQ(chats, 6u);
  for (const char* t : {"ListDir", "transition", "RequestTool", "complete"}) {
    EXPECT_TRUE(tools.count(t)) << t;
  }

  const std::string all = rx_.AllBodies();
  EXPECT_EQ(all.find(kPromptSecret), std::string::npos) << "the prompt leaked";
  EXPECT_EQ(all.find(kArgSecret), std::string::npos) << "a tool argument leaked";
  EXPECT_EQ(all.find("gen_ai.input.messages"), std::string::npos);
  EXPECT_EQ(all.find("gen_ai.tool.call.arguments"), std::string::npos);
}

TEST_F(TraceTest, CaptureContentSendsPromptsAndToolArguments) {
  ASSERT_FALSE(RunParkedTask(/*capture_content=*/true).empty());
  EXPECT_TRUE(rx_.errors().empty()) << rx_.errors().front();
  const std::string all = rx_.AllBodies();
  EXPECT_NE(all.find(kPromptSecret), std::string::npos);
  EXPECT_NE(all.find(kArgSecret), std::string::npos);
  bool input = false, output = false, args = false;
  for (const auto& s : rx_.Spans()) {
    input = input || OtlpAttr(s, "gen_ai.input.messages").contains("stringValue");
    output = output || OtlpAttr(s, "gen_ai.output.messages").contains("stringValue");
    args = args || OtlpAttr(s, "gen_ai.tool.call.arguments").contains("stringValue");
  }
  EXPECT_TRUE(input && output && args);
}

}  // namespace
}  // namespace maestro::testing
