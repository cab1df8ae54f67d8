#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every scenario of cve_escape.sh (and exe_escape.sh's CVE-2019-5736 trap) against cerberus, runc and
# crun in one run, and prints one markdown row per advisory: the pattern, what stops it in cerberus, the
# scenarios, and each runtime's result as its verdicts say ("held", or "fell" with what the attacker got;
# "no control" when a control failed, so the run shows nothing). On a hybrid host crun runs in a mount
# namespace where cgroup2 is hidden (crun 1.8.1 refuses hybrid hosts), as the conformance tier does.
#
# Usage: cve_table.sh [--markdown FILE] BUILD_DIR [RUNTIME...]
#   BUILD_DIR   where cerberus and its test helpers were built
#   RUNTIME     the runtimes to compare with (default: runc crun, those installed)
#   --markdown  also put the table into FILE, between <!-- cve-table --> and <!-- /cve-table -->
# Environment: CVE_RACE_SECONDS, CVE_RACE_ATTEMPTS (each race's budget, as cve_escape.sh; here 15 s or
# 60 creates by default: runc takes longer per create than cerberus).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
markdown=""
[[ "${1:-}" != --markdown ]] || { markdown=$2; shift 2; }
build=$(cd "${1:?usage: cve_table.sh [--markdown FILE] BUILD_DIR [RUNTIME...]}" && pwd)
shift
others=("$@")
[[ ${#others[@]} -gt 0 ]] || for r in runc crun; do command -v "$r" >/dev/null && others+=("$r"); done
work=$(mktemp -d /tmp/cerberus-cves.XXXXXX)
trap 'rm -rf "$work"' EXIT
export RACE_ATTACK="$build/cerberus-race-attack" RECVTTY="$build/cerberus-recvtty"
export CVE_RACE_SECONDS=${CVE_RACE_SECONDS:-15} CVE_RACE_ATTEMPTS=${CVE_RACE_ATTEMPTS:-60}

# advisory|pattern|what stops it in cerberus|scenarios (cve_escape.sh; exe:NAME for exe_escape.sh)
rows=(
    "CVE-2019-5736|the runtime's own binary overwritten through /proc/self/exe of a runtime process that entered the container|create, run and exec re-execute from a read-only overlayfs (or a sealed memfd) and are not dumpable until the container's program replaces them|exe:exec-trap exe:control-copy"
    "CVE-2019-16884|a file system mounted over /proc (an image's VOLUME /proc) takes the runtime's later writes and masks|a destination that resolves into procfs is refused on the opened fd (procfs over /proc and lxcfs's files excepted)|proc-over"
    "CVE-2019-19921|the /proc destination swapped by a container sharing a volume or the root, so procfs lands elsewhere|procfs and sysfs are mounted on a directory opened through no symlink; paths below the init's own mounts are resolved from those mounts, not by name|dest-race proc-race"
    "CVE-2021-30465|a destination in a shared volume swapped for a symlink out of the root between the check and the mount|the destination is opened in the root (openat2 RESOLVE_IN_ROOT) and the mount placed on that fd (move_mount)|dest-race"
    "CVE-2022-29162|exec --cap gives the process inheritable capabilities|the inheritable set is only what the config names, never what --cap adds|caps-exec"
    "CVE-2023-25809|the host's cgroupfs (or /sys with its submounts) writable in a user namespace without a cgroup namespace|the host's tree is bound read-only with every submount (mount_setattr AT_RECURSIVE)|cgroupfs-userns sysfs-userns"
    "CVE-2023-27561|CVE-2019-19921 again: /proc a symlink, or swapped while the runtime mounts|as CVE-2019-19921|proc-symlink proc-race"
    "CVE-2023-28642|/proc a symlink in the image: procfs mounted through it, masks and writes follow|procfs and sysfs only on a directory reached through no symlink|proc-symlink"
    "CVE-2024-21626|a host directory still open in the runtime used as the working directory (/proc/self/fd/N)|fds closed before chdir and the working directory checked inside the root after it (process_launch, container_init, container_exec)|cwd-exec cwd-exec-process cwd-create"
    "CVE-2024-45310|directories and files for mount points made through a racing symlink, on the host|missing components made with mkdirat/mknodat on fds opened in the root, never through a symlink|mkdir-race"
    "CVE-2025-31133|/dev/null swapped for a symlink, so a mask binds what it names over the masked path|the /dev/null made is opened at once, checked (char 1:3) and that fd is what masks clone|devnull-race"
    "CVE-2025-52565|/dev/console or /dev/pts/N a symlink, so the pty's name takes the runtime elsewhere|the peer comes from the master (TIOCGPTPEER), the ptmx is checked, /dev/console is made and opened through no symlink and the peer's fd bound over it|console-symlink console-race"
    "CVE-2025-52881|the runtime's writes to /proc (sysctls) redirected by a racing or symlinked mount|mounts into procfs refused on the opened fd; sysctls written below the procfs fd crossing no symlink or mount (RESOLVE_NO_SYMLINKS, RESOLVE_NO_XDEV) into a file checked to be procfs's|sysctl-symlink sysctl-race proc-race"
    "CVE-2026-41579|/dev a symlink to the host: the runtime's /dev entries made by path before pivot_root land there|/dev's entries made through the /dev fd opened in the root|dev-symlink"
)

hybrid_view() {
    [[ -n "$(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ]] || return 0
    echo "$here/hide_cgroup2.sh"
}

# run_scenario RUNTIME SCENARIO: its verdict lines in $work/verdicts/RUNTIME/SCENARIO.
run_scenario() {
    local rt=$1 name=$2 out="$work/verdicts/$1/$2" view=""
    mkdir -p "$work/verdicts/$rt"
    [[ "$rt" != crun ]] || view=$(hybrid_view)
    if [[ "$name" == exe:* ]]; then
        if [[ "$rt" == cerberus ]]; then
            sh "$here/exe_escape.sh" "${name#exe:}" "$build/cerberus" "$build/cerberus-exe-attack" "$work/run" >"$out" 2>&1
        else
            echo "not run" >"$out" # the trap plays cerberus's own command line
        fi
    else
        local bin=$rt
        [[ "$rt" != cerberus ]] || bin="$build/cerberus"
        RUNTIME_VIEW="$view" sh "$here/cve_escape.sh" "$name" "$bin" "$work/run" >"$out" 2>&1
    fi
    rm -rf "$work/run"
}

# result RUNTIME SCENARIO: what its verdicts say, in a few words.
result() {
    local out="$work/verdicts/$1/$2" name=${2#exe:}
    grep -qx "not run" "$out" && { echo "$name not run"; return; }
    local fell controls
    # exe_escape.sh's control-copy is a control as a whole: the same attack on a writable copy.
    fell=$(grep -E '^(CVE|ESCAPE) fail ' "$out" | grep -v -e ': control, ' -e ' control-copy: ' | head -n1)
    controls=$(grep -E '^(CVE|ESCAPE) fail ' "$out" | grep -e ': control, ' -e ' control-copy: ' | head -n1)
    local won
    won=$(grep -v ': control, ' "$out" | sed -n 's/.*: attacker \(won [0-9]* of [0-9]*\).*/\1/p' | head -n1)
    if [[ -n "$fell" ]]; then
        echo "$name **fell**${won:+ ($won)}"
    elif [[ -n "$controls" ]]; then
        echo "$name no control"
    elif ! grep -qE '^(CVE|ESCAPE) ok' "$out"; then
        echo "$name no verdict"
    else
        echo "$name held${won:+ ($won)}"
    fi
}

runtimes=(cerberus "${others[@]}")
for row in "${rows[@]}"; do
    IFS='|' read -r _ _ _ scenarios <<<"$row"
    for name in $scenarios; do
        for rt in "${runtimes[@]}"; do
            [[ -e "$work/verdicts/$rt/$name" ]] || run_scenario "$rt" "$name"
        done
    done
done

version() {
    case "$1" in
    cerberus) echo "cerberus $(git -C "$here" describe --always --dirty 2>/dev/null)" ;;
    *) "$1" --version 2>/dev/null | head -n1 ;;
    esac
}
{
    header="| advisory | pattern | what stops it in cerberus | scenarios |"
    rule="|---|---|---|---|"
    for rt in "${runtimes[@]}"; do
        header+=" $(version "$rt") |"
        rule+="---|"
    done
    echo "$header"
    echo "$rule"
    for row in "${rows[@]}"; do
        IFS='|' read -r cve pattern protection scenarios <<<"$row"
        line="| $cve | $pattern | $protection | $(sed 's/\([^ ]*\)/`\1`/g; s/` `/`, `/g' <<<"$scenarios") |"
        for rt in "${runtimes[@]}"; do
            cell=""
            for name in $scenarios; do cell+="${cell:+; }$(result "$rt" "$name")"; done
            line+=" $cell |"
        done
        echo "$line"
    done
} >"$work/table.md"
cat "$work/table.md"
echo
echo "measured $(date -u +%Y-%m-%d) on $(uname -r), race budget $CVE_RACE_SECONDS s or $CVE_RACE_ATTEMPTS creates"

if [[ -n "$markdown" ]]; then
    {
        sed '/<!-- cve-table -->/q' "$markdown"
        cat "$work/table.md"
        echo
        echo "Measured $(date -u +%Y-%m-%d) on Linux $(uname -r) by \`make cve-table\`; each race's budget $CVE_RACE_SECONDS s or $CVE_RACE_ATTEMPTS creates."
        sed -n '/<!-- \/cve-table -->/,$p' "$markdown"
    } >"$work/doc.md" && cp "$work/doc.md" "$markdown"
fi
