#!/usr/bin/env bash
# Fails when the committed generated files (CRDs, RBAC, webhook
# configurations, deepcopy) differ from what the code markers generate now.
# Generates into a temporary directory; the work tree is not touched.
set -euo pipefail
cd "$(dirname "$0")/.."
cg() { go tool -modfile=hack/tools/go.mod controller-gen "$@"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cg rbac:roleName=manager-role crd:generateEmbeddedObjectMeta=true webhook paths="./..." \
  output:crd:artifacts:config="$tmp/crd" output:rbac:artifacts:config="$tmp/rbac" \
  output:webhook:artifacts:config="$tmp/webhook"

go run ./hack/crddocs "$tmp"/crd/*.yaml

stale=0
check() { # generated committed
  if ! diff -u "$2" "$1" >"$tmp/diff" 2>&1; then
    echo "stale generated file: $2 (run 'make manifests generate')" >&2
    head -40 "$tmp/diff" >&2
    stale=1
  fi
}
for f in "$tmp"/crd/*.yaml; do check "$f" "config/crd/bases/$(basename "$f")"; done
for f in config/crd/bases/*.yaml; do
  [[ -f "$tmp/crd/$(basename "$f")" ]] || { echo "no longer generated: $f" >&2; stale=1; }
done
go run ./hack/rbacsplit "$tmp/rbac"
check "$tmp/rbac/role.yaml" config/rbac/role.yaml
check "$tmp/rbac/cluster_role.yaml" config/rbac/cluster_role.yaml
go run ./hack/webhookconditions "$tmp/webhook/manifests.yaml"
check "$tmp/webhook/manifests.yaml" config/webhook/manifests.yaml
go run ./hack/policygen "$tmp"
check "$tmp/owner-record.yaml" config/policy/owner-record.yaml
check "$tmp/references.yaml" config/policy/references.yaml

for f in $(git ls-files 'api/**/zz_generated.deepcopy.go'); do
  dir=$(dirname "$f")
  cg object:headerFile=hack/boilerplate.go.txt paths="./$dir" output:object:dir="$tmp/obj/$dir"
  check "$tmp/obj/$dir/zz_generated.deepcopy.go" "$f"
done

if (( stale )); then exit 1; fi
echo "generated files are up to date"
