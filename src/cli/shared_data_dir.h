// The data dir that every host of one PostgreSQL database must share.
//
// Context files and workspaces live under data_dir, not in the database, so
// a `maestro worker` on another host must mount the same directory the API
// uses — a worker with a local, empty data dir would run jobs whose
// conversations the API never sees. The API (`serve`) records the
// database's id in data_dir/.maestro-database-id; a worker starts only when
// that file exists and names its database (waiting for it at start, up to
// startup_wait_ms: cli/startup_wait.h).
#pragma once

#include <string>

#include "core/status.h"

namespace maestro::cli {

inline constexpr const char* kDatabaseIdFile = ".maestro-database-id";

// serve: writes the marker, or checks it when present (kConflict
// when it names another database).
Status ClaimSharedDataDir(const std::string& data_dir, const std::string& database_id);
// worker: kConflict unless the marker exists and names `database_id`.
Status CheckSharedDataDir(const std::string& data_dir, const std::string& database_id);
// True when `st` (CheckSharedDataDir's) says the marker is missing — serve
// has not written it yet, so a worker started first waits for it — rather
// than that it names another database (which fails at once).
bool IsMarkerMissing(const Status& st);

}  // namespace maestro::cli
