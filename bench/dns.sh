#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The DNS gate's cost on this host, natively, all in one run so every ratio compares like with like:
#   query latency through the gate (a container whose policy names hosts, its queries steered to the gate,
#   which forwards to the resolver) vs straight to the resolver (a container without a policy, same resolver):
#   for a name asked again and again (the gate answers from its cache after the first) and for names each
#   asked once (every query goes on to the resolver);
#   connect latency to an address admitted by a name's answer vs the same address listed as an IP rule (the
#   same kernel check: one more map lookup);
#   the gate's own CPU time per first query (its scheduler count), against the latency the gate adds: what is
#   left is the two more loopback hops' wake-ups;
#   the gate's memory (VmRSS) per container served and per thousand names resolved and admitted.
# With --floor, the floor under the first-query ratio: the same first queries through the smallest forwarder
# (bench/dns_floor/relay.c: read, send on, read the answer, send back; nothing judged), its CPU per query.
# The resolver is dnsmasq in a network namespace this script makes; names answer with a 600 s TTL.
# With --scale, the gate's memory at scale instead (bench/dns_scale.sh): 1,000 containers of 100 names each,
# their 100,000 names resolved and admitted, then one agent asking 1,000,000 distinct names under a wildcard.
# usage: bench/dns.sh BUILD_DIR [--queries N] [--connects N] [--containers N] [--names N] [--floor]
#        bench/dns.sh BUILD_DIR --scale [--scale-containers N] [--scale-names N] [--wildcard-names N]
set -euo pipefail
export LC_ALL=C.UTF-8

build=$(cd "${1:?usage: dns.sh BUILD_DIR [--queries N] [--connects N] [--containers N] [--names N] [--scale]}" && pwd)
shift
args=("$@")
queries=2000
connects=20000
containers=20
names=1000
floor='' scale='' scale_containers=1000 scale_names=100 wildcard_names=1000000
while [ $# -gt 0 ]; do
    case "$1" in
    --queries) queries=$2; shift 2 ;;
    --connects) connects=$2; shift 2 ;;
    --containers) containers=$2; shift 2 ;;
    --names) names=$2; shift 2 ;;
    --floor) floor=1; shift ;;
    --scale) scale=1; shift ;;
    --scale-containers) scale_containers=$2; shift 2 ;;
    --scale-names) scale_names=$2; shift 2 ;;
    --wildcard-names) wildcard_names=$2; shift 2 ;;
    *) echo "dns.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "dns.sh: must run as root" >&2; exit 1; }
command -v dnsmasq >/dev/null || { echo "dns.sh: needs dnsmasq (scripts/install-deps.sh)" >&2; exit 1; }
# The scale run measures a gate of its own, apart from any other of this layout on the host: its run
# directories and maps in a mount namespace of its own (bench/dns_scale.sh).
if [ -n "$scale" ] && [ -z "${DNS_BENCH_OWN_MOUNTS:-}" ]; then
    exec env DNS_BENCH_OWN_MOUNTS=1 unshare -m "$0" "$build" "${args[@]}"
fi

work=$(mktemp -d /tmp/cerbench-dns.XXXXXX)
cerberus="$build/cerberus --root $work/state --audit-dir $work/audit"
resolver=192.0.2.53
relay_address=192.0.2.54
holder=
dnsmasq=
relay=
scale_cleanup=: # bench/dns_scale.sh's
cleanup() {
    set +e
    local id
    $scale_cleanup
    for id in $($cerberus list -q 2>/dev/null); do $cerberus delete --force "$id" >/dev/null 2>&1; done
    [ -z "$dnsmasq" ] || kill "$dnsmasq"
    [ -z "$relay" ] || kill "$relay"
    [ -z "$holder" ] || kill "$holder"
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

unshare -n sleep 100000 &
holder=$!
netns=/proc/$holder/ns/net
sleep 0.2
nsenter --net="$netns" ip link set lo up
nsenter --net="$netns" ip addr add "$resolver/32" dev lo
ttl=600
if [ -n "$scale" ]; then
    ttl=3600 # what admission keeps at most: nothing expires while the run measures
    # n<j>.c<i>.test: two names of a container to each of its addresses (an address shared, as names share a
    # CDN's), so 100,000 names are 50,000 entries of the names map (65,536 for the host).
    awk -v c="$scale_containers" -v n="$scale_names" 'BEGIN {
        half = int((n + 1) / 2)
        for (i = 1; i <= c; i++) for (j = 0; j < n; j++) {
            k = (i - 1) * half + j % half
            printf "198.%d.%d.%d n%d.c%d.test\n", 18 + int(k / 65536), int(k / 256) % 256, k % 256, j, i
        }
    }' >"$work/hosts"
else
    {
        echo "198.51.100.1 svc.test"
        for i in $(seq 1 "$names"); do echo "198.18.$((i / 256)).$((i % 256)) n$i.bulk.test"; done
        for i in $(seq 1 "$queries"); do echo "198.19.$((i / 256)).$((i % 256)) f$i.first.test"; done
    } >"$work/hosts"
fi
nsenter --net="$netns" dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
    --addn-hosts="$work/hosts" --address=/w.test/198.51.100.77 --listen-address="$resolver" --bind-interfaces \
    --local-ttl="$ttl" \
    --user=root --group=root --pid-file="$work/dnsmasq.pid" --log-facility="$work/dnsmasq.log" &
dnsmasq=$!
sleep 0.5

rootfs="$work/rootfs"
mkdir -p "$rootfs/bin" "$rootfs/proc" "$rootfs/dev" "$rootfs/etc" "$rootfs/tmp"
cp "$(command -v busybox)" "$rootfs/bin/busybox"
ln -s busybox "$rootfs/bin/sh"
ln -s busybox "$rootfs/bin/sleep"
cp "$build/cerberus-probe" "$rootfs/bin/probe"
echo "nameserver $resolver" >"$rootfs/etc/resolv.conf"

# start ID POLICY|"" [shared]: a sleeping container, in the resolver's network namespace with "shared",
# else in one of its own.
start() {
    local bundle="$work/bundle-$1"
    mkdir -p "$bundle"
    ln -sfn "$rootfs" "$bundle/rootfs"
    (cd "$bundle" && $cerberus spec >/dev/null)
    jq --arg p "$2" --arg ns "$([ "${3:-}" = shared ] && echo "$netns")" '
        .process.terminal = false | .process.args = ["sleep", "100000"] |
        (if $p == "" then . else .annotations["io.cerberus.policy"] = $p end) |
        (if $ns == "" then . else
            .linux.namespaces = [.linux.namespaces[] | if .type == "network" then .path = $ns else . end] end)' \
        "$bundle/config.json" >"$bundle/config.json.new"
    mv "$bundle/config.json.new" "$bundle/config.json"
    $cerberus run -d --bundle "$bundle" "$1" </dev/null
}

# ns_per_op ID PROBE-ARGS...: the probe's loop in the container; fails when any iteration failed other
# than as expected (connect loops reach no host: ENETUNREACH is their expected end).
ns_per_op() {
    local id=$1 out
    shift
    out=$($cerberus exec "$id" /bin/probe "$@")
    case "$out" in
    *"failed=0 "* | *"last_error=ENETUNREACH"*) ;;
    *) echo "dns.sh: $id: probe $*: $out" >&2; exit 1 ;;
    esac
    sed -n 's/^ns_per_op=\([0-9]*\).*/\1/p' <<<"$out"
}

gate_pid() { head -n1 "/run/cerberus-dns/$layout/gate.lock" | tr -dc 0-9; }
gate_rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$(gate_pid)/status"; }
# A one-thread process's time on a CPU so far, ns (the scheduler's count).
cpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }
gate_cpu_ns() { cpu_ns "$(gate_pid)"; }

layout=$($build/cerberus check | sed -n 's|^pin dir: *[^ ]*/\([0-9a-f]*\) .*|\1|p')
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

if [ -n "$scale" ]; then
    . "$(dirname "$0")/dns_scale.sh"
    exit
fi

bulk_policy=$(jq -cn --argjson n "$names" \
    '{allowed_hosts: (["svc.test:80", "*.first.test:80"] + [range(1; $n + 1) | "n\(.).bulk.test:80"])}')
start direct "" shared
start gated "$bulk_policy" shared
start by-ip '{"allowed_hosts": ["198.51.100.1:80"]}' shared

direct_ns=$(ns_per_op direct loop-dns "$queries" svc.test "$resolver")
gated_ns=$(ns_per_op gated loop-dns "$queries" svc.test "$resolver")
direct_first_ns=$(ns_per_op direct loop-dns "$queries" "f%d.first.test" "$resolver")
cpu_before=$(gate_cpu_ns)
gated_first_ns=$(ns_per_op gated loop-dns "$queries" "f%d.first.test" "$resolver")
gate_cpu_first_ns=$((($(gate_cpu_ns) - cpu_before) / queries))
if [ -n "$floor" ]; then
    gcc -O2 -o "$work/relay" "$(dirname "$0")/dns_floor/relay.c"
    nsenter --net="$netns" ip addr add "$relay_address/32" dev lo
    nsenter --net="$netns" "$work/relay" "$relay_address" "$resolver" >"$work/relay.out" &
    relay=$!
    for _ in $(seq 50); do grep -qs listening "$work/relay.out" && break; sleep 0.1; done
    grep -q listening "$work/relay.out" || { echo "dns.sh: the relay did not start" >&2; exit 1; }
    relay_cpu_before=$(cpu_ns "$relay")
    relayed_first_ns=$(ns_per_op direct loop-dns "$queries" "f%d.first.test" "$relay_address")
    relay_cpu_first_ns=$((($(cpu_ns "$relay") - relay_cpu_before) / queries))
fi
by_ip_ns=$(ns_per_op by-ip loop-connect "$connects" 198.51.100.1 80)
by_name_ns=$(ns_per_op gated loop-connect "$connects" 198.51.100.1 80)

rss_one=$(gate_rss_kb)
ns_per_op gated loop-dns "$names" "n%d.bulk.test" "$resolver" >/dev/null
rss_names=$(gate_rss_kb)
for i in $(seq 1 "$containers"); do start "extra-$i" '{"allowed_hosts": ["svc.test:80"]}'; done
rss_more=$(gate_rss_kb)

printf '%-58s %12s %12s %7s\n' measurement gate baseline ratio
printf '%-58s %12s %12s %7s\n' "query latency, repeated name, ns (through the gate / straight)" "$gated_ns" \
    "$direct_ns" "$(ratio "$gated_ns" "$direct_ns")"
printf '%-58s %12s %12s %7s\n' "query latency, first query of a name, ns (gate / straight)" "$gated_first_ns" \
    "$direct_first_ns" "$(ratio "$gated_first_ns" "$direct_first_ns")"
printf '%-58s %12s %12s %7s\n' "gate CPU per first query, ns / its extra latency, ns" "$gate_cpu_first_ns" \
    "$((gated_first_ns - direct_first_ns))" "$(ratio "$gate_cpu_first_ns" "$((gated_first_ns - direct_first_ns))")"
if [ -n "$floor" ]; then
    printf '%-58s %12s %12s %7s\n' "the floor, a relay doing nothing: first query, ns" "$relayed_first_ns" \
        "$direct_first_ns" "$(ratio "$relayed_first_ns" "$direct_first_ns")"
    printf '%-58s %12s %12s %7s\n' "relay CPU per query, ns / its extra latency, ns" "$relay_cpu_first_ns" \
        "$((relayed_first_ns - direct_first_ns))" \
        "$(ratio "$relay_cpu_first_ns" "$((relayed_first_ns - direct_first_ns))")"
fi
printf '%-58s %12s %12s %7s\n' "connect latency, ns (admitted by a name / an IP rule)" "$by_name_ns" "$by_ip_ns" \
    "$(ratio "$by_name_ns" "$by_ip_ns")"
printf '%-58s %12s\n' "gate VmRSS, kB, serving 1 container" "$rss_one"
printf '%-58s %12s\n' "per $names names resolved and admitted, kB" "$((rss_names - rss_one))"
printf '%-58s %12s\n' "per container served, kB (over $containers more)" "$(((rss_more - rss_names) / containers))"
