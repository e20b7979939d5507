#!/usr/bin/env bash
# A local control plane of real components for make demo and the e2e tests:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, plus kwok,
# which plays the kubelet (pods get scheduled and turn Running, Jobs finish).
# Started by kwokctl's binary runtime from the binaries hack/test-binaries.sh
# builds; nothing is downloaded.
#
# Usage: hack/cluster.sh up|down|kubeconfig
# Env:   CLUSTER_NAME (default kubeforge), CLUSTER_NODES (default 3),
#        CLUSTER_VOLUMES (default 8), CLUSTER_SERVICE_CIDR (default: the API
#        server's 10.0.0.0/24, or 10.96.0.0/16 with REAL_NODE=1; applies when
#        the cluster is created), REAL_NODE (1: add a real node, see below),
#        CLUSTER_FRESH (1: up deletes a cluster of that name first, with
#        everything an earlier run left in it; the test suites set it unless
#        told to reuse a kept cluster)
#
# REAL_NODE=1 adds one real node (hack/real-node.sh: containerd, kubelet,
# kube-proxy, CoreDNS, a local registry) beside the fake ones, and taints
# the fake nodes kwok.x-k8s.io/node=fake:NoSchedule, so that workloads run
# for real unless they tolerate that taint (scale tests do). kwok manages
# only the nodes annotated kwok.x-k8s.io/node=fake, which is what
# `kwokctl scale node` makes, so it never fakes the real node's pods.
#
# kwok has no storage, so the cluster gets CLUSTER_VOLUMES hostPath
# PersistentVolumes of the StorageClass "local", standing in for a
# provisioner, and "local" is the cluster's default class: claims that name
# no class get it and bind to those volumes. (kubeforge makes no claim
# without a class in a cluster without a default class, where such a
# claim would bind any Available volume without one: docs/security.md.)
# Their directories are in the cluster's own directory (gone with the
# cluster), made here, world-writable with the sticky bit like /tmp, so
# that a real node's Pods can write to them as any user (a Workspace's IDE
# runs as 1000, and a hostPath volume ignores fsGroup).
#
# kwok plays the kubelet with its default ("fast") stages — pods turn Ready,
# Job pods complete, deleted pods go at once — plus its chaos stage that
# fails a container of a pod labelled
# pod-container-running-failed.stage.kwok.x-k8s.io=true, so tests can make a
# Job fail. The stages come from the kwok module that test-binaries.sh built.
set -euo pipefail
cd "$(dirname "$0")/.."

CLUSTER_NAME=${CLUSTER_NAME:-kubeforge}
CLUSTER_NODES=${CLUSTER_NODES:-3}
CLUSTER_VOLUMES=${CLUSTER_VOLUMES:-8}
REAL_NODE=${REAL_NODE:-}
CLUSTER_SERVICE_CIDR=${CLUSTER_SERVICE_CIDR:-${REAL_NODE:+10.96.0.0/16}}
export CLUSTER_SERVICE_CIDR
CACHE_ROOT=${KUBEFORGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeforge}
export KWOK_WORKDIR="$CACHE_ROOT/kwok"
KUBECONFIG_PATH="$KWOK_WORKDIR/clusters/$CLUSTER_NAME/kubeconfig.yaml"

log() { printf '[cluster] %s\n' "$*" >&2; }

bin_dir() { hack/test-binaries.sh; }

exists() {
  [[ -d "$KWOK_WORKDIR/clusters/$CLUSTER_NAME" ]]
}

healthy() {
  [[ -f "$KUBECONFIG_PATH" ]] && kubectl --kubeconfig "$KUBECONFIG_PATH" --request-timeout=5s get --raw /readyz >/dev/null 2>&1
}

up() {
  local bin
  bin=$(bin_dir)
  export PATH="$bin:$PATH" # kubectl matching the cluster
  local kwokctl="$bin/kwokctl"
  if [[ -n "${CLUSTER_FRESH:-}" ]] && { exists || real_node_here; }; then
    log "CLUSTER_FRESH: deleting the cluster $CLUSTER_NAME that an earlier run left"
    down
  fi
  if exists && healthy; then
    log "cluster $CLUSTER_NAME is already running"
  elif exists; then
    log "starting the stopped cluster $CLUSTER_NAME"
    "$kwokctl" --name "$CLUSTER_NAME" start cluster --wait 2m >&2 || {
      log "could not start it; creating it anew"
      "$kwokctl" --name "$CLUSTER_NAME" delete cluster >&2 || true
      create "$bin"
    }
  else
    create "$bin"
  fi
  local have
  have=$(kubectl --kubeconfig "$KUBECONFIG_PATH" get nodes --no-headers 2>/dev/null | wc -l)
  if (( have < CLUSTER_NODES )); then
    log "adding fake nodes: $CLUSTER_NODES"
    "$kwokctl" --name "$CLUSTER_NAME" scale node --replicas "$CLUSTER_NODES" >/dev/null 2>&1
  fi
  volumes
  if [[ -n "$REAL_NODE" ]]; then
    kubectl --kubeconfig "$KUBECONFIG_PATH" taint nodes -l type=kwok kwok.x-k8s.io/node=fake:NoSchedule --overwrite >/dev/null
    CLUSTER_NAME=$CLUSTER_NAME hack/real-node.sh up
  fi
  log "cluster $CLUSTER_NAME is ready; kubeconfig: $KUBECONFIG_PATH"
  echo "$KUBECONFIG_PATH"
}

# first_ip prints the first address of an IPv4 range (the kubernetes
# Service's ClusterIP).
first_ip() {
  local base=${1%/*}
  echo "${base%.*}.$(( ${base##*.} + 1 ))"
}

# config writes kwokctl's configuration: the API server's certificate also
# names the kubernetes Service's ClusterIP (pods on a real node reach it
# there), the API server reaches kubelets by InternalIP with a client
# certificate, kwok manages only the fake nodes, and kwok's stages are the
# defaults of kwokctl's binary runtime plus the chaos stage that fails a
# labelled pod. HorizontalPodAutoscalers are synced every 3 s (15 s by
# default), so that a test of one waits less.
config() {
  local version dir out="$KWOK_WORKDIR/$CLUSTER_NAME-config.yaml" f pki="$KWOK_WORKDIR/clusters/$CLUSTER_NAME/pki"
  version=$(sed -n 's/^KWOK_VERSION=${KWOK_VERSION:-\(.*\)}$/\1/p' hack/test-binaries.sh)
  dir=$(cd "$KWOK_WORKDIR" && GOFLAGS= GO111MODULE=on go mod download -json "sigs.k8s.io/kwok@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -d "$dir/kustomize/stage" ]] || { log "kwok $version's stages not found"; exit 1; }
  cat >"$out" <<EOF
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokctlConfiguration
options:
  kubeApiserverCertSANs: ["$(first_ip "${CLUSTER_SERVICE_CIDR:-10.0.0.0/24}")"]
componentsPatches:
- name: kube-apiserver
  extraArgs:
  - {key: kubelet-preferred-address-types, value: InternalIP}
  - {key: kubelet-client-certificate, value: $pki/admin.crt}
  - {key: kubelet-client-key, value: $pki/admin.key}
EOF
  if [[ -n "$CLUSTER_SERVICE_CIDR" ]]; then
    printf '  - {key: service-cluster-ip-range, value: %s}\n' "$CLUSTER_SERVICE_CIDR" >>"$out"
  fi
  cat >>"$out" <<EOF
- name: kube-controller-manager
  extraArgs:
  - {key: horizontal-pod-autoscaler-sync-period, value: 3s}
- name: kwok-controller
  extraArgs:
  - {key: manage-all-nodes, value: "false"}
  - {key: manage-nodes-with-annotation-selector, value: kwok.x-k8s.io/node=fake}
EOF
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml \
    pod/chaos/pod-container-running-failed.yaml; do
    printf -- '---\n' >>"$out"
    cat "$dir/kustomize/stage/$f" >>"$out"
  done
  echo "$out"
}

create() {
  local bin=$1 t0 config
  t0=$(date +%s)
  config=$(config)
  log "creating cluster $CLUSTER_NAME (kwokctl, binary runtime)"
  # One create at a time on this machine: kwokctl picks each component's
  # port by counting down from the same number to the first one free, so two
  # creates at once (the e2e suites that run side by side) would pick the
  # same ports. Held until the cluster is up and its ports bound; the
  # components kwokctl starts do not inherit the lock (9>&-).
  exec 9>"$KWOK_WORKDIR/create.lock"
  flock 9
  # --kubeconfig points at kwokctl's own copy, so the user's ~/.kube/config is left alone.
  "$bin/kwokctl" --name "$CLUSTER_NAME" create cluster --runtime binary \
    --etcd-binary "$bin/etcd" \
    --kube-apiserver-binary "$bin/kube-apiserver" \
    --kube-controller-manager-binary "$bin/kube-controller-manager" \
    --kube-scheduler-binary "$bin/kube-scheduler" \
    --kwok-controller-binary "$bin/kwok" \
    --kubeconfig "$KUBECONFIG_PATH" \
    --config "$config" \
    --wait 3m >/dev/null 2>"$KWOK_WORKDIR/$CLUSTER_NAME-create.log" 9>&- || {
      cat "$KWOK_WORKDIR/$CLUSTER_NAME-create.log" >&2
      log "FAILED to create cluster $CLUSTER_NAME"
      exit 1
    }
  exec 9>&-
  log "created cluster $CLUSTER_NAME in $(( $(date +%s) - t0 ))s"
}

volumes() {
  local i manifest="" dir="$KWOK_WORKDIR/clusters/$CLUSTER_NAME/volumes"
  manifest="apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local
  annotations:
    storageclass.kubernetes.io/is-default-class: \"true\"
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
reclaimPolicy: Retain
---
"
  for i in $(seq 1 "$CLUSTER_VOLUMES"); do
    mkdir -p "$dir/pv-$i" && chmod 1777 "$dir/pv-$i"
    manifest+="apiVersion: v1
kind: PersistentVolume
metadata:
  name: local-pv-$i
  labels:
    kubeforge.io/local-volume: \"true\"
spec:
  capacity:
    storage: 20Gi
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: local
  hostPath:
    path: $dir/pv-$i
---
"
  done
  kubectl --kubeconfig "$KUBECONFIG_PATH" create -f - >/dev/null 2>&1 <<<"$manifest" || true
}

# real_node_here: the machine's real node belongs to this cluster.
real_node_here() {
  [[ -f "$CACHE_ROOT/real-node/cluster" && "$(cat "$CACHE_ROOT/real-node/cluster")" == "$CLUSTER_NAME" ]]
}

down() {
  if real_node_here; then
    CLUSTER_NAME=$CLUSTER_NAME hack/real-node.sh down
  fi
  if exists; then
    local bin
    bin=$(bin_dir)
    log "deleting cluster $CLUSTER_NAME"
    "$bin/kwokctl" --name "$CLUSTER_NAME" delete cluster >/dev/null 2>&1 || true
  else
    log "no cluster $CLUSTER_NAME"
  fi
}

mkdir -p "$KWOK_WORKDIR"
case "${1:-}" in
  up) up ;;
  down) down ;;
  kubeconfig) echo "$KUBECONFIG_PATH" ;;
  *) echo "usage: $0 up|down|kubeconfig" >&2; exit 2 ;;
esac
