// PgServer: a real, throwaway PostgreSQL server for tests.
//
// Start() finds the server binaries (/usr/lib/postgresql/<v>/bin, or
// `pg_config --bindir`), initdb's a cluster in a fresh temp dir (as the
// `postgres` OS user when running as root — initdb refuses root), and starts
// it on a free random port of 127.0.0.1 with durability turned off (fsync,
// synchronous_commit, full_page_writes) and trust authentication. Each
// CreateDatabase() makes an empty database and returns its libpq URL. The
// destructor stops the server (immediate mode) and removes the dir.
//
// Shared() starts one server per test process on first use and stops it at
// exit. When it cannot start it returns nullptr and SkipReason() says why;
// MAESTRO_PG_SERVER_OR_SKIP turns that into a loud GTEST_SKIP — or a test
// failure when TEST_REQUIRE_POSTGRES=1 is set (CI).
//
// Thread safety: CreateDatabase may be called from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "core/status.h"

namespace maestro::testing {

class PgServer {
 public:
  // `extra_options` are appended to the server's command line after the
  // defaults, so they win: e.g. "-c fsync=on -c synchronous_commit=on" for a
  // benchmark of durable commits.
  static Result<std::unique_ptr<PgServer>> Start(const std::string& extra_options = "");
  ~PgServer();
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  // "postgresql://postgres@127.0.0.1:<port>/<fresh name>".
  Result<std::string> CreateDatabase();
  int port() const { return port_; }
  // URL of the maintenance database "postgres".
  std::string AdminUrl() const;

  // The per-process server, or nullptr (see SkipReason).
  static PgServer* Shared();
  static const std::string& SkipReason();
  // TEST_REQUIRE_POSTGRES=1: a server that cannot start fails the test.
  static bool Required();

 private:
  PgServer() = default;

  std::string bindir_;
  std::string dir_;  // temp dir: data/ and the unix socket
  int port_ = 0;
  bool started_ = false;
  std::atomic<int> next_db_{0};
};

}  // namespace maestro::testing

// In a TEST body: declares `PgServer* var` or skips (fails when required).
#define MAESTRO_PG_SERVER_OR_SKIP(var)                                                            \
  ::maestro::testing::PgServer* var = ::maestro::testing::PgServer::Shared();                     \
  if (!var) {                                                                                     \
    if (::maestro::testing::PgServer::Required()) {                                               \
      FAIL() << "PostgreSQL could not start (TEST_REQUIRE_POSTGRES=1): "                          \
             << ::maestro::testing::PgServer::SkipReason();                                       \
    }                                                                                             \
    GTEST_SKIP() << "PostgreSQL could not start: " << ::maestro::testing::PgServer::SkipReason(); \
  }
