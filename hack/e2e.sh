#!/usr/bin/env bash
# Runs the end-to-end suites (make test-e2e). The kwok suite (tests/e2e) and
# the demo's (tests/e2e/demo) run on fake nodes and mostly wait on their
# control planes, so they run beside the OLM suite (tests/e2e/olm), which
# mostly waits on OLM; then the real-node suite (tests/e2e/real). The OLM and
# real-node suites stay apart: a machine has one real node
# (hack/real-node.sh). The suites beside the OLM suite write their output to
# a file, printed whole when they end, so that each suite's log reads in
# order.
#
# Usage: hack/e2e.sh [go test flags...]   (make test-e2e passes -ginkgo.label-filter
#        when E2E_LABELS is set)
set -uo pipefail
cd "$(dirname "$0")/.."

gotest() {
  go test "$@" -p 1 -count=1 -timeout 60m -v -ginkgo.v "${FLAGS[@]}"
}
FLAGS=("$@")

# waitfor waits until the background process $1 has ended, however often a
# signal the trap below takes interrupts the wait, and returns its status.
waitfor() {
  while kill -0 "$1" 2>/dev/null; do wait "$1"; done
  wait "$1" # bash keeps an ended child's status
}

# Ctrl-C reaches every suite (they share the terminal's process group) and
# each cleans up after itself; this script then waits for both, prints what
# the side suites said, and starts nothing more.
interrupted=
trap 'interrupted=1' INT TERM

beside=$(mktemp "${TMPDIR:-/tmp}/kubeforge-e2e-kwok.XXXXXX")
trap 'rm -f "$beside"' EXIT
echo "== e2e: tests/e2e and tests/e2e/demo (fake nodes) beside tests/e2e/olm; their output follows the OLM suite's"
gotest ./tests/e2e/ ./tests/e2e/demo >"$beside" 2>&1 &
kwok=$!
gotest ./tests/e2e/olm
olm=$?
waitfor "$kwok"
kwokrc=$?
echo "== e2e: the output of tests/e2e and tests/e2e/demo"
cat "$beside"
echo "== e2e: tests/e2e/olm exit $olm, tests/e2e and tests/e2e/demo exit $kwokrc"
[[ -z "$interrupted" ]] || exit 130
gotest ./tests/e2e/real
real=$?
(( olm == 0 && kwokrc == 0 && real == 0 ))
