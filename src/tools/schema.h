// Argument validation of a tool call against the tool's JSON schema.
//
// Where it sits: the Dispatcher validates every call before authorizing or
// running it, so a handler only ever sees arguments of the declared shape and
// the model gets "Error: invalid arguments: field 'path': ..." naming the
// field to fix.
//
// Supported subset (what our tool schemas use): type (object, string,
// integer, number, boolean, array), properties, required,
// additionalProperties: false, enum, minimum, maximum, minLength, maxLength, items.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"
#include "core/status.h"

namespace maestro::tools {

// OK when `value` conforms to `schema`; otherwise kInvalidArgument with
// field() set to the dotted path of the first bad field ("edits.0.old").
Status ValidateArgs(const Json& schema, const Json& value);

// The object schema every tool's arguments use: `properties`, `required`,
// no other fields.
Json ObjectSchema(Json properties, std::vector<std::string> required);

}  // namespace maestro::tools
