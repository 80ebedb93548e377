// The records of a JSON Lines file (current.jsonl, messages.jsonl, ...), for
// tests that check what the context files hold.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "core/json.h"

namespace maestro::testing {

// Every non-empty line of `path` parsed (throws on a line that is not JSON).
inline std::vector<Json> JsonLines(const std::string& path) {
  std::vector<Json> out;
  std::ifstream in(path, std::ios::binary);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(Json::parse(line));
  }
  return out;
}

}  // namespace maestro::testing
