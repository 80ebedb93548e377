// `maestro task create|list|show|cancel --db DIR`: the same commands straight
// on a data dir's SQLite database (or the config's PostgreSQL database), with
// no server — for scripts on the server's host and for recovery. Only an
// explicit --db gets here; every other `task` command talks to a server
// (client.h). Output is JSON.
//
// Thread safety: main thread only; each call opens and closes its store.
#pragma once

#include <string>

#include "store/types.h"

namespace maestro::cli {

// `config_path` is --config (may be ""); `db_dir` replaces its data_dir.
int LocalTaskCreate(const std::string& config_path, const std::string& db_dir, const NewTask& in);
int LocalTaskList(const std::string& config_path, const std::string& db_dir,
                  const std::string& status);
int LocalTaskShow(const std::string& config_path, const std::string& db_dir,
                  const std::string& task_id);
int LocalTaskCancel(const std::string& config_path, const std::string& db_dir,
                    const std::string& task_id);

}  // namespace maestro::cli
