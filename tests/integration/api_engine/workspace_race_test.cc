// Issue 44 against the real `maestro serve`: the agent (a host thread
// standing in for its command — the workspace is the very directory the
// sandbox binds) swaps a workspace directory for a symlink to an outside
// directory in a tight loop while a client reads a file in it, lists the
// workspace and uploads attachments. Before the fix ~4,200 of ~16,000 reads
// returned the outside file, listings showed host entries and uploads
// landed outside; now every response is the workspace's or a refusal, and
// nothing is created outside. The counts are printed.
#include <cstdio>
#include <set>

#include "core/base64.h"
#include "serve_fixture.h"
#include "support/dir_swapper.h"

namespace maestro::testing {
namespace {

constexpr char kMarker[] = "OUTSIDE-MARKER-44";

class WorkspaceRaceTest : public ServeEngineTest {};

std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out.insert(e.path().filename().string());
  }
  return out;
}

TEST_F(WorkspaceRaceTest, ASwappedDirectoryNeverLeaksThroughTheFileRoutesOrUploads) {
  Start(Json::array(), /*workers=*/0);  // no job runs: the test is the agent
  auto [cs, created] =
      Post("/api/local/tasks",
           {{"instruction", "look"},
            {"attachments", {{{"name", "first.txt"}, {"content_base64", Base64Encode("one")}}}}});
  ASSERT_EQ(cs, 201) << created.dump();
  const std::string task = TaskPath(created);
  const std::string ws =
      DataDir() + "/workspaces/tasks/" + created["task"]["id"].get<std::string>();
  ASSERT_TRUE(std::filesystem::is_directory(ws + "/attachments"));

  // The agent's tree and the host's outside directories.
  WriteFile(ws + "/d/secret.txt", "inside");
  const std::string outside = dir_.File("outside");
  WriteFile(outside + "/secret.txt", kMarker);
  WriteFile(outside + "/host-only/x.txt", kMarker);
  std::filesystem::create_directory_symlink(outside, ws + "/swap");
  const std::string outside_uploads = dir_.File("outside-uploads");
  WriteFile(outside_uploads + "/n.txt", kMarker);
  std::filesystem::create_directory_symlink(outside_uploads, ws + "/swap-attachments");

  httplib::Client c("127.0.0.1", port_);
  c.set_bearer_token_auth("tok");
  c.set_keep_alive(true);
  c.set_read_timeout(30, 0);
  long requests = 0, refused = 0, failed = 0, outside_bytes = 0, outside_entries = 0;
  auto note = [&](const httplib::Result& r) {
    ++requests;
    if (!r) {
      ++failed;
      return;
    }
    if (r->status != 200 && r->status != 201) ++refused;
    if (Contains(r->body, kMarker)) ++outside_bytes;
    if (Contains(r->body, "host-only")) ++outside_entries;
  };
  const auto budget = [](std::chrono::seconds s) { return std::chrono::steady_clock::now() + s; };

  long read_swaps = 0;
  {  // reads and listings while d/ flips
    DirSwapper agent(ws + "/d", ws + "/swap");
    const auto end = budget(8s);
    for (int i = 0; i < 4000 && std::chrono::steady_clock::now() < end; ++i) {
      note(c.Get(task + "/files/d/secret.txt"));
      note(c.Get(task + "/files/d/secret.txt?raw=1"));
      if (i % 8 == 0) note(c.Get(task + "/files"));
    }
    agent.Stop();
    read_swaps = agent.swaps();
  }
  const long read_requests = requests, read_refused = refused;

  long upload_swaps = 0, uploads = 0, uploaded = 0;
  {  // uploads while attachments/ flips
    DirSwapper agent(ws + "/attachments", ws + "/swap-attachments");
    // Few uploads land whole (each is several steps); up to 4 s more when
    // none did yet.
    const auto end = budget(6s), last = budget(10s);
    for (int i = 0; i < 400 && std::chrono::steady_clock::now() < (uploaded > 0 ? end : last);
         ++i) {
      const Json body = {
          {"body", "more"},
          {"attachments", {{{"name", "n.txt"}, {"content_base64", Base64Encode("upload")}}}}};
      auto r = c.Post(task + "/comments", body.dump(), "application/json");
      note(r);
      ++uploads;
      if (r && r->status == 201) ++uploaded;
      if (r) {
        EXPECT_TRUE(r->status == 201 || r->status == 409) << r->status << " " << r->body;
      }
    }
    agent.Stop();
    upload_swaps = agent.swaps();
  }

  std::printf(
      "[ race ] %ld requests (%ld refused, %ld failed): %ld reads/listings (%ld refused) over "
      "%ld swaps of d/; %ld uploads (%ld stored) over %ld swaps of attachments/; %ld outside "
      "bytes, %ld outside entries, %zu + %zu files in the outside dirs\n",
      requests, refused, failed, read_requests, read_refused, read_swaps, uploads, uploaded,
      upload_swaps, outside_bytes, outside_entries, Names(outside).size(),
      Names(outside_uploads).size());
  EXPECT_EQ(failed, 0) << LogTail();
  EXPECT_GT(read_swaps, 100);
  EXPECT_GT(upload_swaps, 100);
  EXPECT_GT(read_refused, 0) << "the swap was seen";
  EXPECT_LT(read_refused, read_requests) << "and the real file was read too";
  EXPECT_GT(uploaded, 0);
  EXPECT_EQ(outside_bytes, 0);
  EXPECT_EQ(outside_entries, 0);
  EXPECT_EQ(Names(outside), (std::set<std::string>{"secret.txt", "host-only"}));
  EXPECT_EQ(Names(outside_uploads), (std::set<std::string>{"n.txt"}));
  EXPECT_EQ(ReadWholeFile(outside_uploads + "/n.txt"), kMarker);
  // A record for every stored upload (and the task's own file), none for
  // a refused one.
  Json listed = Get(task + "/attachments")["attachments"];
  EXPECT_EQ(listed.size(), static_cast<size_t>(uploaded + 1)) << listed.dump();
}

}  // namespace
}  // namespace maestro::testing
