# SPDX-License-Identifier: Apache-2.0
# bench/dns.sh --scale, sourced by it in a mount namespace of its own (its dnsmasq and network namespace,
# gate_pid, layout): a gate of this build alone (`cerberus dns-gate`, as tests/integration/dns_gate.sh runs it:
# a fresh bpffs holding the two maps it writes, tmpfs run directories), and its memory (VmRSS, and VmHWM, its
# peak) at each step of
#   1. containers served, up to $scale_containers, each with a policy of $scale_names names: registrations
#      written straight into the gate's run directory (as tests/integration/dns_flood.sh does) for cgroups
#      this script makes under a cgroup of its own, each holding one process in the resolver's network
#      namespace (the gate serves a registration whose cgroup has a process: its namespace is where it binds);
#   2. every container's names asked on its gate port and admitted ($scale_containers x $scale_names);
#   3. one agent asking $wildcard_names distinct names under its *.w.test (dnsmasq answers them all with one
#      address): its admitted (address, name) pairs must stop at the container's bound, the answer cache at
#      its own, and the gate's memory with them.
# Prints a table; fails when a lookup fails or the bound does not hold.
bound=4096 # dns::max_admitted_per_container
scale_py="$(dirname "$0")/dns_scale.py"
run_dir=/run/cerberus-dns/$layout
cgroup2=$(findmnt -n -t cgroup2 -o TARGET | head -1)
bench_cgroup="$cgroup2/cerberus-bench/scale-$$"
sleepers=()
gate=
remove_scale() {
    [ -z "$gate" ] || kill "$gate" 2>/dev/null
    [ ${#sleepers[@]} -eq 0 ] || kill "${sleepers[@]}" 2>/dev/null
    wait "${sleepers[@]}" $gate 2>/dev/null
    [ ! -d "$bench_cgroup" ] || find "$bench_cgroup" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
    rmdir "$bench_cgroup" "$cgroup2/cerberus-bench" 2>/dev/null
}
scale_cleanup=remove_scale

gate_kb() { awk '/^VmRSS:/ { rss = $2 } /^VmHWM:/ { hwm = $2 } END { print rss, hwm }' "/proc/$(gate_pid)/status"; }
row() { # row STEP CONTAINERS NAMES-IN-POLICIES NAMES-ASKED
    local kb
    read -r -a kb <<<"$(gate_kb)"
    printf '%-44s %10s %10s %10s %10s %10s\n' "$1" "$2" "$3" "$4" "${kb[0]}" "${kb[1]}"
    last_rss=${kb[0]}
}
ask_gate() { python3 -c 'import socket,sys
s=socket.socket(socket.AF_UNIX,socket.SOCK_SEQPACKET); s.connect(sys.argv[1]); s.send(sys.argv[2].encode()); print(s.recv(512).decode())' "$run_dir/gate.sock" "$1"; }
no_failure() { # no_failure WHAT RCODES-JSON [ALLOWED-RCODE...]: every answer NOERROR (or one allowed)
    local what=$1 rcodes=$2
    shift 2
    jq -e --args 'to_entries | all(.key == "NOERROR" or (.key | IN($ARGS.positional[])))' "$@" <<<"$rcodes" \
        >/dev/null || { echo "dns.sh --scale: $what: $rcodes" >&2; exit 1; }
}

mount -t bpf bpf /sys/fs/bpf
for dir in /run/cerberus-dns /run/cerberus-audit /run/cerberus-asks; do mkdir -p "$dir" && mount -t tmpfs tmpfs "$dir"; done
pins=/sys/fs/bpf/cerberus/$layout
mkdir -p "$pins" "$run_dir/containers"
# As the programs declare them (tests/integration/dns_gate.sh).
bpftool map create "$pins/cerb_names" type hash key 24 value 80 entries 65536 flags 1 name cerb_names
bpftool map create "$pins/cerb_dns_gates" type hash key 8 value 8 entries 16384 name cerb_dns_gates

load_start=$(cut -d' ' -f1 /proc/loadavg)
mkdir -p "$bench_cgroup"
printf '%-44s %10s %10s %10s %10s %10s\n' step containers "policy nm" asked "VmRSS kB" "VmHWM kB"

: >"$work/cgroups"
served=0
for step in 1 10 100 "$scale_containers"; do
    [ "$step" -le "$scale_containers" ] && [ "$step" -gt "$served" ] || continue
    for i in $(seq $((served + 1)) "$step"); do
        mkdir "$bench_cgroup/c$i"
        nsenter --net="$netns" sh -c 'echo $$ >"$1/cgroup.procs" && exec sleep 100000' sh "$bench_cgroup/c$i" &
        sleepers+=($!)
        stat -c %i "$bench_cgroup/c$i" >>"$work/cgroups"
    done
    sleep 0.2 # each sleeper in its cgroup
    if [ -z "$gate" ]; then # started with a registration to serve (it leaves when it has none)
        python3 "$scale_py" write "$run_dir" "$work" "$scale_names" "$resolver:53" 1 "$(head -n1 "$work/cgroups")"
        "$build/cerberus" dns-gate 2>"$work/gate.log" &
        gate=$!
        for _ in $(seq 50); do [ -S "$run_dir/gate.sock" ] && break; sleep 0.1; done
    fi
    python3 "$scale_py" register "$run_dir" "$work" "$scale_names" "$resolver:53" $((served + 1)) \
        $(sed -n "$((served + 1)),${step}p" "$work/cgroups")
    served=$step
    row "served, each with its policy" "$served" "$((served * scale_names))" 0
    [ -n "${rss_base:-}" ] || rss_base=$last_rss
done
rss_served=$last_rss
ports=$(python3 "$scale_py" ports "/sys/fs/bpf/cerberus/$layout")

cpu_before=$(gate_cpu_ns)
sleep 10
idle_cpu_ms=$((($(gate_cpu_ns) - cpu_before) / 10000000)) # per second, over 10 s with no query

asked=0
quarter=$(((scale_containers + 3) / 4))
for first in $(seq 1 "$quarter" "$scale_containers"); do
    last=$((first + quarter - 1 < scale_containers ? first + quarter - 1 : scale_containers))
    rcodes=$(nsenter --net="$netns" python3 "$scale_py" ask "$ports" "$work/cgroups" "$scale_names" "$first" "$last")
    no_failure "containers $first to $last asking their names" "$rcodes"
    asked=$((asked + (last - first + 1) * scale_names))
    row "their names resolved and admitted" "$served" "$((served * scale_names))" "$asked"
done
rss_names=$last_rss
hostile_cgroup=$(head -n1 "$work/cgroups")
ask_gate "snapshot $hostile_cgroup" >/dev/null
admitted_before=$(jq length "$run_dir/admitted/$hostile_cgroup.json")

tenth=$(((wildcard_names + 9) / 10))
rss_wild=()
for from in $(seq 0 "$tenth" $((wildcard_names - 1))); do
    to=$((from + tenth < wildcard_names ? from + tenth : wildcard_names))
    rcodes=$(nsenter --net="$netns" python3 "$scale_py" wildcard "$(jq ".\"$hostile_cgroup\"" <<<"$ports")" \
        "$from" "$to")
    # Over its query rate a query is refused, over the refusals' rate dropped (the asker's 2 s timeout).
    no_failure "the agent's wildcard names $from to $to" "$rcodes" REFUSED timeout
    echo "info wildcard names $from to $to: $rcodes"
    row "one agent's distinct names under *.w.test" "$served" "$((served * scale_names))" "$((asked + to))"
    rss_wild+=("$last_rss")
done
ask_gate "snapshot $hostile_cgroup" >/dev/null
admitted=$(jq length "$run_dir/admitted/$hostile_cgroup.json")
bound_records=$(grep -c "name-address pairs admitted at the limit of $bound" "$work/trail-1.jsonl" || true)

echo
printf '%-58s %12s\n' "gate VmRSS, kB, serving 1 container" "$rss_base"
printf '%-58s %12s\n' "per container served with $scale_names names, kB" \
    "$(awk -v a="$rss_served" -v b="$rss_base" -v n="$served" 'BEGIN { printf "%.1f", (a - b) / (n - 1) }')"
printf '%-58s %12s\n' "per 1,000 names resolved and admitted, kB" \
    "$(awk -v a="$rss_names" -v b="$rss_served" -v n="$asked" 'BEGIN { printf "%.0f", (a - b) * 1000 / n }')"
printf '%-58s %12s\n' "gate CPU per second serving $served idle containers, ms" "$idle_cpu_ms"
printf '%-58s %12s\n' "gate VmRSS after the first / last tenth of its names, kB" "${rss_wild[0]} / ${rss_wild[-1]}"
printf '%-58s %12s\n' "admitted pairs of that container before / after (bound $bound)" "$admitted_before / $admitted"
printf '%-58s %12s\n' "its trail records of the bound (5 a second at most)" "$bound_records"
printf '%-58s %12s\n' "load average at the start / the end (1 min)" "$load_start / $(cut -d' ' -f1 /proc/loadavg)"
[ "$admitted" -le "$bound" ] && [ "$bound_records" -gt 0 ] ||
    { echo "dns.sh --scale: the bound of $bound pairs did not hold" >&2; exit 1; }
