// JSON views of store rows as the API returns them (snake_case fields).
#pragma once

#include "core/json.h"
#include "store/types.h"

namespace maestro::api {

Json TaskJson(const Task& t);
Json JobJson(const Job& j);
Json CommentJson(const Comment& c);
Json RequestJson(const Request& r);
Json EventJson(const Event& e);

}  // namespace maestro::api
