#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmarks cerberus against crun and runc on one busybox bundle, in one run,
# alternating the runtimes, and prints a table of medians, min–max and ratios;
# then the agent policy's costs natively (bench/policy_native.sh).
# usage: bench/run.sh [--build DIR] [--runs N] [--scale N] [--keep-json DIR]
#   --build DIR   cerberus build directory (default: build; built if missing)
#   --runs N      timed runs per runtime and measurement (default 30)
#   --scale N     concurrently existing containers in the scale test (default 1000; 0 skips it)
#   --keep-json D copy hyperfine's JSON exports to D
# Needs root. Runs in a private mount namespace of its own (see enter_private_mounts).
set -euo pipefail
export LC_ALL=C.UTF-8 # "." decimals; the table pads by characters

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
build=$repo/build
runs=30
scale=1000
keep_json=
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --scale) scale=$2; shift 2 ;;
    --keep-json) keep_json=$2; shift 2 ;;
    -h | --help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "bench: must run as root" >&2; exit 1; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "bench: --runs expects a positive number" >&2; exit 2; }
[[ $scale =~ ^[0-9]+$ ]] || { echo "bench: --scale expects a number" >&2; exit 2; }

# crun refuses hybrid cgroups when the cgroup2 hierarchy has controllers ("drop all
# controllers from cgroupv2"); this host's has hugetlb. In a private mount namespace,
# an empty file is bound over the unified cgroup.controllers, which only crun reads
# (none of the containers here asks for a v2 controller). The host's mounts are untouched.
enter_private_mounts() {
    if [ -z "${CERBENCH_PRIVATE_MOUNTS:-}" ]; then
        export CERBENCH_PRIVATE_MOUNTS=1
        exec unshare --mount --propagation private bash "$0" "$@"
    fi
}

install_missing() {
    local wanted=() tool pkg
    for tool in hyperfine:hyperfine /usr/bin/time:time jq:jq gcc:gcc runc:runc crun:crun \
        /bin/busybox:busybox-static unshare:util-linux; do
        pkg=${tool#*:}
        command -v "${tool%%:*}" >/dev/null 2>&1 || wanted+=("$pkg")
    done
    if [ ${#wanted[@]} -gt 0 ]; then
        echo "bench: installing ${wanted[*]}" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${wanted[@]}" >/dev/null
    fi
}

install_missing
enter_private_mounts --build "$build" --runs "$runs" --scale "$scale" ${keep_json:+--keep-json "$keep_json"}
build=$(cd "$build" 2>/dev/null && pwd || echo "$build")
if [ ! -x "$build/cerberus" ]; then
    echo "bench: building cerberus in $build" >&2
    cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$build" --target cerberus -j "$(nproc)" >/dev/null
fi

work=$(mktemp -d /tmp/cerbench.XXXXXX)
state=/run/cerbench.$$
prefix=cerbench-$$ # every container's cgroup lives under /$prefix in each hierarchy
runtimes=(cerberus crun runc)
declare -A rt=(
    [cerberus]="$build/cerberus --root $state/cerberus"
    [crun]="crun --root $state/crun"
    [runc]="runc --root $state/runc"
)
mkdir -p "$work/json" "$work/bin" "$state"

cgroup_mounts() { awk '{ for (i = 7; $i != "-"; i++); if ($(i+1) ~ /^cgroup2?$/) print $5 }' /proc/self/mountinfo; }

# Deletes every container this run made (their ids are logged before each create),
# then the cgroups left under the prefix, then the state and work directories.
cleanup() {
    set +e
    local name id mount
    for name in "${runtimes[@]}"; do
        cat "$work/ids.$name"* 2>/dev/null | sort -u | while read -r id; do
            ${rt[$name]} delete --force "$id" >/dev/null 2>&1
        done
    done
    for mount in $(cgroup_mounts); do
        [ -d "$mount/$prefix" ] && find "$mount/$prefix" -depth -type d -exec rmdir {} + 2>/dev/null
    done
    [ -n "$keep_json" ] && mkdir -p "$keep_json" && cp "$work"/json/*.json "$keep_json"/
    rm -rf "$work" "$state"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$(stat -f -c %T /sys/fs/cgroup)" = tmpfs ] && grep -q . /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null; then
    : >"$work/no-controllers"
    mount --bind "$work/no-controllers" /sys/fs/cgroup/unified/cgroup.controllers
fi

# --- the bundle: one config.json for all three runtimes -------------------------------
bundle=$work/bundle
mkdir -p "$bundle/rootfs"/{bin,dev,proc,sys,tmp,etc}
cp /bin/busybox "$bundle/rootfs/bin/busybox"
for applet in sh true; do ln -s busybox "$bundle/rootfs/bin/$applet"; done
(cd "$bundle" && runc spec)
config_with() { # config_with CGROUPS_PATH [JQ_FILTER]: the shared config, with a cgroupsPath
    jq --arg cg "$1" --arg rootfs "$bundle/rootfs" \
        ".process.terminal = false | .process.args = [\"/bin/true\"] | .root.path = \$rootfs
         | .linux.cgroupsPath = \$cg ${2:+| $2}" "$bundle/config.json.orig"
}
mv "$bundle/config.json" "$bundle/config.json.orig"
config_with "/$prefix/bench" >"$bundle/config.json"
policy_bundle=$work/bundle-policy
mkdir -p "$policy_bundle"
config_with "/$prefix/bench" '.annotations["io.cerberus.policy"] =
    "{\"allowed_paths\": [\"/tmp\"], \"read_only_paths\": [\"/bin\", \"/proc\", \"/dev\"], \"allowed_hosts\": []}"' \
    >"$policy_bundle/config.json"
gcc -O2 -o "$work/floor" "$here/floor.c"

# bin/<runtime> wraps a runtime for the untimed prepare steps: fresh|created|stopped ID.
for name in "${runtimes[@]}"; do
    cat >"$work/bin/$name" <<EOF
#!/bin/sh
rt="${rt[$name]}"
echo "\$2" >>"$work/ids.$name"
\$rt delete --force "\$2" >/dev/null 2>&1
[ "\$1" = fresh ] && exit 0
\$rt create --bundle "$bundle" "\$2" >/dev/null || exit 1
[ "\$1" = created ] && exit 0
\$rt start "\$2" >/dev/null || exit 1
sleep 0.05 # /bin/true has exited: delete finds a stopped container
EOF
    chmod +x "$work/bin/$name"
done

# --- measuring ------------------------------------------------------------------------
rounds=$((runs < 5 ? runs : 5))
per_round=$(((runs + rounds - 1) / rounds))
order() { # order ROUND: the runtimes, rotated by the round so none always goes first
    local i
    for i in 0 1 2; do echo "${runtimes[(($1 + i) % 3)]}"; done
}

# timed STEP NAME SHELL RUNS PREPARE CMD: one hyperfine call, JSON kept as STEP.NAME.<n>.json.
timed() {
    local step=$1 name=$2 shell=$3 n=$4 prepare=$5 cmd=$6 out
    out=$work/json/$step.$name.$(ls "$work/json" | grep -c "^$step\.$name\." || true).json
    local args=(--warmup 2 --runs "$n" --style none --export-json "$out")
    [ "$shell" = none ] && args+=(-N)
    [ -n "$prepare" ] && args+=(--prepare "$prepare")
    # hyperfine's warnings about outliers are expected on a shared machine: shown only on failure.
    hyperfine "${args[@]}" "$cmd" >/dev/null 2>"$work/hyperfine.err" || {
        cat "$work/hyperfine.err" >&2
        echo "bench: failed: $cmd${prepare:+ (after: $prepare)}; its output:" >&2
        [ -z "$prepare" ] || $prepare >&2
        sh -c "$cmd" >&2
        exit 1
    }
}

# alternate STEP SHELL RUNS PREPARE_ACTION CMD_TEMPLATE: per round, each runtime in turn.
# In CMD_TEMPLATE, @RT@ is the runtime's command line and @ID@ a container id.
alternate() {
    local step=$1 shell=$2 n=$3 action=$4 template=$5 round name cmd prepare id
    for ((round = 0; round < rounds; round++)); do
        for name in $(order "$round"); do
            id=cb-$step
            cmd=${template//@RT@/${rt[$name]}}
            cmd=${cmd//@ID@/$id}
            prepare="$work/bin/$name ${action:-fresh} $id"
            echo "$id" >>"$work/ids.$name"
            timed "$step" "$name" "$shell" "$n" "$prepare" "$cmd"
            "$work/bin/$name" fresh "$id" # the runtimes share the cgroup: leave it empty
        done
    done
}

echo "bench: machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)" >&2
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bench: load average before: $load_before; $runs runs per cell in $rounds alternating rounds" >&2

echo "bench: run /bin/true" >&2
alternate run none "$per_round" fresh "@RT@ run --bundle $bundle @ID@"
for ((round = 0; round < rounds; round++)); do
    timed run floor none "$per_round" "" "$work/floor $bundle/rootfs"
    timed run exec none "$per_round" "" "/bin/true"
done

echo "bench: 100 sequential runs" >&2
seq_runs=$(((runs + 9) / 10))
seq_cmd='for i in $(seq 100); do @RT@ run --bundle '"$bundle"' @ID@ || exit 1; done'
for ((round = 0; round < seq_runs; round++)); do
    for name in $(order "$round"); do
        cmd=${seq_cmd//@RT@/${rt[$name]}}
        echo cb-seq >>"$work/ids.$name"
        timed seq100 "$name" sh 1 "" "${cmd//@ID@/cb-seq}"
    done
    timed seq100 floor sh 1 "" "for i in \$(seq 100); do $work/floor $bundle/rootfs || exit 1; done"
done

echo "bench: create, start, delete" >&2
alternate cycle sh "$per_round" fresh "@RT@ create --bundle $bundle @ID@ && @RT@ start @ID@ && @RT@ delete --force @ID@"
alternate create none "$per_round" fresh "@RT@ create --bundle $bundle @ID@"
alternate start none "$per_round" created "@RT@ start @ID@"
alternate delete none "$per_round" stopped "@RT@ delete --force @ID@"
alternate state none "$per_round" created "@RT@ state @ID@"

echo "bench: exec /bin/true into a running container" >&2
exec_bundle=$work/bundle-exec
mkdir -p "$exec_bundle"
config_with "/$prefix/exec" '.process.args = ["/bin/busybox", "sleep", "600"]' >"$exec_bundle/config.json"
for name in "${runtimes[@]}"; do
    echo cb-exec >>"$work/ids.$name"
    ${rt[$name]} run -d --bundle "$exec_bundle" cb-exec </dev/null >/dev/null
done
for ((round = 0; round < rounds; round++)); do
    for name in $(order "$round"); do
        timed exec "$name" none "$per_round" "" "${rt[$name]} exec cb-exec /bin/true"
    done
done
for name in "${runtimes[@]}"; do ${rt[$name]} delete --force cb-exec >/dev/null; done

echo "bench: peak RSS" >&2
rss_rounds=$((runs < 10 ? runs : 10))
for ((round = 0; round < rss_rounds; round++)); do
    for name in $(order "$round"); do
        echo cb-rss >>"$work/ids.$name"
        /usr/bin/time -f %M -o "$work/rss.out" ${rt[$name]} run --bundle "$bundle" cb-rss
        cat "$work/rss.out" >>"$work/rss.$name"
    done
    /usr/bin/time -f %M -o "$work/rss.out" "$work/floor" "$bundle/rootfs"
    cat "$work/rss.out" >>"$work/rss.floor"
done

echo "bench: run with a policy" >&2
echo cb-policy >>"$work/ids.cerberus"
if policy_error=$(${rt[cerberus]} run --bundle "$policy_bundle" cb-policy 2>&1); then
    policy_error=
    alternate policy none "$per_round" fresh "@RT@ run --bundle $policy_bundle @ID@"
else
    status=$?
    policy_error=$(echo "$policy_error" | tail -n1)
    policy_error=${policy_error:-exit status $status}
    ${rt[cerberus]} delete --force cb-policy >/dev/null 2>&1 || true
fi

# scale NAME: creates $scale+4 containers (not started, each with its own cgroup) one after
# another and logs each create's wall time in microseconds; then deletes them all.
scale_run() {
    local name=$1 i id t0 t1 dir template
    template=$(config_with "/$prefix/@ID@")
    for ((i = 1; i <= scale + 4; i++)); do
        id=cb-scale-$i
        dir=$work/scale/$id
        mkdir -p "$dir"
        printf '%s\n' "${template//@ID@/$name-$id}" >"$dir/config.json"
        echo "$id" >>"$work/ids.$name.scale"
        t0=${EPOCHREALTIME/./}
        ${rt[$name]} create --bundle "$dir" "$id" >/dev/null
        t1=${EPOCHREALTIME/./}
        echo $((t1 - t0)) >>"$work/scale.$name"
    done
    for ((i = 1; i <= scale + 4; i++)); do
        ${rt[$name]} delete --force "cb-scale-$i" >/dev/null
    done
    rm -rf "$work/scale" "$work/ids.$name.scale"
}
if [ "$scale" -gt 0 ]; then
    for name in "${runtimes[@]}"; do
        echo "bench: scale, $name: $scale concurrently existing containers" >&2
        scale_run "$name"
        sleep 2 # let the kernel finish tearing down the network namespaces
    done
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

. "$here/report.sh"
print_report

# The policy's own costs (loops inside and outside, policed scale, a denial burst), in this namespace.
# grep reads the whole report: with -q it would stop at the match and, under pipefail, the check's
# SIGPIPE would read as a host without a backend.
if "$build/cerberus" check | grep '^--enforcement auto picks: [a-z]' >/dev/null; then
    echo "bench: the agent policy, natively" >&2
    "$here/policy_native.sh" "$build" --reps "$((runs < 15 ? runs : 15))" --scale "$scale"
else
    echo "bench: no enforcement backend on this host: the policy's costs are measured in the VM lane (make bench-policy)"
fi
