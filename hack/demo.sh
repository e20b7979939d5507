#!/usr/bin/env bash
# make demo: a local control plane (hack/cluster.sh), the CRDs, the webhooks
# (served by the manager on 127.0.0.1 over HTTPS), the manager itself running
# on this machine with leader election, and the samples. Then it shows
# `kubectl get kubeforge`.
#
# Usage: hack/demo.sh up|down
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

up() {
  mkdir -p "$DEMO_DIR"
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
  [[ -x bin/manager ]] || go build -o bin/manager ./cmd/manager
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
  export PATH=$bin:\$PATH    # kubectl v1.37, matching the cluster
  kubectl get kubeforge
  kubectl scale pset/web --replicas 5
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
  CLUSTER_NAME=$CLUSTER_NAME hack/cluster.sh down
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
