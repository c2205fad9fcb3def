#!/usr/bin/env bash
# Runs each benchmark file given, in order, even when one fails; lists the failures at the
# end and exits non-zero if there were any. Used by scripts/bench.sh.
set -uo pipefail

failed=()
for bench in "$@"; do
  name="$(basename "$bench" .bench.js)"
  echo "=== $name"
  node "$bench"
  code=$?
  if [ "$code" -ne 0 ]; then
    echo "!!! $name failed (exit $code)" >&2
    failed+=("$name (exit $code)")
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo >&2
  echo "${#failed[@]} of $# benchmark(s) failed:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo
echo "all $# benchmark(s) ran"
