// Clang thread-safety annotations: which mutex guards a member (GUARDED_BY),
// which a function needs held (REQUIRES) or must not hold (EXCLUDES), and which
// functions take and give back a lock (ACQUIRE / RELEASE). `clang -Wthread-safety`
// (the `thread-safety` CMake preset) checks them at compile time; with GCC they
// expand to nothing. core/mutex.h is the annotated mutex they name.
//
// Attribute reference: https://clang.llvm.org/docs/ThreadSafetyAnalysis.html
//
// Thread safety: macros only.
#pragma once

#if defined(__clang__)
#define MAESTRO_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define MAESTRO_THREAD_ANNOTATION(x)
#endif

// A type that is a lock (the name appears in the warnings).
#define CAPABILITY(x) MAESTRO_THREAD_ANNOTATION(capability(x))
// An RAII type whose constructor acquires and destructor releases.
#define SCOPED_CAPABILITY MAESTRO_THREAD_ANNOTATION(scoped_lockable)
// The member is read and written only with `x` held.
#define GUARDED_BY(x) MAESTRO_THREAD_ANNOTATION(guarded_by(x))
// The caller holds the named mutexes across the call.
#define REQUIRES(...) MAESTRO_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// The function takes / gives back the named mutexes (`this` when none is named).
#define ACQUIRE(...) MAESTRO_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) MAESTRO_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
// The caller must not hold the named mutexes (the function takes them itself).
#define EXCLUDES(...) MAESTRO_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
