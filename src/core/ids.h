// Identifiers.
//
// Tasks are named by random UUIDs (v4), which are what people see and paste.
// Jobs, events, comments and requests use sortable ids: 26 Crockford base32
// characters (ULID layout: 48-bit millisecond time, 80 random bits), so that
// ordering by id is ordering by creation time and SSE `Last-Event-ID` resume
// is a simple `id > ?` query. Within one process successive sortable ids are
// strictly increasing even inside one millisecond.
//
// Thread safety: all functions may be called concurrently.
#pragma once

#include <string>

#include "core/clock.h"

namespace maestro {

// "3f2b8c1e-5d4a-4b6f-9e21-7c0d8a9b1f23"
std::string NewUuid();

// "01JDW3K6V4Q8X2M7N5P0R9S1TB" for `now`.
std::string NewSortableId(TimeMs now);

bool IsUuid(const std::string& s);

}  // namespace maestro
