# Shared by the scripts that build images for the real node (hack/images.sh,
# hack/olm.sh): pushing an image to its registry, and root file systems
# from Debian packages. Source it after setting OUT (a cache directory) and
# defining log.

# ociimage builds an image and pushes it to the real node's registry
# (REGISTRY, else hack/real-node.sh registry): -ref REF ... FILES. The
# node, when it runs, forgets its copy of REF, so that the next Pod pulls
# the new one although its tag did not change.
ociimage() {
  go run ./hack/ociimage -push "${REGISTRY:-$(hack/real-node.sh registry)}" "$@" >/dev/null
  if [[ "$1" == -ref && "$(hack/real-node.sh status 2>/dev/null)" == *"containerd running"* ]]; then
    hack/real-node.sh ctr images rm "$2" >/dev/null 2>&1 || true
  fi
}

DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_SUITE=${DEBIAN_SUITE:-forky}
DEBIAN_KEYRING=${DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}

# field PACKAGES NAME FIELD: a field of a package's stanza in a Packages file.
field() {
  awk -v p="$2" -v f="$3:" 'BEGIN { RS = "" } index("\n" $0 "\n", "\nPackage: " p "\n") {
    n = split($0, lines, "\n"); for (i = 1; i <= n; i++) if (index(lines[i], f " ") == 1) { print substr(lines[i], length(f) + 2); exit } }' "$1"
}

# debian_index: the suite's Packages index at $OUT/debian/Packages, fetched
# once per run: InRelease checked against Debian's archive keyring, the
# index against InRelease.
debian_index() {
  local dir="$OUT/debian"
  [[ -f "$dir/Packages" && -f "$dir/.fetched-$$" ]] && return 0
  rm -rf "$dir" && mkdir -p "$dir"
  curl -fsS --max-time 60 -o "$dir/InRelease" "$DEBIAN_MIRROR/dists/$DEBIAN_SUITE/InRelease"
  gpgv --keyring "$DEBIAN_KEYRING" "$dir/InRelease" 2>/dev/null || { log "InRelease of $DEBIAN_SUITE: bad signature"; return 1; }
  curl -fsS --max-time 120 -o "$dir/Packages.xz" "$DEBIAN_MIRROR/dists/$DEBIAN_SUITE/main/binary-amd64/Packages.xz"
  local want
  want=$(awk '/^SHA256:/ { s = 1; next } /^[A-Za-z]/ { s = 0 } s && $3 == "main/binary-amd64/Packages.xz" { print $1 }' "$dir/InRelease")
  [[ -n "$want" && "$(sha256sum "$dir/Packages.xz" | cut -d' ' -f1)" == "$want" ]] || { log "Packages.xz does not match InRelease"; return 1; }
  xz -dc "$dir/Packages.xz" >"$dir/Packages"
  touch "$dir/.fetched-$$"
}

# debian_unpack ROOT PACKAGE...: unpacks the packages into ROOT, each .deb
# checked against the index; no maintainer scripts run.
debian_unpack() {
  local root=$1 p file sum debs="$OUT/debian/debs"; shift
  debian_index
  mkdir -p "$debs" "$root"
  for p in "$@"; do
    file=$(field "$OUT/debian/Packages" "$p" Filename)
    sum=$(field "$OUT/debian/Packages" "$p" SHA256)
    [[ -n "$file" && -n "$sum" ]] || { log "package $p not in $DEBIAN_SUITE"; return 1; }
    curl -fsS --max-time 120 -o "$debs/$p.deb" "$DEBIAN_MIRROR/$file"
    [[ "$(sha256sum "$debs/$p.deb" | cut -d' ' -f1)" == "$sum" ]] || { log "$p: checksum mismatch"; return 1; }
    dpkg-deb -x "$debs/$p.deb" "$root"
  done
}

# debian_version PACKAGE: its version in the index.
debian_version() { debian_index && field "$OUT/debian/Packages" "$1" Version; }

# debian_closure [-exclude a,b] PACKAGE...: the packages named and all they
# depend on, from the suite's index (hack/debclosure), one per line.
debian_closure() {
  debian_index && go run ./hack/debclosure -index "$OUT/debian/Packages" "$@"
}

# debian_base ROOT: what dpkg's maintainer scripts would have made of an
# unpacked root file system: the merged-/usr links (and /bin/sh, when dash
# is there), /tmp, and root's account; no documentation. Callers add their
# own users.
debian_base() {
  local root=$1
  ln -sfn usr/lib "$root/lib"
  ln -sfn usr/lib64 "$root/lib64"
  ln -sfn usr/bin "$root/bin"
  ln -sfn usr/sbin "$root/sbin"
  if [[ -e "$root/usr/bin/dash" ]]; then ln -sfn dash "$root/usr/bin/sh"; fi
  mkdir -p "$root/tmp" "$root/root" "$root/run" "$root/var/tmp"
  chmod 1777 "$root/tmp" "$root/var/tmp"
  chmod 700 "$root/root"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
  printf 'root:*:20000:0:99999:7:::\nnobody:*:20000:0:99999:7:::\n' >"$root/etc/shadow"
  chmod 640 "$root/etc/shadow"
  rm -rf "$root/usr/share/doc" "$root/usr/share/man" "$root/usr/share/lintian" "$root/usr/share/locale" "$root/usr/share/info"
}
