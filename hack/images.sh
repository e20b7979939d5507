#!/usr/bin/env bash
# Builds the images the real node runs, without Docker, and pushes them to
# the local cluster's registry (hack/real-node.sh), where every image name
# resolves:
#
#   $IMG (ghcr.io/kubeforge/kubeforge:vX)  the manager: the static binary as
#       /manager, user 65532:65532, the labels of the Dockerfile
#   docker.io/library/nginx:1.27.3-alpine  the Balancer's default proxy image,
#       here nginx from Debian testing (1.27.3 or later: `resolve` on upstream
#       servers) with its stream module; the name is the one our API defaults
#       to, so Balancers run unchanged
#   kubeforge.test/echoserver:v1           the test backend (hack/echoserver);
#       :v2 the same, :unready one that never answers on :8080
#
# Usage: hack/images.sh [manager|nginx|echoserver]...   (default: all)
# Env:   IMG, VERSION, REGISTRY (default: hack/real-node.sh registry)
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=${VERSION:-0.1.0}
IMG=${IMG:-ghcr.io/kubeforge/kubeforge:v$VERSION}
REGISTRY=${REGISTRY:-$(hack/real-node.sh registry)}
NGINX_IMAGE=${NGINX_IMAGE:-docker.io/library/nginx:1.27.3-alpine}
ECHOSERVER_IMAGE=${ECHOSERVER_IMAGE:-kubeforge.test/echoserver:v1}
CACHE_ROOT=${KUBEFORGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeforge}
OUT="$CACHE_ROOT/images"
# nginx and what its binary and stream module link against; nothing else
# (no shell, no package manager, no nginx-common configuration).
NGINX_PACKAGES=(nginx libnginx-mod-stream libc6 libgcc-s1 libcrypt1 libpcre2-8-0 libssl3t64 libzstd1 zlib1g)

LOG_PREFIX=images
log() { printf '[%s] %s\n' "$LOG_PREFIX" "$*" >&2; }
# shellcheck source=hack/image-lib.sh
source hack/image-lib.sh


manager() {
  local t0=$SECONDS
  mkdir -p "$OUT/manager"
  CGO_ENABLED=0 go build -ldflags "-s -w" -o "$OUT/manager/manager" ./cmd/manager
  ociimage -ref "$IMG" -out "$OUT/manager.tar" -user 65532:65532 -entrypoint /manager \
    -label "org.opencontainers.image.title=kubeforge" \
    -label "org.opencontainers.image.version=$VERSION" \
    -label "org.opencontainers.image.source=https://github.com/kubeforge/kubeforge" \
    -label "org.opencontainers.image.licenses=Apache-2.0" \
    "$OUT/manager/manager=/manager"
  log "manager image $IMG pushed in $(( SECONDS - t0 ))s"
}

echoserver() {
  mkdir -p "$OUT/echoserver"
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$OUT/echoserver/echoserver" ./hack/echoserver
  ociimage -ref "$ECHOSERVER_IMAGE" -out "$OUT/echoserver.tar" -user 65532:65532 \
    -entrypoint /echoserver -entrypoint serve "$OUT/echoserver/echoserver=/echoserver"
  # The same under a second version, for upgrades; and one that runs but
  # never answers on :8080 (its readiness probe never passes), for
  # upgrades that fail.
  ociimage -ref "${ECHOSERVER_IMAGE%:*}:v2" -out "$OUT/echoserver-v2.tar" -user 65532:65532 \
    -entrypoint /echoserver -entrypoint serve "$OUT/echoserver/echoserver=/echoserver"
  ociimage -ref "${ECHOSERVER_IMAGE%:*}:unready" -out "$OUT/echoserver-unready.tar" -user 65532:65532 \
    -entrypoint /echoserver -entrypoint serve -entrypoint -addr -entrypoint :9999 "$OUT/echoserver/echoserver=/echoserver"
  log "test backend images $ECHOSERVER_IMAGE, :v2 and :unready pushed"
}

# nginx_rootfs assembles a root file system from Debian packages
# (hack/image-lib.sh: signatures and checksums checked).
nginx_rootfs() {
  local dir="$OUT/nginx" root="$OUT/nginx/rootfs"
  rm -rf "$dir" && mkdir -p "$root"
  debian_unpack "$root" "${NGINX_PACKAGES[@]}"
  debian_version nginx >"$dir/version.tmp"
  # What a base system would add: the merged-/usr links, users for the
  # workers, the directories nginx opens at start, the stream module loaded
  # through Debian's modules-enabled convention (the Balancer's nginx.conf
  # includes it; images with the module built in have no such file).
  ln -sfn usr/lib "$root/lib"
  ln -sfn usr/lib64 "$root/lib64"
  ln -sfn usr/bin "$root/bin"
  ln -sfn usr/sbin "$root/sbin"
  mkdir -p "$root/etc/nginx/modules-enabled" "$root/var/log/nginx" "$root/var/lib/nginx" "$root/run" "$root/tmp"
  chmod 1777 "$root/tmp"
  echo "load_module /usr/lib/nginx/modules/ngx_stream_module.so;" >"$root/etc/nginx/modules-enabled/50-mod-stream.conf"
  printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nwww-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$root/etc/passwd"
  printf 'root:x:0:\nwww-data:x:33:\nnogroup:x:65534:\nnobody:x:65534:\n' >"$root/etc/group"
  rm -rf "$root/usr/share/doc" "$root/usr/share/man" "$root/usr/share/lintian" "$root/usr/share/locale"
  # Proof that it runs and speaks what the Balancer renders: the stream
  # module, a zone, `resolve` on an upstream server.
  cat >"$root/tmp/check.conf" <<'EOF'
include /etc/nginx/modules-enabled/*.conf;
events {}
stream {
    resolver 127.0.0.1 valid=5s;
    upstream u {
        zone u 64k;
        server backend.example.invalid:80 weight=2 resolve;
    }
    server {
        listen 18080;
        proxy_pass u;
    }
}
EOF
  chroot "$root" /usr/sbin/nginx -t -c /tmp/check.conf -e stderr >/dev/null 2>"$dir/check.log" ||
    { cat "$dir/check.log" >&2; log "the assembled nginx cannot run the Balancer's configuration"; return 1; }
  rm -f "$root/tmp/check.conf"
  mv "$dir/version.tmp" "$dir/version"
}

nginx() {
  local t0=$SECONDS version
  if [[ ! -f "$OUT/nginx/version" ]]; then
    nginx_rootfs
  fi
  version=$(cat "$OUT/nginx/version")
  ociimage -ref "$NGINX_IMAGE" -out "$OUT/nginx.tar" -user 0:0 \
    -env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    -entrypoint nginx -entrypoint -g -entrypoint "daemon off;" \
    -label "org.opencontainers.image.title=nginx $version from Debian $DEBIAN_SUITE (kubeforge local build)" \
    "$OUT/nginx/rootfs=/"
  log "nginx $version image $NGINX_IMAGE pushed in $(( SECONDS - t0 ))s"
}

curl -fsS --max-time 5 "http://$REGISTRY/v2/" >/dev/null || { log "no registry at $REGISTRY (hack/real-node.sh up)"; exit 1; }
targets=("$@")
(( ${#targets[@]} > 0 )) || targets=(manager nginx echoserver)
for t in "${targets[@]}"; do
  case "$t" in
    manager|nginx|echoserver) "$t" ;;
    *) log "unknown image $t"; exit 2 ;;
  esac
done
