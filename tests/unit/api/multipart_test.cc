// The multipart/form-data parser (api/multipart.h): well-formed bodies as
// curl and browsers send them, and each malformed shape refused with a 400
// naming "body" (or "Content-Type" for a bad boundary).
#include "api/multipart.h"

#include <gtest/gtest.h>

namespace maestro::api {
namespace {

constexpr const char* kType = "multipart/form-data; boundary=XyZ";

std::string Body(const std::string& parts) { return parts + "--XyZ--\r\n"; }

TEST(MultipartTest, ParsesFieldsAndFilesAsBrowsersSendThem) {
  const std::string body = Body(
      "--XyZ\r\n"
      "Content-Disposition: form-data; name=\"json\"\r\n\r\n"
      "{\"instruction\":\"hi\"}\r\n"
      "--XyZ\r\n"
      "content-disposition: form-data; name=\"file\"; filename=\"a;b \\\"c\\\".txt\"\r\n"
      "Content-Type: Text/Plain; charset=utf-8\r\n\r\n"
      "line1\r\nline2 --XyZ not a delimiter\r\n"
      "--XyZ\r\n"
      "Content-Disposition: form-data; name=file; filename=empty.bin\r\n\r\n"
      "\r\n");
  auto parts = ParseMultipart(kType, body, 10);
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_EQ(parts->size(), 3u);
  EXPECT_EQ((*parts)[0].name, "json");
  EXPECT_FALSE((*parts)[0].filename.has_value());
  EXPECT_EQ((*parts)[0].body, "{\"instruction\":\"hi\"}");
  EXPECT_EQ((*parts)[1].name, "file");
  EXPECT_EQ((*parts)[1].filename.value(), "a;b \"c\".txt");
  EXPECT_EQ((*parts)[1].content_type, "text/plain");
  EXPECT_EQ((*parts)[1].body, "line1\r\nline2 --XyZ not a delimiter");
  EXPECT_EQ((*parts)[2].filename.value(), "empty.bin");
  EXPECT_EQ((*parts)[2].body, "");
  // Binary bytes pass untouched; an epilogue after the close is ignored.
  const std::string bin = std::string("\0\xff\r\n--X", 7);
  const std::string raw =
      "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"z\"\r\n\r\n" + bin +
      "\r\n--XyZ--\r\nepilogue";
  auto b = ParseMultipart("multipart/form-data; boundary=\"XyZ\"", raw, 10);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)[0].body, bin);
}

TEST(MultipartTest, RefusesMalformedBodies) {
  const std::string part = "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"preamble", "hello\r\n" + Body(part)},
      {"no close", part},
      {"truncated close", part + "--XyZ"},
      {"no part headers end", "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n"},
      {"no disposition", Body("--XyZ\r\nContent-Type: text/plain\r\n\r\nv\r\n")},
      {"no headers", Body("--XyZ\r\n\r\nv\r\n")},
      {"not form-data", Body("--XyZ\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nv\r\n")},
      {"no name", Body("--XyZ\r\nContent-Disposition: form-data; filename=\"a\"\r\n\r\nv\r\n")},
      {"empty name", Body("--XyZ\r\nContent-Disposition: form-data; name=\"\"\r\n\r\nv\r\n")},
      {"unclosed quote", Body("--XyZ\r\nContent-Disposition: form-data; name=\"a\r\n\r\nv\r\n")},
      {"repeated param",
       Body("--XyZ\r\nContent-Disposition: form-data; name=a; name=b\r\n\r\nv\r\n")},
      {"two dispositions", Body("--XyZ\r\nContent-Disposition: form-data; name=a\r\n"
                                "Content-Disposition: form-data; name=b\r\n\r\nv\r\n")},
      {"folded header", Body("--XyZ\r\nContent-Disposition: form-data;\r\n name=a\r\n\r\nv\r\n")},
      {"header without colon",
       Body("--XyZ\r\nContent-Disposition: form-data; name=a\r\nbogus\r\n\r\nv\r\n")},
      {"base64 transfer encoding", Body("--XyZ\r\nContent-Disposition: form-data; name=a\r\n"
                                        "Content-Transfer-Encoding: base64\r\n\r\ndg==\r\n")},
      {"bad content type",
       Body("--XyZ\r\nContent-Disposition: form-data; name=a\r\nContent-Type: text\r\n\r\nv\r\n")},
      {"garbage after boundary", "--XyZ junk\r\n" + Body(part)},
      {"huge headers", Body("--XyZ\r\nContent-Disposition: form-data; name=a\r\nX: " +
                            std::string(9000, 'x') + "\r\n\r\nv\r\n")},
      {"empty", ""},
  };
  for (const auto& [what, body] : bad) {
    auto r = ParseMultipart(kType, body, 10);
    EXPECT_FALSE(r.ok()) << what;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << what;
    EXPECT_EQ(r.status().field(), "body") << what;
  }
  auto many = ParseMultipart(kType, Body(part + part + part), 2);
  EXPECT_EQ(many.status().field(), "body") << "more parts than allowed";
  EXPECT_TRUE(ParseMultipart(kType, Body(part + part), 2).ok());
}

TEST(MultipartTest, TheBoundaryComesFromTheContentType) {
  EXPECT_EQ(MultipartBoundary("multipart/form-data; boundary=abc").value(), "abc");
  EXPECT_EQ(MultipartBoundary("Multipart/Form-Data;boundary=\"a b\"").value(), "a b");
  for (const std::string& bad : std::vector<std::string>{
           "multipart/form-data", "multipart/form-data; boundary=", "text/plain; boundary=a",
           "multipart/form-data; boundary=" + std::string(71, 'a'),
           "multipart/mixed; boundary=a"}) {
    auto b = MultipartBoundary(bad);
    EXPECT_FALSE(b.ok()) << bad;
    EXPECT_EQ(b.status().field(), "Content-Type") << bad;
  }
  EXPECT_TRUE(IsMultipartFormData("multipart/form-data; boundary=x"));
  EXPECT_TRUE(IsMultipartFormData("MULTIPART/FORM-DATA"));
  EXPECT_FALSE(IsMultipartFormData("application/json"));
  EXPECT_FALSE(IsMultipartFormData(""));
}

}  // namespace
}  // namespace maestro::api
