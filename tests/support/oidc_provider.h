// The real test identity provider (tests/oidc/provider.mjs: npm
// oidc-provider, pinned; installed by scripts/npm_pinned.sh tests/oidc) for
// C++ tests: started on a free 127.0.0.1 port with its own keys file, and
// login.mjs, which signs a user in through the provider's own login page
// without a browser and returns the callback URL (code + state).
// `dir` is tests/oidc (the MAESTRO_OIDC_TEST_DIR definition of the test).
// With a `users_file` the provider's users come from it (provider.mjs
// --users) instead of the built-in ones. Its --test-endpoints are reached
// with Post, Sign (a JWS over any claims, with its real key or a stranger's)
// and JwksHits (whose failed requests are gtest failures; everything else
// returns what went wrong for the test to check).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/http_client.h"
#include "core/json.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace maestro::testing {

// The node binary on PATH ("" when there is none).
inline std::string NodeBinary() {
  const char* path = getenv("PATH");
  std::string rest = path ? path : "";
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string d = rest.substr(0, colon);
    rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
    const std::string candidate = d + "/node";
    if (!d.empty() && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

class OidcProvider {
 public:
  OidcProvider(std::string oidc_dir, const TempDir& work, int port, std::string redirect_uri,
               std::string secret, std::string users_file = "")
      : oidc_dir_(std::move(oidc_dir)),
        work_(work),
        port_(port),
        redirect_(std::move(redirect_uri)),
        secret_(std::move(secret)),
        users_(std::move(users_file)) {}
  ~OidcProvider() { Stop(); }

  std::string issuer() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string keys_file() const { return work_.File("oidc-keys.json"); }

  // Writes (or with `prepend`, rotates in first) a signing key `kid`.
  bool MakeKey(const std::string& kid, bool prepend) {
    std::vector<std::string> argv = {
        NodeBinary(), oidc_dir_ + "/provider.mjs", "--make-keys", keys_file(), "--kid", kid};
    if (prepend) argv.push_back("--prepend");
    Process p(argv, {}, work_.File("make-key.out"), work_.File("make-key.err"));
    auto code = p.Wait(std::chrono::seconds(30));
    return code.has_value() && *code == 0;
  }

  // Starts it and waits for its READY line; "" or what went wrong.
  std::string Start() {
    const std::string n = std::to_string(++starts_);
    std::vector<std::string> argv = {NodeBinary(),      oidc_dir_ + "/provider.mjs",
                                     "--port",          std::to_string(port_),
                                     "--issuer",        issuer(),
                                     "--keys",          keys_file(),
                                     "--client-id",     "maestro",
                                     "--client-secret", secret_,
                                     "--redirect-uri",  redirect_,
                                     "--test-endpoints"};
    if (!users_.empty()) {
      argv.push_back("--users");
      argv.push_back(users_);
    }
    process_ = std::make_unique<Process>(argv, std::map<std::string, std::string>{},
                                         work_.File("provider" + n + ".out"),
                                         work_.File("provider" + n + ".err"));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (process_->Stdout().find("READY " + issuer()) == std::string::npos) {
      if (!process_->running()) return "the provider exited: " + process_->Stderr();
      if (std::chrono::steady_clock::now() > deadline) return "no READY: " + process_->Stderr();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return "";
  }

  void Stop() {
    if (!process_) return;
    process_->Signal(SIGTERM);
    process_->Wait(std::chrono::seconds(5));
    process_.reset();
  }

  // Signs `user` in at `authorization_url` (login.mjs); {exit code, the
  // callback URL or "", stderr}.
  struct Login {
    int code = -1;
    std::string callback;
    std::string err;
  };
  Login SignIn(const std::string& authorization_url, const std::string& user,
               const std::string& password) {
    static std::atomic<int> runs{0};
    const std::string n = std::to_string(++runs);
    Process p({NodeBinary(), oidc_dir_ + "/login.mjs", authorization_url, user, password}, {},
              work_.File("login" + n + ".out"), work_.File("login" + n + ".err"));
    auto code = p.Wait(std::chrono::seconds(30));
    Login r;
    r.code = code.value_or(-1);
    r.callback = p.Stdout();
    r.err = p.Stderr();
    while (!r.callback.empty() && (r.callback.back() == '\n' || r.callback.back() == '\r')) {
      r.callback.pop_back();
    }
    return r;
  }

  // POSTs `body` as JSON to the test endpoint `path`: the reply's JSON. The
  // one place with gtest checks (kept from oidc_test.cc): no answer or not
  // 200 is a test failure (and a null Json).
  Json Post(const std::string& path, const Json& body) const {
    auto reply = HttpClient().Request("POST", issuer() + path,
                                      {{"Content-Type", "application/json"}}, body.dump());
    EXPECT_TRUE(reply.ok()) << reply.status().message();
    if (!reply.ok()) return Json();
    EXPECT_EQ(reply->status, 200) << reply->body;
    return Json::parse(reply->body, nullptr, false);
  }

  // A compact JWS over `claims` (see provider.mjs /test/sign; `extra` picks
  // the key, kid or alg).
  std::string Sign(const Json& claims, const Json& extra = Json::object()) const {
    Json body = extra;
    body["claims"] = claims;
    return Post("/test/sign", body).value("token", "");
  }

  // How many times its /jwks was fetched since it started (-1: no answer,
  // a test failure).
  int64_t JwksHits() const {
    auto reply = HttpClient().Request("GET", issuer() + "/test/stats");
    EXPECT_TRUE(reply.ok());
    return reply.ok() ? Json::parse(reply->body).value("jwks", int64_t{-1}) : -1;
  }

 private:
  const std::string oidc_dir_;
  const TempDir& work_;
  const int port_;
  const std::string redirect_, secret_, users_;
  int starts_ = 0;
  std::unique_ptr<Process> process_;
};

}  // namespace maestro::testing
