#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The egress proxy's cost (allowed_http, issue 33) on this host, natively, in one run: the same curl, from the
# same network namespace, against the same HTTPS server (tests/helpers/https_server.py), once through the proxy
# (run in the policed container, its connection steered) and once directly (nsenter into the container's
# network namespace, given the server's CA and address: nothing steered), the two taking turns first, several
# rounds, medians:
#   request latency on a keep-alive connection: N GETs on one connection, the first (connect, handshakes) left
#   out (target: through the proxy <= 1.15x direct);
#   throughput of one large download and one large upload (a PUT), from the first byte of the request on
#   (target >= 0.8x).
# Through the proxy curl speaks HTTP/1.1, and HTTP/2 in rows of their own (the proxy sends each stream on as an
# HTTP/1.1 request: the server has no HTTP/2); direct it speaks HTTP/1.1, the server's.
# With --floor, a fourth path beside the three: the same direct curl through the smallest relay that can sit where
# the proxy sits (bench/egress_floor/relay.c: TCP bytes spliced both ways, TLS passed through end to end), in
# rows of its own: what any relay in that position costs on this host, the floor under the proxy's ratios.
# Each row also gives CPU time (utime + stime, /proc/PID/stat) per request or per MB of the proxy (or the
# relay), of the server, and of the client (curl, with `cerberus exec` around it through the proxy): CPU time
# says less about the load the machine carries than elapsed time does. It is counted in ticks of 10 ms, with each
# client's start (and `cerberus exec`) in it: a request's share is worth reading from --requests 1000 on.
# The stage is egress.bats' (tests/integration/egress_setup.bash), in a mount namespace of its own.
# usage: bench/egress.sh BUILD_DIR [--rounds N] [--requests N] [--megabytes N] [--floor]
set -euo pipefail
export LC_ALL=C.UTF-8

usage="usage: egress.sh BUILD_DIR [--rounds N] [--requests N] [--megabytes N] [--floor]"
[ "$(id -u)" = 0 ] || { echo "egress.sh: must run as root" >&2; exit 1; }
for tool in curl dnsmasq openssl nsenter python3 jq; do
    command -v "$tool" >/dev/null || { echo "egress.sh: needs $tool (scripts/install-deps.sh)" >&2; exit 1; }
done
# The stage's mounts (a bpffs, tmpfs over the run directories and /etc/cerberus) go in a namespace of its own.
[ -n "${EGRESS_BENCH_PRIVATE:-}" ] || EGRESS_BENCH_PRIVATE=1 exec unshare -m "$0" "$@"

build=$(cd "${1:?$usage}" && pwd)
shift
rounds=5
requests=200
megabytes=200
floor=false
while [ $# -gt 0 ]; do
    case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --megabytes) megabytes=$2; shift 2 ;;
    --floor) floor=true; shift ;;
    *) echo "egress.sh: unknown argument $1; $usage" >&2; exit 2 ;;
    esac
done
bytes=$((megabytes * 1000000))

repo=$(cd "$(dirname "$0")/.." && pwd)
CERBERUS=$build/cerberus
WORK=$(mktemp -d /tmp/cerbench-egress.XXXXXX)
ROOT=$WORK/state
BUNDLE=$WORK/bundle
ID=cerbench-egress-$$
HELPERS=$repo/tests/helpers
. "$repo/tests/integration/egress_setup.bash"
cerb() { "$CERBERUS" --root "$ROOT" --audit-dir "$WORK/audit" --enforcement landlock "$@"; }
cleanup() {
    set +e
    egress_cleanup
    rm -rf "$WORK"
}
trap cleanup EXIT

mkdir -p "$BUNDLE/rootfs"/{proc,sys,dev,tmp,etc}
(cd "$BUNDLE" && "$CERBERUS" spec)
jq '.process.terminal = false | .process.args = ["/usr/bin/sleep", "100000"]' "$BUNDLE/config.json" \
    >"$BUNDLE/config.json.new" && mv "$BUNDLE/config.json.new" "$BUNDLE/config.json"
egress_bundle '{"allowed_hosts": [],
    "allowed_http": ["GET https://allowed.example/repos/*", "PUT https://allowed.example/upload"]}'
truncate -s "$bytes" "$BUNDLE/rootfs/upload.bin" # read as zeros, from no disk

egress_private_mounts
egress_upstream_certs
cerb create -b "$BUNDLE" "$ID"
pid=$(cerb state "$ID" | jq -r .pid)
egress_servers "$pid"
cerb start "$ID"

server=${pids[1]} # egress_servers': dnsmasq, then the server of allowed.example
proxy=$(ss -Hxlp | grep -F "$run_dir/gate.sock" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
[ -n "$proxy" ] || { echo "egress.sh: no DNS gate (the proxy's daemon) listening on $run_dir/gate.sock" >&2; exit 1; }
hows="proxied proxied-h2 direct"
relay=""
if $floor; then
    command -v gcc >/dev/null || { echo "egress.sh: --floor needs gcc" >&2; exit 1; }
    gcc -O2 -pthread -o "$WORK/relay" "$repo/bench/egress_floor/relay.c"
    nsenter --net="/proc/$pid/ns/net" ip addr add 203.0.113.10/32 dev lo
    nsenter --net="/proc/$pid/ns/net" "$WORK/relay" 203.0.113.10 443 203.0.113.7 443 >"$WORK/relay.out" &
    relay=$!
    pids+=("$relay")
    for _ in $(seq 100); do grep -qs listening "$WORK/relay.out" && break; sleep 0.1; done
    grep -q listening "$WORK/relay.out" || { echo "egress.sh: the relay did not start" >&2; exit 1; }
    hows="$hows relayed"
fi

# client proxied|proxied-h2|direct|relayed ARG...: the one curl, in the container (through the proxy, over
# HTTP/1.1 or HTTP/2) or beside it (straight to the server, or through the relay); its CPU time (with `cerberus
# exec` around it through the proxy) appended to $WORK/client.cpu.
client() {
    local how=$1
    shift
    local timed=(/usr/bin/time -f '%U %S' -a -o "$WORK/client.cpu")
    case $how in
    proxied | proxied-h2) "${timed[@]}" "$CERBERUS" --root "$ROOT" --audit-dir "$WORK/audit" --enforcement landlock \
        exec "$ID" curl "$([ "$how" = proxied ] && echo --http1.1 || echo --http2)" -sS -m 300 "$@" ;;
    direct | relayed) "${timed[@]}" nsenter --net="/proc/$pid/ns/net" curl --http1.1 -sS -m 300 \
        --cacert "$WORK/ca.pem" \
        --resolve "allowed.example:443:$([ "$how" = direct ] && echo 203.0.113.7 || echo 203.0.113.10)" "$@" ;;
    esac
}
site=https://allowed.example
# Each measure HOW appends one number to $WORK/MEASURE.HOW, and fails when the transfer did not go as asked.
latency() { # microseconds, the median request of a keep-alive connection
    local version=$([ "$1" = proxied-h2 ] && echo 2 || echo 1.1)
    client "$1" -o /dev/null -w '%{num_connects} %{http_code} %{time_total} %{http_version}\n' \
        "$site/repos/small?[1-$requests]" >"$WORK/requests"
    awk -v n="$requests" -v v="$version" '(NR > 1 && $1 != 0) || $2 != 200 || $4 != v { bad = 1 }
        END { exit bad || NR != n }' "$WORK/requests" ||
        { echo "egress.sh: the requests ($1) were not all answered over HTTP/$version on one connection:" \
        "$(sort "$WORK/requests" | uniq -c | head -3)" >&2; exit 1; }
    tail -n +2 "$WORK/requests" | awk '{ print $3 * 1e6 }' | median >>"$WORK/latency.$1"
}
download() { # MB/s
    local answer size total start
    answer=$(client "$1" -o /dev/null -w '%{size_download} %{time_total} %{time_pretransfer}\n' \
        "$site/repos/big?n=$bytes")
    read -r size total start <<<"$answer"
    [ "$size" = "$bytes" ] || { echo "egress.sh: the download ($1) got $size bytes of $bytes" >&2; exit 1; }
    awk -v b="$bytes" -v t="$total" -v s="$start" 'BEGIN { print b / (t - s) / 1e6 }' >>"$WORK/download.$1"
}
upload() { # MB/s
    local file answer total start
    file=$(case $1 in proxied*) echo /upload.bin ;; *) echo "$BUNDLE/rootfs/upload.bin" ;; esac)
    answer=$(client "$1" -T "$file" -w '\n%{time_total} %{time_pretransfer}\n' "$site/upload")
    grep -q "method=PUT path=/upload .* received=$bytes " <<<"$answer" ||
        { echo "egress.sh: the upload ($1) was answered: $answer" >&2; exit 1; }
    read -r total start < <(tail -n1 <<<"$answer")
    awk -v b="$bytes" -v t="$total" -v s="$start" 'BEGIN { print b / (t - s) / 1e6 }' >>"$WORK/upload.$1"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ticks() { cut -d')' -f2 "/proc/$1/stat" | awk '{ print $12 + $13 }'; } # utime + stime of process $1
# measured MEASURE HOW: MEASURE HOW, and the CPU time it took in ticks (of the proxy or the relay in the path,
# of the server, of the client) appended to $WORK/cpu.MEASURE.HOW.
measured() {
    local middle=""
    case $2 in proxied*) middle=$proxy ;; relayed) middle=$relay ;; esac
    local middle_before=$([ -n "$middle" ] && ticks "$middle" || echo 0) server_before=$(ticks "$server")
    : >"$WORK/client.cpu"
    "$1" "$2"
    local middle_after=$([ -n "$middle" ] && ticks "$middle" || echo 0) server_after=$(ticks "$server")
    echo "$((middle_after - middle_before)) $((server_after - server_before))" \
        "$(awk -v hz="$(getconf CLK_TCK)" '{ s += $1 + $2 } END { printf "%.0f", s * hz }' "$WORK/client.cpu")" \
        >>"$WORK/cpu.$1.$2"
}

echo "egress.sh: $rounds rounds of $requests requests, a $megabytes MB download and upload, each $hows," \
    "taking turns first" >&2
last() { for how in $hows; do tail -n1 "$WORK/$1.$how"; done | xargs; } # last MEASURE
reversed=$(tr ' ' '\n' <<<"$hows" | tac | xargs)
for ((round = 1; round <= rounds; round++)); do
    order=$([ $((round % 2)) = 1 ] && echo "$hows" || echo "$reversed")
    for measure in latency download upload; do
        for how in $order; do measured $measure "$how"; done
    done
    echo "egress.sh: round $round: latency $(last latency) us, download $(last download) MB/s," \
        "upload $(last upload) MB/s ($hows)" >&2
done

row() { # row LABEL MEASURE FORMAT TARGET [HOW: proxied (the default), proxied-h2 or relayed]
    local proxied direct
    proxied=$(median <"$WORK/$2.${5:-proxied}")
    direct=$(median <"$WORK/$2.direct")
    printf "| %s | $3 | $3 | %.3f | %s |\n" "$1" "$proxied" "$direct" "$(awk -v a="$proxied" -v b="$direct" \
        'BEGIN { print a / b }')" "$4"
}
echo
echo "### The egress proxy ($(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| measurement (median of $rounds rounds) | through the proxy | direct | ratio | target |"
echo "|---|---|---|---|---|"
row "request latency on a keep-alive connection, us (median of $((requests - 1)))" latency %.0f "<= 1.15"
row "download of $megabytes MB, MB/s" download %.1f ">= 0.8"
row "upload of $megabytes MB, MB/s" upload %.1f ">= 0.8"
row "HTTP/2 to the proxy: request latency, us (median of $((requests - 1)) streams)" latency %.0f "<= 1.15" proxied-h2
row "HTTP/2 to the proxy: download of $megabytes MB, MB/s" download %.1f ">= 0.8" proxied-h2
row "HTTP/2 to the proxy: upload of $megabytes MB, MB/s" upload %.1f ">= 0.8" proxied-h2
if $floor; then
    row "the floor, a zero-work relay instead: request latency, us" latency %.0f "<= 1.15" relayed
    row "the floor, a zero-work relay instead: download of $megabytes MB, MB/s" download %.1f ">= 0.8" relayed
    row "the floor, a zero-work relay instead: upload of $megabytes MB, MB/s" upload %.1f ">= 0.8" relayed
fi
echo
echo "| CPU time, summed over the rounds (µs a request, ms a MB) | the proxy or relay | the server | the client |"
echo "|---|---|---|---|"
for how in $hows; do
    for measure in latency download upload; do
        awk -v hz="$(getconf CLK_TCK)" -v how="$how" -v measure="$measure" -v n=$((rounds * requests)) \
            -v mb=$((rounds * megabytes)) '{ m += $1; s += $2; c += $3 }
            END { per = measure == "latency" ? 1e6 / n : 1e3 / mb
                printf "| %s, %s | %.1f | %.1f | %.1f |\n", how, measure, m / hz * per, s / hz * per, c / hz * per }' \
            "$WORK/cpu.$measure.$how"
    done
done
