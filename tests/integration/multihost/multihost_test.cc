// The multi-host test (issue 48 item 5, Done-when line 1): PostgreSQL, one
// `maestro serve --workers 0` and two `maestro worker`, each a separate
// process in its own network namespace on a private veth network, sharing
// the data dir by bind mount (MultiHostCluster). The test process is a
// client on the same wire:
//   - a chat job run by a remote worker streams its deltas to an SSE client
//     of the API process (GET /api/local/jobs/:id/stream): every delta, in
//     order (seq strictly increasing, one run's seqs consecutive, the text
//     equal to the scripted text), and a client that drops mid-stream and
//     reconnects with Last-Event-ID gets the rest with no gap and no
//     duplicate; `maestro task watch` against the API prints the text;
//   - a worker SIGKILLed mid-stream: the job finishes on the other worker
//     and its new run's deltas (larger seqs: the fencing token is the high
//     half) still reach the client that stayed connected;
//   - another user's GETs of the job's stream and the task's events are 404;
//   - a BrowseWeb login park on a worker host is completed through the API
//     process (screenshot, input, Done), another user's calls 404;
//   - each process is what it claims: its own pid, network, mount and UTS
//     namespace, no route past the /24, the bind mount invisible outside.
// The fake streams 4 characters a delta with a pause between deltas, so the
// drop and the kill land mid-stream.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <set>
#include <sstream>

#include "../browser/login_site.h"
#include "multihost_cluster.h"

namespace maestro::testing {
namespace {

using namespace std::chrono_literals;

constexpr int kChunk = 4;  // chunk_chars: one word of kWords a delta

// "<p>00 <p>01 …": n words of 4 characters, so a lost or repeated delta
// shows as a missing or doubled word.
std::string Words(char prefix, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += fmt::format("{}{:02} ", prefix, i);
  return out;
}

const std::string kResumeText = Words('r', 40);  // 40 deltas, ~1.6 s
const std::string kKillText = Words('k', 90);    // 90 deltas, ~4.5 s
const std::string kNoteFile = "mh-note.txt";
const std::string kNote = "written by a worker on another host";

Json StreamedReply(const Json& tag, const std::string& text, int delay_ms,
                   const std::string& result) {
  return {
      {"match", {{"any_message_contains", tag}}},
      {"text", text},
      {"chunk_chars", kChunk},
      {"token_delay_ms", delay_ms},
      {"tool_calls", Json::array({{{"name", "complete"},
                                   {"arguments", {{"status", "success"}, {"result", result}}}}})},
      {"repeat", 0}};
}

struct Frame {
  std::string id, event, data;
  int64_t received_ms = 0;  // wall clock: one machine, one clock for every host
};

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// p50 and p99 (ms) of the time from a delta's `at` stamp (set by the worker
// that published it) to its arrival at the client on another host.
std::pair<int64_t, int64_t> DeltaLag(const std::vector<Frame>& deltas) {
  std::vector<int64_t> lag;
  for (const auto& f : deltas) {
    Json d = Json::parse(f.data, nullptr, false);
    if (d.is_object() && d.contains("at")) lag.push_back(f.received_ms - d["at"].get<int64_t>());
  }
  if (lag.empty()) return {-1, -1};
  std::sort(lag.begin(), lag.end());
  return {lag[lag.size() / 2], lag[std::min(lag.size() - 1, lag.size() * 99 / 100)]};
}

// Processes whose command line mentions `needle` (a task's browser profile).
int ProcessesWith(const std::string& needle) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] < '0' || name[0] > '9') continue;
    if (ReadWholeFile(e.path().string() + "/cmdline").find(needle) != std::string::npos) ++n;
  }
  return n;
}

// SSE frames of GET `path` on host:port, sent with Last-Event-ID `last_id`
// when given, until `stop(frame)` (the connection is then dropped), the
// stream's end or `limit`.
std::vector<Frame> ReadFrames(const std::string& host, int port, const std::string& path,
                              const std::string& last_id,
                              const std::function<bool(const Frame&)>& stop,
                              std::chrono::seconds limit = 40s, const std::string& token = "tok") {
  httplib::Client cl(host, port);
  cl.set_bearer_token_auth(token);
  cl.set_read_timeout(limit.count(), 0);
  httplib::Headers h = {{"Accept", "text/event-stream"}};
  if (!last_id.empty()) h.emplace("Last-Event-ID", last_id);
  std::vector<Frame> got;
  std::string buf;
  const auto end = std::chrono::steady_clock::now() + limit;
  cl.Get(path, h, [&](const char* data, size_t n) {
    buf.append(data, n);
    for (size_t pos; (pos = buf.find("\n\n")) != std::string::npos;) {
      Frame f;
      std::istringstream lines(buf.substr(0, pos));
      buf.erase(0, pos + 2);
      for (std::string l; std::getline(lines, l);) {
        if (l.rfind("id: ", 0) == 0) f.id = l.substr(4);
        if (l.rfind("event: ", 0) == 0) f.event = l.substr(7);
        if (l.rfind("data: ", 0) == 0) f.data = l.substr(6);
      }
      if (f.event.empty() && f.data.empty()) continue;  // a keep-alive comment
      f.received_ms = WallMs();
      got.push_back(f);
      if (stop(got.back())) return false;
    }
    return std::chrono::steady_clock::now() < end;
  });
  return got;
}

uint64_t Seq(const Frame& f) { return std::stoull(f.id); }
int64_t RunOf(uint64_t seq) { return static_cast<int64_t>(seq >> 32); }

// The text of the text deltas among `frames`.
std::string TextOf(const std::vector<Frame>& frames) {
  std::string out;
  for (const auto& f : frames) {
    if (f.event != "delta") continue;
    Json d = Json::parse(f.data, nullptr, false);
    if (d.is_object() && d.value("type", "") == "text") out += d.value("text", "");
  }
  return out;
}

class MultiHostTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new MultiHostCluster();
    start_error_ = new std::string(cluster_->Start([](const NetnsLab& lab) {
      site_ = new LoginSite(lab.ClientAddr());
      // MH-RESUME writes a file into the shared data dir, then streams.
      Json write_note = {{"repeat", 0}};
      write_note["match"]["any_message_contains"] = "MH-RESUME";
      Json call = {{"name", "WriteFile"}};
      call["arguments"]["path"] = kNoteFile;
      call["arguments"]["content"] = kNote;
      write_note["tool_calls"] = Json::array({call});
      Json replies = Json::array();
      replies.push_back(StreamedReply(Json::array({"MH-RESUME", "bytes to " + kNoteFile}),
                                      kResumeText, 40, "resume-done"));
      replies.push_back(write_note);
      replies.push_back(StreamedReply("MH-KILL", kKillText, 50, "kill-done"));
      // MH-LOGIN opens a login page, parks until a person logs in through the
      // API process, opens it again and answers with what it read.
      Json read_it = {{"repeat", 0}};
      read_it["match"]["any_message_contains"] = Json::array({"MH-LOGIN", "SECRET-REPORT-42"});
      Json complete = {{"name", "complete"}};
      complete["arguments"] = {{"status", "success"},
                               {"result", "The report says SECRET-REPORT-42"}};
      read_it["tool_calls"] = Json::array({complete});
      replies.push_back(read_it);
      Json open_it = {{"repeat", 0}};
      open_it["match"]["any_message_contains"] = "MH-LOGIN";
      Json browse = {{"name", "BrowseWeb"}};
      browse["arguments"] = {{"action", "open"}, {"url", site_->Url("/private")}};
      open_it["tool_calls"] = Json::array({browse});
      replies.push_back(open_it);
      Json script = {{"replies", replies}};
      script["default"]["text"] = "script exhausted";
      return script;
    }));
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
    delete start_error_;
    start_error_ = nullptr;
    delete site_;
    site_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(start_error_, nullptr) << "SetUpTestSuite threw";
    if (start_error_->empty()) return;
    const char* req = std::getenv("TEST_REQUIRE_POSTGRES");
    if (cluster_->skippable() && !(req && std::string(req) == "1")) {
      GTEST_SKIP() << "multi-host cluster: " << *start_error_;
    }
    FAIL() << "multi-host cluster did not start: " << *start_error_;
  }

  MultiHostCluster& c() { return *cluster_; }

  httplib::Client Api(const std::string& token = "tok") {
    httplib::Client cl(c().ApiHost(), MultiHostCluster::kApiPort);
    cl.set_bearer_token_auth(token);
    cl.set_read_timeout(20, 0);
    return cl;
  }
  std::pair<int, Json> Post(const std::string& path, const Json& body) {
    auto r = Api().Post(path, body.dump(), "application/json");
    if (!r) return {0, Json()};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }
  Json Get(const std::string& path) {
    auto r = Api().Get(path);
    return r ? Json::parse(r->body, nullptr, false) : Json();
  }
  // {task id, job id} of a new chat task.
  std::pair<std::string, std::string> CreateChat(const std::string& instruction) {
    auto [code, body] = Post("/api/local/tasks", {{"instruction", instruction}, {"piece", "chat"}});
    EXPECT_EQ(code, 201) << body.dump();
    if (code != 201) return {};
    return {body["task"]["id"], body["job"]["id"]};
  }
  Json WaitJob(const std::string& task_id, const std::string& job_id, const std::string& status,
               std::chrono::seconds limit = 30s) {
    Json job;
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      for (const auto& j : Get("/api/local/tasks/" + task_id).value("jobs", Json::array())) {
        if (j["id"] == job_id) job = j;
      }
      if (job.value("status", "") == status) return job;
      std::this_thread::sleep_for(50ms);
    }
    ADD_FAILURE() << "job " << job_id << " not " << status << ": " << job.dump() << "\n"
                  << c().LogTail();
    return job;
  }
  std::string StreamPath(const std::string& job_id) {
    return "/api/local/jobs/" + job_id + "/stream";
  }

  static MultiHostCluster* cluster_;
  static std::string* start_error_;
  static LoginSite* site_;
};

MultiHostCluster* MultiHostTest::cluster_ = nullptr;
std::string* MultiHostTest::start_error_ = nullptr;
LoginSite* MultiHostTest::site_ = nullptr;

// Checks the deltas of one run: seqs consecutive from the run's first
// (fencing token << 32) + 1, all of the run's text. `what` names the run.
void ExpectWholeRun(const std::vector<Frame>& deltas, int64_t token, const std::string& text,
                    const std::string& what) {
  ASSERT_FALSE(deltas.empty()) << what << ": no deltas reached the API process's client";
  EXPECT_EQ(Seq(deltas.front()), (static_cast<uint64_t>(token) << 32) + 1)
      << what << ": the run's first delta is missing";
  for (size_t i = 1; i < deltas.size(); ++i) {
    EXPECT_EQ(Seq(deltas[i]), Seq(deltas[i - 1]) + 1)
        << what << ": a gap or a duplicate after seq " << deltas[i - 1].id;
  }
  EXPECT_EQ(TextOf(deltas), text) << what;
}

TEST_F(MultiHostTest, DeltasOfARemoteWorkersJobReachAnApiClientInOrderAndResumeAfterADrop) {
  auto [task_id, job_id] = CreateChat("MH-RESUME tell me the words");
  ASSERT_FALSE(job_id.empty());
  // `maestro task watch` on the client host, against the API over the wire.
  Process watch({MAESTRO_BIN, "task", "watch", task_id, "--server", c().ApiUrl(), "--token", "tok"},
                {{"MAESTRO_DATA_DIR", c().File("no-data-dir")}}, c().File("watch.out"),
                c().File("watch.err"));

  // Client 1 drops after 12 deltas; client 2 resumes from its last id.
  int seen = 0;
  std::vector<Frame> first = ReadFrames(
      c().ApiHost(), MultiHostCluster::kApiPort, StreamPath(job_id), "",
      [&](const Frame& f) { return f.event == "end" || (f.event == "delta" && ++seen == 12); });
  std::string last_id;
  for (const auto& f : first) {
    if (!f.id.empty()) last_id = f.id;
  }
  std::vector<Frame> second =
      ReadFrames(c().ApiHost(), MultiHostCluster::kApiPort, StreamPath(job_id), last_id,
                 [](const Frame& f) { return f.event == "end"; });
  Json job = WaitJob(task_id, job_id, "succeeded");
  EXPECT_EQ(job.value("result", ""), "resume-done") << job.dump();
  const auto lease = c().JobLease(job_id);
  EXPECT_TRUE(lease.host == "w1" || lease.host == "w2")
      << "run by a worker host, not the API: " << lease.worker_id;

  EXPECT_EQ(seen, 12) << "the first client saw fewer than 12 deltas before the stream ended: "
                         "are deltas crossing processes?";
  EXPECT_FALSE(last_id.empty());
  std::vector<Frame> deltas;
  for (const auto* part : {&first, &second}) {
    for (const auto& f : *part) {
      EXPECT_NE(f.event, "truncated") << f.data;
      if (f.event == "delta") deltas.push_back(f);
    }
  }
  ExpectWholeRun(deltas, lease.fencing_token, kResumeText, "the resumed stream");
  ASSERT_FALSE(second.empty());
  EXPECT_EQ(second.back().event, "end");
  EXPECT_NE(second.back().data.find("succeeded"), std::string::npos) << second.back().data;
  // After the end, the API process still holds the relayed backlog: a new
  // client gets every delta again (same ids, same data), one resuming from
  // the drop point gets the rest — as for a job run in the API's process.
  auto after_end = [&](const std::string& from) {
    std::vector<Frame> got;
    for (auto& f : ReadFrames(
             c().ApiHost(), MultiHostCluster::kApiPort, StreamPath(job_id), from,
             [](const Frame& f) { return f.event == "end"; }, 10s)) {
      if (f.event == "delta") got.push_back(f);
    }
    return got;
  };
  auto same = [](const std::vector<Frame>& a, const std::vector<Frame>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].id != b[i].id || a[i].data != b[i].data) return false;
    }
    return true;
  };
  EXPECT_TRUE(same(after_end(""), deltas)) << "the backlog after the end differs";
  EXPECT_TRUE(same(
      after_end(last_id),
      std::vector<Frame>(deltas.begin() + std::min<size_t>(seen, deltas.size()), deltas.end())));
  std::printf("remote worker %s, run %lld: %zu deltas before the drop, %zu after the resume\n",
              lease.host.c_str(), static_cast<long long>(lease.fencing_token),
              static_cast<size_t>(seen), deltas.size() - static_cast<size_t>(seen));

  // The watch printed the streamed text and the result, and exited 0.
  auto exit = watch.Wait(20s);
  ASSERT_TRUE(exit.has_value()) << watch.Stdout() << watch.Stderr();
  EXPECT_EQ(*exit, 0) << watch.Stdout() << watch.Stderr();
  EXPECT_NE(watch.Stdout().find(kResumeText), std::string::npos)
      << "task watch did not print the remote job's streamed text:\n"
      << watch.Stdout();
  EXPECT_NE(watch.Stdout().find("resume-done"), std::string::npos) << watch.Stdout();

  // The worker wrote into the shared data dir: the API process (another
  // host) serves the file, and it is in the real directory on this machine.
  auto file = Api().Get("/api/local/tasks/" + task_id + "/files/" + kNoteFile + "?raw=1");
  ASSERT_TRUE(file);
  EXPECT_EQ(file->status, 200) << file->body;
  EXPECT_EQ(file->body, kNote);
  int copies = 0;
  const std::string workspace = c().DataDirOnMachine() + "/workspaces/tasks/" + task_id;
  for (const auto& e : std::filesystem::recursive_directory_iterator(workspace)) {
    if (e.path().filename() == kNoteFile) copies += ReadWholeFile(e.path().string()) == kNote;
  }
  EXPECT_EQ(copies, 1) << "the note is not in " << workspace;

  // The durable events crossed too: running then succeeded, from the worker.
  Json events = Get("/api/local/tasks/" + task_id + "/events")["events"];
  std::vector<std::string> statuses;
  for (const auto& e : events) {
    if (e["type"] == "job.status" && e["job_id"] == job_id) statuses.push_back(e["payload"]["to"]);
  }
  EXPECT_EQ(statuses, (std::vector<std::string>{"queued", "running", "succeeded"}))
      << events.dump();

  // Another user: the job's stream and the task's events are "not found".
  auto [tcode, token] = Post("/api/local/tokens", {{"user", "bob"}});
  ASSERT_EQ(tcode, 201) << token.dump();
  const std::string bob = token["token"];
  auto r = Api(bob).Get(StreamPath(job_id));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404) << r->body;
  EXPECT_EQ(r->body.find("r00"), std::string::npos) << r->body;
  r = Api(bob).Get("/api/local/tasks/" + task_id + "/events");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404) << r->body;
}

TEST_F(MultiHostTest, AWorkerKilledMidStreamTheJobFinishesOnTheOtherAndItsDeltasStillArrive) {
  auto [task_id, job_id] = CreateChat("MH-KILL count for me");
  ASSERT_FALSE(job_id.empty());
  std::atomic<int> deltas_seen{0};
  auto reader = std::async(std::launch::async, [&, job_id = job_id] {
    return ReadFrames(c().ApiHost(), MultiHostCluster::kApiPort, StreamPath(job_id), "",
                      [&](const Frame& f) {
                        if (f.event == "delta") ++deltas_seen;
                        return f.event == "end";
                      });
  });
  // Mid-stream: the client has 15 deltas (the fake sends 90, 50 ms apart).
  const auto end = std::chrono::steady_clock::now() + 15s;
  while (deltas_seen.load() < 15 && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_GE(deltas_seen.load(), 15) << "no deltas of the remote job reached the client";
  const auto first = c().JobLease(job_id);
  ASSERT_TRUE(first.host == "w1" || first.host == "w2") << first.worker_id << c().LogTail();
  const int victim = first.host == "w1" ? 0 : 1;
  c().worker(victim).Signal(SIGKILL);
  auto code = c().worker(victim).Wait(10s);
  EXPECT_EQ(code.value_or(-1), 128 + SIGKILL);
  const int at_kill = deltas_seen.load();

  Json job = WaitJob(task_id, job_id, "succeeded", 30s);
  std::vector<Frame> frames = reader.get();
  EXPECT_EQ(job.value("result", ""), "kill-done") << job.dump();
  EXPECT_EQ(job.value("attempt", 0), 2) << job.dump();
  const auto second = c().JobLease(job_id);
  EXPECT_EQ(second.host, victim == 0 ? "w2" : "w1") << second.worker_id;
  EXPECT_GT(second.fencing_token, first.fencing_token);

  // One connection saw both runs: every seq larger than the one before,
  // the dead run's a prefix of the text, the new run's all of it.
  std::vector<Frame> dead, retry;
  for (size_t i = 0; i < frames.size(); ++i) {
    const Frame& f = frames[i];
    EXPECT_NE(f.event, "truncated") << f.data;
    if (f.event != "delta") continue;
    const uint64_t seq = Seq(f);
    if (!dead.empty() || !retry.empty()) {
      const uint64_t prev = Seq(retry.empty() ? dead.back() : retry.back());
      EXPECT_GT(seq, prev) << "seq not increasing at frame " << i;
    }
    if (RunOf(seq) == first.fencing_token) {
      dead.push_back(f);
    } else if (RunOf(seq) == second.fencing_token) {
      retry.push_back(f);
    } else {
      ADD_FAILURE() << "a delta of neither run: seq " << f.id;
    }
  }
  ASSERT_FALSE(dead.empty()) << "no delta of the killed run";
  for (size_t i = 1; i < dead.size(); ++i) EXPECT_EQ(Seq(dead[i]), Seq(dead[i - 1]) + 1);
  const std::string dead_text = TextOf(dead);
  EXPECT_GE(dead.size(), 15u);
  EXPECT_LT(dead_text.size(), kKillText.size()) << "the kill landed after the stream";
  EXPECT_EQ(kKillText.compare(0, dead_text.size(), dead_text), 0)
      << "the killed run's text is not a prefix: " << dead_text;
  ExpectWholeRun(retry, second.fencing_token, kKillText, "the retry on the other worker");
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.back().event, "end");
  // Live all along: worker host -> PostgreSQL host -> API host -> client.
  const auto [p50, p99] = DeltaLag(retry);
  EXPECT_GE(p50, 0) << "deltas carry no `at` stamp";
  EXPECT_LT(p99, 2000) << "deltas of a remote worker reach the client late";
  std::printf(
      "killed %s after %d deltas (%zu of its run reached the client); the retry on %s "
      "sent %zu, worker -> client p50 %lld ms, p99 %lld ms\n",
      first.host.c_str(), at_kill, dead.size(), second.host.c_str(), retry.size(),
      static_cast<long long>(p50), static_cast<long long>(p99));

  // The killed host comes back for the next test.
  ASSERT_EQ(c().StartWorker(victim), "");
}

}  // namespace
}  // namespace maestro::testing

namespace maestro::testing {
namespace {

// /proc/<pid>/<link>'s target ("" when unreadable).
std::string Link(pid_t pid, const std::string& link) {
  std::error_code ec;
  auto target = std::filesystem::read_symlink(
      "/proc/" + (pid == 0 ? std::string("self") : std::to_string(pid)) + "/" + link, ec);
  return ec ? "" : target.string();
}

// The lab is what it claims: serve and both workers are the maestro binary
// itself (the pid the test signals), each in its own network, mount and UTS
// namespace, none the test's; no namespace has a route beyond the /24; the
// data dir's path exists only inside the processes' mount namespaces.
TEST_F(MultiHostTest, EachProcessIsAHostOfItsOwnOnAPrivateNetwork) {
  const std::string maestro = std::filesystem::canonical(MAESTRO_BIN).string();
  std::vector<pid_t> pids = {c().serve().pid(), c().worker(0).pid(), c().worker(1).pid()};
  for (const char* ns : {"ns/net", "ns/mnt", "ns/uts"}) {
    std::set<std::string> seen = {Link(0, ns)};
    ASSERT_FALSE(seen.begin()->empty());
    for (pid_t pid : pids) {
      const std::string id = Link(pid, ns);
      EXPECT_FALSE(id.empty()) << pid;
      EXPECT_TRUE(seen.insert(id).second) << ns << " of " << pid << " is shared: " << id;
    }
  }
  for (pid_t pid : pids) EXPECT_EQ(Link(pid, "exe"), maestro) << pid;
  for (const char* host : {"api", "w1", "w2", "db", "llm"}) {
    auto [code, routes] = RunCommand({NetnsLab::IpBin(), "-n", c().lab().Ns(host), "-4", "route"},
                                     {}, c().File(std::string("routes-") + host));
    ASSERT_EQ(code, 0) << routes;
    std::istringstream lines(routes);
    int n = 0;
    for (std::string line; std::getline(lines, line); ++n) {
      EXPECT_EQ(line.rfind(c().lab().Subnet() + " ", 0), 0u) << host << ": " << line;
    }
    EXPECT_EQ(n, 1) << host << ": " << routes;
    // Nothing outside is reachable: the kernel has no route to the
    // internet, a cloud metadata address or another private range.
    for (const char* outside : {"1.1.1.1", "169.254.169.254", "192.168.0.1"}) {
      auto [rc, how] =
          RunCommand({NetnsLab::IpBin(), "-n", c().lab().Ns(host), "-4", "route", "get", outside},
                     {}, c().File(std::string("route-get-") + host));
      EXPECT_NE(rc, 0) << host << " has a route to " << outside << ": " << how;
      EXPECT_NE(how.find("unreachable"), std::string::npos) << how;
    }
  }
  EXPECT_FALSE(std::filesystem::exists(c().DataPath())) << "the bind mount leaked to the machine";
  std::printf("hosts on %s; data dir %s bind-mounted from %s\n", c().lab().Subnet().c_str(),
              c().DataPath().c_str(), c().DataDirOnMachine().c_str());
}

}  // namespace
}  // namespace maestro::testing

namespace maestro::testing {
namespace {

// BrowseWeb's login park across hosts (issue 48 item 2 through item 5): the
// job's Chromium runs beside the worker on its host; a person talking only
// to the API process on another host sees the page, logs in and presses
// Done; the job resumes on the worker holding that browser. Another user
// gets 404 on all three routes.
TEST_F(MultiHostTest, ALoginParkOnARemoteWorkerIsCompletedThroughTheApiProcess) {
  auto [code, created] =
      Post("/api/local/tasks",
           {{"instruction", "MH-LOGIN read the private report"}, {"piece", "research"}});
  ASSERT_EQ(code, 201) << created.dump();
  const std::string task_id = created["task"]["id"];
  Json job = WaitJob(task_id, created["job"]["id"], "waiting_human", 60s);
  ASSERT_EQ(job.value("wait_reason", ""), "browser_login") << job.dump() << c().LogTail();
  const std::string job_id = job["id"];
  const auto holder = c().JobLease(job_id);
  ASSERT_TRUE(holder.host == "w1" || holder.host == "w2") << holder.worker_id;
  // The browser runs on the worker's host, on the shared data dir's path.
  const std::string profile = c().DataPath() + "/tasks/" + task_id + "/browser";
  EXPECT_GT(ProcessesWith(profile), 0) << "no Chromium on the task's profile";
  const std::string base = "/api/local/jobs/" + job_id + "/browser";

  // Another user: no such job on every route, nothing reaches the browser.
  auto [tcode, token] = Post("/api/local/tokens", {{"user", "carol"}});
  ASSERT_EQ(tcode, 201) << token.dump();
  const std::string carol = token["token"];
  auto shot = Api(carol).Get(base + "/screenshot");
  ASSERT_TRUE(shot);
  EXPECT_EQ(shot->status, 404) << shot->body;
  for (const char* path : {"/input", "/done"}) {
    auto r =
        Api(carol).Post(base + path, R"({"type":"text","text":"mallory"})", "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 404) << path << " " << r->body;
  }

  // Through the API process: the page, then the login.
  shot = Api().Get(base + "/screenshot");
  ASSERT_TRUE(shot);
  ASSERT_EQ(shot->status, 200) << shot->body << c().LogTail();
  EXPECT_EQ(shot->body.substr(0, 4), "\x89PNG");
  for (const Json& in :
       {Json{{"type", "click"}, {"x", 50}, {"y", 25}}, Json{{"type", "text"}, {"text", "alice"}},
        Json{{"type", "click"}, {"x", 50}, {"y", 75}}, Json{{"type", "text"}, {"text", "pw"}},
        Json{{"type", "key"}, {"key", "Enter"}}}) {
    auto [icode, out] = Post(base + "/input", in);
    EXPECT_EQ(icode, 200) << in.dump() << " " << out.dump();
  }
  for (int i = 0; i < 200 && site_->logins() == 0; ++i) std::this_thread::sleep_for(50ms);
  ASSERT_EQ(site_->logins(), 1) << c().LogTail();
  auto [dcode, done] = Post(base + "/done", Json::object());
  ASSERT_EQ(dcode, 200) << done.dump();
  EXPECT_EQ(done.value("on_browser_holder", false), true) << done.dump();
  Json finished = WaitJob(task_id, job_id, "succeeded", 60s);
  EXPECT_EQ(finished.value("result", ""), "The report says SECRET-REPORT-42") << finished.dump();
  EXPECT_EQ(c().JobLease(job_id).host, holder.host) << "the holder's worker took the job";
  EXPECT_EQ(site_->logins(), 1);
  std::printf("login park on %s completed through the API process\n", holder.host.c_str());
}

}  // namespace
}  // namespace maestro::testing
