// Registry: stable `tools` bytes, schema validation naming the field, caps.
#include "tools/registry.h"

#include <gtest/gtest.h>

#include "core/output_cap.h"
#include "sandbox/sandbox.h"
#include "tools/builtin.h"
#include "tools/park_tools.h"
#include "tools/schema.h"
#include "tools/workspace_tools.h"

namespace maestro::tools {
namespace {

ToolRegistry Builtin() {
  ToolRegistry r;
  EXPECT_TRUE(RegisterFileTools(r).ok());
  EXPECT_TRUE(RegisterRunCommand(r, std::make_shared<Sandbox>(Sandbox::Unavailable("test"))).ok());
  EXPECT_TRUE(RegisterParkTools(r).ok());
  return r;
}

TEST(RegistryTest, ToolsArrayIsByteIdenticalAndInRegistrationOrder) {
  ToolRegistry a = Builtin();
  ToolRegistry b = Builtin();
  const std::set<std::string> allowed = {"Grep", "ReadFile", "RunCommand", "RequestTool", "Nope"};
  const std::string first = a.ToolsArrayText(allowed);
  EXPECT_EQ(first, a.ToolsArrayText(allowed));
  EXPECT_EQ(first, b.ToolsArrayText(allowed));  // a fresh registry gives the same bytes
  Json arr = Json::parse(first);
  ASSERT_EQ(arr.size(), 4u);  // the unknown name is ignored
  EXPECT_EQ(arr[0]["function"]["name"], "ReadFile");
  EXPECT_EQ(arr[1]["function"]["name"], "Grep");
  EXPECT_EQ(arr[2]["function"]["name"], "RunCommand");
  EXPECT_EQ(arr[3]["function"]["name"], "RequestTool");
  EXPECT_EQ(arr, a.ToolsArray(allowed));
}

TEST(RegistryTest, BuiltinRegistryListsEveryToolOfTheDesignInOrder) {
  auto r = NewBuiltinRegistry(std::make_shared<Sandbox>(Sandbox::Unavailable("test")));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->Names(),
            std::vector<std::string>({"ReadFile", "WriteFile", "EditFile", "ListDir", "Glob",
                                      "Grep", "RunCommand", "RequestTool", "RequestPackage",
                                      "WaitSubTask", "SpinOffTask", "delegate", "WriteHandoff"}));
  for (const auto& name : (*r)->Names()) {
    const ToolSpec* s = (*r)->Find(name);
    EXPECT_FALSE(s->description.empty()) << name;
    EXPECT_EQ(s->parameters["additionalProperties"], false) << name;
  }
}

TEST(RegistryTest, DuplicateAndNonObjectSchemasAreRefused) {
  ToolRegistry r = Builtin();
  EXPECT_EQ(RegisterFileTools(r).code(), StatusCode::kConflict);
  ToolSpec bad;
  bad.name = "Bad";
  bad.parameters = {{"type", "string"}};
  EXPECT_EQ(r.Register(bad, nullptr).code(), StatusCode::kInvalidArgument);
}

TEST(SchemaTest, StringLengthsAreChecked) {
  const Json schema =
      ObjectSchema({{"text", {{"type", "string"}, {"minLength", 1}, {"maxLength", 5}}}}, {"text"});
  EXPECT_EQ(
      schema,
      (Json{{"type", "object"},
            {"properties", {{"text", {{"type", "string"}, {"minLength", 1}, {"maxLength", 5}}}}},
            {"required", {"text"}},
            {"additionalProperties", false}}));
  EXPECT_TRUE(ValidateArgs(schema, {{"text", "12345"}}).ok());
  Status empty = ValidateArgs(schema, {{"text", ""}});
  EXPECT_EQ(empty.field(), "text");
  Status long_text = ValidateArgs(schema, {{"text", "123456"}});
  EXPECT_EQ(long_text.field(), "text");
  EXPECT_NE(long_text.message().find("longer than 5 bytes"), std::string::npos)
      << long_text.message();
}

TEST(SchemaTest, ErrorsNameTheBadField) {
  ToolRegistry r = Builtin();
  const Json& read = r.Find("ReadFile")->parameters;
  Status missing = ValidateArgs(read, Json::object());
  EXPECT_EQ(missing.field(), "path");
  Status type = ValidateArgs(read, {{"path", "a"}, {"start_line", "ten"}});
  EXPECT_EQ(type.field(), "start_line");
  EXPECT_NE(type.message().find("must be integer"), std::string::npos) << type.message();
  Status range = ValidateArgs(read, {{"path", "a"}, {"start_line", 0}});
  EXPECT_EQ(range.field(), "start_line");
  Status unknown = ValidateArgs(read, {{"path", "a"}, {"start_lin", 2}});
  EXPECT_EQ(unknown.field(), "start_lin");
  EXPECT_NE(unknown.message().find("did you mean 'start_line'"), std::string::npos);
  EXPECT_TRUE(ValidateArgs(read, {{"path", "a"}, {"start_line", 2}}).ok());

  const Json& handoff = r.Find("WriteHandoff")->parameters;
  Status nested = ValidateArgs(
      handoff,
      {{"spec_ref", "SPEC.md"},
       {"status",
        {{"completed", Json::array()}, {"in_progress", Json::array()}, {"pending", Json::array()}}},
       {"decisions", {{{"what", "x"}}}},
       {"blockers", Json::array()},
       {"files_changed", Json::array()}});
  EXPECT_EQ(nested.field(), "decisions.0.why");
}

TEST(OutputCapTest, KeepsHeadAndTailAndMarksTheCut) {
  std::string text = "HEAD" + std::string(10'000, 'x') + "TAIL";
  std::string capped = CapOutput(text, 100);
  EXPECT_LT(capped.size(), 200u);
  EXPECT_EQ(capped.substr(0, 4), "HEAD");
  EXPECT_EQ(capped.substr(capped.size() - 4), "TAIL");
  EXPECT_NE(capped.find("[... 9908 bytes cut ...]"), std::string::npos) << capped;
  EXPECT_EQ(CapOutput("short", 100), "short");
}

TEST(OutputCapTest, NeverSplitsAUtf8Character) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "日本";  // 3-byte characters
  std::string capped = CapOutput(text, 101);
  std::string head = capped.substr(0, capped.find("\n[..."));
  EXPECT_EQ(head.size() % 3, 0u);
  std::string tail = capped.substr(capped.find("...]\n") + 5);
  EXPECT_EQ(tail.size() % 3, 0u);
}

TEST(OutputCapTest, StreamingBufferMatchesTheCut) {
  HeadTailBuffer buf(100);
  std::string all;
  for (int i = 0; i < 500; ++i) {
    std::string chunk = std::to_string(i) + ",";
    buf.Append(chunk);
    all += chunk;
  }
  std::string out = buf.Finish();
  EXPECT_EQ(out.substr(0, 50), all.substr(0, 50));
  EXPECT_EQ(out.substr(out.size() - 50), all.substr(all.size() - 50));
  EXPECT_EQ(buf.total_bytes(), all.size());
  EXPECT_NE(out.find("bytes cut"), std::string::npos);
}

}  // namespace
}  // namespace maestro::tools
