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
# CoreDNS is built with only the plugins the node's Corefile uses
# (hack/real-node.sh), the registry with only the filesystem storage driver:
# their stock mains compile every cloud provider's SDK (AWS, Azure, GCP),
# which the first run would download and build for nothing.
COREDNS_PLUGINS=(ready health errors loadbalance cache kubernetes)
WANT_STAMP="k8s=$K8S_VERSION containerd=$CONTAINERD_VERSION runc=$RUNC_VERSION cni=$CNI_VERSION coredns=$COREDNS_VERSION/$(IFS=,; echo "${COREDNS_PLUGINS[*]}") registry=$REGISTRY_VERSION/filesystem kube-router=$KUBE_ROUTER_VERSION"
# What each part of the stamp builds: a part whose version changed is built
# again, and only that part.
declare -A PART_BINARIES=([k8s]="kubelet kube-proxy" [containerd]="containerd containerd-shim-runc-v2 ctr" [runc]=runc
  [coredns]=coredns [registry]=registry [kube-router]=kube-router)

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

# go_build_main MODULE@VERSION OUT: builds OUT from the main package read on
# standard input, in a throwaway module that requires MODULE, so that only
# the packages that main imports are downloaded and compiled.
go_build_main() {
  local modver=$1 out=$2
  local dir="$SRC_DIR/$(basename "$out")-main"
  new_module "$dir"
  cd "$dir"
  cat >main.go
  quiet go get "$modver"
  CGO_ENABLED=0 go build -ldflags "-s -w" -o "$out" .
}

# build_coredns: CoreDNS's own main (coremain.Run) with COREDNS_PLUGINS, as
# CoreDNS documents for a build with a chosen set of plugins.
build_coredns() {
  local p imports=""
  for p in "${COREDNS_PLUGINS[@]}"; do imports+=$'\t_ "github.com/coredns/coredns/plugin/'"$p"$'"\n'; done
  go_build_main "github.com/coredns/coredns@$COREDNS_VERSION" "$BIN_DIR/coredns" <<GO
package main

import (
	"github.com/coredns/coredns/coremain"
$imports)

func main() { coremain.Run() }
GO
}

# build_registry: distribution's registry command with the filesystem
# storage driver only (hack/real-node.sh's registry.yaml).
build_registry() {
  go_build_main "github.com/distribution/distribution/v3@$REGISTRY_VERSION" "$BIN_DIR/registry" <<'GO'
package main

import (
	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

func main() { _ = registry.RootCmd.Execute() }
GO
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

# Parts the last build made at another version (or another way) go, so that
# they are built again below; the stamp is written only once all are built.
if [[ -f "$STAMP" ]]; then
  for part in $WANT_STAMP; do
    [[ " $(cat "$STAMP") " == *" $part "* ]] && continue
    key=${part%%=*}
    log "$key: the cache holds $(tr ' ' '\n' <"$STAMP" | grep "^$key=" || echo "another build"), want $part"
    if [[ $key == cni ]]; then
      for p in "${CNI_PLUGINS[@]}"; do rm -f "$CNI_DIR/$p"; done
    else
      for b in ${PART_BINARIES[$key]}; do rm -f "$BIN_DIR/$b"; done
    fi
  done
fi
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
[[ -x "$BIN_DIR/coredns" ]] || timed "CoreDNS $COREDNS_VERSION (plugins: ${COREDNS_PLUGINS[*]})" build_coredns
[[ -x "$BIN_DIR/registry" ]] || timed "registry $REGISTRY_VERSION (filesystem storage)" build_registry
[[ -x "$BIN_DIR/kube-router" ]] || timed "kube-router $KUBE_ROUTER_VERSION" build_kube_router

for b in "${BINARIES[@]}"; do [[ -x "$BIN_DIR/$b" ]] || { log "missing $BIN_DIR/$b after build"; exit 1; }; done
for b in "${CNI_PLUGINS[@]}"; do [[ -x "$CNI_DIR/$b" ]] || { log "missing $CNI_DIR/$b after build"; exit 1; }; done
echo "$WANT_STAMP" > "$STAMP"
log "all node binaries ready in $(( $(date +%s) - start_all ))s: $BIN_DIR (CNI plugins: $CNI_DIR)"
echo "$BIN_DIR"
