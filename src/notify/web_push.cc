#include "notify/web_push.h"

#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#include <array>
#include <cctype>

#include "core/json.h"

namespace maestro::push {

namespace {

using PkeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)>;

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &len);
  return std::string(reinterpret_cast<const char*>(mac), len);
}

// HKDF-SHA-256 (RFC 5869) for outputs of at most one block, as RFC 8291
// writes it: PRK = HMAC(salt, ikm); OKM = HMAC(PRK, info || 0x01)[0..len].
std::string Hkdf(std::string_view salt, std::string_view ikm, std::string_view info, size_t len) {
  const std::string prk = HmacSha256(salt, ikm);
  std::string t(info);
  t.push_back('\x01');
  return HmacSha256(prk, t).substr(0, len);
}

Status OpenSslError(std::string_view what) { return Internal("openssl: " + std::string(what)); }

// A P-256 public key from its uncompressed point; the point must be on the
// curve (EVP_PKEY_public_check).
Result<PkeyPtr> PublicKeyFromRaw(std::string_view raw, const char* field) {
  if (raw.size() != kP256PublicKeyBytes || raw[0] != '\x04') {
    return InvalidArgument(std::string(field) + " must be a 65-byte uncompressed P-256 point",
                           field);
  }
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME,
                                                          const_cast<char*>("prime256v1"), 0),
                         OSSL_PARAM_construct_octet_string(
                             OSSL_PKEY_PARAM_PUB_KEY, const_cast<char*>(raw.data()), raw.size()),
                         OSSL_PARAM_construct_end()};
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr), EVP_PKEY_CTX_free);
  EVP_PKEY* key = nullptr;
  if (!ctx || EVP_PKEY_fromdata_init(ctx.get()) <= 0 ||
      EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params) <= 0) {
    return InvalidArgument(std::string(field) + " is not a P-256 point", field);
  }
  PkeyPtr out(key, EVP_PKEY_free);
  PkeyCtxPtr check(EVP_PKEY_CTX_new_from_pkey(nullptr, out.get(), nullptr), EVP_PKEY_CTX_free);
  if (!check || EVP_PKEY_public_check(check.get()) != 1) {
    return InvalidArgument(std::string(field) + " is not a point on P-256", field);
  }
  return out;
}

// A P-256 key pair from its raw private scalar and public point.
Result<PkeyPtr> KeyPairFromRaw(std::string_view priv, std::string_view pub) {
  if (priv.size() != 32 || pub.size() != kP256PublicKeyBytes) {
    return InvalidArgument("a P-256 key pair is a 32-byte scalar and a 65-byte point");
  }
  BIGNUM* d = BN_bin2bn(reinterpret_cast<const unsigned char*>(priv.data()), 32, nullptr);
  OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
  OSSL_PARAM* params = nullptr;
  if (d && bld &&
      OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) &&
      OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, d) &&
      OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pub.data(), pub.size())) {
    params = OSSL_PARAM_BLD_to_param(bld);
  }
  EVP_PKEY* key = nullptr;
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr), EVP_PKEY_CTX_free);
  bool ok = params && ctx && EVP_PKEY_fromdata_init(ctx.get()) > 0 &&
            EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_KEYPAIR, params) > 0;
  OSSL_PARAM_free(params);
  OSSL_PARAM_BLD_free(bld);
  BN_clear_free(d);
  if (!ok) return InvalidArgument("not a P-256 key pair");
  return PkeyPtr(key, EVP_PKEY_free);
}

// The uncompressed public point of an EC key.
Result<std::string> RawPublic(EVP_PKEY* key) {
  unsigned char buf[kP256PublicKeyBytes];
  size_t len = 0;
  if (EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, buf, sizeof buf, &len) != 1 ||
      len != kP256PublicKeyBytes || buf[0] != 0x04) {
    return OpenSslError("cannot read the P-256 public point");
  }
  return std::string(reinterpret_cast<const char*>(buf), len);
}

Result<PkeyPtr> NewP256Key() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  if (!key) return OpenSslError("cannot generate a P-256 key");
  // Public points are exported uncompressed (the Web Push form).
  EVP_PKEY_set_utf8_string_param(key, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT, "uncompressed");
  return PkeyPtr(key, EVP_PKEY_free);
}

Result<std::string> Ecdh(EVP_PKEY* mine, EVP_PKEY* theirs) {
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, mine, nullptr), EVP_PKEY_CTX_free);
  size_t len = 0;
  if (!ctx || EVP_PKEY_derive_init(ctx.get()) <= 0 ||
      EVP_PKEY_derive_set_peer(ctx.get(), theirs) <= 0 ||
      EVP_PKEY_derive(ctx.get(), nullptr, &len) <= 0) {
    return OpenSslError("ECDH failed");
  }
  std::string secret(len, '\0');
  if (EVP_PKEY_derive(ctx.get(), reinterpret_cast<unsigned char*>(secret.data()), &len) <= 0) {
    return OpenSslError("ECDH failed");
  }
  secret.resize(len);
  return secret;
}

Result<std::string> Aes128GcmSeal(std::string_view key, std::string_view nonce,
                                  std::string_view plaintext) {
  std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> ctx(EVP_CIPHER_CTX_new(),
                                                                      EVP_CIPHER_CTX_free);
  std::string out(plaintext.size() + 16, '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  int len = 0;
  int total = 0;
  if (!ctx ||
      EVP_EncryptInit_ex(ctx.get(), EVP_aes_128_gcm(), nullptr,
                         reinterpret_cast<const unsigned char*>(key.data()),
                         reinterpret_cast<const unsigned char*>(nonce.data())) != 1 ||
      EVP_EncryptUpdate(ctx.get(), o, &len,
                        reinterpret_cast<const unsigned char*>(plaintext.data()),
                        static_cast<int>(plaintext.size())) != 1) {
    return OpenSslError("AES-128-GCM failed");
  }
  total = len;
  if (EVP_EncryptFinal_ex(ctx.get(), o + total, &len) != 1) return OpenSslError("AES-GCM final");
  total += len;
  if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, 16, o + total) != 1) {
    return OpenSslError("AES-GCM tag");
  }
  out.resize(static_cast<size_t>(total) + 16);
  return out;
}

// RFC 8291 §3.3-3.4 and RFC 8188 §2 with the sender's key `as` (its public
// point `as_public`) and `salt`.
Result<std::string> Encrypt(std::string_view plaintext, std::string_view ua_public,
                            std::string_view auth_secret, EVP_PKEY* as, std::string_view as_public,
                            std::string_view salt) {
  if (plaintext.size() > kMaxPushPlaintext) {
    return InvalidArgument(
        "a push payload is at most " + std::to_string(kMaxPushPlaintext) + " bytes", "payload");
  }
  if (auth_secret.size() != kAuthSecretBytes) {
    return InvalidArgument("auth must be 16 bytes", "auth");
  }
  auto ua = PublicKeyFromRaw(ua_public, "p256dh");
  if (!ua.ok()) return ua.status();
  auto ecdh = Ecdh(as, ua->get());
  if (!ecdh.ok()) return ecdh.status();
  std::string key_info = "WebPush: info";
  key_info.push_back('\0');
  key_info.append(ua_public).append(as_public);
  const std::string ikm = Hkdf(auth_secret, *ecdh, key_info, 32);
  const std::string cek =
      Hkdf(salt, ikm, std::string_view("Content-Encoding: aes128gcm\0", 28), 16);
  const std::string nonce = Hkdf(salt, ikm, std::string_view("Content-Encoding: nonce\0", 24), 12);
  std::string record(plaintext);
  record.push_back('\x02');  // the last (only) record, no padding
  auto sealed = Aes128GcmSeal(cek, nonce, record);
  if (!sealed.ok()) return sealed.status();
  std::string out(salt);
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((kRecordSize >> shift) & 0xff));
  }
  out.push_back(static_cast<char>(as_public.size()));
  out.append(as_public).append(*sealed);
  return out;
}

}  // namespace

Status CheckSubscriptionKeys(std::string_view p256dh, std::string_view auth) {
  auto point = PublicKeyFromRaw(p256dh, "keys.p256dh");
  if (!point.ok()) return point.status();
  if (auth.size() != kAuthSecretBytes) {
    return InvalidArgument("keys.auth must be 16 bytes (base64url)", "keys.auth");
  }
  return Status::Ok();
}

Result<std::string> EncryptAes128Gcm(std::string_view plaintext, std::string_view ua_public,
                                     std::string_view auth_secret) {
  auto as = NewP256Key();
  if (!as.ok()) return as.status();
  auto as_public = RawPublic(as->get());
  if (!as_public.ok()) return as_public.status();
  std::string salt(kSaltBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(salt.data()), kSaltBytes) != 1) {
    return OpenSslError("no random bytes");
  }
  return Encrypt(plaintext, ua_public, auth_secret, as->get(), *as_public, salt);
}

Result<std::string> EncryptAes128GcmWith(std::string_view plaintext, std::string_view ua_public,
                                         std::string_view auth_secret, std::string_view as_private,
                                         std::string_view as_public, std::string_view salt) {
  if (salt.size() != kSaltBytes) return InvalidArgument("salt must be 16 bytes", "salt");
  auto as = KeyPairFromRaw(as_private, as_public);
  if (!as.ok()) return as.status();
  return Encrypt(plaintext, ua_public, auth_secret, as->get(), as_public, salt);
}

Result<VapidKey> VapidKey::Generate() {
  auto key = NewP256Key();
  if (!key.ok()) return key.status();
  auto pub = RawPublic(key->get());
  if (!pub.ok()) return pub.status();
  VapidKey out;
  out.pkey_ = std::shared_ptr<void>(key->release(),
                                    [](void* p) { EVP_PKEY_free(static_cast<EVP_PKEY*>(p)); });
  out.public_raw_ = std::move(pub).value();
  return out;
}

Result<VapidKey> VapidKey::FromPem(std::string_view pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  EVP_PKEY* raw = bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr;
  if (!raw) return InvalidArgument("not a PEM private key", "key_file");
  PkeyPtr key(raw, EVP_PKEY_free);
  char group[32] = {0};
  size_t glen = 0;
  if (EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_EC ||
      EVP_PKEY_get_utf8_string_param(key.get(), OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group,
                                     &glen) != 1 ||
      std::string_view(group) != "prime256v1") {
    return InvalidArgument("a VAPID key must be a P-256 (prime256v1) EC key", "key_file");
  }
  EVP_PKEY_set_utf8_string_param(key.get(), OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT,
                                 "uncompressed");
  auto pub = RawPublic(key.get());
  if (!pub.ok()) return pub.status();
  VapidKey out;
  out.pkey_ = std::shared_ptr<void>(key.release(),
                                    [](void* p) { EVP_PKEY_free(static_cast<EVP_PKEY*>(p)); });
  out.public_raw_ = std::move(pub).value();
  return out;
}

std::string VapidKey::PrivatePem() const {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  if (!bio || PEM_write_bio_PKCS8PrivateKey(bio.get(), static_cast<EVP_PKEY*>(pkey_.get()), nullptr,
                                            nullptr, 0, nullptr, nullptr) != 1) {
    return "";
  }
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

Result<std::string> VapidKey::SignEs256(std::string_view data) const {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  size_t len = 0;
  if (!ctx ||
      EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr,
                         static_cast<EVP_PKEY*>(pkey_.get())) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(data.data()),
                     data.size()) != 1) {
    return OpenSslError("ES256 signing failed");
  }
  std::string der(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(der.data()), &len,
                     reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1) {
    return OpenSslError("ES256 signing failed");
  }
  // DER SEQUENCE { r, s } to JOSE's fixed-width r || s.
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> sig(
      d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(len)), ECDSA_SIG_free);
  if (!sig) return OpenSslError("ES256 signature not DER");
  std::string out(64, '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  if (BN_bn2binpad(ECDSA_SIG_get0_r(sig.get()), o, 32) != 32 ||
      BN_bn2binpad(ECDSA_SIG_get0_s(sig.get()), o + 32, 32) != 32) {
    return OpenSslError("ES256 signature too long");
  }
  return out;
}

Result<VapidKey> LoadOrCreateVapidKey(Env& env, const std::string& path) {
  auto pem = ReadFileToString(env, path);
  if (pem.ok()) {
    auto key = VapidKey::FromPem(*pem);
    if (!key.ok()) return InvalidArgument(path + ": " + key.status().message(), "push.key_file");
    return key;
  }
  if (pem.status().code() != StatusCode::kNotFound) return pem.status();
  auto key = VapidKey::Generate();
  if (!key.ok()) return key.status();
  // Written whole to a 0600 temp file, synced, renamed: a crash leaves the
  // old state (no key) or the whole key, never a half one.
  const std::string tmp = path + ".tmp";
  auto file = env.NewWritableFile(tmp, 0600);
  if (!file.ok()) return file.status();
  MAESTRO_RETURN_IF_ERROR((*file)->Append(key->PrivatePem()));
  MAESTRO_RETURN_IF_ERROR((*file)->Sync());
  MAESTRO_RETURN_IF_ERROR((*file)->Close());
  MAESTRO_RETURN_IF_ERROR(env.SetPermissions(tmp, 0600));  // an old temp file kept its mode
  MAESTRO_RETURN_IF_ERROR(env.RenameFile(tmp, path));
  const size_t slash = path.rfind('/');
  MAESTRO_RETURN_IF_ERROR(env.SyncDir(slash == std::string::npos ? "." : path.substr(0, slash)));
  return key;
}

Result<std::string> EndpointOrigin(std::string_view endpoint) {
  const size_t colon = endpoint.find("://");
  if (colon == std::string_view::npos) {
    return InvalidArgument("endpoint must be an http(s) URL", "endpoint");
  }
  std::string scheme(endpoint.substr(0, colon));
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "https" && scheme != "http") {
    return InvalidArgument("endpoint must be an http(s) URL", "endpoint");
  }
  std::string_view rest = endpoint.substr(colon + 3);
  std::string authority(rest.substr(0, rest.find_first_of("/?#")));
  if (authority.empty() || authority.find('@') != std::string::npos) {
    return InvalidArgument("endpoint must name a host (and no user)", "endpoint");
  }
  for (char& c : authority) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string default_port = scheme == "https" ? ":443" : ":80";
  if (authority.size() > default_port.size() &&
      authority.compare(authority.size() - default_port.size(), default_port.size(),
                        default_port) == 0 &&
      authority.back() != ']') {
    authority.resize(authority.size() - default_port.size());
  }
  return scheme + "://" + authority;
}

Result<std::string> VapidAuthorization(const VapidKey& key, std::string_view endpoint,
                                       std::string_view subject, int64_t now_seconds,
                                       int64_t ttl_seconds) {
  auto aud = EndpointOrigin(endpoint);
  if (!aud.ok()) return aud.status();
  if (ttl_seconds <= 0 || ttl_seconds > kMaxVapidTtlSeconds) {
    return InvalidArgument("a VAPID token lives at most 24 hours", "ttl");
  }
  Json claims = {{"aud", *aud}, {"exp", now_seconds + ttl_seconds}};
  if (!subject.empty()) claims["sub"] = std::string(subject);
  const std::string signing_input =
      Base64UrlEncode(R"({"typ":"JWT","alg":"ES256"})") + "." + Base64UrlEncode(DumpJson(claims));
  auto sig = key.SignEs256(signing_input);
  if (!sig.ok()) return sig.status();
  return "vapid t=" + signing_input + "." + Base64UrlEncode(*sig) + ", k=" + key.PublicKeyB64();
}

}  // namespace maestro::push
