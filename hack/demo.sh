#!/usr/bin/env bash
# make demo. Where this machine can host the real node (Linux, root, no
# other cluster holding it): a local cluster with a real node (hack/cluster.sh
# with REAL_NODE=1), the images built here (hack/images.sh), cert-manager,
# kubeforge installed as users install it (make deploy: its image, in the
# cluster, with its webhooks and certificates), and config/demo — the
# samples on real containers: a Balancer splitting traffic between two
# versions, a PodSet, a Workspace running code-server, a Platform, and a
# KubernetesCluster installed by real ansible over SSH onto two host Pods.
# Elsewhere, or with FAKE_NODES=1, the kwok-only demo: the same control
# plane without a real node (kwok plays the kubelet: pods run no
# container), the CRDs, the webhooks and the manager running on this
# machine, and config/samples. Either way it ends with what to try.
#
# Usage: hack/demo.sh up|down
# Env:   FAKE_NODES=1 (the kwok-only demo), CLUSTER_NAME (default kubeforge)
set -euo pipefail
cd "$(dirname "$0")/.."

CLUSTER_NAME=${CLUSTER_NAME:-kubeforge}
CACHE_ROOT=${KUBEFORGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeforge}
DEMO_DIR="$CACHE_ROOT/demo/$CLUSTER_NAME"
WEBHOOK_PORT=${WEBHOOK_PORT:-9443}
METRICS_PORT=${METRICS_PORT:-8443}
PROBE_PORT=${PROBE_PORT:-8081}
API_PORT=${API_PORT:-8082}
PID_FILE="$DEMO_DIR/manager.pid"
LOG_FILE="$DEMO_DIR/manager.log"

log() { printf '[demo] %s\n' "$*" >&2; }

stop_manager() {
  if [[ -f "$PID_FILE" ]] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
    log "stopping the manager (pid $(cat "$PID_FILE"))"
    kill "$(cat "$PID_FILE")"
    for _ in $(seq 1 30); do kill -0 "$(cat "$PID_FILE")" 2>/dev/null || break; sleep 0.5; done
  fi
  rm -f "$PID_FILE"
}

up_fake() {
  mkdir -p "$DEMO_DIR"
  echo fake >"$DEMO_DIR/mode"
  local bin
  bin=$(hack/test-binaries.sh)
  export PATH="$bin:$PATH"
  KUBECONFIG=$(CLUSTER_NAME=$CLUSTER_NAME hack/cluster.sh up)
  export KUBECONFIG

  log "installing the CRDs"
  kubectl apply --server-side --force-conflicts -f config/crd/bases >/dev/null
  until kubectl wait --for=condition=Established --timeout=10s crd --all >/dev/null 2>&1; do sleep 1; done

  log "installing the webhook configurations (https://127.0.0.1:$WEBHOOK_PORT)"
  go run ./hack/localwebhook --cert-dir "$DEMO_DIR/certs" --port "$WEBHOOK_PORT" --out "$DEMO_DIR/webhooks.yaml"
  kubectl apply --server-side --force-conflicts -f "$DEMO_DIR/webhooks.yaml" >/dev/null

  log "making the API's certificate, signed by a local CA ($DEMO_DIR/api-certs/ca.crt)"
  go run ./hack/localca -dir "$DEMO_DIR/api-certs" localhost 127.0.0.1

  stop_manager
  build_binaries
  log "starting the manager; log: $LOG_FILE"
  nohup bin/manager --kubeconfig "$KUBECONFIG" \
    --leader-elect --leader-election-namespace kube-system --ensure-admission-policy \
    --webhook-cert-path "$DEMO_DIR/certs" --webhook-port "$WEBHOOK_PORT" \
    --metrics-bind-address "127.0.0.1:$METRICS_PORT" \
    --health-probe-bind-address "127.0.0.1:$PROBE_PORT" \
    --api-bind-address "127.0.0.1:$API_PORT" --api-cert-path "$DEMO_DIR/api-certs" >"$LOG_FILE" 2>&1 &
  echo $! >"$PID_FILE"
  for i in $(seq 1 60); do
    if curl -sf "http://127.0.0.1:$PROBE_PORT/readyz" >/dev/null; then break; fi
    if ! kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
      tail -20 "$LOG_FILE" >&2; log "the manager exited"; exit 1
    fi
    (( i == 60 )) && { tail -20 "$LOG_FILE" >&2; log "the manager did not become ready"; exit 1; }
    sleep 1
  done

  # The KubernetesCluster sample logs in with the SSH key in Secret
  # prod-ssh; kwok runs no installer, so a throwaway value does.
  kubectl get secret prod-ssh >/dev/null 2>&1 || kubectl create secret generic prod-ssh \
    --type=kubernetes.io/ssh-auth --from-literal=ssh-privatekey="demo key: kwok runs no installer" >/dev/null

  log "applying the samples"
  go tool -modfile=hack/tools/go.mod kustomize build config/samples | kubectl apply -f -

  log "waiting for the samples to be Ready"
  kubectl wait --for=condition=Ready --timeout=120s -f <(go tool -modfile=hack/tools/go.mod kustomize build config/samples) >/dev/null

  # Someone to call the API as: a ServiceAccount that may read the
  # namespace's KubernetesClusters, as a portal's would (the API answers
  # each caller with what their own RBAC allows, so `default`, which may
  # read nothing, would be answered 403).
  kubectl get serviceaccount demo-portal >/dev/null 2>&1 || kubectl create serviceaccount demo-portal >/dev/null
  kubectl get role kubeforge-demo-portal >/dev/null 2>&1 || kubectl create role kubeforge-demo-portal \
    --verb=get,list,watch --resource=kubernetesclusters.cluster.kubeforge.io >/dev/null
  kubectl get rolebinding kubeforge-demo-portal >/dev/null 2>&1 || kubectl create rolebinding kubeforge-demo-portal \
    --role=kubeforge-demo-portal --serviceaccount=default:demo-portal >/dev/null

  echo
  kubectl get kubeforge
  echo
  kubectl get pods -l app.kubernetes.io/managed-by=kubeforge
  cat <<MSG

The demo is running.
  export KUBECONFIG=$KUBECONFIG
  export PATH=$bin:$PWD/bin:\$PATH    # kubectl v1.37, matching the cluster, and kubectl kubeforge
  kubectl get kubeforge
  kubectl scale pset/web --replicas 5
  kubectl kubeforge status pset/web
  kubectl kubeforge balancer split shop
  kubectl kubeforge platform graph acme
The API (docs/api.md) as the ServiceAccount demo-portal, which may read
KubernetesClusters here; its certificate verified by the local CA:
  TOKEN=\$(kubectl create token demo-portal --audience kubeforge)
  curl -sS --fail-with-body --cacert $DEMO_DIR/api-certs/ca.crt -H "Authorization: Bearer \$TOKEN" \\
    https://localhost:$API_PORT/api/v1/namespaces/default/kubernetesclusters
Manager log: $LOG_FILE
Stop it all: make demo-down
MSG
}

down() {
  stop_manager
  local real=""
  [[ "$(cat "$DEMO_DIR/mode" 2>/dev/null)" == real ]] && real=1
  CLUSTER_NAME=$CLUSTER_NAME REAL_NODE=$real hack/cluster.sh down
  rm -rf "$DEMO_DIR"
}

T0=$(date +%s)
# stage says what the demo does next, with the time since it started.
stage() { log "$(printf '%4ss' $(( $(date +%s) - T0 ))) $*"; }

MANAGER_NS=kubeforge-system
MANAGER=kubeforge-controller-manager
INSTALLER_IMAGE=kubeforge.test/installer-standin:v1
SSHHOST_IMAGE=kubeforge.test/sshhost:v1

up_real() {
  mkdir -p "$DEMO_DIR"
  echo real >"$DEMO_DIR/mode"
  local bin i
  stage "the Debian packages the real node and the tests use, where missing (hack/test-deps.sh: its build dependencies, nginx, ansible, the database servers, chromium)"
  hack/test-deps.sh
  build_binaries
  stage "the Kubernetes binaries (hack/test-binaries.sh; built from source on the first run, about 6 minutes on 2 cores, then cached)"
  bin=$(hack/test-binaries.sh)
  export PATH="$bin:$PATH"
  stage "the real node's binaries: kubelet, kube-proxy, containerd, runc, CNI plugins, CoreDNS, registry, kube-router (hack/node-binaries.sh; first run about 4 minutes)"
  hack/node-binaries.sh >/dev/null
  stage "a cluster with a real node (hack/cluster.sh up, REAL_NODE=1)"
  KUBECONFIG=$(CLUSTER_NAME=$CLUSTER_NAME REAL_NODE=1 hack/cluster.sh up)
  export KUBECONFIG
  stage "cert-manager (hack/addons.sh), installed beside the images"
  local addons
  hack/addons.sh install >/dev/null &
  addons=$!
  stage "images built here without Docker: kubeforge, nginx, echoserver, code-server, installer, sshhost (hack/images.sh; first run about 3 minutes with cert-manager beside it, code-server from npm)"
  hack/images.sh >/dev/null || { wait "$addons" || true; exit 1; }
  wait "$addons"
  stage "kubeforge as users install it: make deploy (its image, two replicas, webhooks with cert-manager's certificates)"
  # This cluster's administrator allows the stand-in installer image that
  # the demo's KubernetesCluster runs (kubespray's cannot be fetched here):
  # config/default with that one flag added, so that the manager rolls out
  # once.
  local overlay="$DEMO_DIR/deploy"
  mkdir -p "$overlay"
  cat >"$overlay/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $(realpath --relative-to="$overlay" config/default)
patches:
- target: {kind: Deployment, name: $MANAGER}
  patch: |-
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --installer-images=quay.io/kubespray/kubespray,docker.io/kubespray/kubespray,${INSTALLER_IMAGE%:*}
EOF
  make --no-print-directory deploy DEPLOY_CONFIG="$overlay" >/dev/null
  kubectl -n "$MANAGER_NS" rollout status deployment "$MANAGER" --timeout=5m >/dev/null
  # Ready Pods are not yet a routed webhook Service: a server-side dry
  # run goes through admission, so it answers once kube-proxy routes it.
  for i in $(seq 1 120); do
    kubectl apply --dry-run=server -k config/demo >/dev/null 2>&1 && break
    (( i == 120 )) && { log "the webhooks do not answer"; kubectl apply --dry-run=server -k config/demo; exit 1; }
    sleep 1
  done
  stage "the samples on real containers (config/demo), and the KubernetesCluster prod on two SSH host Pods"
  kubectl apply -k config/demo >/dev/null
  ssh_hosts
  stage "waiting for every sample to be Ready (code-server's start and the cluster's install by ansible take a minute or two)"
  kubectl wait --for=condition=Ready --timeout=10m pset/web pset/shop-v1 pset/shop-v2 bal/shop ws/alice plat/acme kc/prod >/dev/null
  stage "ready"

  echo
  kubectl get kubeforge
  cat <<MSG

The demo is running, on real containers.
  export KUBECONFIG=$KUBECONFIG
  export PATH=$bin:$PWD/bin:\$PATH    # kubectl v1.37, matching the cluster, and kubectl kubeforge
  kubectl get kubeforge
  kubectl kubeforge status ws/alice
The IDE: this forwards a local port to code-server and prints the URL to
open and the command that prints the password (Ctrl-C stops it):
  kubectl kubeforge workspace open alice    # runs until Ctrl-C
The Balancer's split as configured, then 200 requests from a Pod, counted
by the version that answered:
  kubectl kubeforge balancer split shop
  kubectl run split --image=kubeforge.test/echoserver:v1 --restart=Never --rm -i --quiet --command -- /echoserver get -n 200 http://shop/
The Platform in dependency order; the cluster's kubeconfig and the log of
its last installer run (ansible over SSH):
  kubectl kubeforge platform graph acme
  kubectl kubeforge cluster kubeconfig prod | grep server:
  kubectl kubeforge cluster logs prod | grep -A 3 'PLAY RECAP'
The leader's log (of the manager's replicas, the Pod its Lease names):
  kubectl -n $MANAGER_NS logs "\$(kubectl -n $MANAGER_NS get lease kubeforge.kubeforge.io -o jsonpath='{.spec.holderIdentity}' | cut -d_ -f1)"
Stop it all: make demo-down
MSG
}

# ssh_hosts starts two SSH host Pods (sshd, the demo's key authorized for
# root), pins their host keys, and creates the KubernetesCluster prod on
# their Pod addresses: the installer never meets another address.
ssh_hosts() {
  local dir="$DEMO_DIR/ssh" h ip cp1 worker1
  mkdir -p "$dir"
  [[ -f "$dir/id_ed25519" ]] || ssh-keygen -q -t ed25519 -N "" -C kubeforge-demo -f "$dir/id_ed25519"
  kubectl create configmap prod-authorized-keys --from-file=authorized_keys="$dir/id_ed25519.pub" \
    --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  for h in cp1 worker1; do
    kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: prod-$h
  labels: {app: ssh-host, cluster: prod}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: sshd
    image: $SSHHOST_IMAGE
    ports: [{name: ssh, containerPort: 22}]
    readinessProbe: {tcpSocket: {port: 22}, periodSeconds: 1}
    volumeMounts: [{name: keys, mountPath: /etc/kubeforge, readOnly: true}]
  volumes:
  - name: keys
    configMap: {name: prod-authorized-keys}
EOF
  done
  kubectl wait --for=condition=Ready --timeout=3m pod/prod-cp1 pod/prod-worker1 >/dev/null
  : >"$dir/known_hosts"
  for h in cp1 worker1; do
    ip=$(kubectl get pod "prod-$h" -o jsonpath='{.status.podIP}')
    printf -v "$h" '%s' "$ip"
    kubectl exec "prod-$h" -- cat /etc/ssh/ssh_host_ed25519_key.pub | awk -v ip="$ip" '{print ip, $1, $2}' >>"$dir/known_hosts"
  done
  kubectl create secret generic prod-ssh --type=kubernetes.io/ssh-auth \
    --from-file=ssh-privatekey="$dir/id_ed25519" --from-file=known_hosts="$dir/known_hosts" \
    --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl apply -f - >/dev/null <<EOF
apiVersion: cluster.kubeforge.io/v1alpha1
kind: KubernetesCluster
metadata:
  name: prod
spec:
  version: v1.31.4
  masters:
  - {address: $cp1, name: cp1}
  nodes:
  - {address: $worker1, name: worker1}
  sshSecretRef: {name: prod-ssh, user: root}
  installer:
    image: $INSTALLER_IMAGE
    timeout: 10m
EOF
}

# why_not_real prints why this machine runs the kwok-only demo, or nothing.
why_not_real() {
  local state="$CACHE_ROOT/real-node"
  if [[ "${FAKE_NODES:-}" == 1 ]]; then
    echo "FAKE_NODES=1 asks for it"
  elif [[ "$(uname -s)" != Linux ]]; then
    echo "a real node needs Linux"
  elif [[ $(id -u) != 0 ]]; then
    echo "a real node needs root (containerd, the kubelet, iptables)"
  elif [[ -f "$state/cluster" && "$(cat "$state/cluster")" != "$CLUSTER_NAME" && -f "$state/pids/kubelet" ]] &&
    kill -0 "$(cat "$state/pids/kubelet")" 2>/dev/null; then
    echo "this machine's real node serves the cluster $(cat "$state/cluster") (one real node per machine)"
  fi
}

# build_binaries builds the manager and the kubectl plugin the printed
# lines use, when make did not.
build_binaries() {
  [[ -x bin/manager && -x bin/kubectl-kubeforge ]] || make --no-print-directory build >/dev/null
}

up() {
  local reason want prev
  reason=$(why_not_real)
  want=real
  [[ -n "$reason" ]] && want=fake
  prev=$(cat "$DEMO_DIR/mode" 2>/dev/null || true)
  if [[ -n "$prev" && "$prev" != "$want" ]]; then
    # The other demo's cluster (another service range, a manager outside
    # it, tainted fake nodes or none): deleted first, as demo-down does.
    log "the cluster $CLUSTER_NAME ran the other demo ($prev): deleting it first"
    down
  fi
  if [[ -n "$reason" ]]; then
    log "the kwok-only demo (pods run no container): $reason"
    up_fake
  else
    up_real
  fi
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
