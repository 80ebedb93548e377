// Web Push subscriptions (issue 45 item 6; RFC 8030/8291/8292). The UI's
// bell subscribes a browser with maestro's VAPID public key and registers
// the subscription here; the PushDispatcher (notify/push_dispatcher.h) then
// sends the caller's "needs you", finished and failed notices to it.
//
//   GET    /api/local/push/key                 {"public_key": base64url 65-byte point}
//   GET    /api/local/push/subscriptions       {"subscriptions": [{id, endpoint, created_at}]}
//   POST   /api/local/push/subscriptions       PushSubscription.toJSON():
//          {"endpoint", "keys": {"p256dh", "auth"}, "expirationTime"?} -> 201 {id, ...}
//   DELETE /api/local/push/subscriptions/{id}  -> 200 {"deleted": id}
//
// Bearer-authenticated like every /api/local route. A subscription is its
// owner's: another user's id is a 404 on DELETE and never listed. POST
// checks, each a 400 naming the field: `endpoint` an https URL (http only
// for a host the operator's egress allow-list admits) of at most 2048 bytes
// whose host passes the egress policy (no loopback, private, link-local or
// metadata address in any spelling, core/egress.h) — and the dispatcher
// checks it again at every send; `keys.p256dh` a base64url 65-byte point on
// P-256; `keys.auth` 16 bytes. The same endpoint again replaces its keys;
// more than `push.max_subscriptions_per_user` endpoints is a 409. With
// `push.enabled: false` every route answers 503.
#include "api/api_server.h"
#include "api/http_util.h"
#include "notify/web_push.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {

constexpr size_t kMaxEndpointBytes = 2048;
constexpr const char* kSubscriptionPath = "/api/local/push/subscriptions/{id}";

Json SubscriptionJson(const PushSubscription& s) {
  return {{"id", s.id}, {"endpoint", s.endpoint}, {"created_at", s.created_at}};
}

// A base64url key field of `keys` (padding tolerated: some browsers' and
// libraries' toJSON add it).
Result<std::string> KeyField(const Json& keys, const char* name, const char* field) {
  auto it = keys.find(name);
  if (it == keys.end() || !it->is_string() || it->get<std::string>().empty()) {
    return InvalidArgument(std::string(field) + " is required (base64url)", field);
  }
  std::string text = it->get<std::string>();
  while (!text.empty() && text.back() == '=') text.pop_back();
  auto raw = push::Base64UrlDecode(text);
  if (!raw) return InvalidArgument(std::string(field) + " is not base64url", field);
  return *raw;
}

// The handlers, one per route; each answers 503 while push is off. A
// subscription is its owner's: the list and the delete see only the caller's.

bool PushOff(const ApiOptions& o) { return o.push_public_key.empty(); }

api::HttpResponse PushOffReply() {
  return ReplyError(Unavailable("push notifications are off on this server (push.enabled)"));
}

// GET /api/local/push/key: the VAPID public key a browser subscribes with.
api::HttpResponse PushKey(const ApiOptions& o) {
  if (PushOff(o)) return PushOffReply();
  return Reply(200, {{"public_key", o.push_public_key}});
}

// GET /api/local/push/subscriptions: the caller's devices.
api::HttpResponse ListSubscriptions(const ApiOptions& o, Store& store,
                                    const api::HttpRequest& req) {
  if (PushOff(o)) return PushOffReply();
  auto subs = store.ListPushSubscriptions(req.user);
  if (!subs.ok()) return ReplyError(subs.status());
  Json list = Json::array();
  for (const auto& s : *subs) list.push_back(SubscriptionJson(s));
  return Reply(200, {{"subscriptions", list}});
}

// POST /api/local/push/subscriptions: a browser's PushSubscription.toJSON().
// The endpoint passes the egress policy (a push service is https; plain
// http only to a receiver the operator named) and the keys are checked.
api::HttpResponse Subscribe(const ApiOptions& o, Store& store, const api::HttpRequest& req) {
  if (PushOff(o)) return PushOffReply();
  auto body = api::ParseObject(req.body);
  if (!body.ok()) return ReplyError(body.status());
  if (Status st = api::OnlyFields(*body, {"endpoint", "keys", "expirationTime"}); !st.ok()) {
    return ReplyError(st);
  }
  PushSubscription sub;
  sub.owner = req.user;
  if (Status st = api::RequiredString(*body, "endpoint", &sub.endpoint); !st.ok()) {
    return ReplyError(st);
  }
  if (sub.endpoint.size() > kMaxEndpointBytes) {
    return ReplyError(InvalidArgument("endpoint is longer than 2048 bytes", "endpoint"));
  }
  auto checked = o.egress->Check(sub.endpoint);
  if (!checked.ok()) {
    return ReplyError(InvalidArgument("endpoint: " + checked.status().message(), "endpoint"));
  }
  // Plain http only to a receiver the operator named (a local stand-in):
  // a push service on the internet is https.
  if (checked->scheme != "https" && InternalRange(checked->address).empty()) {
    return ReplyError(InvalidArgument("endpoint must be an https URL", "endpoint"));
  }
  auto keys = body->find("keys");
  if (keys == body->end() || !keys->is_object()) {
    return ReplyError(InvalidArgument("keys must be an object {p256dh, auth}", "keys"));
  }
  auto p256dh = KeyField(*keys, "p256dh", "keys.p256dh");
  if (!p256dh.ok()) return ReplyError(p256dh.status());
  auto auth = KeyField(*keys, "auth", "keys.auth");
  if (!auth.ok()) return ReplyError(auth.status());
  if (Status st = push::CheckSubscriptionKeys(*p256dh, *auth); !st.ok()) return ReplyError(st);
  sub.p256dh = push::Base64UrlEncode(*p256dh);
  sub.auth = push::Base64UrlEncode(*auth);
  auto added = store.AddPushSubscription(sub, o.push_max_subscriptions);
  if (!added.ok()) {
    if (added.status().code() == StatusCode::kResourceExhausted) {
      return ReplyError(409, added.status());
    }
    return ReplyError(added.status());
  }
  return Reply(201, SubscriptionJson(*added));
}

// DELETE /api/local/push/subscriptions/{id}: the caller's own device only.
api::HttpResponse Unsubscribe(const ApiOptions& o, Store& store, const api::HttpRequest& req) {
  if (PushOff(o)) return PushOffReply();
  if (Status st = store.DeletePushSubscription(req.user, req.params[0]); !st.ok()) {
    return ReplyError(st);
  }
  return Reply(200, {{"deleted", req.params[0]}});
}

}  // namespace

void ApiServer::PushRoutes() {
  using api::Need;
  using Req = api::HttpRequest;
  router_.Add("GET", "/api/local/push/key", Need::kRead,
              [this](const Req&) { return PushKey(options_); });
  router_.Add("GET", "/api/local/push/subscriptions", Need::kRead,
              [this](const Req& r) { return ListSubscriptions(options_, store_, r); });
  router_.Add("POST", "/api/local/push/subscriptions", Need::kRead,
              [this](const Req& r) { return Subscribe(options_, store_, r); });
  router_.Add("DELETE", kSubscriptionPath, Need::kRead,
              [this](const Req& r) { return Unsubscribe(options_, store_, r); });
}

}  // namespace maestro
