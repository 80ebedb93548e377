// ServeProcess: a real `maestro serve` for integration tests — MAESTRO_BIN
// (the test target's compile definition) started with `--config FILE serve`
// on a free 127.0.0.1 port, its data under `dir`/data, no workers (tasks stay
// queued) and the admin token "adm" unless `env` says otherwise; Start waits
// for /api/health. Call sends one HTTP request to it and keeps the answer's
// code, raw text, parsed JSON body and headers. The port is chosen at
// construction, so a test can put base() in the config (redirect URIs)
// before starting it. Not thread-safe: one test thread owns it; the child is
// killed when the object dies (Process).
#pragma once

#include <httplib.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/json.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace maestro::testing {

class ServeProcess {
 public:
  explicit ServeProcess(const TempDir& dir) : dir_(dir), port_(FreePort()) {}

  int port() const { return port_; }
  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Starts serve with `config_file`, the defaults above overridden or
  // extended by `env`, and waits (up to 5 s) for /api/health to answer 200;
  // "" or what went wrong.
  std::string Start(const std::string& config_file,
                    const std::map<std::string, std::string>& env = {}) {
    std::map<std::string, std::string> all = {
        {"MAESTRO_DATA_DIR", dir_.File("data")},
        {"MAESTRO_LISTEN", "127.0.0.1:" + std::to_string(port_)},
        {"MAESTRO_WORKERS", "0"},
        {"MAESTRO_ADMIN_TOKEN", "adm"}};
    for (const auto& [k, v] : env) all[k] = v;
    process_ = std::make_unique<Process>(
        std::vector<std::string>{MAESTRO_BIN, "--config", config_file, "serve"}, all,
        dir_.File("serve.out"), dir_.File("serve.err"));
    httplib::Client c("127.0.0.1", port_);
    for (int i = 0; i < 500; ++i) {
      if (auto r = c.Get("/api/health"); r && r->status == 200) return "";
      if (!process_->running()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return "serve did not start: " + Stderr();
  }

  std::string Stderr() const { return process_ ? process_->Stderr() : ""; }

  struct Answer {
    int code = 0;  // 0: no answer at all
    Json body;     // discarded (is_discarded) when the text is not JSON
    std::string text;
    httplib::Headers headers;
    std::string header(const std::string& name) const {
      auto it = headers.find(name);
      return it == headers.end() ? "" : it->second;
    }
  };
  // `method` (GET, POST, PATCH, DELETE) on `path` with `body` (a null body
  // sends "{}"), the bearer `token` when not empty and any extra `headers`.
  Answer Call(const std::string& method, const std::string& path, const Json& body = Json(),
              const std::string& token = "", const httplib::Headers& headers = {}) const {
    httplib::Client c("127.0.0.1", port_);
    if (!token.empty()) c.set_bearer_token_auth(token);
    c.set_read_timeout(std::chrono::seconds(10));
    const std::string text = body.is_null() ? "{}" : body.dump();
    httplib::Result r = method == "POST"     ? c.Post(path, headers, text, "application/json")
                        : method == "PATCH"  ? c.Patch(path, headers, text, "application/json")
                        : method == "DELETE" ? c.Delete(path, headers)
                                             : c.Get(path, headers);
    Answer a;
    if (!r) return a;
    a.code = r->status;
    a.text = r->body;
    a.body = Json::parse(r->body, nullptr, false);
    a.headers = r->headers;
    return a;
  }

 private:
  const TempDir& dir_;
  const int port_;
  std::unique_ptr<Process> process_;
};

}  // namespace maestro::testing
