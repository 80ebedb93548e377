// The names of maestro's built-in tools, spelled once.
//
// Where it sits: the registry registers them (file_tools, run_command,
// park_tools), workspace policies list them, the piece linter knows them,
// and the engine dispatches the control, park and agent tools by them. The
// model sees these exact strings in the `tools` array, and piece files and
// workspace configs name them, so a spelling here is part of the wire
// format: change one and stored pieces and transcripts stop matching.
//
// Plain char arrays rather than string_view: they compare with std::string,
// convert to it implicitly (std::set<std::string> initializers, Json) and
// need no conversion at any call site.
//
// Thread safety: constants.
#pragma once

namespace maestro::tools {

// Workspace tools (the registry's handlers).
inline constexpr char kReadFile[] = "ReadFile";
inline constexpr char kWriteFile[] = "WriteFile";
inline constexpr char kEditFile[] = "EditFile";
inline constexpr char kListDir[] = "ListDir";
inline constexpr char kGlob[] = "Glob";
inline constexpr char kGrep[] = "Grep";
inline constexpr char kRunCommand[] = "RunCommand";
// One command on a host of the space's `ssh:` (tools/run_remote.h),
// registered per job only where the space allows SSH.
inline constexpr char kRunRemote[] = "RunRemote";

// Park tools (tools/park_tools.h: the engine handles them).
inline constexpr char kRequestTool[] = "RequestTool";
inline constexpr char kRequestPackage[] = "RequestPackage";
inline constexpr char kWaitSubTask[] = "WaitSubTask";
inline constexpr char kSpinOffTask[] = "SpinOffTask";
// The agent's web browser (src/browser), registered per job when configured,
// and the park tool that goes with it: a person solves a CAPTCHA screen.
inline constexpr char kBrowseWeb[] = "BrowseWeb";
inline constexpr char kRequestCaptchaHelp[] = "RequestCaptchaHelp";

// Agent tools: a sub-agent (engine/loop/delegate.h) and the session handoff
// (seed 004).
inline constexpr char kDelegate[] = "delegate";
inline constexpr char kWriteHandoff[] = "WriteHandoff";

// Control tools the engine adds to every piece's array (engine/piece/piece_tools.h).
inline constexpr char kComplete[] = "complete";
inline constexpr char kTransition[] = "transition";

}  // namespace maestro::tools
