// Attachments against the real `maestro serve` + maestro-fakellm (issue 20
// item 3): a file uploaded with a task (multipart) is listed in the first
// prompt's dynamic context and read by the agent's ReadFile; the limits
// answer 413/400 naming the file or field and write nothing; a comment
// carries files too; images reach a vision profile as image content parts
// and any other profile as files only.
#include "core/base64.h"
#include "serve_fixture.h"

namespace maestro::testing {
namespace {

class AttachmentsTest : public ServeEngineTest {
 protected:
  std::pair<int, Json> PostForm(const std::string& path, const Json& fields,
                                const httplib::MultipartFormDataItems& files) const {
    httplib::MultipartFormDataItems items = {{"json", fields.dump(), "", ""}};
    for (const auto& f : files) items.push_back(f);
    auto r = Client().Post(path, items);
    if (!r) return {0, Json()};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }
  // The user message a logged fake request ends its seed with.
  static Json LastUserMessage(const Json& logged) {
    Json last;
    for (const auto& m : logged["body"]["messages"]) {
      if (m.value("role", "") == "user") last = m;
    }
    return last;
  }
};

Json Done() { return ToolCallReply("complete", {{"status", "success"}, {"result", "read it"}}); }

TEST_F(AttachmentsTest, AFileUploadedWithATaskIsReadByTheAgentsReadFile) {
  Start(Json::array({ToolCallReply("ReadFile", {{"path", "attachments/notes.txt"}}), Done()}));
  auto [status, created] =
      PostForm("/api/local/tasks", {{"instruction", "summarize the attached notes"}},
               {{"file", "NOTE-CONTENT-20\nsecond line\n", "../../notes.txt", "text/plain"}});
  ASSERT_EQ(status, 201) << created.dump();
  ASSERT_EQ(created["attachments"].size(), 1u) << created.dump();
  EXPECT_EQ(created["attachments"][0]["name"], "notes.txt") << "sanitized";
  EXPECT_EQ(created["attachments"][0]["path"], "attachments/notes.txt");
  EXPECT_EQ(created["attachments"][0]["size"], 28);
  EXPECT_EQ(created["attachments"][0]["content_type"], "text/plain");
  ASSERT_EQ(WaitStatus(created, "succeeded")["status"], "succeeded") << LogTail();

  WaitFakeRequests(2);
  Json requests = FakeRequests();
  const Json& first = requests[0]["body"]["messages"];
  EXPECT_FALSE(Contains(first[0].dump(), "attachments/notes.txt"))
      << "never in the system message (prompt cache)";
  const std::string seed = LastUserMessage(requests[0])["content"].get<std::string>();
  EXPECT_TRUE(Contains(seed, "## Attached files")) << seed;
  EXPECT_TRUE(Contains(seed, "- attachments/notes.txt (notes.txt, 28 bytes, text/plain)")) << seed;
  // The ReadFile result the agent got back holds the file's content.
  bool read = false;
  for (const auto& m : requests[1]["body"]["messages"]) {
    if (m.value("role", "") == "tool" && Contains(m.dump(), "NOTE-CONTENT-20")) read = true;
  }
  EXPECT_TRUE(read) << MessagesText(requests[1]);

  const std::string task = TaskPath(created);
  Json listed = Get(task + "/attachments");
  ASSERT_EQ(listed["attachments"].size(), 1u) << listed.dump();
  EXPECT_EQ(listed["attachments"][0]["delivered"], true);
  EXPECT_EQ(listed["attachments"][0]["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(Get(task + "/files/attachments/notes.txt")["content"],
            "NOTE-CONTENT-20\nsecond line\n");
}

TEST_F(AttachmentsTest, LimitsAnswer413Or400NamingTheFileAndWriteNothing) {
  extra_config_ = "attachments:\n  max_bytes: 100\n  max_count: 2\n  max_total_bytes: 150\n";
  Start(Json::array({Done(), Done()}), /*workers=*/0);
  const Json fields = {{"instruction", "look"}};
  const std::string big(101, 'x');

  auto [s1, b1] = PostForm("/api/local/tasks", fields, {{"file", big, "big.log", "text/plain"}});
  EXPECT_EQ(s1, 413) << b1.dump();
  EXPECT_EQ(b1["error"]["field"], "big.log");
  EXPECT_TRUE(Contains(b1["error"]["message"], "big.log")) << b1.dump();

  auto [s2, b2] = PostForm(
      "/api/local/tasks", fields,
      {{"file", "a", "a.txt", ""}, {"file", "b", "b.txt", ""}, {"file", "c", "c.txt", ""}});
  EXPECT_EQ(s2, 400) << b2.dump();
  EXPECT_EQ(b2["error"]["field"], "attachments");

  auto [s3, b3] = PostForm("/api/local/tasks", fields,
                           {{"file", std::string(80, 'a'), "one.txt", ""},
                            {"file", std::string(80, 'b'), "two.txt", ""}});
  EXPECT_EQ(s3, 413) << b3.dump();
  EXPECT_EQ(b3["error"]["field"], "two.txt");

  auto [s4, b4] = Post(
      "/api/local/tasks",
      {{"instruction", "look"}, {"attachments", {{{"name", "x.txt"}, {"content_base64", "%%%"}}}}});
  EXPECT_EQ(s4, 400) << b4.dump();
  EXPECT_EQ(b4["error"]["field"], "attachments[0].content_base64");

  auto [s5, b5] = PostForm("/api/local/tasks", fields, {{"file", "x", "..", ""}});
  EXPECT_EQ(s5, 400) << b5.dump();
  EXPECT_EQ(b5["error"]["field"], "..");

  // A body far over what the files could need is cut off by the server.
  auto huge = Client().Post("/api/local/tasks", std::string(4 << 20, 'x'), "application/json");
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->status, 413);

  EXPECT_TRUE(Get("/api/local/tasks")["tasks"].empty()) << "no refused request made a task";
  EXPECT_FALSE(std::filesystem::exists(DataDir() + "/workspaces/tasks") &&
               !std::filesystem::is_empty(DataDir() + "/workspaces/tasks"))
      << "and no workspace";

  // Within the limits: a task, then a comment with a file and no text.
  auto [ok, created] = PostForm("/api/local/tasks", fields, {{"file", "one", "n.txt", ""}});
  ASSERT_EQ(ok, 201) << created.dump();
  const std::string task = TaskPath(created);
  auto [cs, comment] =
      Post(task + "/comments",
           {{"attachments", {{{"name", "n.txt"}, {"content_base64", Base64Encode("two")}}}}});
  ASSERT_EQ(cs, 201) << comment.dump();
  ASSERT_EQ(comment["attachments"].size(), 1u) << comment.dump();
  EXPECT_EQ(comment["attachments"][0]["path"], "attachments/n-1.txt") << "collision suffixed";
  EXPECT_EQ(comment["attachments"][0]["comment_id"], comment["comment"]["id"]);
  EXPECT_EQ(comment["attachments"][0]["content_type"], "application/octet-stream");
  Json listed = Get(task + "/attachments")["attachments"];
  ASSERT_EQ(listed.size(), 2u) << listed.dump();
  EXPECT_EQ(listed[0]["path"], "attachments/n.txt");
  EXPECT_EQ(listed[1]["path"], "attachments/n-1.txt");
  EXPECT_EQ(listed[1]["delivered"], false) << "no worker ran";
  auto [empty_status, empty] = Post(task + "/comments", Json::object());
  EXPECT_EQ(empty_status, 400) << empty.dump();
  EXPECT_EQ(empty["error"]["field"], "body") << "text is required without files";
}

TEST_F(AttachmentsTest, ImagesReachAVisionProfileAsImagePartsAndOthersAsFiles) {
  extra_llm_config_ = "  vision: true\n";
  extra_config_ =
      "llm_profiles:\n  plain:\n    base_url: \"{llm_base_url}\"\n    model: fake\n"
      "    max_attempts: 1\n    context_length: 1000000\n";
  Start(Json::array({Done(), Done()}));
  const std::string png = std::string("\x89PNG\r\n\x1a\n", 8) + "PIXELS";
  const Json attachments = {
      {{"name", "shot.png"}, {"content_base64", Base64Encode(png)}, {"type", "image/png"}},
      {{"name", "log.txt"}, {"content_base64", Base64Encode("log")}}};

  auto [s1, vision] = Post("/api/local/tasks", {{"instruction", "what is on the screenshot?"},
                                                {"attachments", attachments}});
  ASSERT_EQ(s1, 201) << vision.dump();
  ASSERT_EQ(WaitStatus(vision, "succeeded")["status"], "succeeded") << LogTail();
  WaitFakeRequests(1);
  Json seen = LastUserMessage(FakeRequests()[0]);
  ASSERT_TRUE(seen["content"].is_array()) << seen.dump().substr(0, 2000);
  ASSERT_EQ(seen["content"].size(), 2u) << "the text and one image (not the .txt)";
  EXPECT_EQ(seen["content"][0]["type"], "text");
  const std::string text = seen["content"][0]["text"];
  EXPECT_TRUE(Contains(text, "attachments/shot.png")) << text;
  EXPECT_TRUE(Contains(text, "attachments/log.txt")) << text;
  EXPECT_EQ(seen["content"][1]["type"], "image_url");
  EXPECT_EQ(seen["content"][1]["image_url"]["url"], "data:image/png;base64," + Base64Encode(png));

  auto [s2, plain] =
      Post("/api/local/tasks",
           {{"instruction", "and this one?"}, {"profile", "plain"}, {"attachments", attachments}});
  ASSERT_EQ(s2, 201) << plain.dump();
  ASSERT_EQ(WaitStatus(plain, "succeeded")["status"], "succeeded") << LogTail();
  WaitFakeRequests(2);
  Json other = LastUserMessage(FakeRequests()[1]);
  ASSERT_TRUE(other["content"].is_string()) << other.dump().substr(0, 2000);
  EXPECT_TRUE(Contains(other["content"], "attachments/shot.png (shot.png, 14 bytes, image/png)"))
      << other.dump();
  EXPECT_FALSE(Contains(other.dump(), "base64")) << "a file only, no image part";
}

}  // namespace
}  // namespace maestro::testing
