// Task validation: what a request may name when it creates or continues a
// task (TaskChoices: the pieces, the configured persistent spaces and the LLM
// profiles) and the checks that refuse anything else with a 400 naming the
// field, BEFORE the Store writes a task or job row (issue 12: "validate at
// the edge").
//
// Where it sits: src/cli/main.cc fills it from the PieceCatalog, the
// SpaceRegistry and the config's profiles and passes it in ApiOptions; the
// task routes call CheckNewTask / CheckPiece. It is plain data plus one
// lookup, so api/ needs neither the engine nor the tools library.
//
// `model` is not a free choice: it must be the model of a configured
// profile and is mapped onto that profile, so a job is never created for a
// model that no worker runs (docs/api.md).
//
// Thread safety: immutable after construction; `piece_names` must be safe to
// call from any request thread.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/status.h"
#include "store/types.h"

namespace maestro::api {

// A persistent space as GET /api/spaces shows it.
struct SpaceView {
  std::string name;
  std::string description;
  std::string path;
  bool network_allowed = false;
  bool edit_allowed = false;
  bool shell_allowed = false;
  std::vector<std::string> tools;  // allowed tool names, sorted
};

// A configured LLM profile: "default" (the `llm:` section) or an
// `llm_profiles:` key, with the model it serves.
struct ProfileView {
  std::string name;
  std::string model;
};

struct TaskChoices {
  // The piece names a worker can run; unset: pieces are not checked.
  std::function<std::vector<std::string>()> piece_names;
  // The only spaces a task may name (none configured: any `space` is refused).
  std::vector<SpaceView> spaces;
  // Empty: `profile` and `model` are not checked (tests without a config).
  std::vector<ProfileView> profiles;
  // Piece routing (issue 21): the piece of a task created without one, or
  // kRoutedPiece when an LLM call is to choose it (pieces.router: llm); a
  // space's own piece comes first, and a grounded space allows only it.
  std::string default_piece = "chat";
  bool route_by_llm = false;
  struct SpacePiece {
    std::string piece;
    bool grounded = false;
  };
  std::map<std::string, SpacePiece> space_pieces;
};

// Sets `task->piece` when the request named none (the space's piece, the
// router, or the default); kInvalidArgument naming "piece" when a grounded
// space is given another piece.
Status ChoosePiece(const TaskChoices& choices, NewTask* task);

// kInvalidArgument naming "piece" unless `piece` is known.
Status CheckPiece(const TaskChoices& choices, const std::string& piece);
// kInvalidArgument naming "space" unless `space` is empty or configured.
Status CheckSpace(const TaskChoices& choices, const std::string& space);
// Resolves `task->profile` / `task->model` to one configured profile: sets
// both (the profile's name and model), or fails naming "profile" (listing
// the configured profiles) or "model" (listing the configured models).
Status ResolveProfile(const TaskChoices& choices, NewTask* task);
// All three, in the order of the fields in the request body.
Status CheckNewTask(const TaskChoices& choices, NewTask* task);

// {"spaces": [{name, description, path, network_allowed, edit_allowed,
// shell_allowed, tools}]} in name order.
Json SpacesJson(const TaskChoices& choices);

// {"profiles": [{name, model}]}, "default" first (the order of `profiles`):
// what GET /api/profiles shows a create form. Names and models only — a
// profile's base_url and api_key never leave the config (ProfileView does
// not even carry them).
Json ProfilesJson(const TaskChoices& choices);

}  // namespace maestro::api
