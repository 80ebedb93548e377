// The answer of a Store role method (store/store.h) that an implementation
// does not provide. The later roles' methods (tokens, notifications, usage,
// schedules, lessons, missions, a task's title and piece) are not pure, so a
// test fake of a role implements only what its test calls and the rest
// answer kUnimplemented. Stateless; thread-safe.
#pragma once

#include "core/status.h"

namespace maestro {

inline Status NotSupportedByStore() { return Unimplemented("not supported by this store"); }

}  // namespace maestro
