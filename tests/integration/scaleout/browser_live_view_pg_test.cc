// The BrowseWeb live view across processes on PostgreSQL (issue 48 item 2):
// `maestro serve --workers 0`, TWO `maestro worker` processes (one thread
// each), Debian's Chromium and a login page on 127.0.0.1. The job parks on
// the login in whichever worker ran it; the person's screenshot, clicks,
// typing and Done go through the API process and the database to that
// worker only — the other worker never starts a browser for the job — and
// the job resumes on the holder and finishes with the logged-in page.
#include <fstream>

#include "../browser/login_site.h"
#include "pg_cluster.h"

namespace maestro::testing {
namespace {

Json Browse(const Json& args) { return ToolCallReply("BrowseWeb", args); }

class BrowserLiveViewPgTest : public PgClusterTest {
 protected:
  std::string WorkerLog(int i) const {
    std::ifstream in(dir_.File("worker" + std::to_string(i) + "-1.err"));
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  LoginSite site_;
};

TEST_F(BrowserLiveViewPgTest, TheLoginReachesOnlyTheWorkerHoldingTheBrowser) {
  extra_config_ += "browser:\n  allowed_hosts: [\"127.0.0.1\"]\n  page_timeout_ms: 20000\n";
  const std::string priv = site_.Url("/private");
  StartCluster(
      Json::array(
          {Browse({{"action", "open"}, {"url", priv}}), Browse({{"action", "open"}, {"url", priv}}),
           Matching(ToolCallReply("complete",
                                  {{"status", "success"}, {"result", "The report says SECRET-42"}}),
                    "SECRET-REPORT-42")}),
      /*workers=*/2, /*threads=*/1);
  ASSERT_FALSE(HasFatalFailure());
  Json created = Create("Read the private report", "research");
  WaitStatus(created, "waiting_human", 60s);
  Json job = Get(TaskPath(created))["latest_job"];
  ASSERT_EQ(job.value("wait_reason", ""), "browser_login") << job.dump();
  const std::string job_id = job["id"];
  const std::string started = "job " + job_id + ": browser started";
  const int holder = Contains(WorkerLog(0), started) ? 0 : 1;
  ASSERT_TRUE(Contains(WorkerLog(holder), started)) << LogTail();
  const std::string base = "/api/local/jobs/" + job_id + "/browser";

  auto shot = Client().Get(base + "/screenshot");
  ASSERT_TRUE(shot);
  ASSERT_EQ(shot->status, 200) << shot->body << LogTail();
  EXPECT_EQ(shot->body.substr(0, 4), "\x89PNG");
  for (const Json& in :
       {Json{{"type", "click"}, {"x", 50}, {"y", 25}}, Json{{"type", "text"}, {"text", "alice"}},
        Json{{"type", "click"}, {"x", 50}, {"y", 75}}, Json{{"type", "text"}, {"text", "pw"}},
        Json{{"type", "key"}, {"key", "Enter"}}}) {
    auto [code, out] = Post(base + "/input", in);
    EXPECT_EQ(code, 200) << in.dump() << " " << out.dump();
  }
  for (int i = 0; i < 200 && site_.logins() == 0; ++i) std::this_thread::sleep_for(50ms);
  ASSERT_EQ(site_.logins(), 1) << LogTail();
  auto [code, out] = Post(base + "/done", Json::object());
  ASSERT_EQ(code, 200) << out.dump();
  EXPECT_EQ(out.value("on_browser_holder", false), true) << out.dump();
  WaitStatus(created, "succeeded", 60s);
  EXPECT_EQ(Get(TaskPath(created))["latest_job"].value("result", ""), "The report says SECRET-42");
  EXPECT_EQ(site_.logins(), 1);
  // Only the holder ever had a browser for the job.
  EXPECT_FALSE(Contains(WorkerLog(1 - holder), started)) << WorkerLog(1 - holder);
  EXPECT_TRUE(Contains(WorkerLog(holder), "job " + job_id + ": browser closed"));
}

}  // namespace
}  // namespace maestro::testing
