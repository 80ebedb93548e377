// rusage OUT.json CMD ARGS...: runs CMD, waits for it with wait4(2) and writes
// its resource usage to OUT.json: user and system CPU seconds (the child and
// every descendant it waited for; microsecond resolution, where /usr/bin/time
// -f prints 10 ms), peak RSS in KiB (the largest single process of that tree)
// and wall seconds. Written in C so that the launcher's own memory, which
// Linux folds into the child's peak RSS at exec, stays about 1 MiB.
// Built by run.mjs with `cc -O2`.
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: rusage OUT.json CMD ARGS...\n");
    return 2;
  }
  double t0 = Now();
  pid_t pid = fork();
  if (pid < 0) return perror("fork"), 2;
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    perror("execvp");
    _exit(127);
  }
  int status = 0;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0) return perror("wait4"), 2;
  double wall = Now() - t0;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  FILE* f = fopen(argv[1], "w");
  if (!f) return perror(argv[1]), 2;
  fprintf(f, "{\"user_s\":%.6f,\"sys_s\":%.6f,\"maxrss_kb\":%ld,\"wall_s\":%.6f,\"exit\":%d}\n",
          (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
          (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss, wall, code);
  fclose(f);
  return code;
}
