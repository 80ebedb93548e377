#include "llm/translated_body.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "llm_test_files.h"

// Under AddressSanitizer its allocator reports the bytes in use: the large
// conversation test checks the body never holds the conversation. (Declared
// here: Debian's GCC ships the symbol, not <sanitizer/allocator_interface.h>.)
#if defined(__SANITIZE_ADDRESS__)
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#define TB_HAVE_ALLOC_STATS 1
#endif

namespace maestro::llm {
namespace {

namespace fs = std::filesystem;

// A translator in the simplest shape: {"messages":[<line>,<line>]} with each
// line's JSON re-dumped, and `,"m":1` inside a marked message. It marks every
// user line and the last line, so marks land at the start, middle and end.
class EchoTranslator final : public MessageTranslator {
 public:
  void Reset() override { ++resets; }
  Status Head(std::string* out) override {
    *out += R"({"messages":[)";
    return Status::Ok();
  }
  Status Message(const Json& message, size_t index, bool mark, std::string* out) override {
    if (fail_at >= 0 && index == static_cast<size_t>(fail_at)) {
      return Internal("cannot translate line " + std::to_string(index));
    }
    if (index > 0) *out += ',';
    std::string m = message.dump();
    if (mark) m.insert(m.size() - 1, R"(,"m":1)");
    *out += m;
    if (mark) marked.push_back(index);
    return Status::Ok();
  }
  Status Finish(std::string* out) override {
    *out += "]}";
    return Status::Ok();
  }
  std::vector<size_t> Marks(const std::vector<MessageRole>& roles) const override {
    seen_roles = roles;
    std::vector<size_t> out;
    for (size_t i = 0; i < roles.size(); ++i) {
      if (roles[i] == MessageRole::kUser || i + 1 == roles.size()) out.push_back(i);
    }
    return out;
  }
  size_t MarkBytes() const override { return 6; }

  int resets = 0;
  int fail_at = -1;
  std::vector<size_t> marked;
  mutable std::vector<MessageRole> seen_roles;
};

class TranslatedBodyTest : public test_files::LlmFileTest {
 protected:
  TranslatedBodyTest() : LlmFileTest("maestro_tb_") {}
  // Reads the whole body in `step`-byte Read() calls.
  static std::string ReadInSteps(TranslatedBody& b, size_t step) {
    std::string out;
    std::vector<char> buf(step);
    while (size_t k = b.Read(buf.data(), step)) out.append(buf.data(), k);
    return out;
  }
  RequestBodySpec Spec(const std::string& jsonl) {
    RequestBodySpec spec;
    spec.model = "m";
    spec.messages_path = Write("current.jsonl", jsonl);
    return spec;
  }
};

constexpr char kConversation[] =
    "{\"role\":\"system\",\"content\":\"S\"}\n"
    "{\"role\":\"user\",\"content\":\"hello\"}\n"
    "{\"role\":\"assistant\",\"content\":\"hi\"}\n"
    "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"out\"}\n";

TEST(RoleOfTest, NamesTheFourRolesAndOtherwiseOther) {
  EXPECT_EQ(RoleOf(Json{{"role", "system"}}), MessageRole::kSystem);
  EXPECT_EQ(RoleOf(Json{{"role", "user"}}), MessageRole::kUser);
  EXPECT_EQ(RoleOf(Json{{"role", "assistant"}}), MessageRole::kAssistant);
  EXPECT_EQ(RoleOf(Json{{"role", "tool"}}), MessageRole::kTool);
  EXPECT_EQ(RoleOf(Json{{"role", "developer"}}), MessageRole::kOther);
  EXPECT_EQ(RoleOf(Json{{"role", 3}}), MessageRole::kOther);
  EXPECT_EQ(RoleOf(Json::array()), MessageRole::kOther);
}

TEST(MessageTranslatorTest, MarksNothingByDefault) {
  class Plain final : public MessageTranslator {
    void Reset() override {}
    Status Head(std::string*) override { return Status::Ok(); }
    Status Message(const Json&, size_t, bool, std::string*) override { return Status::Ok(); }
    Status Finish(std::string*) override { return Status::Ok(); }
  } plain;
  EXPECT_TRUE(plain.Marks({MessageRole::kSystem, MessageRole::kUser}).empty());
  EXPECT_EQ(plain.MarkBytes(), 0u);
}

TEST_F(TranslatedBodyTest, SizeIsTheBytesReadWithoutMarks) {
  class NoMarks final : public MessageTranslator {
    void Reset() override {}
    Status Head(std::string* out) override {
      *out += "[";
      return Status::Ok();
    }
    Status Message(const Json& m, size_t i, bool, std::string* out) override {
      *out += (i > 0 ? "," : "") + m.dump();
      return Status::Ok();
    }
    Status Finish(std::string* out) override {
      *out += "]";
      return Status::Ok();
    }
  };
  auto body = TranslatedBody::Open(Spec(kConversation), std::make_unique<NoMarks>());
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  auto text = (*body)->ReadAll();
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(text->size(), (*body)->size());
  Json j = Json::parse(*text);
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[3]["tool_call_id"], "c1");
}

TEST_F(TranslatedBodyTest, MarksTheLinesTheTranslatorNamesAndSizeCountsThem) {
  auto tr = std::make_unique<EchoTranslator>();
  EchoTranslator* echo = tr.get();
  auto body = TranslatedBody::Open(Spec(kConversation), std::move(tr));
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(echo->seen_roles,
            (std::vector<MessageRole>{MessageRole::kSystem, MessageRole::kUser,
                                      MessageRole::kAssistant, MessageRole::kTool}));
  auto text = (*body)->ReadAll();
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(text->size(), (*body)->size());
  EXPECT_EQ(echo->marked, (std::vector<size_t>{1, 3}));
  Json j = Json::parse(*text);
  EXPECT_FALSE(j["messages"][0].contains("m"));
  EXPECT_EQ(j["messages"][1]["m"], 1);
  EXPECT_FALSE(j["messages"][2].contains("m"));
  EXPECT_EQ(j["messages"][3]["m"], 1);
}

TEST_F(TranslatedBodyTest, TeeGetsTheBodyAndRewindSendsItAgain) {
  RequestBodySpec spec = Spec(kConversation);
  spec.request_json_path = (dir_ / "request.json").string();
  auto body = TranslatedBody::Open(spec, std::make_unique<EchoTranslator>());
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  std::string first = ReadInSteps(**body, 7);
  ASSERT_TRUE((*body)->error().ok()) << (*body)->error().ToString();
  EXPECT_EQ(first.size(), (*body)->size());
  EXPECT_EQ(Slurp(spec.request_json_path), first);

  // A resend after a partial read: same bytes, the tee rewritten from 0.
  ASSERT_TRUE((*body)->Rewind().ok());
  char part[10];
  ASSERT_EQ((*body)->Read(part, sizeof(part)), sizeof(part));
  ASSERT_TRUE((*body)->Rewind().ok());
  auto again = (*body)->ReadAll();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, first);
  EXPECT_EQ(Slurp(spec.request_json_path), first);
}

TEST_F(TranslatedBodyTest, TornLastLineIsLeftOut) {
  auto tr = std::make_unique<EchoTranslator>();
  EchoTranslator* echo = tr.get();
  auto body = TranslatedBody::Open(
      Spec(std::string(kConversation) + "{\"role\":\"user\",\"content\":\"half"), std::move(tr));
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  auto text = (*body)->ReadAll();
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(text->size(), (*body)->size());
  EXPECT_EQ(Json::parse(*text)["messages"].size(), 4u);
  EXPECT_EQ(echo->seen_roles.size(), 4u);
}

TEST_F(TranslatedBodyTest, BlankLinesAreSkippedAndNotCounted) {
  auto tr = std::make_unique<EchoTranslator>();
  EchoTranslator* echo = tr.get();
  auto body = TranslatedBody::Open(Spec("\n{\"role\":\"system\",\"content\":\"S\"}\r\n\n  \n"
                                        "{\"role\":\"user\",\"content\":\"u\"}\n\n"),
                                   std::move(tr));
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  auto text = (*body)->ReadAll();
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(text->size(), (*body)->size());
  EXPECT_EQ(*text, R"({"messages":[{"content":"S","role":"system"},)"
                   R"({"content":"u","role":"user","m":1}]})");
  EXPECT_EQ(echo->marked, (std::vector<size_t>{1}));
}

TEST_F(TranslatedBodyTest, EmptyConversationIsJustHeadAndFinish) {
  auto body = TranslatedBody::Open(Spec(""), std::make_unique<EchoTranslator>());
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  auto text = (*body)->ReadAll();
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, R"({"messages":[]})");
  EXPECT_EQ((*body)->size(), 15u);
}

TEST_F(TranslatedBodyTest, KnownBytesBoundTheConversation) {
  RequestBodySpec spec =
      Spec(std::string(kConversation) + "{\"role\":\"user\",\"content\":\"x\"}\n");
  spec.messages_known_bytes = sizeof(kConversation) - 1;
  auto body = TranslatedBody::Open(spec, std::make_unique<EchoTranslator>());
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  auto text = (*body)->ReadAll();
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(Json::parse(*text)["messages"].size(), 4u);

  spec.messages_known_bytes = 10000;  // more than the file holds
  auto bad = TranslatedBody::Open(spec, std::make_unique<EchoTranslator>());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInternal);
}

TEST_F(TranslatedBodyTest, NonJsonLineIsAnErrorNamingItsLineNumber) {
  auto body = TranslatedBody::Open(Spec("{\"role\":\"system\",\"content\":\"S\"}\n\n"
                                        "not json\n{\"role\":\"user\",\"content\":\"u\"}\n"),
                                   std::make_unique<EchoTranslator>());
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), StatusCode::kInternal);
  EXPECT_NE(body.status().message().find("line 3 of"), std::string::npos)
      << body.status().message();

  auto array_line = TranslatedBody::Open(Spec("[1,2]\n"), std::make_unique<EchoTranslator>());
  ASSERT_FALSE(array_line.ok());
  EXPECT_NE(array_line.status().message().find("line 1 of"), std::string::npos);
}

TEST_F(TranslatedBodyTest, MissingFileIsNotFound) {
  RequestBodySpec spec;
  spec.messages_path = (dir_ / "nope.jsonl").string();
  auto body = TranslatedBody::Open(spec, std::make_unique<EchoTranslator>());
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), StatusCode::kNotFound);
}

TEST_F(TranslatedBodyTest, TranslatorErrorFailsOpen) {
  auto tr = std::make_unique<EchoTranslator>();
  tr->fail_at = 2;
  auto body = TranslatedBody::Open(Spec(kConversation), std::move(tr));
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().message(), "cannot translate line 2");
}

// The file rewritten between the measuring pass and the sending one: the
// body errors out rather than upload more or fewer bytes than its size.
TEST_F(TranslatedBodyTest, FileChangedBetweenPassesIsAnErrorNeverAWrongSize) {
  for (const char* replacement :
       {"{\"role\":\"system\",\"content\":\"a much longer system prompt than before\"}\n"
        "{\"role\":\"user\",\"content\":\"hello\"}\n"
        "{\"role\":\"assistant\",\"content\":\"hi\"}\n"
        "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"out\"}\n",
        "{\"role\":\"system\",\"content\":\"\"}\n{\"role\":\"user\",\"content\":\"\"}\n"
        "{\"role\":\"assistant\",\"content\":\"\"}\n{\"role\":\"tool\",\"content\":\"\"}\n"
        "{\"role\":\"user\",\"content\":\"hello there, this is padding\"}\n",
        "{\"role\":\"system\",\"content\":\"S\"}\ngarbage garbage garbage garbage garbage!\n"}) {
    SCOPED_TRACE(replacement);
    RequestBodySpec spec = Spec(kConversation);
    auto body = TranslatedBody::Open(spec, std::make_unique<EchoTranslator>());
    ASSERT_TRUE(body.ok()) << body.status().ToString();
    Write("current.jsonl", replacement);
    std::string sent = ReadInSteps(**body, 5);
    EXPECT_FALSE((*body)->error().ok());
    EXPECT_LE(sent.size(), (*body)->size());
    EXPECT_EQ((*body)->Read(nullptr, 0), 0u);
  }
}

TEST_F(TranslatedBodyTest, ShrunkFileIsAnError) {
  RequestBodySpec spec = Spec(kConversation);
  auto body = TranslatedBody::Open(spec, std::make_unique<EchoTranslator>());
  ASSERT_TRUE(body.ok());
  Write("current.jsonl", "{\"role\":\"system\",\"content\":\"S\"}\n");
  std::string sent = ReadInSteps(**body, 64);
  ASSERT_FALSE((*body)->error().ok());
  EXPECT_LT(sent.size(), (*body)->size());
  EXPECT_FALSE((*body)->Rewind().ok());  // a failed body stays failed
}

// 3 MB of conversation read through 1000-byte Read() calls: the bytes are
// exact and the body holds O(one message), never the conversation. (Bigger
// files only make the test slower: JSON parsing under the sanitizers runs
// at a few MB/s.)
TEST_F(TranslatedBodyTest, LargeConversationStreamsInSmallReads) {
  const std::string filler(20 * 1024, 'x');
  std::string jsonl;
  const int kLines = 150;
  jsonl.reserve(kLines * (filler.size() + 64));
  for (int i = 0; i < kLines; ++i) {
    jsonl += R"({"role":")";
    jsonl += i % 2 ? "assistant" : "user";
    jsonl += R"(","content":")" + std::to_string(i) + filler + "\"}\n";
  }
  RequestBodySpec spec = Spec(jsonl);
  const size_t file_bytes = jsonl.size();
  jsonl.clear();
  jsonl.shrink_to_fit();
  auto tr = std::make_unique<EchoTranslator>();
  EchoTranslator* echo = tr.get();
  auto body = TranslatedBody::Open(spec, std::move(tr));
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ((*body)->size(), file_bytes - kLines /* '\n's */ + (kLines - 1) /* commas */ +
                                 15 /* head, finish */ + 6 * (kLines / 2) /* user marks */ +
                                 6 /* the last line */);
#ifdef TB_HAVE_ALLOC_STATS
  const size_t base = __sanitizer_get_current_allocated_bytes();
  size_t peak = 0;
#endif
  uint64_t total = 0;
  int lines_seen = 0;
  char buf[1000];
  while (size_t k = (*body)->Read(buf, sizeof(buf))) {
    total += k;
    lines_seen += static_cast<int>(std::count(buf, buf + k, '{'));
#ifdef TB_HAVE_ALLOC_STATS
    peak = std::max(peak, __sanitizer_get_current_allocated_bytes());
#endif
  }
  ASSERT_TRUE((*body)->error().ok()) << (*body)->error().ToString();
  EXPECT_EQ(total, (*body)->size());
  EXPECT_EQ(lines_seen, kLines + 1);  // every message and the head's object
  EXPECT_EQ(echo->marked.size(), static_cast<size_t>(kLines / 2 + 1));
#ifdef TB_HAVE_ALLOC_STATS
  // One message and the 64 KiB line buffer, not 3 MB.
  EXPECT_LT(peak - std::min(peak, base), 512u << 10);
#endif
}

class ReadToolsArrayTest : public TranslatedBodyTest {};

TEST_F(ReadToolsArrayTest, FromMemoryFileOrNone) {
  const std::string tools = R"([{"type":"function","function":{"name":"ReadFile"}}])";
  RequestBodySpec spec;
  spec.tools_json = tools;
  auto a = ReadToolsArray(spec);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ((*a)[0]["function"]["name"], "ReadFile");

  RequestBodySpec from_file;
  from_file.tools_path = Write("tools.json", tools + "\n");
  auto b = ReadToolsArray(from_file);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(*b, *a);

  auto none = ReadToolsArray(RequestBodySpec{});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, Json::array());
}

TEST_F(ReadToolsArrayTest, NotAnArrayOrMissingIsAnError) {
  RequestBodySpec spec;
  spec.tools_path = Write("tools.json", R"({"name":"x"})");
  auto bad = ReadToolsArray(spec);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);

  spec.tools_path = (dir_ / "missing.json").string();
  auto missing = ReadToolsArray(spec);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace maestro::llm
