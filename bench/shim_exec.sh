#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The command shim's cost per exec (bench/shim_exec.c): BUILD's cerberus-shim and any OTHER shims (an older
# build's, to compare), alternating, N execs a round. The page faults are the number that holds on a loaded
# host; the CPU and wall time move with the load.
# usage: bench/shim_exec.sh BUILD_DIR [--execs N] [--rounds N] [OTHER_SHIM...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: shim_exec.sh BUILD_DIR [--execs N] [--rounds N] [OTHER_SHIM...]}" && pwd)
shift
execs=300
rounds=4
shims=("$build/cerberus-shim")
while [ $# -gt 0 ]; do
    case "$1" in
    --execs) execs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) shims+=("$(realpath "$1")"); shift ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "shim_exec.sh: must run as root" >&2; exit 1; }
work=$(mktemp -d /tmp/cerbench-shim.XXXXXX)
trap 'rm -rf "$work"' EXIT
gcc -O2 -pthread -I "$here/../runtime/lib" -o "$work/shim_exec" "$here/shim_exec.c"
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
"$work/shim_exec" "$execs" "$rounds" "${shims[@]}"
