#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the integration tests (bats) against the binaries in a build directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
shift || true
export CERBERUS="$build/cerberus" PROBE="$build/cerberus-probe" RECVTTY="$build/cerberus-recvtty" \
    EXE_ATTACK="$build/cerberus-exe-attack" RACE_ATTACK="$build/cerberus-race-attack" HOOK="$build/cerberus-hook" \
    CERBERUS_SHIM="$build/cerberus-shim"
[ -x "$CERBERUS" ] || { echo "no cerberus binary in $build: run make first" >&2; exit 1; }
if [ $# -gt 0 ]; then
    exec bats "$@"
fi
exec bats "$here"
