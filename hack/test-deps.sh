#!/usr/bin/env bash
# Installs the Debian packages that the tests use as real peers, when they
# are missing: nginx with its stream module (Balancer traffic tests) and
# nss_wrapper (lets `nginx -t` resolve cluster DNS names to loopback), and
# python3 and ansible-core (run the KubernetesCluster installer's kubeconfig
# uploader, inventory and precheck playbook), openssh-client and
# openssh-server (the installer's host-key checks, and the precheck over real
# SSH to an sshd the test starts on loopback), and MariaDB and PostgreSQL
# servers (Platform databases; the tests start their own on loopback, see
# internal/test/testdb), and Prometheus with promtool (the e2e suite scrapes the
# manager with a Prometheus of its own; promtool checks the alert rules).
# The real node of tests/e2e/real needs libseccomp-dev and pkg-config (runc
# is built with seccomp), iptables (kube-proxy), openssl (its certificates),
# and curl, gpgv, xz-utils and debian-archive-keyring (the nginx image is
# assembled from Debian's signed packages), ipset (kube-router's network
# policy controller), and a C++ toolchain with the headers code-server's
# native modules build against (build-essential, libkrb5-dev,
# libxkbfile-dev, libsecret-1-dev: hack/images.sh code-server, with the
# machine's Node 20), and chromium (the real-node suite signs in to
# code-server in a real browser, driven with chromedp).
# Idempotent: it does nothing when everything is there.
set -euo pipefail

packages=(nginx libnginx-mod-stream libnss-wrapper python3 ansible-core openssh-client openssh-server sudo mariadb-server postgresql prometheus
  libseccomp-dev pkg-config iptables openssl curl gpgv xz-utils debian-archive-keyring ipset
  build-essential libkrb5-dev libxkbfile-dev libsecret-1-dev chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "test-deps: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "test-deps: installing ${missing[*]}" >&2
$sudo apt-get update -qq >/dev/null
# Keep the packages from starting system services (nginx, MariaDB,
# PostgreSQL): the tests start their own. policy-rc.d answering 101 is
# Debian's way to say "do not start"; it is removed afterwards unless it
# was there before.
export DEBIAN_FRONTEND=noninteractive RUNLEVEL=1
policy=/usr/sbin/policy-rc.d
own_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod +x "$policy"
  own_policy=1
fi
trap '[ -n "$own_policy" ] && $sudo rm -f "$policy"' EXIT
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Some images start the service anyway; the tests need port 80 free of it
# no more than they need its configuration, so stop it.
if pgrep -x nginx >/dev/null 2>&1; then $sudo nginx -s quit 2>/dev/null || true; fi
