#!/usr/bin/env bash
# Builds the Kubernetes test binaries from source through the Go module proxy:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok
# and kwokctl. No prebuilt binary can be downloaded on our machines, so this is
# the only way to get them. The result is cached outside the repo; a second
# run finds it and returns at once.
#
# Usage: hack/test-binaries.sh            build if needed, print the bin dir
#        hack/test-binaries.sh --print    print the bin dir only (no build)
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.37.1}
ETCD_VERSION=${ETCD_VERSION:-v3.6.8}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
CACHE_ROOT=${KUBEFORGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeforge}
BIN_DIR="$CACHE_ROOT/k8s-$K8S_VERSION/bin"
SRC_DIR="$CACHE_ROOT/k8s-$K8S_VERSION/src"
STAMP="$BIN_DIR/.stamp"
K8S_BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
BINARIES=(etcd kwok kwokctl "${K8S_BINARIES[@]}")
WANT_STAMP="k8s=$K8S_VERSION etcd=$ETCD_VERSION kwok=$KWOK_VERSION binaries=${#BINARIES[@]}"

LOG_PREFIX=test-binaries
# shellcheck source=hack/build-lib.sh
source "$(dirname "$0")/build-lib.sh"

if [[ "${1:-}" == "--print" ]]; then
  echo "$BIN_DIR"
  exit 0
fi

complete() {
  [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT_STAMP" ]] || return 1
  local b
  for b in "${BINARIES[@]}"; do [[ -x "$BIN_DIR/$b" ]] || return 1; done
}

if complete; then
  log "cached: $WANT_STAMP in $BIN_DIR"
  echo "$BIN_DIR"
  exit 0
fi

command -v go >/dev/null || { log "go is not on PATH"; exit 1; }
mkdir -p "$BIN_DIR" "$SRC_DIR"
# One build at a time (make demo and make test may start together); the
# second waits, then finds the binaries.
exec 9>"$CACHE_ROOT/k8s-$K8S_VERSION/.lock"
flock 9
if complete; then
  log "built meanwhile by another run: $BIN_DIR"
  echo "$BIN_DIR"
  exit 0
fi
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOWORK=off
start_all=$(date +%s)

build_etcd() {
  local dir="$SRC_DIR/etcd"
  new_module "$dir"
  cd "$dir"
  quiet go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  go build -o "$BIN_DIR/etcd.tmp" go.etcd.io/etcd/server/v3
  mv "$BIN_DIR/etcd.tmp" "$BIN_DIR/etcd"
}

build_kubernetes() {
  local dir="$SRC_DIR/kubernetes" staging_version="v0.${K8S_VERSION#v1.}"
  new_module "$dir"
  cd "$dir"
  local gomod
  gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [[ -f "$gomod" ]] || { log "could not download k8s.io/kubernetes@$K8S_VERSION"; return 1; }
  # k8s.io/kubernetes replaces its staging modules with local paths, which a
  # dependent module cannot see: pin each one to the published v0.x version.
  local mods
  mods=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$gomod")
  [[ -n "$mods" ]] || { log "no staging modules found in $gomod"; return 1; }
  local m args=()
  for m in $mods; do args+=("-replace=$m=$m@$staging_version"); done
  go mod edit "${args[@]}"
  quiet go get "k8s.io/kubernetes@$K8S_VERSION"
  local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  local ld="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
  ld+=" -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
  local b pkgs=()
  for b in "${K8S_BINARIES[@]}"; do
    [[ -x "$BIN_DIR/$b" ]] || pkgs+=("k8s.io/kubernetes/cmd/$b")
  done
  mkdir -p "$dir/out"
  go build -ldflags "$ld" -o "$dir/out/" "${pkgs[@]}"
  mv "$dir/out/"* "$BIN_DIR/"
}

build_kwok() {
  local dir="$SRC_DIR/kwok"
  new_module "$dir"
  cd "$dir"
  quiet go get "sigs.k8s.io/kwok@$KWOK_VERSION"
  mkdir -p "$dir/out"
  go build -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" -o "$dir/out/" \
    sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl
  mv "$dir/out/"* "$BIN_DIR/"
}

rm -f "$STAMP"
[[ -x "$BIN_DIR/etcd" ]] || timed "etcd $ETCD_VERSION" build_etcd
[[ -x "$BIN_DIR/kwokctl" && -x "$BIN_DIR/kwok" ]] || timed "kwok $KWOK_VERSION" build_kwok
for b in "${K8S_BINARIES[@]}"; do
  if [[ ! -x "$BIN_DIR/$b" ]]; then
    timed "${K8S_BINARIES[*]} $K8S_VERSION" build_kubernetes
    break
  fi
done

for b in "${BINARIES[@]}"; do
  [[ -x "$BIN_DIR/$b" ]] || { log "missing $BIN_DIR/$b after build"; exit 1; }
done
echo "$WANT_STAMP" > "$STAMP"
log "all test binaries ready in $(( $(date +%s) - start_all ))s: $BIN_DIR"
echo "$BIN_DIR"
