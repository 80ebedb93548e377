#include "cli/shared_data_dir.h"

#include <fmt/format.h>

#include <optional>
#include <string_view>

#include "core/durable_file.h"

namespace maestro::cli {
namespace {

// The one sentence IsMarkerMissing recognises; CheckSharedDataDir says it.
constexpr std::string_view kMissing = " is missing. Mount the data dir";

std::optional<std::string> ReadMarker(const std::string& path) {
  auto text = ReadFileToString(*Env::Default(), path);
  if (!text.ok()) return std::nullopt;
  std::string id = *text;
  while (!id.empty() && (id.back() == '\n' || id.back() == '\r')) id.pop_back();
  return id;
}

}  // namespace

Status ClaimSharedDataDir(const std::string& data_dir, const std::string& database_id) {
  const std::string path = data_dir + "/" + kDatabaseIdFile;
  if (auto found = ReadMarker(path)) {
    if (*found == database_id) return Status::Ok();
    return Conflict(fmt::format(
        "data_dir {} belongs to database {} (its {} says so), not to {} (database_url): use "
        "that database's data dir, or a new empty one",
        data_dir, *found, kDatabaseIdFile, database_id));
  }
  return ReplaceFileContent(*Env::Default(), path, database_id + "\n");
}

Status CheckSharedDataDir(const std::string& data_dir, const std::string& database_id) {
  const std::string path = data_dir + "/" + kDatabaseIdFile;
  auto found = ReadMarker(path);
  if (!found) {
    return Conflict(
        fmt::format("data_dir {} is not the API's data dir: {}{} that `maestro serve` uses (a "
                    "shared filesystem) and point data_dir at it",
                    data_dir, kDatabaseIdFile, kMissing));
  }
  if (*found != database_id) {
    // Name the marker: it is what an operator inspects, or removes when the
    // database was recreated on purpose.
    return Conflict(fmt::format(
        "data_dir {} belongs to database {} (its {} says so), not to {} (database_url): "
        "point data_dir at this database's data dir",
        data_dir, *found, kDatabaseIdFile, database_id));
  }
  return Status::Ok();
}

bool IsMarkerMissing(const Status& st) {
  return st.code() == StatusCode::kConflict && st.message().find(kMissing) != std::string::npos;
}

}  // namespace maestro::cli
