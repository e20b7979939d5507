#!/usr/bin/env bash
# Installs what config/default expects of a cluster into the local cluster
# with a real node (KUBECONFIG names it):
#   - cert-manager: its CRDs from cert-manager's module, its controllers and
#     CA injector built from that module by hack/certmanager (cached), as an
#     image pushed to the real node's registry, from
#     hack/certmanager/cert-manager.yaml;
#   - the prometheus-operator CRDs of the objects config/prometheus ships
#     (ServiceMonitor, PrometheusRule), from prometheus-operator's module.
#     The sum database has no entry for that module version, so it is
#     fetched from the module proxy without that cross-check (GONOSUMDB):
#     it only supplies two CRD files.
#
# Usage: hack/addons.sh install            both
#        hack/addons.sh cert-manager       cert-manager only
#        hack/addons.sh monitoring-crds    the prometheus-operator CRDs only
set -euo pipefail
cd "$(dirname "$0")/.."

CERT_MANAGER_VERSION=$(awk '$1 == "github.com/cert-manager/cert-manager" { print $2; exit }' hack/certmanager/go.mod)
CACHE_ROOT=${KUBEFORGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeforge}
OUT="$CACHE_ROOT/cert-manager/$CERT_MANAGER_VERSION"
IMAGE=kubeforge.test/cert-manager:$CERT_MANAGER_VERSION
REGISTRY=${REGISTRY:-$(hack/real-node.sh registry)}

PROMETHEUS_OPERATOR_VERSION=v0.86.1

log() { printf '[addons] %s\n' "$*" >&2; }

monitoring_crds() {
  local dir
  dir=$(cd "$CACHE_ROOT" && GONOSUMDB=github.com/prometheus-operator/prometheus-operator GOFLAGS=-mod=mod GOWORK=off \
    go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -d "$dir/example/prometheus-operator-crd" ]] || { log "prometheus-operator $PROMETHEUS_OPERATOR_VERSION's CRDs not found"; return 1; }
  local f
  for f in servicemonitors prometheusrules; do
    kubectl apply --server-side --force-conflicts -f "$dir/example/prometheus-operator-crd/monitoring.coreos.com_$f.yaml" >/dev/null
  done
  kubectl wait --for=condition=Established --timeout=60s crd/servicemonitors.monitoring.coreos.com crd/prometheusrules.monitoring.coreos.com >/dev/null
  log "ServiceMonitor and PrometheusRule CRDs of prometheus-operator $PROMETHEUS_OPERATOR_VERSION installed"
}

cert_manager() {
  local t0=$SECONDS crds
  mkdir -p "$OUT"
  (cd hack/certmanager && GOWORK=off CGO_ENABLED=0 go build -ldflags "-s -w" -o "$OUT/certmanager" .)
  go run ./hack/ociimage -ref "$IMAGE" -out "$OUT/image.tar" -user 65532:65532 -entrypoint /certmanager \
    -label "org.opencontainers.image.title=cert-manager $CERT_MANAGER_VERSION controllers (kubeforge local build)" \
    -push "$REGISTRY" "$OUT/certmanager=/certmanager" >/dev/null
  crds=$(cd hack/certmanager && GOWORK=off go list -m -f '{{.Dir}}' github.com/cert-manager/cert-manager)/deploy/crds
  kubectl apply --server-side --force-conflicts -f "$crds" >/dev/null
  kubectl wait --for=condition=Established --timeout=60s -f "$crds" >/dev/null
  sed "s|CERT_MANAGER_IMAGE|$IMAGE|" hack/certmanager/cert-manager.yaml | kubectl apply --server-side --force-conflicts -f - >/dev/null
  kubectl -n cert-manager rollout status deployment/cert-manager --timeout=120s >/dev/null
  kubectl -n cert-manager rollout status deployment/cert-manager-cainjector --timeout=120s >/dev/null
  log "cert-manager $CERT_MANAGER_VERSION running in $(( SECONDS - t0 ))s"
}

case "${1:-}" in
  install) cert_manager && monitoring_crds ;;
  cert-manager) cert_manager ;;
  monitoring-crds) monitoring_crds ;;
  *) echo "usage: $0 install|cert-manager|monitoring-crds" >&2; exit 2 ;;
esac
