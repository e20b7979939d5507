#!/usr/bin/env bash
# OLM on the local cluster with a real node (KUBECONFIG names it), built
# from source: nothing can be pulled from quay.io here, so OLM's binaries
# come from its Go module (hack/olm/runtime pins operator-lifecycle-manager,
# the operator-registry it was released with, grpc-health-probe and helm)
# and every image is built here and pushed to the real node's registry,
# under the names OLM's own manifests use.
#
#   binaries        build olm, catalog, package-server, copy-content, cpb,
#                   opm, grpc_health_probe and helm into the cache (locked,
#                   cached by the versions in hack/olm/runtime/go.sum)
#   images          quay.io/operator-framework/olm:<v> (OLM's binaries and
#                   busybox's cp, as OLM's Dockerfile has them) and
#                   quay.io/operator-framework/opm:<v> (opm and
#                   grpc_health_probe, as catalog and unpack Pods expect)
#   install         OLM as its releases install it: its chart rendered by
#                   helm with the upstream values (the images above; the
#                   OperatorHub.io CatalogSource left out, it cannot be
#                   pulled here), CRDs first, then until olm-operator,
#                   catalog-operator and the packageserver CSV are up
#   bundle-image    the bundle image BUNDLE_IMG from BUNDLE_DIR (default
#                   bundle/) with the labels of BUNDLE_DOCKERFILE (default
#                   bundle.Dockerfile): what `make bundle-build` builds
#   catalog-image   the catalog image CATALOG_IMG serving CATALOG_DIR
#                   (default catalog/) with opm: what `make catalog-build`
#                   builds
#   run-bundle      what `operator-sdk run bundle BUNDLE_IMG` does, in
#                   NAMESPACE (default kubeforge-run-bundle): opm renders
#                   the bundle image into a file-based catalog, a registry
#                   Pod serves it from a ConfigMap, a CatalogSource points
#                   at the Pod, an OperatorGroup (all namespaces) and a
#                   Subscription (Manual, startingCSV) install it, and the
#                   InstallPlan is approved; ends when the CSV Succeeded
#   run-bundle-cleanup   removes what run-bundle made (the operator too;
#                   CRDs and their objects stay)
#   print-bin       the directory of the binaries
#
# Usage: hack/olm.sh COMMAND... (run in order, e.g. images install)
#
# Env: REGISTRY (default: hack/real-node.sh registry), BUNDLE_IMG,
#      CATALOG_IMG, NAMESPACE, TIMEOUT (seconds to wait, default 300).
set -euo pipefail
cd "$(dirname "$0")/.."

LOG_PREFIX=olm
log() { printf '[%s] %s\n' "$LOG_PREFIX" "$*" >&2; }

RUNTIME=hack/olm/runtime
modversion() { awk -v m="$1" '$1 == m { print $2; exit }' "$RUNTIME/go.mod"; }
OLM_VERSION=$(modversion github.com/operator-framework/operator-lifecycle-manager)
OPM_VERSION=$(modversion github.com/operator-framework/operator-registry)
CACHE_ROOT=${KUBEFORGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeforge}
OLM_ROOT="$CACHE_ROOT/olm/$OLM_VERSION"
BIN="$OLM_ROOT/bin"
OUT="$OLM_ROOT/images"
OLM_IMAGE=quay.io/operator-framework/olm:$OLM_VERSION
OPM_IMAGE=quay.io/operator-framework/opm:$OPM_VERSION
VERSION=${VERSION:-0.1.0}
BUNDLE_IMG=${BUNDLE_IMG:-ghcr.io/kubeforge/kubeforge-bundle:v$VERSION}
CATALOG_IMG=${CATALOG_IMG:-ghcr.io/kubeforge/kubeforge-catalog:v$VERSION}
BUNDLE_DIR=${BUNDLE_DIR:-bundle}
BUNDLE_DOCKERFILE=${BUNDLE_DOCKERFILE:-bundle.Dockerfile}
CATALOG_DIR=${CATALOG_DIR:-catalog}
NAMESPACE=${NAMESPACE:-kubeforge-run-bundle}
TIMEOUT=${TIMEOUT:-300}
# shellcheck source=hack/image-lib.sh
source hack/image-lib.sh

# What hack/olm/runtime builds, binary name=package.
TOOLS=(
  olm=github.com/operator-framework/operator-lifecycle-manager/cmd/olm
  catalog=github.com/operator-framework/operator-lifecycle-manager/cmd/catalog
  package-server=github.com/operator-framework/operator-lifecycle-manager/cmd/package-server
  copy-content=github.com/operator-framework/operator-lifecycle-manager/cmd/copy-content
  cpb=github.com/operator-framework/operator-lifecycle-manager/util/cpb
  opm=github.com/operator-framework/operator-registry/cmd/opm
  grpc_health_probe=github.com/grpc-ecosystem/grpc-health-probe
  helm=helm.sh/helm/v3/cmd/helm
)

registry() { echo "${REGISTRY:-$(hack/real-node.sh registry)}"; }

binaries() {
  local stamp want t
  want=$(cat "$RUNTIME/go.mod" "$RUNTIME/go.sum" | sha256sum | cut -d' ' -f1)
  stamp="$BIN/.stamp"
  complete() {
    [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] || return 1
    for t in "${TOOLS[@]}"; do [[ -x "$BIN/${t%%=*}" ]] || return 1; done
  }
  if complete; then return 0; fi
  mkdir -p "$BIN"
  exec 8>"$OLM_ROOT/.lock"
  flock 8
  if complete; then return 0; fi
  local t0=$SECONDS ldflags tags
  # opm's image handling without gpgme (cgo): what operator-registry's own
  # build uses.
  tags=containers_image_openpgp
  ldflags="-s -w -X github.com/operator-framework/operator-lifecycle-manager/pkg/version.OLMVersion=${OLM_VERSION#v}"
  ldflags+=" -X github.com/operator-framework/operator-registry/cmd/opm/version.opmVersion=$OPM_VERSION"
  [[ -f "$stamp.partial" && "$(cat "$stamp.partial")" == "$want" ]] || { rm -f "$BIN"/*; echo "$want" >"$stamp.partial"; }
  log "building OLM $OLM_VERSION, opm $OPM_VERSION, grpc_health_probe and helm (hack/olm/runtime) ..."
  for t in "${TOOLS[@]}"; do
    [[ -x "$BIN/${t%%=*}" && -f "$stamp.partial" && "$(cat "$stamp.partial")" == "$want" ]] && continue
    (cd "$RUNTIME" && GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 go build -tags "$tags" -ldflags "$ldflags" -o "$BIN/${t%%=*}" "${t#*=}") ||
      { log "FAILED building ${t%%=*}"; exit 1; }
  done
  echo "$want" >"$stamp"
  rm -f "$stamp.partial"
  log "built in $(( SECONDS - t0 ))s into $BIN"
}


# opm_rootfs DIR: opm and grpc_health_probe in /bin, a writable /tmp and
# an nsswitch.conf, as the upstream opm image has them.
opm_rootfs() {
  local root=$1
  rm -rf "$root" && mkdir -p "$root/bin" "$root/tmp" "$root/etc"
  chmod 1777 "$root/tmp"
  echo "hosts: files dns" >"$root/etc/nsswitch.conf"
  cp "$BIN/opm" "$BIN/grpc_health_probe" "$root/bin/"
}

images() {
  binaries
  local t0=$SECONDS root="$OUT/olm-rootfs" bb="$OUT/busybox"
  # OLM's image: its binaries, and cp at /bin/cp (bundle unpack Jobs copy
  # cpb and copy-content out of it with cp), from Debian's static busybox.
  if [[ ! -x "$bb/bin/busybox" && ! -x "$bb/usr/bin/busybox" ]]; then
    rm -rf "$bb"
    debian_unpack "$bb" busybox-static
  fi
  rm -rf "$root" && mkdir -p "$root/bin" "$root/tmp"
  chmod 1777 "$root/tmp"
  local t
  for t in olm catalog package-server copy-content cpb; do cp "$BIN/$t" "$root/bin/"; done
  cp "$(ls "$bb/bin/busybox" "$bb/usr/bin/busybox" 2>/dev/null | head -1)" "$root/bin/busybox"
  ln -sfn busybox "$root/bin/cp"
  ociimage -ref "$OLM_IMAGE" -out "$OUT/olm.tar" -user 1001:1001 -env PATH=/bin -entrypoint /bin/olm \
    -label "org.opencontainers.image.title=OLM $OLM_VERSION (kubeforge local build)" "$root=/"
  opm_rootfs "$OUT/opm-rootfs"
  ociimage -ref "$OPM_IMAGE" -out "$OUT/opm.tar" -user 1001:1001 -env PATH=/bin -entrypoint /bin/opm \
    -label "org.opencontainers.image.title=opm $OPM_VERSION (kubeforge local build)" "$OUT/opm-rootfs=/"
  log "images $OLM_IMAGE and $OPM_IMAGE pushed in $(( SECONDS - t0 ))s"
}

# olm_source: where OLM's module source is, downloaded when the module
# cache lacks it (the binaries may be cached while the module is not, e.g.
# built with another GOMODCACHE): go list would print nothing.
olm_source() {
  (cd "$RUNTIME" && GOWORK=off go mod download -json github.com/operator-framework/operator-lifecycle-manager |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
}

install() {
  binaries
  local t0=$SECONDS src manifests="$OLM_ROOT/manifests"
  src=$(olm_source)
  [[ -d "$src/deploy/chart" ]] || { log "OLM $OLM_VERSION's source (its Helm chart) not found in the module cache"; exit 1; }
  mkdir -p "$manifests"
  "$BIN/helm" template olm "$src/deploy/chart" -n olm -f "$src/deploy/upstream/values.yaml" \
    --set installType=kubeforge-local \
    --set olm.image.ref="$OLM_IMAGE" --set catalog.image.ref="$OLM_IMAGE" --set package.image.ref="$OLM_IMAGE" \
    --set catalog.opmImageArgs="--opmImage=$OPM_IMAGE" >"$manifests/olm.yaml"
  kubectl apply --server-side --force-conflicts -f "$src/deploy/chart/crds" >/dev/null
  kubectl wait --for=condition=Established --timeout=60s -f "$src/deploy/chart/crds" >/dev/null
  # An Established CRD can still be missing from discovery for a moment, and
  # olm.yaml holds objects of those kinds ("no matches for kind"): retry.
  retry 10 kubectl apply --server-side --force-conflicts -f "$manifests/olm.yaml"
  kubectl -n olm rollout status deployment/olm-operator --timeout="${TIMEOUT}s" >/dev/null
  kubectl -n olm rollout status deployment/catalog-operator --timeout="${TIMEOUT}s" >/dev/null
  local deadline=$(( SECONDS + TIMEOUT ))
  until [[ "$(kubectl -n olm get csv packageserver -o jsonpath='{.status.phase}' 2>/dev/null)" == Succeeded ]]; do
    (( SECONDS < deadline )) || { log "the packageserver CSV did not succeed"; kubectl -n olm get csv packageserver -o yaml >&2 || true; exit 1; }
    sleep 2
  done
  kubectl -n olm rollout status deployment/packageserver --timeout="${TIMEOUT}s" >/dev/null
  log "OLM $OLM_VERSION installed in $(( SECONDS - t0 ))s (rendered manifests: $manifests/olm.yaml)"
}

# labels DOCKERFILE: -label flags for each LABEL line.
labels() { sed -n 's/^LABEL \([^=]*\)=\(.*\)$/-label\n\1=\2/p' "$1"; }

bundle_image() {
  local t0=$SECONDS args=()
  mapfile -t args < <(labels "$BUNDLE_DOCKERFILE")
  ociimage -ref "$BUNDLE_IMG" -out "$OUT/bundle.tar" -user 65532:65532 "${args[@]}" \
    "$BUNDLE_DIR/manifests=/manifests" "$BUNDLE_DIR/metadata=/metadata" "$BUNDLE_DIR/tests/scorecard=/tests/scorecard"
  log "bundle image $BUNDLE_IMG ($BUNDLE_DIR) pushed in $(( SECONDS - t0 ))s"
}

catalog_image() {
  binaries
  local t0=$SECONDS root="$OUT/catalog-rootfs"
  "$BIN/opm" validate "$CATALOG_DIR"
  opm_rootfs "$root"
  cp -r "$CATALOG_DIR" "$root/configs"
  # The serving cache, built now as `opm generate dockerfile` images do:
  # `opm serve --cache-dir` refuses to start without one.
  "$BIN/opm" serve "$root/configs" --cache-dir="$root/tmp/cache" --cache-only >/dev/null 2>&1 ||
    { log "opm cannot build the serving cache of $CATALOG_DIR"; return 1; }
  chmod -R a+rX "$root/tmp/cache"
  ociimage -ref "$CATALOG_IMG" -out "$OUT/catalog.tar" -user 1001:1001 -env PATH=/bin \
    -entrypoint /bin/opm -entrypoint serve -entrypoint /configs -entrypoint --cache-dir=/tmp/cache \
    -label operators.operatorframework.io.index.configs.v1=/configs "$root=/"
  log "catalog image $CATALOG_IMG ($CATALOG_DIR) pushed in $(( SECONDS - t0 ))s"
}

# local_ref REF: REF in the local registry (its host replaced), for
# clients on this machine; the cluster resolves REF itself.
local_ref() {
  local ref=$1 first rest
  first=${ref%%/*} rest=${ref#*/}
  if [[ "$ref" == */* && ( "$first" == *.* || "$first" == *:* || "$first" == localhost ) ]]; then ref=$rest; fi
  echo "$(registry)/$ref"
}

retry() { # TRIES COMMAND...: until COMMAND succeeds, 2 s apart; the last failure's output is shown
  local tries=$1 i out; shift
  for (( i = 1; ; i++ )); do
    out=$("$@" 2>&1) && return 0
    (( i < tries )) || { printf '%s\n' "$out" >&2; return 1; }
    log "retrying ($i/$tries): $*: $(tail -n 1 <<<"$out")"
    sleep 2
  done
}

wait_for() { # DESCRIPTION COMMAND...: until COMMAND succeeds or TIMEOUT
  local what=$1 deadline=$(( SECONDS + TIMEOUT )); shift
  until "$@" >/dev/null 2>&1; do
    (( SECONDS < deadline )) || { log "timed out waiting for $what"; return 1; }
    sleep 2
  done
}

run_bundle() {
  binaries
  local t0=$SECONDS dir="$OLM_ROOT/run-bundle" csv pkg channel local
  rm -rf "$dir" && mkdir -p "$dir"
  # 1. The bundle rendered as a catalog, from the image itself.
  local=$(local_ref "$BUNDLE_IMG")
  # opm pulls through containers/image, which wants a signature policy;
  # the default one of container tools (accept what the registry serves),
  # in a HOME of its own so that the user's is not touched.
  mkdir -p "$dir/home/.config/containers"
  echo '{"default": [{"type": "insecureAcceptAnything"}]}' >"$dir/home/.config/containers/policy.json"
  HOME="$dir/home" "$BIN/opm" render "$local" --use-http -o yaml >"$dir/bundle.yaml"
  sed -i "s|^image: $local\$|image: $BUNDLE_IMG|" "$dir/bundle.yaml"
  csv=$(sed -n 's/^name: //p' "$dir/bundle.yaml" | head -1)
  pkg=$(sed -n 's/^package: //p' "$dir/bundle.yaml" | head -1)
  channel=$(grep -o 'operators.operatorframework.io.bundle.channel.default.v1=[^ ]*' "$BUNDLE_DOCKERFILE" | cut -d= -f2)
  [[ -n "$csv" && -n "$pkg" && -n "$channel" ]] || { log "cannot read the bundle's CSV, package and channel"; return 1; }
  mkdir -p "$dir/configs"
  {
    printf -- '---\nschema: olm.package\nname: %s\ndefaultChannel: %s\n' "$pkg" "$channel"
    printf -- '---\nschema: olm.channel\npackage: %s\nname: %s\nentries:\n- name: %s\n' "$pkg" "$channel" "$csv"
    printf -- '---\n'
    cat "$dir/bundle.yaml"
  } >"$dir/configs/catalog.yaml"
  "$BIN/opm" validate "$dir/configs" >/dev/null
  # 2. A registry Pod serving it.
  kubectl create namespace "$NAMESPACE" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl -n "$NAMESPACE" create configmap kubeforge-run-bundle-catalog --from-file=catalog.yaml="$dir/configs/catalog.yaml" \
    --dry-run=client -o yaml | kubectl apply --server-side --force-conflicts -f - >/dev/null
  kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: kubeforge-run-bundle-registry
  namespace: $NAMESPACE
  labels: {app.kubernetes.io/name: kubeforge-run-bundle-registry}
spec:
  securityContext: {runAsNonRoot: true, runAsUser: 1001, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: registry
    image: $OPM_IMAGE
    args: [serve, /configs]
    ports: [{name: grpc, containerPort: 50051}]
    readinessProbe:
      exec: {command: [grpc_health_probe, -addr=:50051]}
      periodSeconds: 2
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
    volumeMounts:
    # One file (subPath): a whole ConfigMap volume also holds its ..data
    # copies, which opm would read as a second catalog.
    - {name: catalog, mountPath: /configs/$pkg/catalog.yaml, subPath: catalog.yaml}
    - {name: cache, mountPath: /tmp}
  volumes:
  - {name: catalog, configMap: {name: kubeforge-run-bundle-catalog}}
  - {name: cache, emptyDir: {}}
EOF
  kubectl -n "$NAMESPACE" wait --for=condition=Ready --timeout="${TIMEOUT}s" pod/kubeforge-run-bundle-registry >/dev/null ||
    { kubectl -n "$NAMESPACE" logs kubeforge-run-bundle-registry --tail=20 >&2 || true; return 1; }
  local ip
  ip=$(kubectl -n "$NAMESPACE" get pod kubeforge-run-bundle-registry -o jsonpath='{.status.podIP}')
  # 3. The CatalogSource, OperatorGroup and Subscription.
  kubectl apply -f - >/dev/null <<EOF
apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: kubeforge-run-bundle
  namespace: $NAMESPACE
spec:
  sourceType: grpc
  address: $ip:50051
  displayName: $pkg from $BUNDLE_IMG
  publisher: operator-sdk run bundle (hack/olm.sh)
EOF
  if [[ -z "$(kubectl -n "$NAMESPACE" get operatorgroups -o name)" ]]; then
    kubectl apply -f - >/dev/null <<EOF
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata:
  name: kubeforge-run-bundle
  namespace: $NAMESPACE
spec: {}
EOF
  fi
  wait_for "the CatalogSource to be READY" \
    bash -c "[[ \$(kubectl -n $NAMESPACE get catalogsource kubeforge-run-bundle -o jsonpath='{.status.connectionState.lastObservedState}') == READY ]]"
  kubectl apply -f - >/dev/null <<EOF
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: $pkg
  namespace: $NAMESPACE
spec:
  name: $pkg
  channel: $channel
  startingCSV: $csv
  installPlanApproval: Manual
  source: kubeforge-run-bundle
  sourceNamespace: $NAMESPACE
EOF
  # 4. Approve the InstallPlan that installs exactly this CSV.
  wait_for "the InstallPlan" \
    bash -c "[[ -n \$(kubectl -n $NAMESPACE get subscription $pkg -o jsonpath='{.status.installPlanRef.name}') ]]"
  local plan
  plan=$(kubectl -n "$NAMESPACE" get subscription "$pkg" -o jsonpath='{.status.installPlanRef.name}')
  kubectl -n "$NAMESPACE" get installplan "$plan" -o jsonpath='{.spec.clusterServiceVersionNames}' | grep -q "\"$csv\"" ||
    { log "InstallPlan $plan does not install $csv"; return 1; }
  kubectl -n "$NAMESPACE" patch installplan "$plan" --type merge -p '{"spec":{"approved":true}}' >/dev/null
  wait_for "CSV $csv to succeed" \
    bash -c "[[ \$(kubectl -n $NAMESPACE get csv $csv -o jsonpath='{.status.phase}') == Succeeded ]]" ||
    { kubectl -n "$NAMESPACE" get csv "$csv" -o jsonpath='{.status.message}' >&2 || true; return 1; }
  log "$csv installed from $BUNDLE_IMG in $NAMESPACE in $(( SECONDS - t0 ))s"
}

run_bundle_cleanup() {
  local pkg=kubeforge csv
  csv=$(kubectl -n "$NAMESPACE" get subscription "$pkg" -o jsonpath='{.status.installedCSV}' 2>/dev/null || true)
  kubectl -n "$NAMESPACE" delete subscription "$pkg" --ignore-not-found >/dev/null
  [[ -z "$csv" ]] || kubectl -n "$NAMESPACE" delete csv "$csv" --ignore-not-found >/dev/null
  kubectl -n "$NAMESPACE" delete catalogsource kubeforge-run-bundle --ignore-not-found >/dev/null
  kubectl -n "$NAMESPACE" delete operatorgroup kubeforge-run-bundle --ignore-not-found >/dev/null
  kubectl -n "$NAMESPACE" delete pod kubeforge-run-bundle-registry --ignore-not-found >/dev/null
  kubectl -n "$NAMESPACE" delete configmap kubeforge-run-bundle-catalog --ignore-not-found >/dev/null
  log "removed the run-bundle install from $NAMESPACE (CRDs and their objects stay)"
}

(( $# > 0 )) || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }
for cmd in "$@"; do
  case "$cmd" in
    binaries) binaries ;;
    images) images ;;
    install) install ;;
    bundle-image) bundle_image ;;
    catalog-image) catalog_image ;;
    run-bundle) run_bundle ;;
    run-bundle-cleanup) run_bundle_cleanup ;;
    print-bin) echo "$BIN" ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2 ;;
  esac
done
