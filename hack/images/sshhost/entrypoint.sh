#!/bin/sh
# The entrypoint of kubeforge.test/sshhost (hack/images.sh): a host that a
# KubernetesCluster's installer logs in to in the end-to-end tests. It makes
# this host's keys (a new host, new keys: the operator pins them on first
# contact), authorizes the public keys mounted at $AUTHORIZED_KEYS (a file)
# for root, and runs sshd in the foreground, logging to stderr. Only keys
# log in: no passwords, no keyboard-interactive.
set -eu
keys=${AUTHORIZED_KEYS:-/etc/kubeforge/authorized_keys}
[ -s "$keys" ] || { echo "sshhost: no public keys at $keys" >&2; exit 1; }
ssh-keygen -A >/dev/null
mkdir -p /run/sshd /root/.ssh
chmod 0755 /run/sshd
chmod 0700 /root/.ssh
cp "$keys" /root/.ssh/authorized_keys
chmod 0600 /root/.ssh/authorized_keys
exec /usr/sbin/sshd -D -e \
  -o PermitRootLogin=prohibit-password \
  -o PasswordAuthentication=no \
  -o KbdInteractiveAuthentication=no \
  -o UsePAM=no \
  -o Port="${SSH_PORT:-22}"
