// Base64 (RFC 4648 §4, the standard alphabet with `=` padding): attached
// files sent in JSON (api/attachments.h) and images sent to a vision model
// as data: URLs (engine/prompt/attachment_context.h).
//
// Decoding is strict — no whitespace, no URL-safe alphabet, padding exactly
// as the length needs, no stray bits in the last symbol — so a malformed
// upload is refused instead of silently stored as other bytes.
//
// base64url (RFC 4648 §5, the URL alphabet, no padding): Web Push keys and
// VAPID JWTs (src/notify), OIDC state, nonce, PKCE values and JWS segments
// (src/identity). Decoding is as strict: the URL alphabet only, no padding,
// no stray bits.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace maestro {

std::string Base64Encode(std::string_view bytes);
// The bytes of `text`, or nullopt when it is not strict base64.
std::optional<std::string> Base64Decode(std::string_view text);

std::string Base64UrlEncode(std::string_view bytes);
// The bytes of `text`, or nullopt when it is not strict unpadded base64url.
std::optional<std::string> Base64UrlDecode(std::string_view text);

}  // namespace maestro
