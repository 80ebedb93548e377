// Web Push message encryption (RFC 8291 over RFC 8188 aes128gcm) and VAPID
// (RFC 8292), with OpenSSL.
//
// Where it sits: under the PushDispatcher (notify/push_dispatcher.h), which
// sends each "needs you" / finished / failed notice to the owner's browser
// subscriptions through their push services (RFC 8030). A push service only
// relays ciphertext: the payload is encrypted to the subscription's P-256 key
// (`p256dh`) and 16-byte `auth` secret, and the request carries a VAPID JWT
// signed by maestro's own P-256 key, whose public half the browser was given
// when it subscribed (GET /api/local/push/key).
//
// Contract:
//   - EncryptAes128Gcm: one record of RFC 8188 with a fresh ephemeral ECDH
//     key and a fresh 16-byte salt per message; the header is salt || rs
//     (4096) || idlen (65) || keyid (the ephemeral public key); the record is
//     the plaintext, the 0x02 last-record delimiter, AES-128-GCM with the key
//     and nonce of RFC 8291 §3.4. Plaintexts longer than kMaxPushPlaintext
//     are refused (a push service takes 4096 bytes of body).
//   - VapidKey: a P-256 key pair; its public half as the 65-byte
//     uncompressed point (what `applicationServerKey` and `k=` take); kept as
//     PKCS#8 PEM (LoadOrCreateVapidKey writes a new one with mode 0600 and
//     an atomic, synced rename, through Env).
//   - VapidAuthorization: `vapid t=<ES256 JWT>, k=<public key>` with
//     aud = the endpoint's origin, exp = now + `ttl` (at most 24 h, RFC 8292
//     §2), sub = `subject` when not empty.
//
// Thread safety: pure functions; a VapidKey is immutable and may be shared
// by threads (signing creates its own OpenSSL contexts).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/base64.h"
#include "core/env.h"
#include "core/status.h"

namespace maestro::push {

inline constexpr size_t kP256PublicKeyBytes = 65;  // 0x04 || X || Y
inline constexpr size_t kAuthSecretBytes = 16;
inline constexpr size_t kSaltBytes = 16;
inline constexpr uint32_t kRecordSize = 4096;
// 4096 bytes of body minus the header (86) and the record's delimiter (1)
// and tag (16).
inline constexpr size_t kMaxPushPlaintext = 4096 - 86 - 1 - 16;
inline constexpr int64_t kMaxVapidTtlSeconds = 24 * 3600;

// RFC 4648 §5 without padding (what Web Push keys and JWTs use): core's.
using maestro::Base64UrlDecode;
using maestro::Base64UrlEncode;

// Whether a browser's raw keys can be encrypted to: `p256dh` a 65-byte
// uncompressed point on P-256, `auth` 16 bytes. kInvalidArgument naming
// "keys.p256dh" / "keys.auth" (the fields of PushSubscription.toJSON()).
Status CheckSubscriptionKeys(std::string_view p256dh, std::string_view auth);

// The message body for a subscription's `p256dh` (65 bytes) and `auth` (16
// bytes). kInvalidArgument naming "p256dh"/"auth" for a malformed key or a
// point not on the curve, "payload" for a plaintext too long.
Result<std::string> EncryptAes128Gcm(std::string_view plaintext, std::string_view ua_public,
                                     std::string_view auth_secret);

// The same with the sender's key pair (raw 32-byte private scalar and its
// 65-byte public point) and salt given: RFC 8291 Appendix A's vector.
Result<std::string> EncryptAes128GcmWith(std::string_view plaintext, std::string_view ua_public,
                                         std::string_view auth_secret, std::string_view as_private,
                                         std::string_view as_public, std::string_view salt);

class VapidKey {
 public:
  static Result<VapidKey> Generate();
  // A PKCS#8 (or SEC1 "EC PRIVATE KEY") PEM of a P-256 private key.
  static Result<VapidKey> FromPem(std::string_view pem);

  std::string PrivatePem() const;
  // The 65-byte uncompressed public point, and it in base64url.
  const std::string& public_raw() const { return public_raw_; }
  std::string PublicKeyB64() const { return Base64UrlEncode(public_raw_); }
  // ES256 (RFC 7518 §3.4): the 64-byte R || S of ECDSA P-256 / SHA-256.
  Result<std::string> SignEs256(std::string_view data) const;

 private:
  std::shared_ptr<void> pkey_;  // EVP_PKEY, freed by EVP_PKEY_free
  std::string public_raw_;
};

// The key at `path`, or a new one written there (0600) when it is missing.
Result<VapidKey> LoadOrCreateVapidKey(Env& env, const std::string& path);

// "https://push.example.net" of "https://push.example.net/send/abc":
// scheme and authority, lowercase, without a default port. kInvalidArgument
// (field "endpoint") for a URL without an http(s) scheme or host.
Result<std::string> EndpointOrigin(std::string_view endpoint);

// The Authorization header value of RFC 8292 §3 for a request to `endpoint`.
Result<std::string> VapidAuthorization(const VapidKey& key, std::string_view endpoint,
                                       std::string_view subject, int64_t now_seconds,
                                       int64_t ttl_seconds = 12 * 3600);

}  // namespace maestro::push
