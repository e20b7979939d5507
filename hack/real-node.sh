#!/usr/bin/env bash
# A real node for the local cluster, beside kwok's fake ones: containerd +
# runc + CNI (bridge, host-local, loopback, portmap) + a kubelet that joins
# with its own client certificate (system:node:<name>), kube-proxy (iptables
# mode) for Services, on demand kube-router's network policy controller
# (alone: no routing, no service proxy) so that NetworkPolicies hold
# (netpol-up / netpol-down), CoreDNS (a Deployment on the node) for cluster
# DNS, and
# a distribution registry on loopback that every image reference resolves to
# (nothing is pulled from the internet: images are built here and pushed to
# it). All binaries come from hack/node-binaries.sh. Called by
# hack/cluster.sh when REAL_NODE=1; one real node per machine.
#
# Usage: hack/real-node.sh up|down|status|check-clean|netpol-up|netpol-down|images|registry|ctr ARGS
# Env:   CLUSTER_NAME (the kwok cluster to join, default kubeforge),
#        REAL_NODE_NAME (default real-node), REAL_NODE_POD_CIDR (default
#        10.244.0.0/24), CLUSTER_SERVICE_CIDR (default 10.96.0.0/16; the
#        cluster must have been created with it), REGISTRY_PORT (default 5055)
#
# What it changes on the host, and puts back at `down`:
#   - processes: registry, containerd (+ its shims and the pods' processes),
#     kubelet, kube-proxy, kube-router — started here, ended here by their
#     PIDs;
#   - mounts under the state dir (pod volumes, rootfs, network namespaces);
#   - the bridge kfbr0 and the pods' veths;
#   - iptables rules: kube-proxy's, kube-router's and the kubelet's KUBE-*
#     chains, kube-router's ipsets (KUBE-*), and one rule (comment
#     "kubeforge-real-node") that rejects anything a pod sends off this
#     machine — pods reach each other, Services and this host only;
#   - while kube-router runs (netpol-up), two routing rules (preferences
#     32000 and 32001) that say the same below iptables: from the pod
#     range, only the pod range and this host (the local table) are routed,
#     anything else is prohibited. kube-router's chain, first in filter's
#     FORWARD, accepts what NetworkPolicies allow before the rule above is
#     reached; no route gets past these;
#   - cgroups: the kubelet's tree under /kubeforge-real in each hierarchy;
#   - sysctls: net.ipv4.ip_forward (set to 1 while the node runs), and those
#     the kubelet and kube-proxy set at start (kernel.panic,
#     kernel.panic_on_oops, vm.overcommit_memory, ...): recorded before, put
#     back as soon as they are up and again at down;
#   - host directories the kubelet and containerd insist on
#     (/var/lib/kubelet, /var/log/containers, /run/containerd, /var/lib/cni),
#     removed if they did not exist before.
# `check-clean` (run at the end of `down`) fails when anything is left.
set -euo pipefail
cd "$(dirname "$0")/.."

CLUSTER_NAME=${CLUSTER_NAME:-kubeforge}
CACHE_ROOT=${KUBEFORGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeforge}
KWOK_WORKDIR="$CACHE_ROOT/kwok"
CLUSTER_DIR="$KWOK_WORKDIR/clusters/$CLUSTER_NAME"
ADMIN_KUBECONFIG="$CLUSTER_DIR/kubeconfig.yaml"
STATE=${REAL_NODE_STATE:-$CACHE_ROOT/real-node}
HOST_RECORD="$CACHE_ROOT/real-node.host" # what the host looked like before up
NODE_NAME=${REAL_NODE_NAME:-real-node}
POD_CIDR=${REAL_NODE_POD_CIDR:-10.244.0.0/24}
SERVICE_CIDR=${CLUSTER_SERVICE_CIDR:-10.96.0.0/16}
REGISTRY_PORT=${REGISTRY_PORT:-5055}
REGISTRY="127.0.0.1:$REGISTRY_PORT"
BRIDGE=kfbr0
CGROUP_ROOT=kubeforge-real
KUBELET_PORT=10350
KUBELET_HEALTHZ_PORT=10358
PROXY_METRICS_PORT=10351
PROXY_HEALTHZ_PORT=10352
ROUTER_HEALTHZ_PORT=10353
PAUSE_IMAGE=registry.k8s.io/pause:3.10.1
COREDNS_IMAGE=registry.k8s.io/coredns/coredns:v1.12.4
FIREWALL_COMMENT=kubeforge-real-node
RULE_PREF=32000
SYSCTLS=(kernel.panic kernel.panic_on_oops vm.overcommit_memory net.ipv4.ip_forward
  net.ipv4.conf.all.route_localnet net.bridge.bridge-nf-call-iptables
  net.netfilter.nf_conntrack_max net.netfilter.nf_conntrack_tcp_timeout_established
  net.netfilter.nf_conntrack_tcp_timeout_close_wait)
HOST_DIRS=(/var/lib/kubelet /var/log/containers /var/log/pods /run/containerd /var/lib/cni /var/run/netns)

LOG_PREFIX=real-node
log() { printf '[%s] %s\n' "$LOG_PREFIX" "$*" >&2; }

# cluster_dns is the tenth address of the Service range (as kubeadm does).
cluster_dns() {
  local base=${SERVICE_CIDR%/*}
  echo "${base%.*}.10"
}

node_ip() {
  # The address the host would use for the outside world (a route lookup,
  # nothing is sent); the API server already listens on every address.
  local ip
  ip=$(ip -4 route get 1.0.0.0 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p' || true)
  [[ -n "$ip" ]] || ip=$(ip -4 -o addr show scope global | awk '{print $4}' | cut -d/ -f1 | head -1)
  echo "$ip"
}

pid_alive() { [[ -f "$1" ]] && running "$(cat "$1")"; }

# start NAME CMD...: starts a daemon with its log and pid file in the state dir.
start() {
  local name=$1; shift
  if pid_alive "$STATE/pids/$name"; then return 0; fi
  mkdir -p "$STATE/pids" "$STATE/logs"
  setsid "$@" >>"$STATE/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$STATE/pids/$name"
}

# running PID: the process runs; an exited one that its parent (often PID
# 1, which may take seconds) has not yet reaped is a zombie, not running.
running() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n "$state" && "$state" != Z ]]
}

# stop NAME [SIGNAL]: SIGNAL (SIGTERM unless given), then SIGKILL after
# 10 s, by the recorded PID.
stop() {
  local f="$STATE/pids/$1" sig=${2:-TERM} pid i
  [[ -f "$f" ]] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "-$sig" "$pid" 2>/dev/null || true
    for i in $(seq 1 100); do running "$pid" || break; sleep 0.1; done
    running "$pid" && kill -KILL "$pid" 2>/dev/null || true
    for i in $(seq 1 50); do running "$pid" || break; sleep 0.1; done
  fi
  rm -f "$f"
}

wait_for() { # wait_for SECONDS DESCRIPTION CMD...
  local secs=$1 what=$2 i; shift 2
  for i in $(seq 1 $((secs * 5))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  log "timed out after ${secs}s waiting for $what"
  return 1
}

kc() { kubectl --kubeconfig "$ADMIN_KUBECONFIG" "$@"; }

# put FILE: writes stdin to FILE unless FILE already holds exactly that (a
# running kube-proxy exits when its configuration file changes).
put() {
  local tmp="$1.new"
  cat >"$tmp"
  if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv "$tmp" "$1"; fi
}

record_host() {
  # Recorded once per up/down cycle: a second `up` keeps the first record.
  [[ -f "$HOST_RECORD" ]] && return 0
  local s d
  {
    for s in "${SYSCTLS[@]}"; do
      [[ -e "/proc/sys/${s//.//}" ]] && echo "sysctl $s $(cat "/proc/sys/${s//.//}")"
    done
    for d in "${HOST_DIRS[@]}"; do [[ -e "$d" ]] && echo "dir $d"; done
  } >"$HOST_RECORD.tmp"
  mv "$HOST_RECORD.tmp" "$HOST_RECORD"
}

restore_sysctls() {
  [[ -f "$HOST_RECORD" ]] || return 0
  local kind key value
  while read -r kind key value; do
    [[ "$kind" == sysctl ]] || continue
    [[ "$(cat "/proc/sys/${key//.//}" 2>/dev/null)" == "$value" ]] && continue
    # ip_forward stays on while the node runs; everything else goes back now.
    if [[ "${1:-}" == keep-forward && "$key" == net.ipv4.ip_forward ]]; then continue; fi
    echo "$value" >"/proc/sys/${key//.//}" 2>/dev/null || log "could not restore $key=$value"
  done <"$HOST_RECORD"
}

# certificate NAME SUBJECT: a client certificate signed by the cluster's CA.
# One kept from an earlier cluster (a run killed before down) is made anew:
# the cluster's CA is new with every cluster.
certificate() {
  local name=$1 subject=$2 dir="$STATE/pki"
  if [[ -f "$dir/$name.crt" ]] &&
    openssl verify -CAfile "$CLUSTER_DIR/pki/ca.crt" "$dir/$name.crt" >/dev/null 2>&1; then
    return 0
  fi
  mkdir -p "$dir"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$dir/$name.key" -subj "$subject" -out "$dir/$name.csr" 2>/dev/null
  openssl x509 -req -in "$dir/$name.csr" -CA "$CLUSTER_DIR/pki/ca.crt" -CAkey "$CLUSTER_DIR/pki/ca.key" \
    -CAcreateserial -days 30 -out "$dir/$name.crt" \
    -extfile <(printf 'keyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n') 2>/dev/null
  chmod 600 "$dir/$name.key"
}

# kubeconfig NAME: a kubeconfig that authenticates with certificate NAME.
kubeconfig() {
  local name=$1 out="$STATE/$1.kubeconfig" server
  server=$(kc config view -o jsonpath='{.clusters[0].cluster.server}')
  kubectl config --kubeconfig "$out" set-cluster local --server "$server" \
    --certificate-authority "$CLUSTER_DIR/pki/ca.crt" --embed-certs >/dev/null
  kubectl config --kubeconfig "$out" set-credentials "$name" \
    --client-certificate "$STATE/pki/$name.crt" --client-key "$STATE/pki/$name.key" --embed-certs >/dev/null
  kubectl config --kubeconfig "$out" set-context local --cluster local --user "$name" >/dev/null
  kubectl config --kubeconfig "$out" use-context local >/dev/null
  chmod 600 "$out"
}

registry_up() {
  mkdir -p "$STATE/registry"
  put "$STATE/registry.yaml" <<EOF
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $STATE/registry
  delete:
    enabled: true
http:
  addr: $REGISTRY
EOF
  start registry env OTEL_TRACES_EXPORTER=none "$NODE_BIN/registry" serve "$STATE/registry.yaml"
  wait_for 20 "the registry on $REGISTRY" curl -fsS "http://$REGISTRY/v2/"
}

# images pushes the images the node itself needs: the sandbox (pause) and
# CoreDNS, built from binaries here.
images() {
  local out="$STATE/images"
  mkdir -p "$out"
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/pause" ./hack/pause
  go run ./hack/ociimage -ref "$PAUSE_IMAGE" -out "$out/pause.tar" -user 65535:65535 \
    -entrypoint /pause -push "$REGISTRY" "$out/pause=/pause" >/dev/null
  go run ./hack/ociimage -ref "$COREDNS_IMAGE" -out "$out/coredns.tar" -user 65532:65532 \
    -entrypoint /coredns -push "$REGISTRY" "$NODE_BIN/coredns=/coredns" >/dev/null
}

containerd_up() {
  mkdir -p "$STATE/containerd/root" "$STATE/containerd/state" "$STATE/run" "$STATE/cni/net.d" "$STATE/certs.d/_default"
  # Every registry (ghcr.io, docker.io, registry.k8s.io, ...) resolves to
  # the local one, and only to it: a missing image fails to pull instead of
  # reaching out to the internet.
  put "$STATE/certs.d/_default/hosts.toml" <<EOF
server = "http://$REGISTRY"

[host."http://$REGISTRY"]
  capabilities = ["pull", "resolve"]
  skip_verify = true
EOF
  put "$STATE/cni/net.d/10-kubeforge.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "kubeforge",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$STATE/cni/ipam",
        "ranges": [[{"subnet": "$POD_CIDR"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
  put "$STATE/containerd.toml" <<EOF
version = 3
root = "$STATE/containerd/root"
state = "$STATE/containerd/state"

[grpc]
  address = "$STATE/run/containerd.sock"

[ttrpc]
  address = "$STATE/run/containerd.sock.ttrpc"

[plugins.'io.containerd.cri.v1.runtime']
  # No CAP_SYS_RESOURCE here: nothing may lower an oom_score_adj.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["$CNI_BIN"]
    conf_dir = "$STATE/cni/net.d"
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
      BinaryName = "$NODE_BIN/runc"
      SystemdCgroup = false

[plugins.'io.containerd.cri.v1.images']
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "$PAUSE_IMAGE"
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = "$STATE/certs.d"
EOF
  start containerd env PATH="$NODE_BIN:$PATH" "$NODE_BIN/containerd" --config "$STATE/containerd.toml"
  wait_for 30 "containerd" "$NODE_BIN/ctr" --address "$STATE/run/containerd.sock" version
}

firewall_up() {
  # Pods may reach each other, Services (DNAT'ed to pods before FORWARD)
  # and this host (INPUT); anything else they send is rejected.
  iptables -C FORWARD -s "$POD_CIDR" ! -d "$POD_CIDR" -m comment --comment "$FIREWALL_COMMENT" -j REJECT 2>/dev/null ||
    iptables -I FORWARD -s "$POD_CIDR" ! -d "$POD_CIDR" -m comment --comment "$FIREWALL_COMMENT" -j REJECT
  echo 1 >/proc/sys/net/ipv4/ip_forward
}

kubelet_up() {
  local ip=$1
  mkdir -p "$STATE/kubelet" "$STATE/pod-logs"
  local c
  for c in /sys/fs/cgroup/*/; do
    [[ -L "${c%/}" || "$c" == */unified/ ]] && continue
    mkdir -p "$c$CGROUP_ROOT"
  done
  put "$STATE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This host runs cgroup v1, which kubelet 1.37 refuses unless told.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$CGROUP_ROOT
address: $ip
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: $CLUSTER_DIR/pki/ca.crt
authorization:
  mode: Webhook
clusterDomain: cluster.local
clusterDNS: [$(cluster_dns)]
# Pods resolve cluster names only; nothing is forwarded off this machine.
resolvConf: ""
failSwapOn: false
podLogsDir: $STATE/pod-logs
containerRuntimeEndpoint: unix://$STATE/run/containerd.sock
imageServiceEndpoint: unix://$STATE/run/containerd.sock
serializeImagePulls: false
maxPods: 60
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  imagefs.available: 1%
  nodefs.inodesFree: 1%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
shutdownGracePeriod: 0s
EOF
  start kubelet "$NODE_BIN/kubelet" --config "$STATE/kubelet.yaml" --kubeconfig "$STATE/kubelet.kubeconfig" \
    --root-dir "$STATE/kubelet" --cert-dir "$STATE/kubelet/pki" --hostname-override "$NODE_NAME" --node-ip "$ip" \
    --node-labels "kubeforge.io/node=real" --v 1
  wait_for 90 "node $NODE_NAME to be Ready" \
    kc wait --for=condition=Ready "node/$NODE_NAME" --timeout=2s
}

kube_proxy_up() {
  local ip=$1
  put "$STATE/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection:
  kubeconfig: $STATE/kube-proxy.kubeconfig
hostnameOverride: $NODE_NAME
bindAddress: $ip
clusterCIDR: $POD_CIDR
metricsBindAddress: 127.0.0.1:$PROXY_METRICS_PORT
healthzBindAddress: 127.0.0.1:$PROXY_HEALTHZ_PORT
# Pods on one bridge reach each other through a Service without
# br_netfilter when the Service traffic is masqueraded.
iptables:
  masqueradeAll: true
  localhostNodePorts: false
nodePortAddresses: ["$ip/32"]
# Leave the host's conntrack settings alone.
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
  start kube-proxy "$NODE_BIN/kube-proxy" --config "$STATE/kube-proxy.yaml" --v 1
  wait_for 60 "kube-proxy" curl -fsS "http://127.0.0.1:$PROXY_HEALTHZ_PORT/healthz"
}

# netpol_up runs kube-router's network policy controller for this node:
# iptables chains and ipsets (Debian's ipset) per Pod that make
# NetworkPolicies hold on the bridge (br_netfilter passes bridged traffic
# through iptables). Its own certificate, with only what the controller reads.
# Not part of `up`: v1.3.2 writes the whole filter table back
# (iptables-restore without --noflush) from a copy taken at the start of
# each sync, so kube-proxy's rules made meanwhile (a Service's "no
# endpoints" REJECT) vanish until kube-proxy's next full sync. Specs that
# need NetworkPolicies held start it (`netpol-up`) and stop it
# (`netpol-down`) around themselves.
netpol_up() {
  NODE_BIN=${NODE_BIN:-$(hack/node-binaries.sh --print)}
  # kube-router's chain, first in FORWARD, accepts what the policies allow
  # before the rule of firewall_up is reached. So while it runs, routing
  # says the same: after the Services' DNAT, a pod's packet is routed only
  # to a pod or to this host (the local table comes first); anything else
  # is prohibited. (Not always: the kernel rate-limits the ICMP errors of a
  # prohibit route, so a Service with no endpoints would hang rather than
  # refuse under load; kube-proxy's REJECT does not.)
  command -v ipset >/dev/null || { log "kube-router needs ipset: apt-get install ipset (make test-deps)"; return 1; }
  ip rule show pref "$RULE_PREF" | grep -q . ||
    ip rule add pref "$RULE_PREF" from "$POD_CIDR" to "$POD_CIDR" lookup main
  ip rule show pref "$((RULE_PREF + 1))" | grep -q . ||
    ip rule add pref "$((RULE_PREF + 1))" from "$POD_CIDR" prohibit
  kc apply --server-side --force-conflicts -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kubeforge:real-node:kube-router
rules:
- apiGroups: [""]
  resources: [pods, namespaces, nodes, services, endpoints]
  verbs: [get, list, watch]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: kubeforge:real-node:kube-router
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "kubeforge:real-node:kube-router"}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "kubeforge:kube-router"}
EOF
  start kube-router "$NODE_BIN/kube-router" --kubeconfig "$STATE/kube-router.kubeconfig" --hostname-override "$NODE_NAME" \
    --run-firewall=true --run-router=false --run-service-proxy=false --enable-cni=false \
    --health-port "$ROUTER_HEALTHZ_PORT" --metrics-port 0 --iptables-sync-period 1m --v 1
  wait_for 60 "kube-router's network policy controller" \
    sh -c "iptables-save -t filter | grep -q -- '-j KUBE-ROUTER-FORWARD'"
}

coredns_up() {
  local dns
  dns=$(cluster_dns)
  kc apply --server-side --force-conflicts -f - >/dev/null <<EOF
apiVersion: v1
kind: ServiceAccount
metadata:
  name: coredns
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:coredns
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:coredns
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:coredns
subjects:
- kind: ServiceAccount
  name: coredns
  namespace: kube-system
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: coredns
  namespace: kube-system
data:
  # Cluster names only: there is no forward plugin, so a pod cannot make
  # this machine ask the outside world anything.
  Corefile: |
    .:53 {
        errors
        health :8080
        ready :8181
        kubernetes cluster.local in-addr.arpa ip6.arpa {
            pods insecure
            fallthrough in-addr.arpa ip6.arpa
            ttl 5
        }
        cache 5
        loadbalance
    }
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: coredns
  namespace: kube-system
  labels: {k8s-app: kube-dns}
spec:
  replicas: 1
  selector:
    matchLabels: {k8s-app: kube-dns}
  template:
    metadata:
      labels: {k8s-app: kube-dns}
    spec:
      serviceAccountName: coredns
      dnsPolicy: Default
      nodeSelector: {kubeforge.io/node: real}
      terminationGracePeriodSeconds: 1
      containers:
      - name: coredns
        image: $COREDNS_IMAGE
        args: [-conf, /etc/coredns/Corefile]
        ports:
        - {name: dns, containerPort: 53, protocol: UDP}
        - {name: dns-tcp, containerPort: 53, protocol: TCP}
        readinessProbe:
          httpGet: {path: /ready, port: 8181}
          periodSeconds: 2
        livenessProbe:
          httpGet: {path: /health, port: 8080}
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          runAsNonRoot: true
        volumeMounts:
        - {name: config, mountPath: /etc/coredns, readOnly: true}
      volumes:
      - name: config
        configMap: {name: coredns}
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {k8s-app: kube-dns}
spec:
  clusterIP: $dns
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
EOF
  wait_for 120 "CoreDNS to be available" \
    kc -n kube-system wait --for=condition=Available deployment/coredns --timeout=2s
}

up() {
  [[ $(id -u) == 0 ]] || { log "a real node needs root (containerd, kubelet, iptables)"; exit 1; }
  [[ -f "$ADMIN_KUBECONFIG" ]] || { log "no cluster $CLUSTER_NAME (hack/cluster.sh up first)"; exit 1; }
  if [[ -f "$STATE/cluster" && "$(cat "$STATE/cluster")" != "$CLUSTER_NAME" ]] && pid_alive "$STATE/pids/kubelet"; then
    log "the real node already serves cluster $(cat "$STATE/cluster"); one real node per machine"; exit 1
  fi
  local t0 ip
  t0=$(date +%s)
  # What the node and its build need from Debian (runc's libseccomp-dev,
  # iptables, ipset, ...) comes with the tests' peers: idempotent, it
  # installs only what is missing, so a first `REAL_NODE=1 make cluster-up`
  # needs no step of its own.
  hack/test-deps.sh
  NODE_BIN=$(hack/node-binaries.sh)
  CNI_BIN="$(dirname "$NODE_BIN")/cni"
  ip=$(node_ip)
  [[ -n "$ip" ]] || { log "no IPv4 address for the node"; exit 1; }
  mkdir -p "$STATE"
  echo "$CLUSTER_NAME" >"$STATE/cluster"
  record_host
  certificate kubelet "/O=system:nodes/CN=system:node:$NODE_NAME"
  certificate kube-proxy "/CN=system:kube-proxy"
  certificate kube-router "/CN=kubeforge:kube-router"
  kubeconfig kubelet
  kubeconfig kube-proxy
  kubeconfig kube-router
  registry_up
  images
  containerd_up
  firewall_up
  kubelet_up "$ip"
  kube_proxy_up "$ip"
  # The kubelet and kube-proxy have set what they set at start; put the
  # host's values back (ip_forward stays on until down).
  restore_sysctls keep-forward
  coredns_up
  log "node $NODE_NAME ($ip) is Ready in $(( $(date +%s) - t0 ))s; registry $REGISTRY; logs in $STATE/logs"
}

# kill_pods ends every container containerd runs (the pods' processes and
# their shims), through containerd, so that their mounts go with them.
kill_pods() {
  local ctr=("$NODE_BIN/ctr" --address "$STATE/run/containerd.sock" -n k8s.io) id
  pid_alive "$STATE/pids/containerd" || return 0
  for id in $("${ctr[@]}" tasks ls -q 2>/dev/null); do
    "${ctr[@]}" tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
  done
  # containerd deletes a pod's task itself once it has exited; wait for
  # that (5 s at most), then delete by force whatever is left.
  for _ in $(seq 1 50); do
    [[ -z "$("${ctr[@]}" tasks ls -q 2>/dev/null)" ]] && break
    sleep 0.1
  done
  for id in $("${ctr[@]}" tasks ls -q 2>/dev/null); do
    "${ctr[@]}" tasks delete --force "$id" >/dev/null 2>&1 || true
  done
}

# kill_leftovers ends, by PID, what kill_pods could not reach (containerd
# gone first): processes in the kubelet's cgroups and processes of the
# node's binaries (containerd's shims).
kill_leftovers() {
  local pids="" p exe
  pids=$(cat /sys/fs/cgroup/pids/"$CGROUP_ROOT"/cgroup.procs /sys/fs/cgroup/pids/"$CGROUP_ROOT"/*/cgroup.procs \
    /sys/fs/cgroup/pids/"$CGROUP_ROOT"/*/*/cgroup.procs /sys/fs/cgroup/pids/"$CGROUP_ROOT"/*/*/*/cgroup.procs 2>/dev/null || true)
  for p in /proc/[0-9]*; do
    exe=$(readlink "$p/exe" 2>/dev/null) || continue
    [[ "$exe" == "$NODE_BIN/"* ]] && pids+=" ${p#/proc/}"
  done
  for p in $pids; do kill -KILL "$p" 2>/dev/null || true; done
  [[ -z "${pids// /}" ]] || sleep 1
}

unmount_state() {
  local m
  # Deepest first; a lazy unmount for whatever is still busy.
  for m in $(awk -v s="$STATE/" 'index($5, s) == 1 {print $5}' /proc/self/mountinfo | sort -r | uniq); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "could not unmount $m"
  done
}

# firewall_down removes the chains the kubelet and kube-proxy made (KUBE-*)
# and the rule this script added, in both address families.
firewall_down() {
  local cmd table chain rule rules chains
  "$NODE_BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
  for cmd in iptables ip6tables; do
    for table in filter nat mangle; do
      # Rules in any chain that jump to a KUBE-/CNI- chain or carry our comment.
      rules=$("$cmd-save" -t "$table" 2>/dev/null | grep -E '^-A ' | grep -E -- "-j (KUBE-|CNI-)|$FIREWALL_COMMENT" || true)
      while read -r rule; do
        [[ -n "$rule" ]] || continue
        eval "$cmd -t $table ${rule/-A /-D }" 2>/dev/null || true
      done <<<"$rules"
      chains=$("$cmd-save" -t "$table" 2>/dev/null | sed -n 's/^:\(\(KUBE\|CNI\)-[^ ]*\) .*/\1/p' || true)
      for chain in $chains; do "$cmd" -t "$table" -F "$chain" 2>/dev/null || true; done
      for chain in $chains; do "$cmd" -t "$table" -X "$chain" 2>/dev/null || true; done
    done
  done
  # kube-router's ipsets, once no rule uses them.
  local set
  for set in $(ipsets); do ipset destroy "$set" 2>/dev/null || true; done
}

# netpol_down stops kube-router and removes what it made — the jumps to
# its chains, its chains (KUBE-ROUTER-*, KUBE-POD-FW-*, KUBE-NWPLCY-*) and
# its ipsets — and nothing of kube-proxy's.
netpol_down() {
  stop kube-router
  local rule chain chains set
  while read -r rule; do
    [[ -n "$rule" ]] && eval "iptables -t filter ${rule/-A /-D }" 2>/dev/null || true
  done <<<"$(iptables-save -t filter 2>/dev/null | grep -E '^-A (INPUT|FORWARD|OUTPUT) ' | grep -E -- '-j KUBE-ROUTER-' || true)"
  chains=$(iptables-save -t filter 2>/dev/null | sed -n 's/^:\(KUBE-\(ROUTER\|POD-FW\|NWPLCY\)-[^ ]*\) .*/\1/p' || true)
  for chain in $chains; do iptables -t filter -F "$chain" 2>/dev/null || true; done
  for chain in $chains; do iptables -t filter -X "$chain" 2>/dev/null || true; done
  for set in $(ipsets); do ipset destroy "$set" 2>/dev/null || true; done
  routing_down
}

# routing_down removes the two routing rules of netpol_up.
routing_down() {
  local pref
  for pref in "$RULE_PREF" "$((RULE_PREF + 1))"; do
    if ip rule show pref "$pref" | grep -q "from $POD_CIDR"; then ip rule del pref "$pref" 2>/dev/null || true; fi
  done
}

# ipsets lists kube-router's ipsets.
ipsets() { command -v ipset >/dev/null && ipset list -n 2>/dev/null | grep -E '^(KUBE-|kube-router)' || true; }

cgroups_down() {
  local c
  for c in /sys/fs/cgroup/*/"$CGROUP_ROOT"; do
    [[ -d "$c" ]] || continue
    # Children before parents; each must be empty of processes by now.
    find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    [[ -d "$c" ]] && log "cgroup $c still has processes"
  done
  return 0
}

host_dirs_down() {
  local d
  [[ -f "$HOST_RECORD" ]] || return 0
  for d in "${HOST_DIRS[@]}"; do
    grep -qx "dir $d" "$HOST_RECORD" && continue
    [[ -e "$d" ]] || continue
    # Only what the node made: mount points are gone by now.
    rm -rf --one-file-system "$d"
  done
}

down() {
  if [[ ! -d "$STATE" ]]; then
    log "no real node"
    return 0
  fi
  NODE_BIN=$(hack/node-binaries.sh --print)
  log "stopping the real node"
  netpol_down
  # The node's state goes with it: nothing gains from a graceful exit but
  # containerd, which still has the pods' tasks to end.
  stop kube-proxy KILL
  stop kubelet KILL
  kill_pods
  stop containerd
  stop registry KILL
  kill_leftovers
  unmount_state
  ip link del "$BRIDGE" 2>/dev/null || true
  firewall_down
  cgroups_down
  restore_sysctls
  host_dirs_down
  rm -rf --one-file-system "$STATE"
  check_clean
  rm -f "$HOST_RECORD"
  log "the real node is gone and left nothing behind"
}

# check_clean fails when the real node left a process, a mount, an
# interface, a firewall rule, a cgroup or a changed sysctl behind.
check_clean() {
  local leaks=() kind key value p
  NODE_BIN=${NODE_BIN:-$(hack/node-binaries.sh --print)}
  for p in /proc/[0-9]*; do
    local exe
    exe=$(readlink "$p/exe" 2>/dev/null) || continue
    [[ "$exe" == "$NODE_BIN/"* ]] && leaks+=("process ${p#/proc/} ($exe)")
  done
  grep -q " ${STATE}[/ ]" /proc/self/mountinfo && leaks+=("mounts under $STATE")
  ip link show "$BRIDGE" >/dev/null 2>&1 && leaks+=("interface $BRIDGE")
  ip -o link show type veth 2>/dev/null | grep -q "master $BRIDGE" && leaks+=("veths on $BRIDGE")
  for p in iptables-save ip6tables-save; do
    "$p" 2>/dev/null | grep -qE "KUBE-|CNI-|$FIREWALL_COMMENT" && leaks+=("$p: KUBE-/CNI- chains or our rule")
  done
  [[ -z "$(ipsets)" ]] || leaks+=("ipsets: $(ipsets | tr '\n' ' ')")
  ip rule show | grep -q "from $POD_CIDR" && leaks+=("routing rules from $POD_CIDR")
  for p in /sys/fs/cgroup/*/"$CGROUP_ROOT"; do [[ -d "$p" ]] && leaks+=("cgroup $p"); done
  if [[ -f "$HOST_RECORD" ]]; then
    while read -r kind key value; do
      [[ "$kind" == sysctl ]] || continue
      [[ "$(cat "/proc/sys/${key//.//}" 2>/dev/null)" == "$value" ]] || leaks+=("sysctl $key is $(cat "/proc/sys/${key//.//}"), was $value")
    done <"$HOST_RECORD"
  fi
  if (( ${#leaks[@]} > 0 )); then
    log "left behind:"
    printf '  %s\n' "${leaks[@]}" >&2
    return 1
  fi
}

status() {
  local n
  for n in registry containerd kubelet kube-proxy kube-router; do
    if pid_alive "$STATE/pids/$n"; then echo "$n running (pid $(cat "$STATE/pids/$n"))"; else echo "$n stopped"; fi
  done
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  check-clean) check_clean ;;
  images)
    NODE_BIN=$(hack/node-binaries.sh)
    images ;;
  registry) echo "$REGISTRY" ;;
  netpol-up)
    [[ -f "$STATE/kube-router.kubeconfig" ]] || { log "no real node (hack/real-node.sh up first)"; exit 1; }
    netpol_up ;;
  netpol-down) netpol_down ;;
  ctr)
    # ctr against the node's containerd, in the kubelet's namespace.
    shift
    exec "$(hack/node-binaries.sh --print)/ctr" --address "$STATE/run/containerd.sock" -n k8s.io "$@" ;;
  *) echo "usage: $0 up|down|status|check-clean|netpol-up|netpol-down|images|registry|ctr ARGS..." >&2; exit 2 ;;
esac
