#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The demo of README.md: one agent container under a policy, trying what a
# prompt-injected agent would try. Each line says what the kernel answered.
. /vm/lib.sh

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-demo
policy='{"mode": "enforce", "allowed_hosts": ["192.0.2.0/24:443"], "allowed_paths": ["/workspace", "/tmp"],
 "read_only_paths": ["/bin", "/etc"], "denied_paths": ["/etc/shadow"], "allowed_bins": ["/bin/busybox", "/bin/cerberus-probe"]}'
script='p=/bin/cerberus-probe
mkdir -p /workspace; echo "notes" > /workspace/notes; echo "root:x:0:0" > /etc/shadow 2>/dev/null
for action in "read /workspace/notes" "write /workspace/out" "read /etc/passwd" "write /etc/passwd" \
    "read /etc/shadow" "connect tcp 192.0.2.10 443" "connect tcp 203.0.113.9 443" "raw-socket" \
    "unshare-user" "bpf"; do
    echo "agent: $action -> $($p $action)"
done'
policy_bundle "$bundle" "$policy" /bin/sh -c "$script"
# The config grants raw sockets and bpf(): any refusal below is the policy's.
bundle_edit "$bundle" '.process.capabilities[] += ["CAP_NET_RAW", "CAP_BPF"]'
mkdir -p "$bundle/rootfs/etc" && echo "secret" > "$bundle/rootfs/etc/shadow"
vm_run cerberus run --bundle "$bundle" demo
echo "$VM_STDOUT"
expect() {
    case "$VM_STDOUT" in
    *"agent: $1 -> $2"*) vm_ok "$1: $2" ;;
    *) vm_fail "$1" "expected $2" ;;
    esac
}
expect "read /workspace/notes" ok
expect "write /workspace/out" ok
expect "read /etc/passwd" ok
expect "write /etc/passwd" "errno=13 (EACCES)"
expect "read /etc/shadow" "errno=13 (EACCES)"
expect "connect tcp 192.0.2.10 443" "errno=101 (ENETUNREACH)"
expect "connect tcp 203.0.113.9 443" "errno=1 (EPERM)"
expect "raw-socket" "errno=1 (EPERM)"
expect "unshare-user" "errno=1 (EPERM)"
expect "bpf" "errno=1 (EPERM)"
rm -rf "$bundle"
