// Reading the engine's OpenAI-shaped messages (current.jsonl lines) for the
// provider translators (anthropic.cc, gemini.cc): what both need the same.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "core/json.h"

namespace maestro::llm {

// The text of an OpenAI `content`: the string, or the text parts of an array
// joined by '\n' (tool results and system messages carry text only). Parts
// of another shape are skipped, never thrown on.
std::string ContentText(const Json& content);

// A tool call's `arguments` text as the object both APIs require: {} for an
// empty (or blank) text, the object it parses to, or — for text that is not
// valid JSON or not an object (a cut stream, a weak model) —
// {"_raw_arguments": text}, so the model sees what it wrote and the
// byte-stable history keeps its cache.
Json ArgumentsObject(const std::string& arguments);

}  // namespace maestro::llm
