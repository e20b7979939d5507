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
#   docker.io/codercom/code-server:4.96.4  the Workspace's default IDE image,
#       here code-server 4.96.4 from the npm registry (its native modules
#       built on this machine) on Debian, user coder (1000), listening on
#       $PORT with the Workspace's password hash (hack/images/code-server)
#   kubeforge.test/installer-standin:v1    an installer for KubernetesCluster
#       operations: Debian's ansible-core, openssh-client and python3, tini
#       as its entrypoint, and the stand-in playbooks of hack/installer in
#       /kubespray (no real kubespray can be fetched here)
#   kubeforge.test/sshhost:v1              a host the installer logs in to:
#       Debian's openssh-server, sudo and python3 (hack/images/sshhost)
#
# Usage: hack/images.sh [manager|nginx|echoserver|code-server|installer|sshhost]...
#        (default: all)
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
CODE_SERVER_VERSION=${CODE_SERVER_VERSION:-4.96.4}
CODE_SERVER_IMAGE=${CODE_SERVER_IMAGE:-docker.io/codercom/code-server:$CODE_SERVER_VERSION}
INSTALLER_IMAGE=${INSTALLER_IMAGE:-kubeforge.test/installer-standin:v1}
SSHHOST_IMAGE=${SSHHOST_IMAGE:-kubeforge.test/sshhost:v1}
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
  # What a base system would add (debian_base), users for the workers (no
  # shell: the image has none), the directories nginx opens at start, the
  # stream module loaded through Debian's modules-enabled convention (the
  # Balancer's nginx.conf includes it; images with the module built in have
  # no such file).
  debian_base "$root"
  mkdir -p "$root/etc/nginx/modules-enabled" "$root/var/log/nginx" "$root/var/lib/nginx"
  echo "load_module /usr/lib/nginx/modules/ngx_stream_module.so;" >"$root/etc/nginx/modules-enabled/50-mod-stream.conf"
  printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nwww-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$root/etc/passwd"
  printf 'root:x:0:\nwww-data:x:33:\nnogroup:x:65534:\nnobody:x:65534:\n' >"$root/etc/group"
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

# code_server_build installs code-server from the npm registry into
# $OUT/code-server/prefix, with its native modules built here against this
# machine's Node 20 (its headers in /usr/include/node; node-gyp would
# otherwise fetch them). Three things of `npm install -g code-server` reach
# past the npm registry and are done another way:
#   - lib/vscode pins @vscode/proxy-agent 0.27.0 to a GitHub commit; the
#     same version, with the same integrity hash, comes from the registry;
#   - @vscode/ripgrep downloads rg from GitHub; Debian's ripgrep is linked
#     in its place (its postinstall skips an existing bin/);
#   - argon2's prebuilt binary is on GitHub; it is built from source.
# npm 10 (the npm of Node 20) runs the install.
code_server_build() {
  local dir=$1 npm_dir="$1/npm" pkg="$1/prefix/lib/node_modules/code-server"
  [[ "$(node --version 2>/dev/null)" == v20.* ]] || { log "code-server $CODE_SERVER_VERSION needs Node 20 to build, not $(node --version 2>&1)"; return 1; }
  [[ -f /usr/include/node/node_api.h ]] || { log "no Node headers in /usr/include/node (the nodejs package has them)"; return 1; }
  rm -rf "$dir/prefix" && mkdir -p "$dir"
  npm install --silent --prefix "$npm_dir" npm@10.9.2 >/dev/null
  local npm=("$npm_dir/node_modules/.bin/npm" --unsafe-perm --nodedir=/usr --no-audit --no-fund --loglevel=error)
  "${npm[@]}" install --global --ignore-scripts --prefix "$dir/prefix" "code-server@$CODE_SERVER_VERSION" >/dev/null
  python3 - "$pkg/lib/vscode/npm-shrinkwrap.json" <<'PY'
import json, sys
path = sys.argv[1]
lock = json.load(open(path))
entry = lock["packages"]["node_modules/@vscode/proxy-agent"]
assert entry["version"] == "0.27.0", entry
entry["resolved"] = "https://registry.npmjs.org/@vscode/proxy-agent/-/proxy-agent-0.27.0.tgz"
json.dump(lock, open(path, "w"), indent=2)
PY
  (cd "$pkg/lib/vscode" && "${npm[@]}" install --omit=dev --ignore-scripts >/dev/null &&
    mkdir -p node_modules/@vscode/ripgrep/bin && ln -sfn /usr/bin/rg node_modules/@vscode/ripgrep/bin/rg &&
    "${npm[@]}" rebuild >/dev/null)
  # code-server's own dependencies (argon2) and its postinstall.sh: lib/vscode
  # is installed by now, so it makes the links and installs the built-in
  # extensions' dependencies.
  (cd "$pkg" && PATH="$npm_dir/node_modules/.bin:$PATH" "${npm[@]}" rebuild --foreground-scripts >"$dir/postinstall.log" 2>&1) ||
    { tail -20 "$dir/postinstall.log" >&2; log "code-server's postinstall failed"; return 1; }
  # Proof that the native modules load.
  (cd "$pkg" && node -e 'require("argon2"); require("./lib/vscode/node_modules/node-pty"); require("./lib/vscode/node_modules/@vscode/spdlog")') ||
    { log "code-server's native modules do not load"; return 1; }
}

# code_server: the Workspace's default IDE image. Node is this machine's
# Node 20 (code-server $CODE_SERVER_VERSION requires 20; Debian $DEBIAN_SUITE
# has a newer one, for which its native modules are not built), on
# Debian's libraries.
code_server() {
  local t0=$SECONDS dir="$OUT/code-server" pkgs key
  pkgs=$(debian_closure -exclude systemd,wget libstdc++6 libgcc-s1 libgssapi-krb5-2 dash bash coreutils ripgrep libc-bin base-files)
  key="$CODE_SERVER_VERSION $(node --version 2>/dev/null) $(sha256sum hack/images/code-server/entrypoint.sh | cut -c1-12) $pkgs"
  if [[ ! -f "$dir/key" || "$(cat "$dir/key")" != "$key" ]]; then
    rm -rf "$dir" && mkdir -p "$dir/rootfs"
    code_server_build "$dir"
    # shellcheck disable=SC2086
    debian_unpack "$dir/rootfs" $pkgs
    debian_base "$dir/rootfs"
    printf 'coder:x:1000:1000:coder:/home/coder:/bin/bash\n' >>"$dir/rootfs/etc/passwd"
    printf 'coder:x:1000:\n' >>"$dir/rootfs/etc/group"
    printf 'coder:*:20000:0:99999:7:::\n' >>"$dir/rootfs/etc/shadow"
    mkdir -p "$dir/rootfs/home/coder" "$dir/rootfs/usr/lib"
    install -m 0755 "$(command -v node)" "$dir/rootfs/usr/bin/node"
    cp -a "$dir/prefix/lib/node_modules/code-server" "$dir/rootfs/usr/lib/code-server"
    ln -sfn ../lib/code-server/out/node/entry.js "$dir/rootfs/usr/bin/code-server"
    install -m 0755 hack/images/code-server/entrypoint.sh "$dir/rootfs/usr/bin/entrypoint.sh"
    chroot "$dir/rootfs" /usr/bin/node /usr/lib/code-server/out/node/entry.js --version >"$dir/check.log" 2>&1 ||
      { cat "$dir/check.log" >&2; log "the assembled code-server does not run"; return 1; }
    echo "$key" >"$dir/key"
  fi
  ociimage -ref "$CODE_SERVER_IMAGE" -out "$OUT/code-server.tar" -user 1000:1000 \
    -env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin -env LANG=C.UTF-8 \
    -env HOME=/home/coder -env USER=coder -env SHELL=/bin/bash -env PORT=8080 \
    -entrypoint /usr/bin/entrypoint.sh \
    -label "org.opencontainers.image.title=code-server $CODE_SERVER_VERSION from npm, Node $(node --version), Debian $DEBIAN_SUITE (kubeforge local build)" \
    "$dir/rootfs=/"
  log "code-server $CODE_SERVER_VERSION image $CODE_SERVER_IMAGE pushed in $(( SECONDS - t0 ))s"
}

# installer: the stand-in installer image. Its root file system is cached
# per package list; the playbooks are a layer of their own.
installer() {
  local t0=$SECONDS dir="$OUT/installer" pkgs
  pkgs=$(debian_closure -exclude systemd,wget ansible-core openssh-client python3 tini dash coreutils libc-bin base-files)
  if [[ ! -f "$dir/packages" || "$(cat "$dir/packages")" != "$pkgs" ]]; then
    rm -rf "$dir" && mkdir -p "$dir/rootfs"
    # shellcheck disable=SC2086
    debian_unpack "$dir/rootfs" $pkgs
    debian_base "$dir/rootfs"
    # Proof that it runs: ansible parses a playbook.
    chroot "$dir/rootfs" /usr/bin/env LANG=C.UTF-8 HOME=/root ansible-playbook --version >"$dir/check.log" 2>&1 ||
      { cat "$dir/check.log" >&2; log "the assembled installer cannot run ansible-playbook"; return 1; }
    echo "$pkgs" >"$dir/packages"
  fi
  ociimage -ref "$INSTALLER_IMAGE" -out "$OUT/installer.tar" -user 0:0 \
    -env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin -env LANG=C.UTF-8 -env HOME=/root \
    -entrypoint /usr/bin/tini -entrypoint -- \
    -label "org.opencontainers.image.title=kubeforge stand-in installer: ansible-core $(debian_version ansible-core) from Debian $DEBIAN_SUITE" \
    "$dir/rootfs=/" "hack/installer/kubespray=/kubespray"
  log "installer image $INSTALLER_IMAGE pushed in $(( SECONDS - t0 ))s"
}

# sshhost: a Debian host for the installer to log in to, as root with a
# key. Its entrypoint (hack/images/sshhost/entrypoint.sh) makes host keys,
# installs the authorized keys it is given and runs sshd.
sshhost() {
  local t0=$SECONDS dir="$OUT/sshhost" pkgs
  pkgs=$(debian_closure -exclude systemd,wget openssh-server python3 sudo dash coreutils libc-bin base-files)
  if [[ ! -f "$dir/packages" || "$(cat "$dir/packages")" != "$pkgs" ]]; then
    rm -rf "$dir" && mkdir -p "$dir/rootfs"
    # shellcheck disable=SC2086
    debian_unpack "$dir/rootfs" $pkgs
    debian_base "$dir/rootfs"
    printf 'sshd:x:100:65534::/run/sshd:/usr/sbin/nologin\n' >>"$dir/rootfs/etc/passwd"
    printf 'sshd:*:20000:0:99999:7:::\n' >>"$dir/rootfs/etc/shadow"
    # What pam-auth-update writes on a Debian host: the common stacks
    # sudo's PAM configuration includes.
    printf 'auth\t[success=1 default=ignore]\tpam_unix.so nullok\nauth\trequisite\tpam_deny.so\nauth\trequired\tpam_permit.so\n' >"$dir/rootfs/etc/pam.d/common-auth"
    printf 'account\t[success=1 new_authtok_reqd=done default=ignore]\tpam_unix.so\naccount\trequisite\tpam_deny.so\naccount\trequired\tpam_permit.so\n' >"$dir/rootfs/etc/pam.d/common-account"
    printf 'session\trequired\tpam_permit.so\nsession\trequired\tpam_unix.so\n' | tee "$dir/rootfs/etc/pam.d/common-session" >"$dir/rootfs/etc/pam.d/common-session-noninteractive"
    printf 'password\t[success=1 default=ignore]\tpam_unix.so obscure yescrypt\npassword\trequisite\tpam_deny.so\npassword\trequired\tpam_permit.so\n' >"$dir/rootfs/etc/pam.d/common-password"
    # openssh-server's postinst makes sshd_config from Debian's template.
    cp "$dir/rootfs/usr/share/openssh/sshd_config" "$dir/rootfs/etc/ssh/sshd_config"
    install -D -m 0755 hack/images/sshhost/entrypoint.sh "$dir/rootfs/usr/local/bin/entrypoint.sh"
    # Proof that OpenSSH's programs and python (for ansible's modules) run
    # (a plain file stands in for /dev/null, which they open).
    mkdir -p "$dir/rootfs/dev" "$dir/rootfs/run/sshd" && : >"$dir/rootfs/dev/null"
    # sshd checks its configuration with host keys made for the check
    # (each container makes its own at start).
    { chroot "$dir/rootfs" /usr/bin/ssh-keygen -A &&
      chroot "$dir/rootfs" /usr/sbin/sshd -t &&
      chroot "$dir/rootfs" /usr/bin/python3 -c 'import json, locale; locale.setlocale(locale.LC_ALL, "C.UTF-8")'; } >"$dir/check.log" 2>&1 ||
      { cat "$dir/check.log" >&2; log "the assembled SSH host does not run"; return 1; }
    rm -f "$dir/rootfs/etc/ssh/ssh_host_"* "$dir/rootfs/dev/null"
    echo "$pkgs" >"$dir/packages"
  fi
  ociimage -ref "$SSHHOST_IMAGE" -out "$OUT/sshhost.tar" -user 0:0 \
    -env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin -env LANG=C.UTF-8 \
    -entrypoint /usr/local/bin/entrypoint.sh \
    -label "org.opencontainers.image.title=kubeforge test host: OpenSSH $(debian_version openssh-server) from Debian $DEBIAN_SUITE" \
    "$dir/rootfs=/"
  log "SSH host image $SSHHOST_IMAGE pushed in $(( SECONDS - t0 ))s"
}

curl -fsS --max-time 5 "http://$REGISTRY/v2/" >/dev/null || { log "no registry at $REGISTRY (hack/real-node.sh up)"; exit 1; }
targets=("$@")
(( ${#targets[@]} > 0 )) || targets=(manager nginx echoserver code-server installer sshhost)
for t in "${targets[@]}"; do
  case "$t" in
    manager|nginx|echoserver|installer|sshhost) "$t" ;;
    code-server) code_server ;;
    *) log "unknown image $t"; exit 2 ;;
  esac
done
