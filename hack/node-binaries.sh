#!/usr/bin/env bash
# Builds what a real node of the local cluster runs, from source through the
# Go module proxy (nothing prebuilt can be downloaded here): kubelet and
# kube-proxy (the same k8s.io/kubernetes version and version stamp as the
# control plane), containerd with its runc shim and ctr, runc (cgo, with
# seccomp: Debian's runc 1.1.5 cannot start a sandbox here), the CNI plugins
# a bridge network needs (bridge, host-local, loopback, portmap), CoreDNS, and
# the distribution registry that serves locally built images, and
# kube-router (its network policy controller only: the bridge plugin
# enforces no NetworkPolicy; v1.3.2 is the newest the module proxy serves,
# and its controller speaks networking.k8s.io/v1, which has not changed
# since). Cached outside
# the repo; a second run finds them and returns at once. One build at a time.
#
# Usage: hack/node-binaries.sh            build if needed, print the bin dir
#        hack/node-binaries.sh --print    print the bin dir only (no build)
set -euo pipefail
cd "$(dirname "$0")/.."

K8S_VERSION=${K8S_VERSION:-v1.37.1}
CONTAINERD_VERSION=${CONTAINERD_VERSION:-v2.4.2}
RUNC_VERSION=${RUNC_VERSION:-v1.5.2}
CNI_VERSION=${CNI_VERSION:-v1.9.1}
COREDNS_VERSION=${COREDNS_VERSION:-v1.12.4}
REGISTRY_VERSION=${REGISTRY_VERSION:-v3.1.2}
KUBE_ROUTER_VERSION=${KUBE_ROUTER_VERSION:-v1.3.2}
CACHE_ROOT=${KUBEFORGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeforge}
NODE_ROOT="$CACHE_ROOT/node"
BIN_DIR="$NODE_ROOT/bin"
CNI_DIR="$NODE_ROOT/cni"
SRC_DIR="$NODE_ROOT/src"
STAMP="$BIN_DIR/.stamp"
BINARIES=(kubelet kube-proxy containerd containerd-shim-runc-v2 ctr runc coredns registry kube-router)
CNI_PLUGINS=(bridge host-local loopback portmap)
WANT_STAMP="k8s=$K8S_VERSION containerd=$CONTAINERD_VERSION runc=$RUNC_VERSION cni=$CNI_VERSION coredns=$COREDNS_VERSION registry=$REGISTRY_VERSION kube-router=$KUBE_ROUTER_VERSION"

LOG_PREFIX=node-binaries
# shellcheck source=hack/build-lib.sh
source hack/build-lib.sh

if [[ "${1:-}" == "--print" ]]; then
  echo "$BIN_DIR"
  exit 0
fi

complete() {
  [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT_STAMP" ]] || return 1
  local b
  for b in "${BINARIES[@]}"; do [[ -x "$BIN_DIR/$b" ]] || return 1; done
  for b in "${CNI_PLUGINS[@]}"; do [[ -x "$CNI_DIR/$b" ]] || return 1; done
}

if complete; then
  log "cached: $WANT_STAMP in $BIN_DIR"
  echo "$BIN_DIR"
  exit 0
fi

command -v go >/dev/null || { log "go is not on PATH"; exit 1; }
mkdir -p "$BIN_DIR" "$CNI_DIR" "$SRC_DIR"
exec 9>"$NODE_ROOT/.lock"
flock 9
if complete; then
  log "built meanwhile by another run: $BIN_DIR"
  echo "$BIN_DIR"
  exit 0
fi
export GOFLAGS=-mod=mod GOWORK=off
start_all=$(date +%s)

# go_build MODULE@VERSION OUTDIR TAGS CGO PKG...: builds packages of a module
# in a throwaway module that requires it.
go_build() {
  local modver=$1 out=$2 tags=$3 cgo=$4; shift 4
  local dir="$SRC_DIR/$(basename "${modver%@*}")"
  new_module "$dir"
  cd "$dir"
  quiet go get "$modver"
  mkdir -p "$dir/out"
  CGO_ENABLED=$cgo go build -tags "$tags" -ldflags "-s -w" -o "$dir/out/" "$@"
  mv "$dir/out/"* "$out/"
}

build_kubernetes() {
  # The control plane's module (hack/test-binaries.sh) has the staging
  # replaces in place; build kubelet and kube-proxy there, with its stamp.
  local k8s_bin dir
  k8s_bin=$(hack/test-binaries.sh)
  dir="$(dirname "$k8s_bin")/src/kubernetes"
  [[ -f "$dir/go.mod" ]] || { log "no k8s.io/kubernetes module in $dir"; return 1; }
  cd "$dir"
  local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  local ld="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
  mkdir -p "$dir/node-out"
  CGO_ENABLED=0 go build -ldflags "$ld" -o "$dir/node-out/" k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy
  mv "$dir/node-out/"* "$BIN_DIR/"
}

build_kube_router() {
  local dir="$SRC_DIR/kube-router"
  new_module "$dir"
  cd "$dir"
  quiet go get "github.com/cloudnativelabs/kube-router@$KUBE_ROUTER_VERSION"
  # kube-router's own go.mod replaces containerd (CVE-2021-32760); a
  # replace applies only in the main module, so it is repeated here.
  go mod edit -replace github.com/containerd/containerd=github.com/containerd/containerd@v1.5.4
  CGO_ENABLED=0 go build -ldflags "-s -w" -o "$BIN_DIR/kube-router" github.com/cloudnativelabs/kube-router/cmd/kube-router
}

build_runc() {
  command -v pkg-config >/dev/null && pkg-config --exists libseccomp || {
    log "runc needs libseccomp-dev and pkg-config: apt-get install libseccomp-dev pkg-config"; return 1; }
  local dir="$SRC_DIR/runc"
  new_module "$dir"
  cd "$dir"
  quiet go get "github.com/opencontainers/runc@$RUNC_VERSION"
  CGO_ENABLED=1 go build -tags seccomp -ldflags "-s -w -X main.version=${RUNC_VERSION#v}" -o "$BIN_DIR/runc" github.com/opencontainers/runc
}

rm -f "$STAMP"
[[ -x "$BIN_DIR/kubelet" && -x "$BIN_DIR/kube-proxy" ]] || timed "kubelet, kube-proxy $K8S_VERSION" build_kubernetes
[[ -x "$BIN_DIR/containerd" && -x "$BIN_DIR/containerd-shim-runc-v2" && -x "$BIN_DIR/ctr" ]] ||
  timed "containerd $CONTAINERD_VERSION" go_build "github.com/containerd/containerd/v2@$CONTAINERD_VERSION" "$BIN_DIR" \
    "no_btrfs no_devmapper no_zfs no_aufs" 0 \
    github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
    github.com/containerd/containerd/v2/cmd/ctr
[[ -x "$BIN_DIR/runc" ]] || timed "runc $RUNC_VERSION" build_runc
missing_cni=0
for p in "${CNI_PLUGINS[@]}"; do [[ -x "$CNI_DIR/$p" ]] || missing_cni=1; done
(( missing_cni == 0 )) || timed "CNI plugins $CNI_VERSION" go_build "github.com/containernetworking/plugins@$CNI_VERSION" "$CNI_DIR" "" 0 \
  github.com/containernetworking/plugins/plugins/main/bridge github.com/containernetworking/plugins/plugins/ipam/host-local \
  github.com/containernetworking/plugins/plugins/main/loopback github.com/containernetworking/plugins/plugins/meta/portmap
[[ -x "$BIN_DIR/coredns" ]] || timed "CoreDNS $COREDNS_VERSION" go_build "github.com/coredns/coredns@$COREDNS_VERSION" "$BIN_DIR" "" 0 \
  github.com/coredns/coredns
[[ -x "$BIN_DIR/registry" ]] || timed "registry $REGISTRY_VERSION" go_build "github.com/distribution/distribution/v3@$REGISTRY_VERSION" "$BIN_DIR" "" 0 \
  github.com/distribution/distribution/v3/cmd/registry
[[ -x "$BIN_DIR/kube-router" ]] || timed "kube-router $KUBE_ROUTER_VERSION" build_kube_router

for b in "${BINARIES[@]}"; do [[ -x "$BIN_DIR/$b" ]] || { log "missing $BIN_DIR/$b after build"; exit 1; }; done
for b in "${CNI_PLUGINS[@]}"; do [[ -x "$CNI_DIR/$b" ]] || { log "missing $CNI_DIR/$b after build"; exit 1; }; done
echo "$WANT_STAMP" > "$STAMP"
log "all node binaries ready in $(( $(date +%s) - start_all ))s: $BIN_DIR (CNI plugins: $CNI_DIR)"
echo "$BIN_DIR"
