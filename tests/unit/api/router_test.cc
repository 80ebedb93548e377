// Router patterns and targets, and the body checks every route relies on
// (ParseObject): the request shapes that used to reach a 500.
#include "api/router.h"

#include <gtest/gtest.h>

#include "api/http_util.h"

namespace maestro::api {
namespace {

HttpResponse Named(const std::string& name) {
  HttpResponse r;
  r.body = name;
  return r;
}

TEST(RouterTest, PlaceholdersCaptureTypedSegments) {
  Router router;
  router.Add("GET", "/api/local/tasks/{uuid}", [](const HttpRequest&) { return Named("task"); });
  router.Add("POST", "/api/local/tasks/{uuid}/tool-requests/{ulid}/decide",
             [](const HttpRequest&) { return Named("decide"); });
  router.Add("GET", "/api/local/jobs/{id}/stream", [](const HttpRequest&) { return Named("job"); });
  std::vector<std::string> p;
  const std::string task = "0b7e6f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
  ASSERT_NE(router.Match("GET", "/api/local/tasks/" + task, &p), nullptr);
  EXPECT_EQ(p, std::vector<std::string>{task});
  EXPECT_EQ(router.Match("POST", "/api/local/tasks/" + task, &p), nullptr);  // method
  EXPECT_EQ(router.Match("GET", "/api/local/tasks/short", &p), nullptr);
  EXPECT_EQ(router.Match("GET", "/api/local/tasks/" + task + "/", &p), nullptr);
  const std::string rid = "01JD0000000000000000000000";
  const auto* h =
      router.Match("POST", "/api/local/tasks/" + task + "/tool-requests/" + rid + "/decide", &p);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ((*h)(HttpRequest{}).body, "decide");
  EXPECT_EQ(p, (std::vector<std::string>{task, rid}));
  EXPECT_EQ(
      router.Match("POST",
                   "/api/local/tasks/" + task + "/tool-requests/lower0000000000000000000000/decide",
                   &p),
      nullptr);
  EXPECT_NE(router.Match("GET", "/api/local/jobs/01JD0000000000000000000000/stream", &p), nullptr);
  EXPECT_EQ(router.Match("GET", "/api/local/jobs/../stream", &p), nullptr);
}

TEST(RouterTest, ARestPlaceholderTakesTheRemainingSegmentsAsSent) {
  Router router;
  router.Add("GET", "/api/local/tasks/{uuid}/files",
             [](const HttpRequest&) { return Named("list"); });
  router.Add("GET", "/api/local/tasks/{uuid}/files/{rest}",
             [](const HttpRequest&) { return Named("file"); });
  const std::string task = "0b7e6f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
  const std::string base = "/api/local/tasks/" + task + "/files";
  std::vector<std::string> p;
  const Router::Handler* h = router.Match("GET", base, &p);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ((*h)(HttpRequest{}).body, "list");
  h = router.Match("GET", base + "/dir/sub/a%20b.md", &p);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ((*h)(HttpRequest{}).body, "file");
  EXPECT_EQ(p, (std::vector<std::string>{task, "dir/sub/a%20b.md"})) << "not decoded";
  ASSERT_NE(router.Match("GET", base + "/%2e%2e/x", &p), nullptr);
  EXPECT_EQ(p[1], "%2e%2e/x");
  EXPECT_EQ(router.Match("GET", base + "/", &p), nullptr) << "an empty tail is no match";
  EXPECT_EQ(router.Match("GET", "/api/local/tasks/short/files/a", &p), nullptr);
  EXPECT_EQ(DecodePath("a%20b+c/%2e%2e%2F%zz%4"), "a b+c/../%zz%4");
}

TEST(RouterTest, TargetsSplitIntoPathAndDecodedQuery) {
  std::string path;
  std::vector<std::pair<std::string, std::string>> q;
  SplitTarget("/a/b?x=1&y=%20two+three&flag&bad=%zz", &path, &q);
  EXPECT_EQ(path, "/a/b");
  ASSERT_EQ(q.size(), 4u);
  EXPECT_EQ(q[1].second, " two three");
  EXPECT_EQ(q[2].first, "flag");
  EXPECT_EQ(q[3].second, "%zz");
}

TEST(ParseObjectTest, BadValuesAre400NamingTheBody) {
  for (std::string body : {std::string("{\"instruction\":\"\xff\xfe\"}"),
                           std::string("{\"instruction\":\"\xe2\x82\"}"),  // truncated sequence
                           std::string(R"({"title":1e400})"), std::string(R"({"n":-1e99999})"),
                           std::string(100000, '['), std::string("[1]"), std::string("{oops")}) {
    auto parsed = ParseObject(body);
    ASSERT_FALSE(parsed.ok()) << body.substr(0, 40);
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().field(), "body");
    EXPECT_EQ(parsed.status().message().find("json.exception"), std::string::npos)
        << parsed.status().message();
  }
  std::string deep_but_ok =
      std::string(kMaxBodyDepth - 1, '[') + std::string(kMaxBodyDepth - 1, ']');
  EXPECT_TRUE(ParseObject("{\"a\":" + deep_but_ok + "}").ok());
  EXPECT_TRUE(ParseObject(R"({"s":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["})").ok());
}

TEST(SseFrameTest, FramesIdEventAndEveryDataLine) {
  EXPECT_EQ(SseFrame("7", "delta", "{}"), "id: 7\nevent: delta\ndata: {}\n\n");
  EXPECT_EQ(SseFrame("", "", "a\nb"), "data: a\ndata: b\n\n");
}

}  // namespace
}  // namespace maestro::api
