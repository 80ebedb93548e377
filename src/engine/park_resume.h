// Park and resume: how a job waits without holding a thread, and comes back.
// (An overview: this header declares nothing. The code lives where each step
// belongs; this is the map a newcomer reads first. ARCHITECTURE.md §2 and §9
// give the rules in full.)
//
// PARK — the agent decides to wait:
//   1. A control tool ends the movement: `complete` with needs_user_input
//      (ASK), RequestTool / RequestPackage (an approval), WaitSubtasks, a
//      browser login (CAPTCHA) — src/tools/park_tools.cc `ControlTools()` is
//      the table of which tool parks with which status and wait_reason.
//   2. The movement's result says where to re-enter:
//      src/engine/movement_result.cc `MovementResultFromComplete`,
//      `mapMovementResult` (resume_movement: the movement that asked, or the
//      one WaitSubtasks names).
//   3. The executor returns the outcome (`JobOutcome::WaitingHuman` /
//      `WaitingSubtasks`, src/engine/movement_result.cc `ToJobOutcome`) from
//      src/engine/piece_executor.cc `PieceExecutor::Ended`, which also moves
//      the context directory to paused/ (src/context/context_dirs.cc).
//   4. The store decides and commits the park: src/store/policy.cc
//      `policy::MapOutcome` (a subtask park with no open child, an ASK with an
//      undelivered comment, are not parks), rows in
//      src/store/sql/sql_claim_finish.cc `SqlStore::FinishInTx`. The worker's thread
//      is free; nothing waits in memory.
//
// RESUME — what ends the wait:
//   - A person answers / comments: src/store/sql/sql_gates.cc
//     `SqlStore::PostComment` (the comment gate: answer, interjection,
//     follow-up) and `ResumeIfWaitingHuman`.
//   - An approval is decided: src/store/sql/sql_requests.cc
//     `SqlStore::DecideRequest` (compare-and-set, then ResumeIfWaitingHuman).
//   - The last open child ends: src/store/sql/sql_jobs.cc `AfterTransitions`
//     (fan-in, `policy::ParentWakes`, exactly once).
//   - A browser login is solved: src/store/sql/sql_jobs.cc `ResumeCaptchaJobs`;
//     a parked job resumed by hand: `ResumeParkedJob`.
//   Each makes the job `queued` again in the same transaction; the commit
//   wakes a worker (`on_job_available` → notify/notifier.cc; PostgreSQL NOTIFY).
//
// RE-ENTRY — the resumed job runs again on any worker:
//   src/engine/prompt/prompt_paths.cc `PlanJobPrompt` picks the resume path
//   (same job's conversation replayed, a resume note naming
//   resume_movement), src/engine/piece_executor.cc `StartMovement` starts
//   in `job.resume_movement`, src/engine/comment_delivery.cc delivers the
//   answer, src/engine/reconcile.cc `ReconcileAtJobStart` answers calls a
//   crash left without results.
#pragma once
