#!/usr/bin/env bash
# Runs make targets one after another and prints how long each took, as it
# ends and again in a table at the end (also when one fails), so that a slow
# stage of `make test` is visible in CI's log.
# Usage: hack/stages.sh target...
set -uo pipefail
cd "$(dirname "$0")/.."
declare -a names times
total=$SECONDS
summary() {
  echo "== stage times (s)"
  for i in "${!names[@]}"; do printf '==   %-18s %5d\n' "${names[$i]}" "${times[$i]}"; done
  printf '==   %-18s %5d\n' total "$(( SECONDS - total ))"
}
for t in "$@"; do
  start=$SECONDS
  echo "== stage $t"
  if ! "${MAKE:-make}" --no-print-directory "$t"; then
    names+=("$t (failed)"); times+=("$(( SECONDS - start ))")
    summary
    exit 1
  fi
  names+=("$t"); times+=("$(( SECONDS - start ))")
  echo "== stage $t took $(( SECONDS - start ))s"
done
summary
