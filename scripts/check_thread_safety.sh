#!/usr/bin/env bash
# The clang -Wthread-safety check of the GUARDED_BY/REQUIRES annotations
# (core/thread_annotations.h) over every source of the libraries and binaries.
# The analysis runs while clang checks a file's semantics, so each file is
# compiled with -fsyntax-only: the same warnings-as-errors verdict as a full
# clang build, without code generation or linking (about half the time on the
# 2-core CI machine). The commands come from the thread-safety preset's
# compile_commands.json, so the flags are exactly the build's.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake --preset thread-safety >/dev/null
db=build/thread-safety/compile_commands.json
# One command per line: "-o <object> -c <file>" becomes "-fsyntax-only <file>";
# the ccache launcher, if any, is dropped (there is no output to cache).
node -e '
  const cmds = require(process.argv[1]);
  for (const c of cmds) {
    if (!c.file.startsWith(process.argv[2] + "/src/")) continue;  // not generated sources
    let cmd = c.command.replace(/^\S*ccache\s+/, "");
    cmd = cmd.replace(/ -o \S+ -c /, " -fsyntax-only ");
    if (!cmd.includes("-fsyntax-only")) throw new Error("unexpected command for " + c.file);
    console.log(cmd);
  }' "$PWD/$db" "$PWD" >build/thread-safety/syntax_commands.txt
n=$(wc -l <build/thread-safety/syntax_commands.txt)
echo "thread-safety: checking $n sources with clang -Wthread-safety -Werror"
# xargs exits non-zero when any file fails; clang prints the file:line:col.
(cd build/thread-safety && xargs -P 2 -I{} -d '\n' bash -c '{}' <syntax_commands.txt)
echo "thread-safety: all $n sources clean"
