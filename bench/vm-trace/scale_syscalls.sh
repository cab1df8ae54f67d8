#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Where create time goes as containers add up (run by bench/scale_trace.sh, not a test): creates SCALE
# containers of one runtime (cerberus or crun, no policy) one after another and leaves them in `created`
# state; times every create, and traces the syscalls of five early and five late creates with the
# raw_syscalls events (enter and exit paired per task).
# Output: `TRACE create I NS` per create, and `TRACE sys I COMM NR MS CALLS` per traced create, process
# name and syscall number (milliseconds inside the calls, summed).
# /vm/bench.env may set RUNTIME (cerberus, the default, or crun) and SCALE (default 1000, at least 200).
# vm-timeout: 3000
. /vm/lib.sh

vm_has_cerberus && vm_has_probe || exit 0

RUNTIME=cerberus
SCALE=1000
[ -f /vm/bench.env ] && . /vm/bench.env
[ "$SCALE" -ge 200 ] || { vm_fail "SCALE is at least 200" "SCALE=$SCALE"; exit 0; }
# The commands are word-split on purpose: each is a program and its leading arguments.
case "$RUNTIME" in
cerberus) create_cmd="$(command -v cerberus) create --bundle" delete_cmd="cerberus delete --force" ;;
crun)
    command -v crun >/dev/null || { vm_fail "crun is in the VM (bench/scale_trace.sh adds it)" ""; exit 0; }
    create_cmd="$(command -v crun) --root /run/crun-trace create --bundle" delete_cmd="crun --root /run/crun-trace delete -f" ;;
*) vm_fail "RUNTIME is cerberus or crun" "RUNTIME=$RUNTIME"; exit 0 ;;
esac
# As in bench/vm/policy_cost.sh: the emulator would translate every new process's code again otherwise.
echo 0 >/proc/sys/kernel/randomize_va_space

work=/tmp/scale-trace
make_bundle "$work/template" /bin/true || exit 1
mv "$work/template/rootfs" "$work/rootfs"
bundle_edit "$work/template" '.root.path = $r' --arg r "$work/rootfs"

tracing=/sys/kernel/tracing
[ -d "$tracing/events" ] || mount -t tracefs tracefs "$tracing"
echo 0 >"$tracing/tracing_on"
echo 40000 >"$tracing/buffer_size_kb"
echo 1 >"$tracing/events/raw_syscalls/enable"

# Sums the traced syscalls by process name and number. A line reads
# "<comm>-<pid> [cpu] <flags> <seconds>: sys_enter: NR <nr> (...)" or "...: sys_exit: NR <nr> = <ret>".
summarize_trace() {
    awk -v create="$1" '
    / sys_(enter|exit): NR / {
        head = $0; sub(/ +\[[0-9]+\].*/, "", head); sub(/^ +/, "", head)
        pid = head; sub(/.*-/, "", pid); comm = head; sub(/-[0-9]+$/, "", comm); gsub(/ /, "_", comm)
        match($0, / [0-9]+\.[0-9]+: /); seconds = substr($0, RSTART + 1, RLENGTH - 3)
        nr = $0; sub(/.* NR /, "", nr); sub(/ .*/, "", nr)
        if ($0 ~ / sys_enter: /) { entered[pid] = seconds; number[pid] = nr; name[pid] = comm; next }
        if (pid in entered && number[pid] == nr) {
            key = name[pid] " " nr; ms[key] += (seconds - entered[pid]) * 1000; calls[key]++
            delete entered[pid]
        }
    }
    END { for (key in ms) printf "TRACE sys %s %s %.3f %d\n", create, key, ms[key], calls[key] }' "$tracing/trace"
}

cgroups_before="$(find /sys/fs/cgroup -type d | wc -l)"
late=$((SCALE - 60))
i=1
created=0
while [ $i -le "$SCALE" ]; do
    mkdir -p "$work/c$i" && cp "$work/template/config.json" "$work/c$i/config.json"
    traced=false
    case $i in 40 | 41 | 42 | 43 | 44 | $late | $((late + 1)) | $((late + 2)) | $((late + 3)) | $((late + 4))) traced=true ;; esac
    if $traced; then
        echo >"$tracing/trace"
        echo 1 >"$tracing/tracing_on"
    fi
    # To a file: the created container's init keeps its stdio open until `start`, so a pipe would not end.
    cerberus-probe loop-exec 1 $create_cmd "$work/c$i" "trace-$i" </dev/null >"$work/create.out" 2>&1
    out="$(cat "$work/create.out")"
    echo 0 >"$tracing/tracing_on"
    case "$out" in
    *"failed=0 "*) ;;
    *) vm_fail "create of container $i of $SCALE ($RUNTIME)" "$out"; break ;;
    esac
    $traced && summarize_trace "$i"
    echo "TRACE create $i $(echo "$out" | sed -n 's/.*ns_per_op=\([0-9]*\).*/\1/p')"
    created=$i
    i=$((i + 1))
done
echo 0 >"$tracing/events/raw_syscalls/enable"
[ "$created" -eq "$SCALE" ] && vm_ok "$SCALE $RUNTIME containers created, five early and five late creates traced"
i=1
while [ $i -le "$created" ]; do
    $delete_cmd "trace-$i" >/dev/null 2>&1
    i=$((i + 1))
done
vm_expect_output "every container deleted, its cgroup too" "$cgroups_before" sh -c 'find /sys/fs/cgroup -type d | wc -l'
rm -rf "$work"
exit 0
