// Web Push message encryption and VAPID (notify/web_push.h): RFC 8291
// Appendix A's vector byte for byte, the refusals of malformed keys, and a
// VAPID JWT whose ES256 signature OpenSSL verifies with the advertised key.
// (tests/push decrypts what a real `maestro serve` sends with an independent
// implementation, npm http_ece.)
#include "notify/web_push.h"

#include <gtest/gtest.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <sys/stat.h>

#include "core/json.h"
#include "support/temp_dir.h"

namespace maestro::push {
namespace {

std::string B64(std::string_view s) {
  auto raw = Base64UrlDecode(s);
  EXPECT_TRUE(raw.has_value()) << s;
  return raw.value_or("");
}

// RFC 8291 Appendix A.
constexpr const char* kPlaintext = "When I grow up, I want to be a watermelon";
constexpr const char* kAsPublic =
    "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8";
constexpr const char* kAsPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw";
constexpr const char* kUaPublic =
    "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
constexpr const char* kSalt = "DGv6ra1nlYgDCS1FRnbzlw";
constexpr const char* kAuth = "BTBZMqHH6r4Tts7J_aSIgg";
constexpr const char* kMessage =
    "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6"
    "TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_"
    "Qulcy4a-fN";

TEST(WebPushTest, EncryptsRfc8291AppendixAExactly) {
  auto body = EncryptAes128GcmWith(kPlaintext, B64(kUaPublic), B64(kAuth), B64(kAsPrivate),
                                   B64(kAsPublic), B64(kSalt));
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(Base64UrlEncode(*body), kMessage);
}

TEST(WebPushTest, EveryMessageHasAFreshSaltAndKeyAndTheRfc8188Header) {
  auto a = EncryptAes128Gcm(kPlaintext, B64(kUaPublic), B64(kAuth));
  auto b = EncryptAes128Gcm(kPlaintext, B64(kUaPublic), B64(kAuth));
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string plain = kPlaintext;
  ASSERT_EQ(a->size(), 16 + 4 + 1 + 65 + plain.size() + 1 + 16);
  EXPECT_EQ(a->substr(16, 4), std::string("\x00\x00\x10\x00", 4));  // rs 4096
  EXPECT_EQ(static_cast<unsigned char>((*a)[20]), 65);              // idlen
  EXPECT_EQ((*a)[21], '\x04');                                      // keyid: an uncompressed point
  EXPECT_NE(a->substr(0, 16), b->substr(0, 16)) << "salt reused";
  EXPECT_NE(a->substr(21, 65), b->substr(21, 65)) << "ephemeral key reused";
  EXPECT_EQ(a->find(plain), std::string::npos);
}

TEST(WebPushTest, MalformedSubscriptionKeysAreRefusedNamingTheField) {
  const std::string ua = B64(kUaPublic);
  const std::string auth = B64(kAuth);
  EXPECT_TRUE(CheckSubscriptionKeys(ua, auth).ok());
  EXPECT_EQ(CheckSubscriptionKeys(ua.substr(0, 64), auth).field(), "keys.p256dh");
  std::string compressed = ua;
  compressed[0] = '\x02';
  EXPECT_EQ(CheckSubscriptionKeys(compressed, auth).field(), "keys.p256dh");
  std::string off_curve = ua;
  off_curve[40] ^= 1;  // y no longer matches x
  EXPECT_EQ(CheckSubscriptionKeys(off_curve, auth).field(), "keys.p256dh");
  EXPECT_EQ(CheckSubscriptionKeys(std::string(65, '\0'), auth).field(), "keys.p256dh");
  EXPECT_EQ(CheckSubscriptionKeys(ua, auth.substr(0, 15)).field(), "keys.auth");
  EXPECT_EQ(EncryptAes128Gcm("x", off_curve, auth).status().field(), "p256dh");
  EXPECT_EQ(EncryptAes128Gcm(std::string(kMaxPushPlaintext + 1, 'x'), ua, auth).status().field(),
            "payload");
  EXPECT_TRUE(EncryptAes128Gcm(std::string(kMaxPushPlaintext, 'x'), ua, auth).ok());
}

TEST(WebPushTest, Base64UrlIsStrict) {
  for (std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "\xff\xfe\x00"}) {
    EXPECT_EQ(Base64UrlDecode(Base64UrlEncode(s)), s);
  }
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
  EXPECT_FALSE(Base64UrlDecode("Zm9v="));  // padding
  EXPECT_FALSE(Base64UrlDecode("+/8"));    // the standard alphabet
  EXPECT_FALSE(Base64UrlDecode("Zm9"));    // "Zm8" is "fo"; a 9 leaves stray bits
  EXPECT_FALSE(Base64UrlDecode("Z"));
}

TEST(WebPushTest, EndpointOriginIsSchemeAndAuthority) {
  EXPECT_EQ(*EndpointOrigin("https://fcm.googleapis.com/fcm/send/abc?x#y"),
            "https://fcm.googleapis.com");
  EXPECT_EQ(*EndpointOrigin("HTTPS://Push.Example.NET:443/x"), "https://push.example.net");
  EXPECT_EQ(*EndpointOrigin("http://127.0.0.1:8123/push/1"), "http://127.0.0.1:8123");
  EXPECT_EQ(*EndpointOrigin("https://[2001:db8::1]/p"), "https://[2001:db8::1]");
  EXPECT_EQ(EndpointOrigin("ftp://a/b").status().field(), "endpoint");
  EXPECT_EQ(EndpointOrigin("https://user@a/b").status().field(), "endpoint");
  EXPECT_EQ(EndpointOrigin("https:///b").status().field(), "endpoint");
}

// Verifies a JOSE ES256 signature (R || S) over `input` with a raw point.
bool VerifyEs256(const std::string& point, const std::string& input, const std::string& sig) {
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, const_cast<char*>("prime256v1"),
                                       0),
      OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, const_cast<char*>(point.data()),
                                        point.size()),
      OSSL_PARAM_construct_end()};
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr);
  EVP_PKEY* key = nullptr;
  EVP_PKEY_fromdata_init(ctx);
  EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params);
  EVP_PKEY_CTX_free(ctx);
  if (!key || sig.size() != 64) return false;
  ECDSA_SIG* es = ECDSA_SIG_new();
  ECDSA_SIG_set0(es, BN_bin2bn(reinterpret_cast<const unsigned char*>(sig.data()), 32, nullptr),
                 BN_bin2bn(reinterpret_cast<const unsigned char*>(sig.data()) + 32, 32, nullptr));
  unsigned char* der = nullptr;
  int der_len = i2d_ECDSA_SIG(es, &der);
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  bool ok =
      EVP_DigestVerifyInit(md, nullptr, EVP_sha256(), nullptr, key) == 1 &&
      EVP_DigestVerify(md, der, static_cast<size_t>(der_len),
                       reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
  EVP_MD_CTX_free(md);
  OPENSSL_free(der);
  ECDSA_SIG_free(es);
  EVP_PKEY_free(key);
  return ok;
}

TEST(WebPushTest, VapidHeaderCarriesASignedJwtForTheEndpointsOrigin) {
  auto key = VapidKey::Generate();
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  ASSERT_EQ(key->public_raw().size(), 65u);
  const int64_t now = 1'800'000'000;
  auto header = VapidAuthorization(*key, "https://push.example.net:443/wpush/v2/xyz",
                                   "mailto:ops@example.com", now);
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  ASSERT_EQ(header->rfind("vapid t=", 0), 0u) << *header;
  const size_t k = header->find(", k=");
  ASSERT_NE(k, std::string::npos);
  EXPECT_EQ(header->substr(k + 4), key->PublicKeyB64());
  const std::string jwt = header->substr(8, k - 8);
  const size_t dot1 = jwt.find('.'), dot2 = jwt.rfind('.');
  ASSERT_NE(dot1, dot2);
  auto head = ParseJson(B64(jwt.substr(0, dot1)));
  auto claims = ParseJson(B64(jwt.substr(dot1 + 1, dot2 - dot1 - 1)));
  ASSERT_TRUE(head.ok() && claims.ok());
  EXPECT_EQ((*head)["alg"], "ES256");
  EXPECT_EQ((*head)["typ"], "JWT");
  EXPECT_EQ((*claims)["aud"], "https://push.example.net");
  EXPECT_EQ((*claims)["sub"], "mailto:ops@example.com");
  EXPECT_GT((*claims)["exp"].get<int64_t>(), now);
  EXPECT_LE((*claims)["exp"].get<int64_t>(), now + 24 * 3600);
  EXPECT_TRUE(VerifyEs256(key->public_raw(), jwt.substr(0, dot2), B64(jwt.substr(dot2 + 1))));
  // Another key's signature does not verify: the check is real.
  auto other = VapidKey::Generate();
  EXPECT_FALSE(VerifyEs256(other->public_raw(), jwt.substr(0, dot2), B64(jwt.substr(dot2 + 1))));
  EXPECT_FALSE(VapidAuthorization(*key, "https://a/b", "", now, 24 * 3600 + 1).ok());
  auto no_sub = VapidAuthorization(*key, "https://a/b", "", now);
  ASSERT_TRUE(no_sub.ok());
  const std::string nj = no_sub->substr(8, no_sub->find(", k=") - 8);
  auto nc = ParseJson(B64(nj.substr(nj.find('.') + 1, nj.rfind('.') - nj.find('.') - 1)));
  ASSERT_TRUE(nc.ok());
  EXPECT_FALSE(nc->contains("sub"));
}

TEST(WebPushTest, TheKeyIsMadeOnceKeptPrivateAndReadBack) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/vapid_key.pem";
  auto made = LoadOrCreateVapidKey(*Env::Default(), path);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = LoadOrCreateVapidKey(*Env::Default(), path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->public_raw(), made->public_raw());
  auto pem = ReadFileToString(*Env::Default(), path);
  ASSERT_TRUE(pem.ok());
  EXPECT_NE(pem->find("BEGIN PRIVATE KEY"), std::string::npos);

  ASSERT_TRUE(WriteStringToFile(*Env::Default(), path, "not a key\n", 0600).ok());
  auto bad = LoadOrCreateVapidKey(*Env::Default(), path);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "push.key_file");
  EXPECT_NE(bad.status().message().find(path), std::string::npos);
}

}  // namespace
}  // namespace maestro::push
