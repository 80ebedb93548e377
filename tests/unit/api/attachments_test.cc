// Uploads at the edge (api/attachments.h): names sanitized, the JSON and
// multipart shapes read alike, the limits answered with 400/413 naming the
// field or file, and the files written under attachments/ with collisions
// suffixed — through a real Env on a temporary directory; and an
// attachments/ swapped for a symlink mid-upload never gets a byte written
// outside.
#include "api/attachments.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/base64.h"
#include "core/env.h"
#include "support/dir_swapper.h"
#include "support/temp_dir.h"

namespace maestro::api {
namespace {

HttpRequest JsonRequest(const Json& body) {
  HttpRequest r;
  r.method = "POST";
  r.headers = {{"Content-Type", "application/json"}};
  r.body = body.dump();
  return r;
}

HttpRequest FormRequest(const std::string& parts) {
  HttpRequest r;
  r.method = "POST";
  r.headers = {{"Content-Type", "multipart/form-data; boundary=B"}};
  r.body = parts + "--B--\r\n";
  return r;
}

std::string FilePart(const std::string& filename, const std::string& type,
                     const std::string& bytes) {
  return "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + filename +
         "\"\r\nContent-Type: " + type + "\r\n\r\n" + bytes + "\r\n";
}

std::string JsonPart(const Json& fields) {
  return "--B\r\nContent-Disposition: form-data; name=\"json\"\r\n\r\n" + fields.dump() + "\r\n";
}

AttachmentsConfig Limits(int64_t max_bytes, int64_t max_count, int64_t max_total) {
  AttachmentsConfig c;
  c.max_bytes = max_bytes;
  c.max_count = max_count;
  c.max_total_bytes = max_total;
  return c;
}

TEST(AttachmentsTest, NamesAreSanitized) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"report.txt", "report.txt"},
      {"../../etc/passwd", "passwd"},
      {"C:\\Users\\me\\shot.png", "shot.png"},
      {".bashrc", "bashrc"},
      {"...hidden.txt", "hidden.txt"},
      {"a\x01"
       "b\tc.txt",
       "a_b_c.txt"},
      {"what?*<>|\":.md", "what_______.md"},
      {"trailing. . ", "trailing"},
      {"日本語.txt", "日本語.txt"},
  };
  for (const auto& [in, want] : cases) {
    auto got = SanitizeAttachmentName(in, "f");
    ASSERT_TRUE(got.ok()) << in << ": " << got.status().ToString();
    EXPECT_EQ(*got, want) << in;
  }
  for (const std::string& bad :
       std::vector<std::string>{"", "..", ".", "dir/", "a/..", " . ", std::string("\xff.txt")}) {
    auto got = SanitizeAttachmentName(bad, "attachments[3].name");
    EXPECT_FALSE(got.ok()) << bad;
    EXPECT_EQ(got.status().field(), "attachments[3].name") << bad;
  }
  auto long_name = SanitizeAttachmentName(std::string(300, 'x') + ".tar.gz", "f");
  ASSERT_TRUE(long_name.ok());
  EXPECT_EQ(long_name->size(), 200u);
  EXPECT_EQ(long_name->substr(long_name->size() - 3), ".gz") << "the extension stays";
  auto cjk = SanitizeAttachmentName(std::string(300, 'x') + "日本語日本語", "f");
  ASSERT_TRUE(cjk.ok());
  EXPECT_LE(cjk->size(), 200u);
}

TEST(AttachmentsTest, JsonAndMultipartCarryTheFieldsAndFiles) {
  auto json = ParseUploadRequest(
      JsonRequest({{"instruction", "read it"},
                   {"attachments",
                    {{{"name", "a.txt"}, {"content_base64", Base64Encode("hello")}},
                     {{"name", "b.png"},
                      {"content_base64", Base64Encode("PNG")},
                      {"type", "Image/PNG"}}}}}),
      Limits(100, 5, 1000));
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_EQ(json->fields, Json({{"instruction", "read it"}})) << "attachments taken out";
  ASSERT_EQ(json->files.size(), 2u);
  EXPECT_EQ(json->files[0].name, "a.txt");
  EXPECT_EQ(json->files[0].bytes, "hello");
  EXPECT_EQ(json->files[0].content_type, "application/octet-stream");
  EXPECT_EQ(json->files[1].content_type, "image/png");

  auto form = ParseUploadRequest(FormRequest(JsonPart({{"instruction", "read it"}}) +
                                             FilePart("../x.log", "text/plain", "LOG\r\nLINE")),
                                 Limits(100, 5, 1000));
  ASSERT_TRUE(form.ok()) << form.status().ToString();
  EXPECT_EQ(form->fields["instruction"], "read it");
  ASSERT_EQ(form->files.size(), 1u);
  EXPECT_EQ(form->files[0].name, "x.log");
  EXPECT_EQ(form->files[0].bytes, "LOG\r\nLINE");
  EXPECT_EQ(form->files[0].content_type, "text/plain");

  // No json part, an unknown plain field, two json parts.
  EXPECT_EQ(ParseUploadRequest(FormRequest(FilePart("a", "text/plain", "x")), Limits(9, 9, 99))
                .status()
                .field(),
            "json");
  auto stray = ParseUploadRequest(
      FormRequest(JsonPart({{"instruction", "x"}}) +
                  "--B\r\nContent-Disposition: form-data; name=\"instruction\"\r\n\r\nx\r\n"),
      Limits(9, 9, 99));
  EXPECT_EQ(stray.status().field(), "instruction");
  EXPECT_EQ(ParseUploadRequest(FormRequest(JsonPart({}) + JsonPart({})), Limits(9, 9, 99))
                .status()
                .field(),
            "json");
  auto not_object = ParseUploadRequest(
      FormRequest("--B\r\nContent-Disposition: form-data; name=\"json\"\r\n\r\n[1]\r\n"),
      Limits(9, 9, 99));
  EXPECT_EQ(not_object.status().field(), "json");
}

TEST(AttachmentsTest, LimitsAndBadInputNameTheFileOrField) {
  auto b64 = [](const std::string& s) { return Base64Encode(s); };
  auto too_many =
      ParseUploadRequest(JsonRequest({{"instruction", "x"},
                                      {"attachments",
                                       {{{"name", "a"}, {"content_base64", b64("1")}},
                                        {{"name", "b"}, {"content_base64", b64("2")}},
                                        {{"name", "c"}, {"content_base64", b64("3")}}}}}),
                         Limits(10, 2, 100));
  EXPECT_EQ(too_many.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(too_many.status().field(), "attachments");

  auto big = ParseUploadRequest(
      FormRequest(JsonPart({{"instruction", "x"}}) + FilePart("big.bin", "x/y", "0123456789A")),
      Limits(10, 5, 100));
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted);  // 413
  EXPECT_EQ(big.status().field(), "big.bin");
  EXPECT_NE(big.status().message().find("big.bin"), std::string::npos);

  auto total = ParseUploadRequest(
      JsonRequest({{"instruction", "x"},
                   {"attachments",
                    {{{"name", "one.txt"}, {"content_base64", b64("123456")}},
                     {{"name", "two.txt"}, {"content_base64", b64("123456")}}}}}),
      Limits(10, 5, 10));
  EXPECT_EQ(total.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(total.status().field(), "two.txt") << "the file that goes over the total";

  auto bad_b64 = ParseUploadRequest(
      JsonRequest({{"instruction", "x"},
                   {"attachments", {{{"name", "a.txt"}, {"content_base64", "not base64!"}}}}}),
      Limits(10, 5, 100));
  EXPECT_EQ(bad_b64.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad_b64.status().field(), "attachments[0].content_base64");
  EXPECT_NE(bad_b64.status().message().find("a.txt"), std::string::npos);

  auto bad_name = ParseUploadRequest(
      JsonRequest({{"instruction", "x"},
                   {"attachments", {{{"name", ".."}, {"content_base64", b64("1")}}}}}),
      Limits(10, 5, 100));
  EXPECT_EQ(bad_name.status().field(), "attachments[0].name");
  auto bad_form_name = ParseUploadRequest(
      FormRequest(JsonPart({{"instruction", "x"}}) + FilePart("..", "text/plain", "1")),
      Limits(10, 5, 100));
  EXPECT_EQ(bad_form_name.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad_form_name.status().field(), "..");

  for (const Json& bad : {Json("x"), Json::array({1}), Json::array({{{"name", "a"}}}),
                          Json::array({{{"name", "a"}, {"content_base64", 1}}}),
                          Json::array({{{"name", "a"}, {"content_base64", ""}, {"x", 1}}})}) {
    auto r = ParseUploadRequest(JsonRequest({{"instruction", "x"}, {"attachments", bad}}),
                                Limits(10, 5, 100));
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad.dump();
    EXPECT_EQ(r.status().field().rfind("attachments", 0), 0u)
        << bad.dump() << " " << r.status().field();
  }
}

TEST(AttachmentsTest, FilesAreWrittenUnderAttachmentsAndCollisionsGetASuffix) {
  testing::TempDir dir;
  const std::string ws = dir.File("ws");
  Env& env = *Env::Default();
  std::vector<UploadedFile> files = {{"f", "notes.txt", "text/plain", "one"},
                                     {"f", "notes.txt", "text/plain", "two"},
                                     {"f", "README", "text/plain", "r"}};
  auto first = WriteAttachments(env, ws, files);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->size(), 3u);
  EXPECT_EQ((*first)[0].path, "attachments/notes.txt");
  EXPECT_EQ((*first)[1].path, "attachments/notes-1.txt");
  EXPECT_EQ((*first)[2].path, "attachments/README");
  EXPECT_EQ((*first)[1].size, 3);
  EXPECT_EQ((*first)[0].sha256.size(), 64u);
  auto second = WriteAttachments(env, ws, {files[0], files[2]});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)[0].path, "attachments/notes-2.txt") << "taken on disk";
  EXPECT_EQ((*second)[1].path, "attachments/README-1");
  EXPECT_EQ(ReadFileToString(env, ws + "/attachments/notes-1.txt").value(), "two");
  RemoveAttachments(env, ws, *second);
  EXPECT_FALSE(std::filesystem::exists(ws + "/attachments/notes-2.txt"));

  // An agent may have put a symlink where the directory goes.
  const std::string other = dir.File("ws2");
  std::filesystem::create_directories(other);
  std::filesystem::create_directories(dir.File("elsewhere"));
  std::filesystem::create_directory_symlink(dir.File("elsewhere"), other + "/attachments");
  auto refused = WriteAttachments(env, other, {files[0]});
  EXPECT_EQ(refused.status().code(), StatusCode::kConflict) << refused.status().ToString();
  EXPECT_TRUE(std::filesystem::is_empty(dir.File("elsewhere")));
}

// Issue 44: the agent swaps attachments/ for a symlink to an outside
// directory in a tight loop while uploads are written and removed: each
// upload lands inside or fails whole; nothing (no file, no temporary) is
// created outside and the outside file of the same name is untouched.
TEST(AttachmentsTest, AnAttachmentsDirectorySwappedForASymlinkGetsNothingWrittenOutside) {
  testing::TempDir dir;
  const std::string ws = dir.File("ws");
  const std::string outside = dir.File("outside");
  std::filesystem::create_directories(ws + "/attachments");
  testing::WriteFile(outside + "/notes.txt", "OUTSIDE-MARKER");
  std::filesystem::create_directory_symlink(outside, ws + "/swap");
  Env& env = *Env::Default();
  const std::vector<UploadedFile> files = {{"f", "notes.txt", "text/plain", "uploaded"},
                                           {"f", "b.bin", "application/octet-stream", "bb"}};
  long uploads = 0, failed = 0, removed = 0;
  testing::DirSwapper agent(ws + "/attachments", ws + "/swap");
  // An upload is several steps, each refused while the symlink is in
  // place, so few land whole: go on (at most 5 s) until a few did.
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (int i = 0; i < 1000 || (uploads - failed < 3 && std::chrono::steady_clock::now() < end);
       ++i) {
    ++uploads;
    auto written = WriteAttachments(env, ws, files);
    if (!written.ok()) {
      ++failed;
      EXPECT_EQ(written.status().code(), StatusCode::kConflict) << written.status().ToString();
      continue;
    }
    if (i % 2 == 0) {
      RemoveAttachments(env, ws, *written);
      ++removed;
    }
  }
  agent.Stop();
  std::set<std::string> outside_names;
  for (const auto& e : std::filesystem::directory_iterator(outside)) {
    outside_names.insert(e.path().filename().string());
  }
  std::printf("[ race ] %ld uploads (%ld refused, %ld removed), %ld swaps, %zu outside files\n",
              uploads, failed, removed, agent.swaps(), outside_names.size());
  EXPECT_GT(agent.swaps(), 100);
  EXPECT_GT(failed, 0);
  EXPECT_LT(failed, uploads);
  EXPECT_EQ(outside_names, (std::set<std::string>{"notes.txt"}));
  EXPECT_EQ(testing::ReadWholeFile(outside + "/notes.txt"), "OUTSIDE-MARKER");
}

TEST(AttachmentsTest, TheUploadBodyLimitFitsTheFilesAsBase64) {
  EXPECT_GE(UploadBodyLimit(Limits(10, 2, 3000), 1000), 1000u + 4000u);
  EXPECT_GE(UploadBodyLimit(Limits(1, 1, 1), 1 << 20), size_t{1} << 20);
}

}  // namespace
}  // namespace maestro::api
