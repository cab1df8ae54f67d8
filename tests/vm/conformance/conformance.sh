#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the OCI runtime-tools validation programs that tests/conformance/vm.sh put under /opt/runtime-tools
# against cerberus, on pure cgroup v2, the way tests/conformance/run.sh runs them on the host: each in its
# own directory (TMPDIR, a copy of runtimetest, the rootfs tarball), with RUNTIME set to a wrapper that keeps
# container state in a private --root, under a per-program timeout. One verdict per program:
#   VMTEST ok conformance: <test>
#   VMTEST fail conformance: <test>: <first failing TAP line, or the exit status and last stderr line>
# Every line of a program's TAP output and stderr is echoed as `VMTAP <test>: …` and `VMERR <test>: …`, and
# what runtime-wrapper recorded of the containers' cgroup v2 files as `VMCG <test>: …` (runtime-tools checks
# cgroup values only on v1), so vm.sh can write them to the host's log dir. No timeout header: vm.sh sets
# VM_CASE_TIMEOUT for the lot.
# vm-modules: ata_piix sd_mod bfq
# shellcheck shell=dash disable=SC1091 # busybox ash, like dash, has local; /vm/lib.sh exists in the VM only
. /vm/lib.sh

suite=/opt/runtime-tools
vm_has_cerberus || exit 0
[ -d "$suite/validation" ] || exit 0
per_test_timeout="$(cat "$suite/timeout" 2>/dev/null)"
per_test_timeout="${per_test_timeout:-120}"
# GNU tar first: the programs unpack rootfs-amd64.tar.gz with `tar -xf`, which busybox tar cannot gunzip.
export PATH="$suite/bin:$PATH"
work=/tmp/conformance

# The network tests take the first two interfaces of the host as their lo and eth0, and the blkio tests
# limit device 8:0: the VM has no NIC, so a veth pair stands in for one, and vm.sh gives it an IDE disk,
# scheduled by BFQ (which takes per-device weights) as on a typical v2 host with a rotating disk.
ip link add conformance0 type veth peer name conformance1 || vm_log "cannot add a veth pair"
if [ -b /dev/sda ]; then
    echo bfq >/sys/block/sda/queue/scheduler || vm_log "cannot schedule /dev/sda with bfq"
else
    vm_log "no /dev/sda (8:0): the blkio tests will fail"
fi

# The line a failure is reported with: the first `not ok` and the diagnostic line after it, else the first
# YAML error, else the exit status and the last line of stderr.
failure_detail() {
    local rc="$1" tap="$2" err="$3" line
    line="$(awk '/^not ok/ { line = $0; getline; if ($0 ~ /^# /) line = line " (" substr($0, 3) ")"
        print line; exit }' "$tap")"
    [ -n "$line" ] || line="$(grep -m1 '^    "error": ' "$tap" | sed 's/^ *//')"
    [ -n "$line" ] || line="exit $rc: $(grep -v '^[[:space:]]*$' "$err" | tail -n1)"
    echo "$line"
}

# Leaves nothing of one program behind: its containers, mounts under its dir, the suite's cgroups.
clean_up_after() {
    local dir="$1" id target
    for id in $(cerberus --root "$dir/state" list -q 2>/dev/null); do
        cerberus --root "$dir/state" delete -f "$id" >/dev/null 2>&1 || vm_log "could not delete container $id"
    done
    awk -v prefix="$dir/" 'index($2, prefix) == 1 { print $2 }' /proc/mounts | sort -r | while read -r target; do
        umount "$target" 2>/dev/null || umount -l "$target"
    done
    rm -rf "$dir"
    find /sys/fs/cgroup -depth -type d \( -name cgrouptest -o -path '*/testdir' -o -path '*/testdir/*' \) \
        -exec rmdir {} \; 2>/dev/null
}

for program in "$suite"/validation/*; do
    test="$(basename "$program")"
    dir="$work/$test"
    mkdir -p "$dir/tmp" "$dir/state"
    cp "$suite/runtimetest" "$dir/"
    ln -s "$suite/rootfs-amd64.tar.gz" "$dir/"
    printf '#!/bin/sh\nexec /vm/cases/runtime-wrapper %s %s "$@"\n' "$dir/state" "$work/$test.cgroup" >"$dir/runtime"
    chmod +x "$dir/runtime"

    started="$(cut -d' ' -f1 /proc/uptime)"
    (cd "$dir" && TMPDIR="$dir/tmp" RUNTIME="$dir/runtime" exec timeout -k 5 "$per_test_timeout" "$program") \
        </dev/null >"$work/$test.tap" 2>"$work/$test.err"
    rc=$?
    seconds="$(awk -v a="$started" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }')"
    clean_up_after "$dir"

    sed "s/^/VMTAP $test: /" "$work/$test.tap"
    sed "s/^/VMERR $test: /" "$work/$test.err"
    [ ! -f "$work/$test.cgroup" ] || sed "s/^/VMCG $test: /" "$work/$test.cgroup"
    result="$(awk -v rc="$rc" -f "$suite/classify.awk" "$work/$test.tap")"
    vm_log "$test $result ${seconds}s"
    case "$result" in
    pass*) vm_ok "$test" ;;
    skip*) vm_skip "$test" "$result" ;;
    *) vm_fail "$test" "$(failure_detail "$rc" "$work/$test.tap" "$work/$test.err")" ;;
    esac
    rm -f "$work/$test.tap" "$work/$test.err" "$work/$test.cgroup"
done
exit 0
