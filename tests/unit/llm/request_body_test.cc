#include "llm/request_body.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "llm_test_files.h"

namespace maestro::llm {
namespace {

namespace fs = std::filesystem;

class RequestBodyTest : public test_files::LlmFileTest {
 protected:
  RequestBodyTest() : LlmFileTest("maestro_rb_") {}
};

TEST_F(RequestBodyTest, BuildsValidJsonFromToolsAndJsonl) {
  RequestBodySpec spec;
  spec.model = "qwen3";
  spec.params = {{"temperature", 0.2}};
  spec.tools_path = Write("tools.json", R"([{"type":"function","function":{"name":"ReadFile"}}])"
                                        "\n");
  spec.messages_path = Write("current.jsonl",
                             "{\"role\":\"system\",\"content\":\"S\"}\n\n"
                             "{\"role\":\"user\",\"content\":\"line\\nbreak\"}\r\n");
  spec.request_json_path = (dir_ / "request.json").string();
  auto body = RequestBody::Open(spec);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  uint64_t size = (*body)->size();
  auto text = (*body)->ReadAll();
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->size(), size);  // Content-Length is exact
  Json j = Json::parse(*text);
  EXPECT_EQ(j["model"], "qwen3");
  EXPECT_EQ(j["temperature"], 0.2);
  EXPECT_EQ(j["stream"], true);
  EXPECT_EQ(j["stream_options"]["include_usage"], true);
  EXPECT_EQ(j["tools"][0]["function"]["name"], "ReadFile");
  ASSERT_EQ(j["messages"].size(), 2u);
  EXPECT_EQ(j["messages"][1]["content"], "line\nbreak");
  // "messages" is the last key, so the prefix before it is stable.
  EXPECT_LT(text->find("\"tools\""), text->find("\"messages\""));
  std::ifstream tee(spec.request_json_path, std::ios::binary);
  std::string teed((std::istreambuf_iterator<char>(tee)), std::istreambuf_iterator<char>());
  EXPECT_EQ(teed, *text);
}

// The engine hands the tools array over in memory (the bytes it wrote to
// tools.json): the body is byte for byte the one read from the file, and a
// rewind (curl's resend on a fresh connection) serves it again from the start.
TEST_F(RequestBodyTest, ToolsFromMemoryGiveTheSameBytesAsTheToolsFile) {
  const std::string tools = R"([{"type":"function","function":{"name":"ReadFile"}}])";
  RequestBodySpec spec;
  spec.model = "m";
  spec.messages_path = Write("current.jsonl", "{\"role\":\"user\",\"content\":\"a\"}\n");
  spec.messages_known_bytes = fs::file_size(spec.messages_path);
  spec.tools_path = Write("tools.json", tools);
  auto from_file = RequestBody::Open(spec);
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  auto file_text = (*from_file)->ReadAll();
  ASSERT_TRUE(file_text.ok());

  spec.tools_path = (dir_ / "missing.json").string();  // not read when the array is given
  spec.tools_json = tools;
  auto from_memory = RequestBody::Open(spec);
  ASSERT_TRUE(from_memory.ok()) << from_memory.status().ToString();
  EXPECT_EQ((*from_memory)->size(), (*from_file)->size());
  char first[7];
  ASSERT_EQ((*from_memory)->Read(first, sizeof(first)), sizeof(first));
  ASSERT_TRUE((*from_memory)->Rewind().ok());
  auto memory_text = (*from_memory)->ReadAll();
  ASSERT_TRUE(memory_text.ok());
  EXPECT_EQ(*memory_text, *file_text);
  EXPECT_EQ(Json::parse(*memory_text)["tools"][0]["function"]["name"], "ReadFile");
}

TEST_F(RequestBodyTest, TornLastLineIsLeftOut) {
  RequestBodySpec spec;
  spec.model = "m";
  spec.stream = false;
  spec.messages_path =
      Write("current.jsonl", "{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"assis");
  auto body = RequestBody::Open(spec);
  ASSERT_TRUE(body.ok());
  auto text = (*body)->ReadAll();
  ASSERT_TRUE(text.ok());
  Json j = Json::parse(*text);
  EXPECT_EQ(j["messages"].size(), 1u);
  EXPECT_FALSE(j.contains("tools"));
  EXPECT_FALSE(j.contains("stream_options"));
}

TEST_F(RequestBodyTest, EmptyConversationAndSmallReads) {
  RequestBodySpec spec;
  spec.model = "m";
  spec.messages_path = Write("current.jsonl", "");
  auto body = RequestBody::Open(spec);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(Json::parse(*(*body)->ReadAll())["messages"].size(), 0u);

  // Many lines read 1 byte at a time still give exactly the measured size.
  std::string lines;
  for (int i = 0; i < 200; ++i)
    lines += Json{{"role", "user"}, {"content", std::string(i, 'x')}}.dump() + "\n";
  spec.messages_path = Write("big.jsonl", lines);
  auto b2 = RequestBody::Open(spec);
  ASSERT_TRUE(b2.ok());
  std::string out;
  char c;
  while ((*b2)->Read(&c, 1) == 1) out.push_back(c);
  EXPECT_EQ(out.size(), (*b2)->size());
  EXPECT_EQ(Json::parse(out)["messages"].size(), 200u);
}

// Lines longer than the 64 KiB read buffer, CRs inside and at a buffer
// boundary, and lines holding only CRs: the measured size is what is sent.
TEST_F(RequestBodyTest, LongLinesAndCarriageReturnsMeasureExactly) {
  RequestBodySpec spec;
  spec.model = "m";
  std::string big(70000, 'y');
  std::string lines = Json{{"role", "user"}, {"content", big}}.dump() + "\r\n\r\r\n\n";
  lines += std::string(65536 - lines.size() % 65536 - 1, ' ') + "\r\r" +
           Json{{"role", "assistant"}, {"content", "z"}}.dump() + "\n";
  spec.messages_path = Write("long.jsonl", lines);
  auto body = RequestBody::Open(spec);
  ASSERT_TRUE(body.ok());
  auto text = (*body)->ReadAll();
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->size(), (*body)->size());
  Json j = Json::parse(*text);
  ASSERT_EQ(j["messages"].size(), 2u);
  EXPECT_EQ(j["messages"][0]["content"], big);
  EXPECT_EQ(j["messages"][1]["content"], "z");
}

// A rewind (libcurl resending on a fresh connection) starts the same bytes
// over, the tee included.
TEST_F(RequestBodyTest, RewindSendsTheSameBytesAgain) {
  RequestBodySpec spec;
  spec.model = "m";
  spec.tools_path = Write("tools.json", R"([{"type":"function"}])");
  std::string lines;
  for (int i = 0; i < 50; ++i)
    lines += Json{{"role", "user"}, {"content", std::string(3000, 'a' + i % 26)}}.dump() + "\n";
  spec.messages_path = Write("current.jsonl", lines);
  spec.request_json_path = (dir_ / "request.json").string();
  auto body = RequestBody::Open(spec);
  ASSERT_TRUE(body.ok());
  char buf[1000];
  ASSERT_EQ((*body)->Read(buf, sizeof(buf)), sizeof(buf));  // part way in
  ASSERT_TRUE((*body)->Rewind().ok());
  auto whole = (*body)->ReadAll();
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->size(), (*body)->size());
  EXPECT_EQ(Json::parse(*whole)["messages"].size(), 50u);
  ASSERT_TRUE((*body)->Rewind().ok());  // after the end too
  EXPECT_EQ(*(*body)->ReadAll(), *whole);
  std::ifstream tee(spec.request_json_path, std::ios::binary);
  std::string teed((std::istreambuf_iterator<char>(tee)), std::istreambuf_iterator<char>());
  EXPECT_EQ(teed, *whole);
}

// With the writer's byte count the body is the same bytes as with the scan,
// whatever the read sizes; a line appended after the count (the next
// message, written while this request streams) is not sent, and a count the
// file cannot hold is an error before anything is sent.
TEST_F(RequestBodyTest, KnownBytesSendTheSameBodyWithoutAScan) {
  RequestBodySpec spec;
  spec.model = "m";
  spec.tools_path = Write("tools.json", R"([{"type":"function"}])");
  std::string lines;
  for (int i = 0; i < 40; ++i) {
    lines += Json{{"role", "user"}, {"content", std::string(i * 900, 'a' + i % 26) + "\n"}}.dump() +
             "\n";
  }
  spec.messages_path = Write("current.jsonl", lines);
  auto scanned = RequestBody::Open(spec);
  ASSERT_TRUE(scanned.ok());
  auto want = (*scanned)->ReadAll();
  ASSERT_TRUE(want.ok());

  std::ofstream(spec.messages_path, std::ios::app | std::ios::binary)
      << Json{{"role", "assistant"}, {"content", "later"}}.dump() << "\n";
  spec.messages_known_bytes = lines.size();
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{4096}, size_t{1} << 20}) {
    auto known = RequestBody::Open(spec);
    ASSERT_TRUE(known.ok());
    EXPECT_EQ((*known)->size(), (*scanned)->size());
    std::string got;
    std::string buf(chunk, '\0');
    while (size_t k = (*known)->Read(buf.data(), chunk)) got.append(buf.data(), k);
    ASSERT_TRUE((*known)->error().ok());
    EXPECT_EQ(got, *want) << "read in chunks of " << chunk;
    if (chunk == 7) {  // a rewind part way in sends the same again
      ASSERT_TRUE((*known)->Rewind().ok());
      EXPECT_EQ(*(*known)->ReadAll(), *want);
    }
  }
  EXPECT_EQ(Json::parse(*want)["messages"].size(), 40u);

  spec.messages_known_bytes = lines.size() + 1000;
  EXPECT_EQ(RequestBody::Open(spec).status().code(), StatusCode::kInternal);
}

TEST_F(RequestBodyTest, MissingFilesAndBadParamsAreErrors) {
  RequestBodySpec spec;
  spec.messages_path = (dir_ / "nope.jsonl").string();
  EXPECT_EQ(RequestBody::Open(spec).status().code(), StatusCode::kNotFound);
  spec.messages_path = Write("c.jsonl", "");
  spec.params = Json::array();
  EXPECT_EQ(RequestBody::Open(spec).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace maestro::llm
