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
//      src/engine/loop/movement_result.cc `MovementResultFromComplete`,
//      `mapMovementResult` (resume_movement: the movement that asked, or the
//      one WaitSubtasks names).
//   3. The executor reports the outcome (`JobOutcome::WaitingHuman` /
//      `WaitingSubtasks`, src/engine/loop/movement_result.cc `ToJobOutcome`) from
//      src/engine/job/piece_executor.cc `PieceExecutor::Ended` — what the run
//      did, not the job's status; the run's context directory leaves
//      running/ for paused/ (`ContextSession`, src/context/context_dirs.cc).
//   4. The store decides and commits: src/store/policy.cc `policy::MapOutcome`
//      is the one decision of a job's end (a subtask park with no open child
//      is requeued, an ASK with an undelivered comment ends succeeded and a
//      follow-up takes the comment, a retryable failure is retried or failed
//      by src/store/retry_policy.cc), rows in src/store/sql/sql_claim_finish.cc
//      `SqlStore::FinishInTx`. The worker's thread is free; nothing waits in
//      memory.
//   5. After the commit the worker reads the job back and calls
//      src/engine/job/piece_executor.cc `PieceExecutor::OnCommitted`
//      (src/worker/worker_pool.cc `AfterCommit`): the directory goes to
//      completed/ only when the task's committed status is terminal, and
//      only from paused/ (a job that took it since keeps it). A crash between
//      the commit and this move is put right at the next start
//      (src/context/context_startup.cc `ReconcileContextsAtStart`).
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
//   resume_movement), src/engine/job/piece_executor.cc `StartMovement` starts
//   in `job.resume_movement`, src/engine/loop/comment_delivery.cc delivers the
//   answer, src/engine/job/reconcile.cc `ReconcileAtJobStart` answers calls a
//   crash left without results.
#pragma once
