#include "api/task_validation.h"

#include <fmt/format.h>

#include <algorithm>

namespace maestro::api {
namespace {

std::string Listed(const std::vector<std::string>& names) {
  return names.empty() ? "(none)" : fmt::format("{}", fmt::join(names, ", "));
}

std::vector<std::string> ProfileNames(const TaskChoices& c) {
  std::vector<std::string> out;
  for (const auto& p : c.profiles) out.push_back(p.name);
  return out;
}

const ProfileView* FindProfile(const TaskChoices& c, const std::string& name) {
  for (const auto& p : c.profiles) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

// The first profile serving `model` ("default" is first when it does).
const ProfileView* ProfileForModel(const TaskChoices& c, const std::string& model) {
  for (const auto& p : c.profiles) {
    if (!p.model.empty() && p.model == model) return &p;
  }
  return nullptr;
}

}  // namespace

Status ChoosePiece(const TaskChoices& choices, NewTask* task) {
  auto it = choices.space_pieces.find(task->space);
  const TaskChoices::SpacePiece* sp = it == choices.space_pieces.end() ? nullptr : &it->second;
  if (sp && sp->grounded && !task->piece.empty() && task->piece != sp->piece) {
    return InvalidArgument(
        fmt::format("space '{}' is grounded to piece '{}'; omit piece or give '{}'", task->space,
                    sp->piece, sp->piece),
        "piece");
  }
  if (!task->piece.empty()) return Status::Ok();
  if (sp && !sp->piece.empty()) {
    task->piece = sp->piece;
  } else if (choices.route_by_llm) {
    task->piece = kRoutedPiece;
  } else {
    task->piece = choices.default_piece.empty() ? "chat" : choices.default_piece;
  }
  return Status::Ok();
}

Status CheckPiece(const TaskChoices& choices, const std::string& piece) {
  if (!choices.piece_names) return Status::Ok();
  if (choices.route_by_llm && piece == kRoutedPiece) return Status::Ok();
  const auto names = choices.piece_names();
  if (std::find(names.begin(), names.end(), piece) != names.end()) return Status::Ok();
  return InvalidArgument(fmt::format("unknown piece '{}'; known pieces: {}", piece, Listed(names)),
                         "piece");
}

Status CheckSpace(const TaskChoices& choices, const std::string& space) {
  if (space.empty()) return Status::Ok();
  std::vector<std::string> names;
  for (const auto& s : choices.spaces) {
    if (s.name == space) return Status::Ok();
    names.push_back(s.name);
  }
  if (names.empty()) {
    return InvalidArgument(
        fmt::format("unknown space '{}'; no spaces are configured (add them under 'spaces:' in "
                    "the config)",
                    space),
        "space");
  }
  return InvalidArgument(
      fmt::format("unknown space '{}'; configured spaces: {}", space, Listed(names)), "space");
}

Status ResolveProfile(const TaskChoices& choices, NewTask* task) {
  if (choices.profiles.empty()) return Status::Ok();
  const ProfileView* chosen = nullptr;
  if (!task->profile.empty()) {
    chosen = FindProfile(choices, task->profile);
    if (chosen == nullptr) {
      return InvalidArgument(fmt::format("unknown profile '{}'; configured profiles: {}",
                                         task->profile, Listed(ProfileNames(choices))),
                             "profile");
    }
  }
  if (!task->model.empty()) {
    const ProfileView* by_model = chosen ? chosen : ProfileForModel(choices, task->model);
    if (by_model == nullptr || by_model->model != task->model) {
      std::vector<std::string> models;
      for (const auto& p : choices.profiles) models.push_back(p.name + "=" + p.model);
      return InvalidArgument(
          fmt::format("model '{}' is not served by {}; configured profile=model: {} (choose a "
                      "profile instead)",
                      task->model, chosen ? "profile '" + chosen->name + "'" : "any profile",
                      Listed(models)),
          "model");
    }
    chosen = by_model;
  }
  if (chosen == nullptr) return Status::Ok();  // the default profile, as before
  task->profile = chosen->name;
  task->model = chosen->model;
  return Status::Ok();
}

Status CheckNewTask(const TaskChoices& choices, NewTask* task) {
  MAESTRO_RETURN_IF_ERROR(CheckPiece(choices, task->piece));
  MAESTRO_RETURN_IF_ERROR(CheckSpace(choices, task->space));
  return ResolveProfile(choices, task);
}

Json SpacesJson(const TaskChoices& choices) {
  Json arr = Json::array();
  for (const auto& s : choices.spaces) {
    arr.push_back({{"name", s.name},
                   {"description", s.description},
                   {"path", s.path},
                   {"network_allowed", s.network_allowed},
                   {"edit_allowed", s.edit_allowed},
                   {"shell_allowed", s.shell_allowed},
                   {"tools", s.tools}});
  }
  return Json{{"spaces", arr}};
}

Json ProfilesJson(const TaskChoices& choices) {
  Json arr = Json::array();
  for (const auto& p : choices.profiles) arr.push_back({{"name", p.name}, {"model", p.model}});
  return Json{{"profiles", arr}};
}

}  // namespace maestro::api
