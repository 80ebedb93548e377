// ApiTokens: the bearer-token role of the Store (store/store.h; sql_api.cc).
// Tokens are stored as their SHA-256 hex only.
//
// Who uses it: the API's Authenticator maps a request's token to its user
// and EnsureAdminToken writes the first one (api/auth.h).
//
// Not pure, so other Store implementations (test fakes) need not provide
// them; the defaults answer kUnimplemented.
//
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"
#include "store/unsupported.h"

namespace maestro {

class ApiTokens {
 public:
  virtual ~ApiTokens() = default;

  // Bearer tokens are stored as their SHA-256 hex only.
  virtual Status AddApiToken(const std::string& /*token_hash*/, const std::string& /*user*/) {
    return NotSupportedByStore();
  }
  // The user of a token hash, or nullopt.
  virtual Result<std::optional<std::string>> UserForToken(const std::string& /*token_hash*/) {
    return NotSupportedByStore();
  }
  virtual Result<int64_t> CountApiTokens() { return NotSupportedByStore(); }
};

}  // namespace maestro
