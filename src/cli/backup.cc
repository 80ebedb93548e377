#include "cli/backup.h"

#include <fmt/format.h>

#include <iostream>

#include "cli/runtime.h"
#include "core/env.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/sqlite_backup.h"

namespace maestro::cli {
namespace {

// The order matters (docs/operations.md "Backup and restore"): the data
// dir's context files and workspaces must be as new as the database or
// newer, never older — a context dir whose task row is missing is removed at
// the next start, while a task row whose files are missing is not repaired.
constexpr char kPostgresProcedure[] =
    R"(maestro: `maestro backup` and `maestro restore` handle the SQLite database only; this config uses PostgreSQL (database.url), which they do not back up or restore.
Back up a PostgreSQL deployment in this order (docs/operations.md "Backup and restore"):
  1. pg_dump --format=custom --file=maestro.dump "$DATABASE_URL"
  2. then snapshot the shared data dir, e.g. tar -C <data_dir> -czf maestro-data.tar.gz .
Restore: stop every serve and worker, pg_restore --clean --if-exists --dbname="$DATABASE_URL" maestro.dump,
unpack the data dir snapshot, then start serve (it migrates the schema forward) and the workers.
)";

std::string DatabasePath(const Config& cfg) { return cfg.data_dir + "/maestro.db"; }

Result<Config> SqliteConfig(const std::string& config_path) {
  auto cfg = LoadEffectiveConfig(config_path);
  if (!cfg.ok()) return cfg;
  if (!cfg->database.url.empty()) {
    std::cerr << kPostgresProcedure;
    return InvalidArgument("not a SQLite deployment: use pg_dump / pg_restore (above)",
                           "database.url");
  }
  return cfg;
}

}  // namespace

int Backup(const std::string& config_path, const std::string& out, bool force) {
  auto cfg = SqliteConfig(config_path);
  if (!cfg.ok()) return Fail(cfg.status());
  sqlite::BackupOptions options;
  options.force = force;
  auto report = sqlite::BackupDatabase(*Env::Default(), DatabasePath(*cfg), out, options);
  if (!report.ok()) return Fail(report.status());
  std::cout << fmt::format(
      "wrote {}: {} bytes, schema version {}, {} task(s) (online backup of {})\n"
      "not in it: the data dir's context files, workspaces, admin_token and vapid_key.pem — "
      "archive {} after this backup (docs/operations.md \"Backup and restore\")\n",
      report->path, report->bytes, report->schema_version, report->tasks, DatabasePath(*cfg),
      cfg->data_dir);
  return 0;
}

int Restore(const std::string& config_path, const std::string& file, bool force) {
  auto cfg = SqliteConfig(config_path);
  if (!cfg.ok()) return Fail(cfg.status());
  sqlite::RestoreOptions options;
  options.force = force;
  auto report = sqlite::RestoreDatabase(*Env::Default(), file, DatabasePath(*cfg), options);
  if (!report.ok()) return Fail(report.status());
  const auto& in = report->installed;
  std::cout << fmt::format(
      "restored {} to {}: {} bytes, schema version {}, {} task(s){}\n", file, in.path, in.bytes,
      in.schema_version, in.tasks,
      report->replaced_tasks >= 0
          ? fmt::format(" (replaced a database of {} task(s))", report->replaced_tasks)
          : "");
  if (in.schema_version < sqlite::LatestSchemaVersion()) {
    std::cout << fmt::format("the next `maestro serve` migrates it to schema version {}\n",
                             sqlite::LatestSchemaVersion());
  }
  return 0;
}

}  // namespace maestro::cli
