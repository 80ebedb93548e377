// LiveInput: one input a person sends to a job's browser through the live
// view (POST /api/local/jobs/{id}/browser/input) — a click at viewport
// pixels, text typed at the focus, or one of the keys Enter, Tab, Backspace.
//
// Where it sits: the ONE validation of that input, used by the API route
// (before anything reaches a browser or the store) and again by the worker
// process's BrowserCallServicer (browser_call_servicer.h) on the request a
// store row carries (a row is untrusted: whoever can write the database
// could have written it). Apply runs it on a BrowserSession.
//
// Thread safety: pure functions; Apply is as thread-safe as the session.
#pragma once

#include <string>

#include "browser/browser_session.h"
#include "core/json.h"
#include "core/status.h"

namespace maestro::browser {

// Typed text is a login's fields, not a document.
inline constexpr size_t kMaxLiveTextBytes = 4096;

struct LiveInput {
  std::string type;  // click | text | key
  int x = 0, y = 0;  // click: viewport CSS pixels
  std::string text;  // text: valid UTF-8, at most kMaxLiveTextBytes
  std::string key;   // key: Enter | Tab | Backspace

  Json ToJson() const;
};

// {"type":"click","x","y"} | {"type":"text","text"} | {"type":"key","key"};
// kInvalidArgument naming the field (type, x, y, text, key) otherwise.
Result<LiveInput> ParseLiveInput(const Json& body);

// Runs the input on the session.
Status ApplyLiveInput(BrowserSession& session, const LiveInput& in);

}  // namespace maestro::browser
