#include "api/auth.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "core/hash.h"

namespace maestro::api {

Authenticator::Authenticator(ApiTokens& store, std::string admin_token)
    : store_(store), admin_token_hash_(admin_token.empty() ? "" : Sha256Hex(admin_token)) {}

std::optional<std::string> Authenticator::UserFor(const std::string& header) {
  static const std::string kPrefix = "Bearer ";
  if (admin_token_hash_.empty()) {
    // Open mode lasts only while no token exists at all.
    auto n = store_.CountApiTokens();
    if (n.ok() && *n == 0) return "local";
  }
  if (header.rfind(kPrefix, 0) != 0 || header.size() == kPrefix.size()) return std::nullopt;
  std::string hash = Sha256Hex(std::string_view(header).substr(kPrefix.size()));
  if (!admin_token_hash_.empty() && hash == admin_token_hash_) return kAdminUser;
  {
    MutexLock lock(&mu_);
    if (auto it = cache_.find(hash); it != cache_.end()) return it->second;
  }
  auto user = store_.UserForToken(hash);
  if (!user.ok() || !user->has_value()) return std::nullopt;
  MutexLock lock(&mu_);
  cache_[hash] = **user;
  return **user;
}

namespace {
bool VisibleTo(const std::string& visibility, const std::string& owner, const std::string& user) {
  return visibility == "shared" || owner.empty() || owner == user;
}
}  // namespace

bool Authenticator::Visible(const Task& task, const std::string& user) {
  return VisibleTo(task.visibility, task.owner, user);
}

bool Authenticator::Visible(const Schedule& schedule, const std::string& user) {
  return VisibleTo(schedule.visibility, schedule.owner, user);
}

bool Authenticator::Visible(const Mission& mission, const std::string& user) {
  return VisibleTo(mission.visibility, mission.owner, user);
}

Result<std::string> NewSecretToken() {
  unsigned char buf[32];
  std::ifstream in("/dev/urandom", std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(buf), sizeof(buf))) {
    return Internal("cannot read /dev/urandom");
  }
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : buf) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

Result<std::optional<std::string>> EnsureAdminToken(Env& env, ApiTokens& store,
                                                    const std::string& data_dir) {
  auto n = store.CountApiTokens();
  if (!n.ok()) return n.status();
  if (*n > 0) return std::optional<std::string>();
  auto token = NewSecretToken();
  if (!token.ok()) return token.status();
  // Write the file first: a token in the store that nobody can read is worse
  // than a file whose token is not yet valid (the next start retries).
  std::string path = data_dir + "/admin_token";
  if (Status st = WriteStringToFile(env, path, *token + "\n", 0600); !st.ok()) {
    return Internal("cannot write " + path + ": " + st.message());
  }
  // 0600 also when the file existed with a wider mode (open keeps it).
  MAESTRO_RETURN_IF_ERROR(env.SetPermissions(path, 0600));
  MAESTRO_RETURN_IF_ERROR(store.AddApiToken(Sha256Hex(*token), kAdminUser));
  return std::optional<std::string>(*token);
}

}  // namespace maestro::api
