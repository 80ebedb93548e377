// POST /api/local/captcha-pool/resolve on an in-process ApiServer (port 0)
// over a real SqliteStore: the body checks (400 naming the field), the
// requeue of every job parked on the solved screen, and two users (issue
// 44): bob never requeues alice's private wait, and learns nothing of it.
#include <gtest/gtest.h>
#include <httplib.h>

#include "api/api_server.h"
#include "core/hash.h"
#include "support/store_fixture.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;

constexpr const char* kResolve = "/api/local/captcha-pool/resolve";

class CaptchaPoolApiTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    ASSERT_TRUE(store_->AddApiToken(Sha256Hex("alice-token"), "alice").ok());
    ASSERT_TRUE(store_->AddApiToken(Sha256Hex("bob-token"), "bob").ok());
    ApiOptions o;
    o.http.port = 0;
    o.admin_token = "adm";
    api_ = std::make_unique<ApiServer>(*store_, notifier_, o);
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
  std::pair<int, Json> Get(const std::string& path, const std::string& token = "adm") {
    auto r = Client(token).Get(path);
    if (!r) return {0, Json()};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }
  // A task created over HTTP (with `token`'s user as its owner) whose job is
  // claimed and parked on (space, screen).
  Job ParkOnCaptcha(const std::string& space, const std::string& screen,
                    const std::string& token = "adm",
                    const std::string& body = R"({"instruction":"sign in"})") {
    auto [code, created] = Post("/api/local/tasks", body, token);
    EXPECT_EQ(code, 201) << created.dump();
    return Park(Claim(), created["task"]["id"], space, screen);
  }
  // A task of `owner` in config space `space` (the store's row: this server
  // has no spaces configured), parked on (space, screen).
  Job ParkInSpace(const std::string& owner, const std::string& visibility, const std::string& space,
                  const std::string& screen) {
    NewTask t;
    t.instruction = "sign in";
    t.owner = owner;
    t.space = space;
    t.visibility = visibility;
    auto c = store_->CreateTask(t);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return Park(Claim(), c.ok() ? c->task.id : "", space, screen);
  }
  Job Park(Job j, const std::string& task_id, const std::string& space, const std::string& screen) {
    EXPECT_EQ(j.task_id, task_id);
    EXPECT_TRUE(store_->SetCaptchaWait(j.id, space, screen).ok());
    EXPECT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::WaitingHuman("captcha", "browse")).ok());
    return j;
  }

  notify::Notifier notifier_;  // the streams' signal and hub; outlives api_
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

  // Solving it again finds nobody waiting: 404.
  auto [c2, r2] = Post(kResolve, R"({"space_id":"s1","screen":"login"})");
  EXPECT_EQ(c2, 404) << r2.dump();
  EXPECT_EQ(r2["error"]["code"], "NOT_FOUND");
}

TEST_F(CaptchaPoolApiTest, BobNeverRequeuesOrSeesAlicesPrivateWait) {
  const char* kPersonal = R"({"space_id":"personal","screen":"login"})";
  Job alice = ParkOnCaptcha("personal", "login", "alice-token");
  Job alice_shared = ParkOnCaptcha("personal", "login", "alice-token",
                                   R"({"instruction":"sign in","visibility":"shared"})");
  Job alice_proj = ParkInSpace("alice", "private", "proj", "login");

  // Only alice's waits: bob's resolve is a 404 that says nothing of them
  // (the same answer as for a screen nobody waits on), and nothing moves.
  auto [nobody, nobody_body] =
      Post(kResolve, R"({"space_id":"personal","screen":"no-such-screen"})", "bob-token");
  EXPECT_EQ(nobody, 404);
  for (const char* body : {kPersonal, R"({"space_id":"proj","screen":"login"})"}) {
    auto [code, reply] = Post(kResolve, body, "bob-token");
    EXPECT_EQ(code, 404) << body << " " << reply.dump();
    EXPECT_EQ(reply, nobody_body) << "the answer reveals alice's wait";
    EXPECT_EQ(reply.dump().find(alice.id), std::string::npos);
  }
  for (const Job& j : {alice, alice_shared, alice_proj}) {
    EXPECT_EQ(StatusOf(j.id), JobStatus::kWaitingHuman);
    EXPECT_EQ(store_->GetJob(j.id)->captcha_space_id, j.id == alice_proj.id ? "proj" : "personal");
  }
  // Nor does bob see the private task's job (and its wait) anywhere.
  EXPECT_EQ(Get("/api/local/tasks/" + alice.task_id, "bob-token").first, 404);
  auto [lc, list] = Get("/api/local/tasks", "bob-token");
  ASSERT_EQ(lc, 200) << list.dump();
  EXPECT_EQ(list.dump().find(alice.task_id), std::string::npos);

  // Bob's own wait on the same screen is his to resolve: only it moves.
  Job shared_proj = ParkInSpace("alice", "shared", "proj", "login");
  Job bob = ParkOnCaptcha("personal", "login", "bob-token");
  auto [mine, mine_body] = Post(kResolve, kPersonal, "bob-token");
  ASSERT_EQ(mine, 200) << mine_body.dump();
  EXPECT_EQ(mine_body["resumed"], 1);
  EXPECT_EQ(StatusOf(bob.id), JobStatus::kQueued);
  EXPECT_EQ(StatusOf(alice.id), JobStatus::kWaitingHuman);
  EXPECT_EQ(StatusOf(alice_shared.id), JobStatus::kWaitingHuman);

  // A shared task in a space is anyone's to resolve.
  auto [sc, sb] = Post(kResolve, R"({"space_id":"proj","screen":"login"})", "bob-token");
  ASSERT_EQ(sc, 200) << sb.dump();
  EXPECT_EQ(sb["resumed"], 1);
  EXPECT_EQ(StatusOf(shared_proj.id), JobStatus::kQueued);
  EXPECT_EQ(StatusOf(alice_proj.id), JobStatus::kWaitingHuman);

  // Alice resolves hers: all three.
  auto [ac, ab] = Post(kResolve, kPersonal, "alice-token");
  ASSERT_EQ(ac, 200) << ab.dump();
  EXPECT_EQ(ab["resumed"], 2);
  auto [pc, pb] = Post(kResolve, R"({"space_id":"proj","screen":"login"})", "alice-token");
  ASSERT_EQ(pc, 200) << pb.dump();
  EXPECT_EQ(pb["resumed"], 1);
  for (const Job& j : {alice, alice_shared, alice_proj}) {
    EXPECT_EQ(StatusOf(j.id), JobStatus::kQueued);
  }
}

}  // namespace
}  // namespace maestro
