#!/bin/sh
# A test package installer: records that it ran by writing a marker file into
# the target dir, like a real installer would leave the package there.
# Usage: fake_installer.sh TARGET NAME VERSION
# NAME "fail-me" makes it fail (exit 3) with a message, to test failures.
target="$1"; name="$2"; version="$3"
if [ "$name" = "fail-me" ]; then
  echo "fake_installer: no such package: $name" >&2
  exit 3
fi
mkdir -p "$target/$name" || exit 1
echo "$name $version" > "$target/$name/INSTALLED"
echo "run" >> "$target/.runs"
echo "installed $name $version into $target"
