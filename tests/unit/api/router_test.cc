// Router patterns and targets, and the body checks every route relies on
// (ParseObject): the request shapes that used to reach a 500.
#include "api/router.h"

#include <gtest/gtest.h>

#include <map>
#include <thread>
#include <tuple>

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
  router.Add("GET", "/api/local/tasks/{uuid}", Need::kRead,
             [](const HttpRequest&) { return Named("task"); });
  router.Add("POST", "/api/local/tasks/{uuid}/tool-requests/{ulid}/decide", Need::kRead,
             [](const HttpRequest&) { return Named("decide"); });
  router.Add("GET", "/api/local/jobs/{id}/stream", Need::kRead,
             [](const HttpRequest&) { return Named("job"); });
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
  router.Add("GET", "/api/local/tasks/{uuid}/files", Need::kRead,
             [](const HttpRequest&) { return Named("list"); });
  router.Add("GET", "/api/local/tasks/{uuid}/files/{rest}", Need::kRead,
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

TEST(RouterCountsTest, RequestsAreCountedByPatternMethodAndCode) {
  Router router;
  router.Add("GET", "/api/local/tasks/{uuid}", Need::kRead,
             [](const HttpRequest&) { return Named("task"); });
  router.Add("PATCH", "/api/local/tasks/{uuid}", Need::kRead,
             [](const HttpRequest&) { return Named("patch"); });
  const std::string task = "0b7e6f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
  std::vector<std::string> p;
  std::string pattern = "stale";
  ASSERT_NE(router.Match("GET", "/api/local/tasks/" + task, &p, &pattern), nullptr);
  EXPECT_EQ(pattern, "/api/local/tasks/{uuid}") << "the pattern, not the path";
  EXPECT_EQ(router.Match("GET", "/api/local/nothing", &p, &pattern), nullptr);
  EXPECT_EQ(pattern, "") << "cleared when nothing matched";

  router.CountRequest("GET", "/api/local/tasks/{uuid}", 200);
  router.CountRequest("GET", "/api/local/tasks/{uuid}", 200);
  router.CountRequest("GET", "/api/local/tasks/{uuid}", 404);
  router.CountRequest("PATCH", "/api/local/tasks/{uuid}", 400);
  router.CountRequest("GET", "", 404);
  // A raw path is never a label (bounded cardinality), nor an odd method.
  router.CountRequest("GET", "/api/local/tasks/" + task, 404);
  router.CountRequest("BREW", "", 404);

  std::map<std::tuple<std::string, std::string, int>, uint64_t> got;
  for (const auto& c : router.RequestCounts()) got[{c.method, c.route, c.code}] = c.count;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> want = {
      {{"GET", "/api/local/tasks/{uuid}", 200}, 2},
      {{"GET", "/api/local/tasks/{uuid}", 404}, 1},
      {{"PATCH", "/api/local/tasks/{uuid}", 400}, 1},
      {{"GET", "unmatched", 404}, 2},
      {{"OTHER", "unmatched", 404}, 1}};
  EXPECT_EQ(got, want);
}

// Each route states who may call it (issue 46: the rule beside the route,
// not a string test in the dispatcher); a path is token-only when any method's
// route there is, so a wrong method is refused 401 like the right one.
TEST(RouterTest, EachRouteCarriesItsAccessRule) {
  Router router;
  router.Add("GET", "/api/health", Need::kPublic, [](const HttpRequest&) { return Named("h"); });
  router.Add("GET", "/api/local/tasks/{uuid}", Need::kRead,
             [](const HttpRequest&) { return Named("task"); });
  std::vector<std::string> p;
  Need access = Need::kRead;
  ASSERT_NE(router.Match("GET", "/api/health", &p, nullptr, &access), nullptr);
  EXPECT_EQ(access, Need::kPublic);
  const std::string task = "/api/local/tasks/0123456789abcdef0123456789abcdef0123";
  ASSERT_NE(router.Match("GET", task, &p, nullptr, &access), nullptr);
  EXPECT_EQ(access, Need::kRead);
  EXPECT_EQ(router.Match("DELETE", task, &p, nullptr, &access), nullptr);
  EXPECT_TRUE(router.NeedsToken(task));
  EXPECT_FALSE(router.NeedsToken("/api/health"));
  EXPECT_FALSE(router.NeedsToken("/nowhere"));
  EXPECT_FALSE(router.NeedsToken("relative"));
}

TEST(RouterCountsTest, ConcurrentCountsAreNotLost) {
  Router router;
  router.Add("GET", "/a", Need::kRead, [](const HttpRequest&) { return Named("a"); });
  router.Add("POST", "/b", Need::kRead, [](const HttpRequest&) { return Named("b"); });
  constexpr int kThreads = 8;
  constexpr int kEach = 5000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&router, t] {
      for (int i = 0; i < kEach; ++i) {
        if (t % 2 == 0) {
          router.CountRequest("GET", "/a", 200);
        } else {
          router.CountRequest("POST", "/b", i % 2 == 0 ? 201 : 400);
        }
        if (i % 500 == 0) (void)router.RequestCounts();  // readers alongside
      }
    });
  }
  for (auto& th : threads) th.join();
  uint64_t total = 0, get_a = 0;
  for (const auto& c : router.RequestCounts()) {
    total += c.count;
    if (c.method == "GET" && c.route == "/a") get_a = c.count;
  }
  EXPECT_EQ(total, static_cast<uint64_t>(kThreads * kEach));
  EXPECT_EQ(get_a, static_cast<uint64_t>(kThreads / 2 * kEach));
}

TEST(RouterTest, FitsTellsWhetherASegmentCanBeAnId) {
  EXPECT_TRUE(Router::Fits("{uuid}", "0b7e6f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"));
  EXPECT_FALSE(Router::Fits("{uuid}", "not-a-uuid"));
  EXPECT_TRUE(Router::Fits("{id}", "01JD0000000000000000000000"));
  EXPECT_FALSE(Router::Fits("{id}", "short"));
  EXPECT_FALSE(Router::Fits("{nope}", "x"));
}

TEST(SafeEchoTest, ControlCharactersGoAndLongTextIsCut) {
  EXPECT_EQ(SafeEcho("abc\r\n\x1b[31mred\x7f"), "abc[31mred");
  EXPECT_EQ(SafeEcho("c1\xC2\x85x"), "c1x");
  std::string long_id(100, 'x');
  EXPECT_EQ(SafeEcho(long_id), std::string(64, 'x') + "…");
  std::string e;
  for (int i = 0; i < 30; ++i) e += "é";  // 60 bytes
  e += "ééé";                             // 66 bytes
  std::string cut = SafeEcho(e);
  EXPECT_EQ(cut, std::string(e.substr(0, 64)) + "…") << "cut at a character boundary";
  EXPECT_EQ(SafeEcho("bad\xff"), "bad\xEF\xBF\xBD");
}

}  // namespace
}  // namespace maestro::api
