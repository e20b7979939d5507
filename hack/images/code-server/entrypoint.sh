#!/bin/sh
# The entrypoint of kubeforge's code-server image (hack/images.sh): what a
# Workspace's Pod expects of its IDE image (docs/workspace.md).
#
#   PORT                the port to listen on, on every address (8080)
#   KUBEFORGE_IDE_AUTH  password (the default) or none, the Workspace's
#                       spec.auth.mode
#   HASHED_PASSWORD     the argon2id hash of the Workspace's password (from
#                       its Secret <name>-auth); code-server checks logins
#                       against it and never sees the password itself
#
# With auth password and no hash (nor PASSWORD) it refuses to start, rather
# than fall back to a password in a file nobody reads.
set -eu
auth=password
case "${KUBEFORGE_IDE_AUTH:-password}" in
  password) ;;
  none) auth=none ;;
  *) echo "code-server: KUBEFORGE_IDE_AUTH must be password or none, not ${KUBEFORGE_IDE_AUTH}" >&2; exit 1 ;;
esac
if [ "$auth" = password ] && [ -z "${HASHED_PASSWORD:-}" ] && [ -z "${PASSWORD:-}" ]; then
  echo "code-server: auth is password but neither HASHED_PASSWORD nor PASSWORD is set; refusing to start" >&2
  exit 1
fi
if [ "$auth" = none ]; then
  unset HASHED_PASSWORD PASSWORD 2>/dev/null || true
fi
exec /usr/bin/node /usr/lib/code-server/out/node/entry.js \
  --bind-addr "0.0.0.0:${PORT:-8080}" \
  --auth "$auth" \
  --disable-telemetry \
  --disable-update-check \
  "$@" "${HOME:-/home/coder}"
