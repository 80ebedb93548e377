// Hashes used for identity, not secrecy of storage: the canonical hash of a
// tool call's arguments binds a once-grant to exactly those arguments.
#pragma once

#include <string>
#include <string_view>

#include "core/json.h"

namespace maestro {

// Lowercase hex SHA-256 of `data` (OpenSSL).
std::string Sha256Hex(std::string_view data);

// SHA-256 of the canonical serialization of `value`: object keys sorted
// (nlohmann::json keeps them sorted), no insignificant whitespace.
std::string CanonicalJsonHash(const Json& value);

}  // namespace maestro
