// Lesson routes (issue 21): the lessons Reflection tasks wrote, which later
// tasks of a space get in their instruction (engine/job/reflection.h) — listed,
// added, corrected and deleted by people (the UI's Lessons page). A lesson
// is space knowledge, not a task's: every signed-in user sees and edits the
// lessons of the spaces (private task text is never copied into a lesson by
// the server; the Reflection task writes what it chooses) — except a team
// space's (issue 49): its team's members see them (others get 404, as for a
// missing lesson, and no row in a list), and changing one needs a role that
// runs tasks there (403 otherwise).
#include <algorithm>

#include "api/api_server.h"
#include "api/http_util.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {

constexpr const char* kLessonsPath = "/api/local/lessons";
constexpr const char* kLessonPath = "/api/local/lessons/{id}";
constexpr int kListLimit = 500;
constexpr size_t kMaxLesson = 2000;

const std::vector<std::string> kLessonFields = {"space", "piece", "scope", "lesson", "evidence"};

Json LessonJson(const Lesson& l) {
  return {{"id", l.id},
          {"space", l.space},
          {"piece", l.piece},
          {"scope", LessonScopeName(l.scope)},
          {"lesson", l.lesson},
          {"evidence", l.evidence},
          {"source_task_id", l.source_task_id},
          {"created_at", l.created_at},
          {"updated_at", l.updated_at}};
}

// The body's fields onto `l` (absent ones keep their value).
Status ApplyFields(const Json& body, Lesson* l, bool create) {
  MAESTRO_RETURN_IF_ERROR(api::OnlyFields(body, kLessonFields));
  if (create) MAESTRO_RETURN_IF_ERROR(api::OptionalString(body, "space", &l->space));
  MAESTRO_RETURN_IF_ERROR(api::OptionalString(body, "piece", &l->piece));
  MAESTRO_RETURN_IF_ERROR(api::OptionalString(body, "lesson", &l->lesson));
  std::string scope(LessonScopeName(l->scope));
  MAESTRO_RETURN_IF_ERROR(api::OptionalString(body, "scope", &scope));
  auto s = ParseLessonScope(scope);
  if (!s) return InvalidArgument("scope must be space or piece", "scope");
  l->scope = *s;
  if (body.contains("evidence")) {
    const Json& ev = body["evidence"];
    if (!ev.is_array()) return InvalidArgument("evidence must be a list of task ids", "evidence");
    l->evidence.clear();
    for (const Json& e : ev) {
      if (!e.is_string()) return InvalidArgument("evidence must be a list of task ids", "evidence");
      l->evidence.push_back(e.get<std::string>());
    }
  }
  if (l->lesson.empty()) return InvalidArgument("lesson must not be empty", "lesson");
  if (l->lesson.size() > kMaxLesson) {
    return InvalidArgument("lesson is longer than 2000 bytes", "lesson");
  }
  return Status::Ok();
}

// The lesson `id` if the caller may see its space; kNotFound otherwise.
Result<Lesson> VisibleLesson(Store& store, const api::Access& access, const api::HttpRequest& req) {
  auto l = store.GetLesson(req.params[0]);
  if (l.ok() && !access.SpaceVisible(l->space, req.user)) {
    return NotFound("lesson " + api::SafeEcho(req.params[0]) + " not found");  // as a missing one
  }
  return l;
}

// Whether the caller's role in the lesson's space runs tasks (a change).
Status MayChange(const api::Access& access, const api::HttpRequest& req, const std::string& space) {
  Task in_space;
  in_space.space = space;
  return access.Allow(in_space, req.user, api::kCapRun);
}

// The handlers, one per route (the header comment says who may do what).

// GET /api/local/lessons[?space=NAME[&piece=NAME]]: all lessons, or what a
// task of that space (and piece) is given.
api::HttpResponse ListLessons(Store& store, const api::Access& access,
                              const api::HttpRequest& req) {
  const bool by_space = std::any_of(req.query.begin(), req.query.end(),
                                    [](const auto& q) { return q.first == "space"; });
  const std::string piece = req.Query("piece");
  Result<std::vector<Lesson>> list =
      by_space ? store.ListLessons(req.Query("space"),
                                   piece.empty() ? std::nullopt : std::optional<std::string>(piece),
                                   kListLimit)
               : store.ListAllLessons(kListLimit);
  if (!list.ok()) return ReplyError(list.status());
  Json arr = Json::array();
  for (const Lesson& l : *list) {
    if (access.SpaceVisible(l.space, req.user)) arr.push_back(LessonJson(l));
  }
  return Reply(200, {{"lessons", arr}});
}

// POST /api/local/lessons: a person adds a lesson to a known space (and piece).
api::HttpResponse AddLesson(Store& store, const api::Access& access,
                            const api::TaskChoices& choices, const api::HttpRequest& req) {
  auto body = api::ParseObject(req.body);
  if (!body.ok()) return ReplyError(body.status());
  Lesson l;
  if (Status st = ApplyFields(*body, &l, /*create=*/true); !st.ok()) return ReplyError(st);
  if (Status st = api::CheckSpace(choices, l.space); !st.ok()) return ReplyError(st);
  if (!access.SpaceVisible(l.space, req.user)) {
    return ReplyError(InvalidArgument("unknown space: " + api::SafeEcho(l.space), "space"));
  }
  if (Status st = MayChange(access, req, l.space); !st.ok()) return ReplyError(st);
  if (l.scope == LessonScope::kPiece) {
    if (Status st = api::CheckPiece(choices, l.piece); !st.ok()) return ReplyError(st);
  }
  auto added = store.AddLesson(l);
  if (!added.ok()) return ReplyError(added.status());
  return Reply(201, {{"lesson", LessonJson(*added)}});
}

// GET /api/local/lessons/{id}
api::HttpResponse ShowLesson(Store& store, const api::Access& access, const api::HttpRequest& req) {
  auto l = VisibleLesson(store, access, req);
  if (!l.ok()) return ReplyError(l.status());
  return Reply(200, {{"lesson", LessonJson(*l)}});
}

// PATCH /api/local/lessons/{id}: corrects a lesson; its space stays.
api::HttpResponse CorrectLesson(Store& store, const api::Access& access,
                                const api::TaskChoices& choices, const api::HttpRequest& req) {
  auto l = VisibleLesson(store, access, req);
  if (!l.ok()) return ReplyError(l.status());
  if (Status st = MayChange(access, req, l->space); !st.ok()) return ReplyError(st);
  auto body = api::ParseObject(req.body);
  if (!body.ok()) return ReplyError(body.status());
  if (body->contains("space")) {
    return ReplyError(InvalidArgument("a lesson's space cannot change", "space"));
  }
  if (Status st = ApplyFields(*body, &*l, /*create=*/false); !st.ok()) return ReplyError(st);
  if (l->scope == LessonScope::kPiece) {
    if (Status st = api::CheckPiece(choices, l->piece); !st.ok()) return ReplyError(st);
  }
  auto updated = store.UpdateLesson(*l);
  if (!updated.ok()) return ReplyError(updated.status());
  return Reply(200, {{"lesson", LessonJson(*updated)}});
}

// DELETE /api/local/lessons/{id}
api::HttpResponse DeleteLesson(Store& store, const api::Access& access,
                               const api::HttpRequest& req) {
  auto l = VisibleLesson(store, access, req);
  if (!l.ok()) return ReplyError(l.status());
  if (Status st = MayChange(access, req, l->space); !st.ok()) return ReplyError(st);
  if (Status st = store.DeleteLesson(req.params[0]); !st.ok()) return ReplyError(st);
  return Reply(200, {{"deleted", req.params[0]}});
}

}  // namespace

void ApiServer::LessonRoutes() {
  using api::Need;
  using Req = api::HttpRequest;
  router_.Add("GET", kLessonsPath, Need::kRead,
              [this](const Req& r) { return ListLessons(store_, *access_, r); });
  router_.Add("POST", kLessonsPath, Need::kRun,
              [this](const Req& r) { return AddLesson(store_, *access_, options_.choices, r); });
  router_.Add("GET", kLessonPath, Need::kRead,
              [this](const Req& r) { return ShowLesson(store_, *access_, r); });
  router_.Add("PATCH", kLessonPath, Need::kRun, [this](const Req& r) {
    return CorrectLesson(store_, *access_, options_.choices, r);
  });
  router_.Add("DELETE", kLessonPath, Need::kRun,
              [this](const Req& r) { return DeleteLesson(store_, *access_, r); });
}

}  // namespace maestro
