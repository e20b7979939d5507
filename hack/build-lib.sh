# Shared by hack/test-binaries.sh and hack/node-binaries.sh, which build
# binaries from source through the Go module proxy. Source it after setting
# LOG_PREFIX and SRC_DIR.

log() { printf '[%s] %s\n' "$LOG_PREFIX" "$*" >&2; }

# new_module DIR: a throwaway module in DIR, so that a module we require
# can be built although its own replace directives do not apply to us.
new_module() {
  local dir=$1
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && go mod init "kubeforge.local/$LOG_PREFIX" >/dev/null 2>&1)
}

# quiet CMD...: runs CMD, showing its output only when it fails.
quiet() {
  local out
  if ! out=$("$@" 2>&1); then
    printf '%s\n' "$out" >&2
    return 1
  fi
}

# timed NAME CMD...: runs CMD in a subshell (it may cd), logging its time;
# a failure ends the script.
timed() {
  local name=$1 t0; shift
  t0=$(date +%s)
  log "building $name ..."
  if ! ( "$@" ); then
    log "FAILED building $name"
    exit 1
  fi
  log "built $name in $(( $(date +%s) - t0 ))s"
}
