#!/usr/bin/env bash
# Builds `kubectl kubeforge` for every platform of config/krew/kubeforge.yaml
# into dist/ (one tar.gz each, the binary and the LICENSE) and writes
# dist/kubeforge.yaml: the krew manifest with VERSION, URL_BASE (where the
# archives will be published) and each archive's SHA256 filled in.
#
#   VERSION=v0.1.0 URL_BASE=https://github.com/kubeforge/kubeforge/releases/download/v0.1.0 hack/krew.sh
#   PLATFORMS="linux/amd64" hack/krew.sh    # a subset; the manifest lists only those
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${VERSION:-v0.0.0-dev}
URL_BASE=${URL_BASE:-https://github.com/kubeforge/kubeforge/releases/download/$VERSION}
PLATFORMS=${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
DIST=${DIST:-dist}
mkdir -p "$DIST"
manifest=$(sed -e "s|VERSION|$VERSION|g" -e "s|URL_BASE|$URL_BASE|g" config/krew/kubeforge.yaml)
for p in $PLATFORMS; do
  os=${p%/*} arch=${p#*/}
  work=$(mktemp -d)
  echo "building kubectl-kubeforge for $os/$arch" >&2
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -ldflags "-s -w" -o "$work/kubectl-kubeforge" ./cmd/kubectl-kubeforge
  cp LICENSE "$work/"
  archive="$DIST/kubectl-kubeforge_${os}_${arch}.tar.gz"
  tar -C "$work" --owner=0 --group=0 --mtime='2026-01-01 00:00:00' -czf "$archive" kubectl-kubeforge LICENSE
  rm -rf "$work"
  sum=$(sha256sum "$archive" | cut -d' ' -f1)
  manifest=${manifest//SHA256_${os}_${arch}/$sum}
done
# Keep only the platforms built: drop each list entry still holding a
# placeholder.
printf '%s\n' "$manifest" | awk '
  /^  - selector:/ { if (entry != "" && entry !~ /SHA256_/) printf "%s", entry; entry = $0 "\n"; inlist = 1; next }
  inlist && /^    / { entry = entry $0 "\n"; next }
  { if (entry != "" && entry !~ /SHA256_/) printf "%s", entry; entry = ""; inlist = 0; print }
  END { if (entry != "" && entry !~ /SHA256_/) printf "%s", entry }
' | grep -v '^#' >"$DIST/kubeforge.yaml"
echo "$DIST/kubeforge.yaml" >&2
