#include "core/ids.h"

#include <array>
#include <cstdint>
#include <random>

#include "core/mutex.h"

namespace maestro {
namespace {

std::mt19937_64& ThreadRng() {
  thread_local std::mt19937_64 rng([] {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd()};
    return std::mt19937_64(seq);
  }());
  return rng;
}

constexpr char kCrockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

}  // namespace

std::string NewUuid() {
  auto& rng = ThreadRng();
  uint64_t hi = rng(), lo = rng();
  hi = (hi & 0xFFFFFFFFFFFF0FFFull) | 0x0000000000004000ull;  // version 4
  lo = (lo & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;  // RFC 4122 variant
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (int i = 0; i < 32; ++i) {
    uint64_t word = i < 16 ? hi : lo;
    int shift = (15 - (i % 16)) * 4;
    out.push_back(kHex[(word >> shift) & 0xF]);
    if (i == 7 || i == 11 || i == 15 || i == 19) out.push_back('-');
  }
  return out;
}

std::string NewSortableId(TimeMs now) {
  // Monotonic within the process: if the clock has not advanced (or went
  // back), reuse the last time and increment the random part.
  static Mutex mu;
  static uint64_t last_ms = 0;
  static std::array<uint8_t, 10> last_rand{};
  std::array<uint8_t, 16> bytes{};
  {
    MutexLock lock(&mu);
    uint64_t ms = static_cast<uint64_t>(now < 0 ? 0 : now);
    if (ms <= last_ms) {
      ms = last_ms;
      for (int i = 9; i >= 0; --i) {
        if (++last_rand[i] != 0) break;
      }
    } else {
      last_ms = ms;
      auto& rng = ThreadRng();
      uint64_t a = rng(), b = rng();
      for (int i = 0; i < 8; ++i) last_rand[i] = static_cast<uint8_t>(a >> (i * 8));
      last_rand[8] = static_cast<uint8_t>(b);
      last_rand[9] = static_cast<uint8_t>(b >> 8);
      last_rand[0] &= 0x7F;  // headroom so increments within a ms never wrap
    }
    for (int i = 0; i < 6; ++i) bytes[i] = static_cast<uint8_t>(ms >> ((5 - i) * 8));
    for (int i = 0; i < 10; ++i) bytes[6 + i] = last_rand[i];
  }
  // 128 bits -> 26 base32 chars (the first char carries 3 bits).
  std::string out(26, '0');
  unsigned __int128 v = 0;
  for (uint8_t b : bytes) v = (v << 8) | b;
  for (int i = 25; i >= 0; --i) {
    out[i] = kCrockford[static_cast<unsigned>(v & 0x1F)];
    v >>= 5;
  }
  return out;
}

bool IsUuid(const std::string& s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
      return false;
    }
  }
  return true;
}

}  // namespace maestro
