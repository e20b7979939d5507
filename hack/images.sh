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
#   kubeforge.test/echoserver:v1           the test backend (hack/echoserver)
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
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_SUITE=${DEBIAN_SUITE:-forky}
DEBIAN_KEYRING=${DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
# nginx and what its binary and stream module link against; nothing else
# (no shell, no package manager, no nginx-common configuration).
NGINX_PACKAGES=(nginx libnginx-mod-stream libc6 libgcc-s1 libcrypt1 libpcre2-8-0 libssl3t64 libzstd1 zlib1g)

LOG_PREFIX=images
log() { printf '[%s] %s\n' "$LOG_PREFIX" "$*" >&2; }

# ociimage builds and pushes an image (-ref REF ... FILES); the real node,
# when it runs, forgets its copy of REF, so that the next Pod pulls the new
# one although its tag did not change.
ociimage() {
  go run ./hack/ociimage -push "$REGISTRY" "$@" >/dev/null
  if [[ "$1" == -ref && "$(hack/real-node.sh status 2>/dev/null)" == *"containerd running"* ]]; then
    hack/real-node.sh ctr images rm "$2" >/dev/null 2>&1 || true
  fi
}

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
  log "test backend image $ECHOSERVER_IMAGE pushed"
}

# field PACKAGES NAME FIELD: a field of a package's stanza in a Packages file.
field() {
  awk -v p="$2" -v f="$3:" 'BEGIN { RS = "" } $0 ~ "(^|\n)Package: " p "\n" {
    n = split($0, lines, "\n"); for (i = 1; i <= n; i++) if (index(lines[i], f " ") == 1) { print substr(lines[i], length(f) + 2); exit } }' "$1"
}

# nginx_rootfs assembles a root file system from Debian packages: the
# suite's InRelease checked against Debian's archive keyring, the Packages
# index against InRelease, every .deb against the index.
nginx_rootfs() {
  local dir="$OUT/nginx" debs="$OUT/nginx/debs" root="$OUT/nginx/rootfs" p
  rm -rf "$dir" && mkdir -p "$debs" "$root"
  curl -fsS --max-time 60 -o "$dir/InRelease" "$DEBIAN_MIRROR/dists/$DEBIAN_SUITE/InRelease"
  gpgv --keyring "$DEBIAN_KEYRING" "$dir/InRelease" 2>/dev/null || { log "InRelease of $DEBIAN_SUITE: bad signature"; return 1; }
  curl -fsS --max-time 120 -o "$dir/Packages.xz" "$DEBIAN_MIRROR/dists/$DEBIAN_SUITE/main/binary-amd64/Packages.xz"
  local want
  want=$(awk '/^SHA256:/ { s = 1; next } /^[A-Za-z]/ { s = 0 } s && $3 == "main/binary-amd64/Packages.xz" { print $1 }' "$dir/InRelease")
  [[ -n "$want" && "$(sha256sum "$dir/Packages.xz" | cut -d' ' -f1)" == "$want" ]] || { log "Packages.xz does not match InRelease"; return 1; }
  xz -dc "$dir/Packages.xz" >"$dir/Packages"
  for p in "${NGINX_PACKAGES[@]}"; do
    local file sum
    file=$(field "$dir/Packages" "$p" Filename)
    sum=$(field "$dir/Packages" "$p" SHA256)
    [[ -n "$file" && -n "$sum" ]] || { log "package $p not in $DEBIAN_SUITE"; return 1; }
    curl -fsS --max-time 120 -o "$debs/$p.deb" "$DEBIAN_MIRROR/$file"
    [[ "$(sha256sum "$debs/$p.deb" | cut -d' ' -f1)" == "$sum" ]] || { log "$p: checksum mismatch"; return 1; }
    dpkg-deb -x "$debs/$p.deb" "$root"
  done
  field "$dir/Packages" nginx Version >"$dir/version"
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
