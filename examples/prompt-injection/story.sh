#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The worked story: a prompt-injected agent in a container under a Cerberus
# policy. Sets up a small internet in network namespaces of its own (the API
# host 192.0.2.10:80, whose page carries the injected instructions, and an
# attacker at 203.0.113.66:8080 that keeps what it is sent), runs agent.sh in
# a policed container joined to it, and prints what the agent did, the
# container's audit trail, and what reached the attacker. Removes everything
# it made.
#
# Usage: story.sh [--mode enforce|audit] [--id ID] [--rootfs DIR] [--cerberus BIN]
#   --rootfs  a busybox root to copy (default: one is made from /bin/busybox)
# Environment: IP (iproute2's ip, default ip). Runs as root; POSIX sh.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
mode=enforce
id=prompt-injection
rootfs=""
cerberus=cerberus
while [ $# -gt 0 ]; do
    case "$1" in
    --mode) mode="$2"; shift 2 ;;
    --id) id="$2"; shift 2 ;;
    --rootfs) rootfs="$2"; shift 2 ;;
    --cerberus) cerberus="$2"; shift 2 ;;
    *) echo "story.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
ip="${IP:-ip}"
tag="pi$$"
agent_ns="cerberus-$tag-agent"
net_ns="cerberus-$tag-internet"
work="$(mktemp -d /tmp/prompt-injection.XXXXXX)"
pids=""

cleanup() {
    "$cerberus" delete --force "$id" >/dev/null 2>&1 || true
    for pid in $pids; do kill "$pid" 2>/dev/null || true; done
    "$ip" netns del "$agent_ns" 2>/dev/null || true
    "$ip" netns del "$net_ns" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

# The internet: two namespaces joined by a veth pair, nothing on the host's own network.
"$ip" netns add "$agent_ns"
"$ip" netns add "$net_ns"
"$ip" link add "$tag-a" netns "$agent_ns" type veth peer name "$tag-i" netns "$net_ns"
"$ip" -n "$agent_ns" addr add 192.0.2.2/24 dev "$tag-a"
"$ip" -n "$agent_ns" addr add 203.0.113.2/24 dev "$tag-a"
"$ip" -n "$net_ns" addr add 192.0.2.10/24 dev "$tag-i"
"$ip" -n "$net_ns" addr add 203.0.113.66/24 dev "$tag-i"
for ns in "$agent_ns" "$net_ns"; do
    "$ip" -n "$ns" link set lo up
done
"$ip" -n "$agent_ns" link set "$tag-a" up
"$ip" -n "$net_ns" link set "$tag-i" up
cp -r "$here/site" "$here/attacker" "$work/"
: >"$work/loot"
"$ip" netns exec "$net_ns" busybox httpd -f -p 192.0.2.10:80 -h "$work/site" &
pids="$pids $!"
"$ip" netns exec "$net_ns" busybox httpd -f -p 203.0.113.66:8080 -h "$work/attacker" &
pids="$pids $!"

# The agent's container: its workspace holds a secret, its home an SSH key.
bundle="$work/bundle"
mkdir -p "$bundle"
if [ -n "$rootfs" ]; then
    cp -a "$rootfs" "$bundle/rootfs"
else
    mkdir -p "$bundle/rootfs/bin" "$bundle/rootfs/etc" "$bundle/rootfs/tmp"
    cp /bin/busybox "$bundle/rootfs/bin/busybox"
    for applet in sh cat wget sed head tr wc chmod printf echo; do ln -sf busybox "$bundle/rootfs/bin/$applet"; done
fi
mkdir -p "$bundle/rootfs/opt/agent" "$bundle/rootfs/workspace" "$bundle/rootfs/root/.ssh" "$bundle/rootfs/tmp"
cp "$here/agent.sh" "$bundle/rootfs/opt/agent/agent.sh"
echo "WIDGET_API_KEY=wk_live_4f1c9e0d7b2a (a made-up secret)" >"$bundle/rootfs/workspace/.env"
echo "Release notes due Friday." >"$bundle/rootfs/workspace/notes.md"
printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nmade-up-key-for-the-story\n-----END OPENSSH PRIVATE KEY-----\n' \
    >"$bundle/rootfs/root/.ssh/id_ed25519"
policy="$(cat <<POLICY
{"mode": "$mode", "allowed_hosts": ["192.0.2.10:80"], "allowed_paths": ["/workspace", "/tmp"],
 "read_only_paths": ["/bin", "/etc", "/opt/agent"], "denied_paths": ["/workspace/.env"],
 "allowed_bins": ["/bin/busybox"]}
POLICY
)"
(cd "$bundle" && "$cerberus" spec)
jq --arg policy "$policy" --arg netns "/run/netns/$agent_ns" '
    .process.terminal = false | .root.readonly = false
    | .process.args = ["/bin/sh", "/opt/agent/agent.sh", "http://192.0.2.10/docs/quickstart.html"]
    | .annotations["io.cerberus.policy"] = $policy
    | .linux.namespaces |= map(if .type == "network" then .path = $netns else . end)' \
    "$bundle/config.json" >"$work/config.json"
mv "$work/config.json" "$bundle/config.json"

echo "== the agent's policy (mode $mode)"
echo "$policy"
echo "== the agent at work (container $id)"
"$cerberus" run --bundle "$bundle" "$id" || true
echo "== its audit trail (cerberus events --denials $id)"
"$cerberus" events --denials "$id" || true
echo "== what reached the attacker at 203.0.113.66"
if [ -s "$work/loot" ]; then cat "$work/loot"; else echo "(nothing)"; fi
