// Crash points: named places where a test may have the process killed
// (SIGKILL) to prove that the state a crash leaves there is recovered with
// exactly one effect (issue "a task's whole life": kill-point test).
//
// `MAESTRO_CRASH_AT=<name>` (or `<name>:<n>` for the n-th time the point is
// passed, default 1) arms one point for the process; unset, CrashPoint is a
// single relaxed load. SIGKILL, not abort(): nothing is flushed or unwound,
// exactly like `kill -9` from outside, but at an exact code point.
//
// The points, in the order a task passes them: seed.written (conversation
// seeded, comments not acknowledged), interjection.appended (an interjection
// in the conversation, not acknowledged), spawn.committed (a subtask child
// committed, the call's result not written), tool.finished (a call's ledger
// record `finished`, its result not in the conversation), movement.entered
// (the next movement's guidance written, before its first LLM call),
// job.committed (a job's end committed by the worker's finish, its context
// directory not moved on yet).
//
// Thread safety: any thread; the environment is read once.
#pragma once

namespace maestro {

void CrashPoint(const char* name);

}  // namespace maestro
