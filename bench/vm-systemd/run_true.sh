#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Benchmark (not a test), run in the systemd VM by bench/systemd.sh: `run` of /bin/true by cerberus, crun and
# runc, each with --systemd-cgroup (a transient scope per container, started and stopped through systemd)
# and with the cgroupfs driver, on one bundle from `runc spec`, the runtimes alternating in every round.
# Output: `BENCH <driver>.<runtime> <µs>` per run, `BENCH info systemd <version>`, and VMTEST verdicts for
# the sanity checks (every run exits 0, no unit or cgroup is left). /vm/bench.env may set REPS.
# vm-timeout: 1200
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@" # for $EPOCHREALTIME: a clock read without a fork
. /vm/lib.sh

vm_has_cerberus || exit 0
REPS=20 # timed runs per runtime and driver
[ -f /vm/bench.env ] && . /vm/bench.env

bundle=/tmp/bench-bundle
mkdir -p "$bundle"
rm -rf "$bundle/rootfs" "$bundle/config.json"
cp -a /rootfs "$bundle/rootfs"
(cd "$bundle" && runc spec)
bundle_edit "$bundle" '.process.terminal = false | .process.args = ["/bin/true"] | .root.path = $root' \
    --arg root "$bundle/rootfs"
echo "BENCH info systemd $(systemctl --version | awk 'NR == 1 { print $2 }')"

# one_run DRIVER RUNTIME [untimed]: one `run`, its µs as a BENCH line unless untimed; a failure is a verdict.
one_run() {
    local driver=$1 name=$2 flags="" t0 t1 out
    [ "$driver" = systemd ] && flags=--systemd-cgroup
    t0=${EPOCHREALTIME/./}
    if out=$("$name" $flags --root "/run/bench-$name" run --bundle "$bundle" "bench-$name" 2>&1); then
        t1=${EPOCHREALTIME/./}
        [ -n "${3:-}" ] || echo "BENCH $driver.$name $((t1 - t0))"
        return 0
    fi
    vm_fail "$driver driver, $name runs /bin/true" "$out"
    "$name" $flags --root "/run/bench-$name" delete --force "bench-$name" >/dev/null 2>&1
    return 1
}

for driver in systemd cgroupfs; do
    if [ "$driver" = cgroupfs ]; then
        bundle_edit "$bundle" '.linux.cgroupsPath = "/bench"'
    else
        bundle_edit "$bundle" 'del(.linux.cgroupsPath)' # each runtime's default: <runtime>-<id>.scope
    fi
    failed=0
    # Untimed first runs: the page cache and the emulator's code cache warm up for all three alike.
    for name in cerberus crun runc; do one_run "$driver" "$name" untimed || failed=1; done
    for round in $(seq "$REPS"); do
        case $((round % 3)) in
        0) order="cerberus crun runc" ;;
        1) order="crun runc cerberus" ;;
        2) order="runc cerberus crun" ;;
        esac
        for name in $order; do one_run "$driver" "$name" || failed=1; done
    done
    [ "$failed" -eq 1 ] || vm_ok "$driver driver, each runtime ran /bin/true $REPS times"
done
vm_check "no container scope is left" sh -c '! systemctl list-units --all --no-legend "*bench*.scope" | grep -q .'
vm_check "no container cgroup is left" sh -c '[ -z "$(find /sys/fs/cgroup -mindepth 1 -name "*bench*")" ]'
exit 0
