// POST /api/local/captcha-pool/resolve on an in-process ApiServer (port 0)
// over a real SqliteStore: the body checks (400 naming the field) and the
// requeue of every job parked on the solved screen.
#include <gtest/gtest.h>
#include <httplib.h>

#include "api/api_server.h"
#include "support/store_fixture.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;

constexpr const char* kResolve = "/api/local/captcha-pool/resolve";

class CaptchaPoolApiTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    ApiOptions o;
    o.http.port = 0;
    o.admin_token = "adm";
    api_ = std::make_unique<ApiServer>(*store_, o);
    auto port = api_->Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
  }
  void TearDown() override { api_->Stop(); }

  httplib::Client Client(const std::string& token = "adm") {
    httplib::Client c("127.0.0.1", port_);
    if (!token.empty()) c.set_bearer_token_auth(token);
    c.set_read_timeout(10s);
    return c;
  }
  std::pair<int, Json> Post(const std::string& path, const std::string& body,
                            const std::string& token = "adm") {
    auto r = Client(token).Post(path, body, "application/json");
    if (!r) return {0, Json()};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }
  std::pair<int, Json> Get(const std::string& path) {
    auto r = Client().Get(path);
    if (!r) return {0, Json()};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }
  // A task created over HTTP whose job is claimed and parked on (space, screen).
  Job ParkOnCaptcha(const std::string& space, const std::string& screen) {
    auto [code, created] = Post("/api/local/tasks", R"({"instruction":"sign in"})");
    EXPECT_EQ(code, 201) << created.dump();
    Job j = Claim();
    EXPECT_EQ(j.task_id, created["task"]["id"]);
    EXPECT_TRUE(store_->SetCaptchaWait(j.id, space, screen).ok());
    EXPECT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::WaitingHuman("captcha", "browse")).ok());
    return j;
  }

  std::unique_ptr<ApiServer> api_;
  int port_ = 0;
};

TEST_F(CaptchaPoolApiTest, ABadBodyIs400NamingTheField) {
  struct Case {
    const char* body;
    const char* field;
  } const cases[] = {
      {"not json", "body"},
      {"[]", "body"},
      {"{}", "space_id"},
      {R"({"screen":"login"})", "space_id"},
      {R"({"space_id":"","screen":"login"})", "space_id"},
      {R"({"space_id":"  ","screen":"login"})", "space_id"},
      {R"({"space_id":5,"screen":"login"})", "space_id"},
      {R"({"space_id":null,"screen":"login"})", "space_id"},
      {R"({"space_id":"s1"})", "screen"},
      {R"({"space_id":"s1","screen":""})", "screen"},
      {R"({"space_id":"s1","screen":["login"]})", "screen"},
  };
  for (const auto& c : cases) {
    auto [code, reply] = Post(kResolve, c.body);
    EXPECT_EQ(code, 400) << c.body;
    EXPECT_EQ(reply["error"]["code"], "INVALID_ARGUMENT") << c.body << " " << reply.dump();
    EXPECT_EQ(reply["error"]["field"], c.field) << c.body << " " << reply.dump();
  }
  auto [anon, unused] = Post(kResolve, R"({"space_id":"s1","screen":"login"})", "");
  EXPECT_EQ(anon, 401);
}

TEST_F(CaptchaPoolApiTest, ResolveRequeuesEveryJobParkedOnTheScreen) {
  Job a = ParkOnCaptcha("s1", "login");
  Job b = ParkOnCaptcha("s1", "login");
  Job other = ParkOnCaptcha("s1", "checkout");

  // The job view carries the screen a parked job waits on (the UI's
  // "Mark solved" button).
  auto [c0, detail] = Get("/api/local/tasks/" + a.task_id);
  ASSERT_EQ(c0, 200) << detail.dump();
  EXPECT_EQ(detail["latest_job"]["wait_reason"], "captcha");
  EXPECT_EQ(detail["latest_job"]["captcha_space_id"], "s1");
  EXPECT_EQ(detail["latest_job"]["captcha_screen"], "login");

  auto [c1, r1] = Post(kResolve, R"({"space_id":"s1","screen":"login"})");
  ASSERT_EQ(c1, 200) << r1.dump();
  EXPECT_EQ(r1, (Json{{"resumed", 2}}));
  for (const Job& j : {a, b}) {
    auto [code, d] = Get("/api/local/tasks/" + j.task_id);
    ASSERT_EQ(code, 200) << d.dump();
    EXPECT_EQ(d["latest_job"]["status"], "queued");
    EXPECT_EQ(d["latest_job"]["wait_reason"], "");
    EXPECT_EQ(d["latest_job"]["captcha_space_id"], "");
    EXPECT_EQ(d["latest_job"]["captcha_screen"], "login");
  }
  EXPECT_EQ(StatusOf(other.id), JobStatus::kWaitingHuman);

  // Solving it again finds nobody waiting.
  auto [c2, r2] = Post(kResolve, R"({"space_id":"s1","screen":"login"})");
  EXPECT_EQ(c2, 200);
  EXPECT_EQ(r2["resumed"], 0);
}

}  // namespace
}  // namespace maestro
