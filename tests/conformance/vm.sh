#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs OCI runtime-tools validation programs against cerberus in the real-kernel lane (tests/vm: Debian's
# 6.1 kernel under qemu, pure cgroup v2), for the tests that fail on the hybrid-cgroup host for host
# reasons. Builds the suite if needed (build.sh), puts only the chosen programs, runtimetest, the rootfs
# tarball and GNU tar into the VM, and runs them there with tests/vm/conformance/conformance.sh, which
# runs each program as run.sh does. Nothing in the VM uses the network.
#
# Usage: tests/conformance/vm.sh [--build DIR] [--timeout SECONDS] [TEST...]
#   --build    where cerberus was built (default: <repo>/build)
#   --timeout  per program inside the VM (default 180: the VM emulates its CPU)
#   TEST       validation program names (default: every linux_cgroups_* program, process_capabilities
#              and process_rlimits)
# Output: one `VMTEST ok|fail conformance: <test>[: <first failing TAP line>]` line per program, the lane's
# timings, then `N passed, N failed`. TAP output and stderr of every program are written to
# $RUNTIME_TOOLS_DIR/logs/cerberus-vm/<test>.tap and .err, the containers' cgroup v2 files as cerberus set
# them to <test>.cgroup (runtime-tools checks cgroup values only on v1), and the console log beside them.
# Exit: 0 when the VM ran every program (failures are counted, not fatal), 2 on a usage or lane error.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
readonly DEFAULT_EXTRA_TESTS=(process_capabilities process_rlimits)
readonly VM_SUITE_DIR=/opt/runtime-tools

build_dir=$repo/build
timeout_seconds=180
tests=()

die() { echo "conformance/vm: $*" >&2; exit 2; }

while (($#)); do
	case $1 in
	--build) build_dir=${2:?}; shift 2 ;;
	--timeout) timeout_seconds=${2:?}; shift 2 ;;
	-h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
	-*) die "unknown option $1" ;;
	*) tests+=("$1"); shift ;;
	esac
done
[[ -x $build_dir/cerberus ]] || die "no cerberus in $build_dir (build it, or pass --build DIR)"
[[ $timeout_seconds =~ ^[0-9]+$ ]] || die "--timeout needs whole seconds"

bin_dir=$("$here/build.sh") || die "build.sh failed"
if ((${#tests[@]} == 0)); then
	mapfile -t tests < <(find "$bin_dir/validation" -maxdepth 1 -type f -name 'linux_cgroups_*' -printf '%f\n' | sort)
	tests+=("${DEFAULT_EXTRA_TESTS[@]}")
fi
for test in "${tests[@]}"; do
	[[ -x $bin_dir/validation/$test ]] || die "no validation program $test in $bin_dir/validation"
done
tar_path=$(command -v tar) || die "GNU tar not found"

work=$(mktemp -d /tmp/cerberus-conformance-vm.XXXXXX) || die "mktemp failed"
trap 'rm -rf "$work"' EXIT
stage=$work/runtime-tools
mkdir -p "$stage/validation"
for test in "${tests[@]}"; do cp "$bin_dir/validation/$test" "$stage/validation/"; done
cp "$bin_dir/runtimetest" "$bin_dir/rootfs-amd64.tar.gz" "$stage/"
echo "$timeout_seconds" >"$stage/timeout"
cp "$here/classify.awk" "$stage/"
# The blkio programs limit device 8:0: an empty IDE disk is /dev/sda in the VM.
truncate -s 8M "$work/disk.img"

# The case runs the programs one after another: give it their timeouts plus slack for cleanup.
case_timeout=$((${#tests[@]} * (timeout_seconds + 10) + 60))
console=$work/console.log
output=$work/output
echo "conformance/vm: ${#tests[@]} programs, cerberus from $build_dir, $timeout_seconds s each" >&2
started=$SECONDS
# The per-program logs on the console go to files, not the terminal; the closing "N passed, N failed" line
# is held back and printed last, after the logs are written.
VM_CASE_TIMEOUT=$case_timeout VM_TIMEOUT=$((case_timeout + 120)) \
	VM_QEMU_ARGS="-drive file=$work/disk.img,format=raw,if=ide ${VM_QEMU_ARGS:-}" \
	"$repo/tests/vm/run.sh" --build "$build_dir" --cases "$repo/tests/vm/conformance" \
	--add "$stage:$VM_SUITE_DIR" --add "$tar_path:$VM_SUITE_DIR/bin/tar" --console-log "$console" 2>&1 |
	tee "$output" | grep -vE '^(VMTAP|VMERR|VMCG) |^[0-9]+ passed, [0-9]+ failed'
# run.sh keeps its work dir (initramfs) when a check fails, which is expected here; the console log is copied.
kept=$(sed -n 's|^vm: console log and initramfs kept in \(/tmp/cerberus-vm\.[A-Za-z0-9]*\)$|\1|p' "$output")
[[ -z $kept ]] || rm -rf "$kept"

log_dir=$(dirname "$bin_dir")/logs/cerberus-vm
rm -rf "$log_dir"
mkdir -p "$log_dir"
if [[ -f $console ]]; then
	cp "$console" "$log_dir/console.log"
	for test in "${tests[@]}"; do
		sed -n "s/^VMTAP $test: \{0,1\}//p" "$console" >"$log_dir/$test.tap"
		sed -n "s/^VMERR $test: \{0,1\}//p" "$console" >"$log_dir/$test.err"
		sed -n "s/^VMCG $test: \{0,1\}//p" "$console" >"$log_dir/$test.cgroup"
	done
fi
echo "conformance/vm: logs in $log_dir; $((SECONDS - started)) s" >&2

summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$output" | tail -n1)
[[ -n $summary ]] || die "the VM lane printed no result"
echo "$summary"
grep -q '^VMTEST fail lane:' "$output" && exit 2
exit 0
