#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs the policy cases (tests/vm/cases/policy_*.sh, written once for every backend) on this host,
# natively, under an enforcement backend this kernel has (default landlock), as the VM lane runs them under
# the BPF LSM. Each case prints VMTEST verdict lines; this prints them, a `N passed, N failed` line, and
# exits 1 on any failure.
#
# Usage: tests/policy/run-native.sh BUILD_DIR [--enforcement NAME] [--results FILE] [CASE...]
#   --results  also write the verdict lines to FILE (scripts/coverage-table.sh reads them)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="$(cd "${1:?usage: run-native.sh BUILD_DIR [--enforcement NAME] [--results FILE] [CASE...]}" && pwd)"
shift
enforcement=landlock
results=""
while [[ $# -gt 0 && "$1" == --* ]]; do
    case "$1" in
    --enforcement) enforcement="$2"; shift 2 ;;
    --results) results="$2"; shift 2 ;;
    *) echo "run-native.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
cases=()
for script in "$@"; do cases+=("$(cd "$(dirname "$script")" && pwd)/$(basename "$script")"); done
[[ ${#cases[@]} -gt 0 ]] || cases=("$repo"/tests/vm/cases/policy_*.sh)
[[ $(id -u) -eq 0 ]] || { echo "run-native.sh: needs root" >&2; exit 2; }

work="$(mktemp -d /tmp/cerberus-policy-native.XXXXXX)"
trap 'rm -rf "$work"' EXIT
# What the VM's /rootfs holds: a static busybox with its applets and the probe.
rootfs="$work/rootfs"
mkdir -p "$rootfs/bin" "$rootfs/proc" "$rootfs/sys" "$rootfs/dev" "$rootfs/etc" "$rootfs/tmp" "$rootfs/usr/local/bin"
busybox="$(command -v busybox)"
ldd "$busybox" >/dev/null 2>&1 && { echo "run-native.sh: $busybox is not static (install busybox-static)" >&2; exit 2; }
cp "$busybox" "$rootfs/bin/busybox"
for applet in $("$busybox" --list); do
    [[ -e "$rootfs/bin/$applet" ]] || ln -s busybox "$rootfs/bin/$applet"
done
cp "$build/cerberus-probe" "$rootfs/bin/cerberus-probe"
echo "root:x:0:0:root:/root:/bin/sh" >"$rootfs/etc/passwd"
# The runtime and the probe as the cases call them, with this run's state root and backend.
mkdir -p "$work/bin" "$work/state"
cat >"$work/bin/cerberus" <<WRAP
#!/bin/sh
exec "$build/cerberus" --root "$work/state" --enforcement "$enforcement" "\$@"
WRAP
chmod +x "$work/bin/cerberus"
ln -s "$build/cerberus-probe" "$work/bin/cerberus-probe"
ln -s "$build/cerberus-dynprobe" "$work/bin/cerberus-dynprobe"

out="$work/verdicts"
: >"$out"
for script in "${cases[@]}"; do
    name="$(basename "$script" .sh | sed 's/^[0-9]*_//')"
    limit="$(sed -n 's/^# vm-timeout: *\([0-9][0-9]*\).*/\1/p' "$script" | head -n1)"
    status=0
    (cd "$work" && PATH="$work/bin:$PATH" VM_LIB="$repo/tests/vm/lib.sh" VM_ROOTFS="$rootfs" VM_CASE="$name" \
        VM_RESULTS="$out" CERBERUS_ROOT="$work/state" CERBERUS_ENFORCEMENT="$enforcement" \
        VM_DYNPROBE="$build/cerberus-dynprobe" timeout "${limit:-300}" sh "$script" </dev/null) >"$work/$name.log" 2>&1 ||
        status=$?
    if [[ $status -ne 0 ]] && ! grep -q "^VMTEST fail $name:" "$out"; then
        echo "VMTEST fail $name: exit: the case script exited with status $status" >>"$out"
        tail -5 "$work/$name.log" >&2
    fi
done
cat "$out"
[[ -z "$results" ]] || cp "$out" "$results"
passed=$(grep -c '^VMTEST ok ' "$out" || true)
failed=$(grep -c '^VMTEST fail ' "$out" || true)
skipped=$(grep -c '^VMTEST skip ' "$out" || true)
echo "$passed passed, $failed failed, $skipped skipped"
[[ $failed -eq 0 ]]
