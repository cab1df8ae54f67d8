#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Benchmark (not a test) of the agent policy's cost, run in the real-kernel lane by bench/policy.sh, once
# per boot: with bpf in lsm= the BPF LSM programs enforce, without it the fmod_ret ones (asked for by init.sh's wrapper: auto does not take them). Each
# boot measures: open/connect/exec loops inside a policed container against an unpoliced one; the same
# loops outside any container (in the root cgroup and in a depth-3 cgroup, as systemd places processes)
# with the BPF programs not loaded, while a policed container runs, and after it is deleted (programs
# still attached); `cerberus run` of /bin/true with and without a policy, and crun's without one when
# bench/policy.sh put crun in the VM; a burst of denied connects (written + lost must be the burst); and the
# create time of the 1st..Nth concurrently existing container with distinct policies (in the bpf-lsm boot
# only: creating and installing do not depend on which programs enforce).
# Output: `BENCH <metric> <ns>` lines, one per repetition (bench/policy.sh takes medians), `BENCH info ...`
# lines, and `VMTEST` verdicts for the sanity checks (the loops succeeded, nothing was denied).
# /vm/bench.env may override REPS, SCALE and the loop counts.
# vm-timeout: 3000
# vm-boots: bpf-lsm no-bpf-lsm
. /vm/lib.sh

vm_has_cerberus && vm_has_probe || exit 0

REPS=5          # repetitions of every measurement (medians over these)
OPEN_N=10000    # open+close per loop
CONNECT_N=2000  # socket+connect+close per loop
EXEC_N=60       # fork+exec+wait per loop
RUN_REPS=25     # cerberus run of /bin/true, each with and without a policy, alternating
BURST=100000    # denied connects in the burst
SCALE=1000      # concurrently existing created containers with distinct policies
ASLR=0          # 0: address space randomization off in this VM (see below); 1: the kernel's default
[ -f /vm/bench.env ] && . /vm/bench.env
[ "$VM_BOOT" = bpf-lsm ] || SCALE=0

# The emulator translates guest code once per virtual address; with randomized addresses every new
# cerberus process has its code translated again, which made up about 70% of a `cerberus run` here and
# has no counterpart on a real CPU. With ASLR off, code translated once is reused, as a CPU would run it.
if [ "$ASLR" = 0 ]; then
    echo 0 >/proc/sys/kernel/randomize_va_space
fi
echo "BENCH info aslr $(cat /proc/sys/kernel/randomize_va_space)"

probe=/usr/local/bin/cerberus-probe
cerberus=/usr/local/bin/cerberus
work=/tmp/bench
mkdir -p "$work"

# The policy every policed container gets: it allows exactly what the loops do, so the programs check
# each operation against the rules and let it through.
policy='{"allowed_paths": ["/workspace", "/tmp", "/dev"], "read_only_paths": ["/bin", "/proc", "/etc", "/sys"],
 "allowed_hosts": ["127.0.0.1/32"], "allowed_bins": ["/bin/busybox", "/bin/cerberus-probe"]}'

# bench_emit METRIC LOOP_OUTPUT: one sample from a probe loop line "ns_per_op=T failed=F last_error=E".
bench_emit() {
    echo "BENCH $1 $(echo "$2" | sed -n 's/.*ns_per_op=\([0-9]*\).*/\1/p' | head -n1)"
}

# The three loops; a denial (EPERM/EACCES) or a failed open/exec means the measurement is void.
LOOPS="loop-open $OPEN_N /workspace/data; loop-connect $CONNECT_N 127.0.0.1 9; loop-exec $EXEC_N /bin/true"

# run_loops PREFIX CMD...: CMD prints the three loop lines in order; emits PREFIX.open/.connect/.exec.
run_loops() {
    local prefix="$1" out
    shift
    out="$("$@" 2>&1)"
    case "$(echo "$out" | sed -n 1p)" in *"failed=0 "*) ;; *) vm_fail "$prefix open loop ran" "$out"; return 1 ;; esac
    case "$(echo "$out" | sed -n 2p)" in *EPERM* | *EACCES* | "") vm_fail "$prefix connect loop ran" "$out"; return 1 ;; esac
    case "$(echo "$out" | sed -n 3p)" in *"failed=0 "*) ;; *) vm_fail "$prefix exec loop ran" "$out"; return 1 ;; esac
    bench_emit "$prefix.open" "$(echo "$out" | sed -n 1p)"
    bench_emit "$prefix.connect" "$(echo "$out" | sed -n 2p)"
    bench_emit "$prefix.exec" "$(echo "$out" | sed -n 3p)"
}

# The loops as a shell line for the probe at PATH.
loops_with() { echo "$LOOPS" | sed "s|loop-|$1 loop-|g"; }

# Outside any container: in the root cgroup and in a depth-3 cgroup (each hook walks the ancestors).
nested=/sys/fs/cgroup/bench.slice/user.slice/session.scope
mkdir -p "$nested" /workspace && echo data >/workspace/data
outside_loops() {
    run_loops "outside.$1.root" sh -c "$(loops_with $probe)"
    run_loops "outside.$1.nested" sh -c "echo \$\$ >$nested/cgroup.procs && $(loops_with $probe)"
}

# timed CMD...: one fork+exec+wait of CMD; prints the probe's "ns_per_op=..." line and CMD's output. A file,
# not a pipe, takes the output: a created container's init keeps it open.
timed() {
    $probe loop-exec 1 "$@" </dev/null >"$work/timed.out" 2>&1
    cat "$work/timed.out"
}

bundle_for() { # bundle_for DIR ARG...: a bundle with a writable rootfs holding /workspace/data
    local dir="$1"
    shift
    make_bundle "$dir" "$@" || return
    mkdir -p "$dir/rootfs/workspace" && echo data >"$dir/rootfs/workspace/data"
    bundle_edit "$dir" '.root.readonly = false'
}

# unload_programs: with no policed container left, removing the pins detaches the programs (links and
# maps are only held by their pins); the next policed create loads them again.
# `cerberus check` (which pin_dir asks) loads the socket programs, so the directory is read once, here.
pins="$(pin_dir)"
# The socket programs also stay attached to the empty cgroup that keeps the kernel's socket hooks switched
# on (docs/policy.md, landlock): removing that cgroup releases them, a moment later.
unload_programs() {
    local hooks i=0
    rm -f "$pins"/*
    hooks="$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)/cerberus-sock-hooks"
    [ ! -d "$hooks" ] || rmdir "$hooks" || return 1
    command -v bpftool >/dev/null || return 0
    while bpftool prog show | grep -q cerb_; do
        i=$((i + 1))
        [ $i -lt 50 ] || return 1
        sleep 0.1
    done
}

bundle_for "$work/holder" /bin/sleep 100000 || exit 1
bundle_edit "$work/holder" '.annotations["io.cerberus.policy"] = $p' --arg p "$policy"
bundle_for "$work/plain" sh -c "$(loops_with /bin/cerberus-probe)" || exit 1
bundle_for "$work/policed" sh -c "$(loops_with /bin/cerberus-probe)" || exit 1
bundle_edit "$work/policed" '.annotations["io.cerberus.policy"] = $p' --arg p "$policy"

# Each repetition goes through every state, so a slow patch of the (emulated, shared) host hits them alike:
# (b) outside with the programs not loaded; a policed container starts (loading them): (b) outside while it
# runs; (a) inside an unpoliced and a policed container; it is deleted: (b) outside with the programs
# attached but no cgroup policed.
rep=0
while [ $rep -lt $REPS ]; do
    unload_programs || { vm_fail "programs unloaded between repetitions" "$(bpftool prog show | grep cerb_)"; exit 1; }
    outside_loops unloaded
    out="$(timed $cerberus run --detach --bundle "$work/holder" bench-holder)"
    case "$out" in *"failed=0 "*) bench_emit holder.run_with_load "$out" ;; *) vm_fail "policed holder container runs" "$out"; exit 1 ;; esac
    outside_loops policed
    run_loops inside.none vm_run_bundle "$work/plain"
    run_loops inside.policy vm_run_bundle "$work/policed"
    $cerberus delete --force bench-holder >/dev/null 2>&1
    outside_loops after
    rep=$((rep + 1))
done
vm_ok "loops inside and outside, $REPS repetitions"
# What was measured: auto's choice in this boot (the pinned group of its programs).
programs=lsm
[ "$VM_BOOT" = bpf-lsm ] || programs=fmod_ret
vm_check "the $programs programs enforced" test -e "$pins/$programs"
rmdir "$nested" /sys/fs/cgroup/bench.slice/user.slice /sys/fs/cgroup/bench.slice 2>/dev/null

# (c) cerberus run of /bin/true (which deletes the container when it exits), without and with the policy.
bundle_for "$work/true-none" /bin/true || exit 1
bundle_for "$work/true-policy" /bin/true || exit 1
bundle_edit "$work/true-policy" '.annotations["io.cerberus.policy"] = $p' --arg p "$policy"
crun=$(command -v crun || true)
kinds="none policy${crun:+ crun}"
rep=0
while [ $rep -lt $RUN_REPS ]; do
    for kind in $kinds; do
        if [ "$kind" = crun ]; then
            out="$(timed $crun --root /run/bench-crun run --bundle "$work/true-none" bench-true)"
            $crun --root /run/bench-crun delete --force bench-true >/dev/null 2>&1
        else
            out="$(timed $cerberus run --bundle "$work/true-$kind" bench-true)"
        fi
        case "$out" in *"failed=0 "*) bench_emit "run.$kind" "$out" ;; *) vm_fail "run of /bin/true ($kind)" "$out"; break 2 ;; esac
    done
    rep=$((rep + 1))
done
[ $rep -eq $RUN_REPS ] && vm_ok "run of /bin/true: $kinds"

# (e) a burst of denied connects: every denial is written to the trail or counted lost there.
if [ "$BURST" -gt 0 ]; then
    bundle_for "$work/burst" /bin/cerberus-probe burst "$BURST" 203.0.113.9 443 || exit 1
    bundle_edit "$work/burst" '.annotations["io.cerberus.policy"] = "{\"allowed_hosts\": []}"'
    trail=/var/log/cerberus/bench-burst.jsonl
    rm -f "$trail"
    out="$(timed $cerberus run --bundle "$work/burst" bench-burst)" # run deletes: the trail is complete
    written=$(grep -c '"type":"denial"' "$trail" || true)
    lost=$(grep '"type":"lost"' "$trail" | tail -n1 | jq -r '.total // 0')
    echo "BENCH burst.denials $BURST"
    echo "BENCH burst.written ${written:-0}"
    echo "BENCH burst.lost ${lost:-0}"
    vm_check "burst: written + lost = $BURST" test $((${written:-0} + ${lost:-0})) -eq "$BURST"
fi

# (d) scale: SCALE created containers at once, each with its own policy (a distinct /32 in allowed_hosts).
# They share one rootfs; each bundle holds only its config.json, made from a template by sed.
if [ "$SCALE" -eq 0 ]; then
    rm -rf "$work"
    exit 0
fi
scale_root="$work/scale"
bundle_for "$scale_root/template" /bin/true || exit 1
mv "$scale_root/template/rootfs" "$scale_root/rootfs"
bundle_edit "$scale_root/template" '.root.path = $r | .annotations["io.cerberus.policy"] = $p' \
    --arg r "$scale_root/rootfs" --arg p "$(echo "$policy" | sed 's|127.0.0.1/32|@HOST@/32|')"
tenth=$((SCALE >= 10 ? SCALE / 10 : 1))
mem_before="$(awk '/MemAvailable/ { print $2 }' /proc/meminfo)"
i=1
created=0
while [ $i -le "$SCALE" ]; do
    mkdir -p "$scale_root/c$i"
    sed "s|@HOST@|10.$((i / 65536)).$((i / 256 % 256)).$((i % 256))|" "$scale_root/template/config.json" \
        >"$scale_root/c$i/config.json"
    out="$(timed $cerberus create --bundle "$scale_root/c$i" "bench-scale-$i")"
    case "$out" in
    *"failed=0 "*) ;;
    *) vm_fail "create of container $i of $SCALE" "$out; MemAvailable $(awk '/MemAvailable/ { print $2 }' /proc/meminfo) kB"; break ;;
    esac
    created=$i
    case $i in 1 | 10 | 100 | 500 | 1000 | "$SCALE") bench_emit "scale.create.$i" "$out" ;; esac
    [ $i -le 10 ] && bench_emit scale.create.first10 "$out"
    [ $i -gt $((SCALE - 10)) ] && bench_emit scale.create.last10 "$out"
    # A tenth's median is robust to the kernel's periodic slow create (docs/benchmarks.md, "Scale").
    [ $i -le "$tenth" ] && bench_emit scale.create.first_tenth "$out"
    [ $i -gt $((SCALE - tenth)) ] && bench_emit scale.create.last_tenth "$out"
    i=$((i + 1))
done
mem_after="$(awk '/MemAvailable/ { print $2 }' /proc/meminfo)"
echo "BENCH info scale.created $created"
echo "BENCH info scale.mem_per_container_kb $(((mem_before - mem_after) / (created > 0 ? created : 1)))"
echo "BENCH info scale.mem_available_kb $mem_after"
[ "$created" -eq "$SCALE" ] && vm_ok "$SCALE containers with distinct policies created"
i=1
while [ $i -le "$created" ]; do
    out="$(timed $cerberus delete --force "bench-scale-$i")"
    case $i in 1 | "$created") bench_emit "scale.delete.$i" "$out" ;; esac
    i=$((i + 1))
done
if command -v bpftool >/dev/null; then
    vm_expect_output "no policy entry left after the scale test" 0 \
        sh -c "bpftool map dump pinned $pins/cerb_policies -j | jq length"
fi
rm -rf "$work"
exit 0
