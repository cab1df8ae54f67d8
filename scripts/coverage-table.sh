#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes the policy coverage tables in docs/policy.md from test results, never by hand. The results are the
# verdict lines of the policy cases (VMTEST ok|fail|skip <case>: <check>[: <detail>]), one file per kernel
# and backend under tests/policy/results/:
#   <kernel>/bpf-lsm.txt, <kernel>/no-bpf-lsm.txt (fmod-ret), <kernel>/landlock.txt: the VM lane's boots,
#     written by `make test-kernels` (tests/vm/test-kernels.sh) for each kernel of tests/vm/kernels.list;
#   host/landlock.txt: this host's kernel, natively (tests/policy/run-native.sh BUILD --results FILE).
# Two tables: rule kind x backend x kernel (each case's checks count for the kinds its `# rule-kinds:` line
# names: "held/run", then how many cannot hold there and why), and every check that does not hold on every
# kernel and backend that ran it.
# Usage: scripts/coverage-table.sh [DOC]   (default docs/policy.md; replaces what lies between its markers)
set -euo pipefail
cd "$(dirname "$0")/.."
doc="${1:-docs/policy.md}"
results=tests/policy/results
kinds=(allowed_hosts raw_sockets paths path_changes denied_paths unix_sockets allowed_bins exec_mappings
    forbidden_caps escalation cgroup_exit other_processes)
kernels=($(awk '!/^#/ && NF { print $1 }' tests/vm/kernels.list) host)
# boot file -> backend
backend_of() { case "$1" in no-bpf-lsm) echo fmod-ret ;; *) echo "$1" ;; esac; }

# The columns: every kernel and backend with a result file, in the order above.
columns=()
for kernel in "${kernels[@]}"; do
    for boot in bpf-lsm no-bpf-lsm landlock; do
        [[ -f "$results/$kernel/$boot.txt" ]] && columns+=("$kernel/$boot")
    done
done
[[ ${#columns[@]} -gt 0 ]] || { echo "coverage-table: no results under $results" >&2; exit 1; }
label() { echo "${1%/*} $(backend_of "${1#*/}")"; }

# case -> its rule kinds
declare -A case_kinds
for script in tests/vm/cases/policy_*.sh; do
    name="$(basename "$script" .sh)"
    case_kinds[$name]="$(sed -n 's/^# rule-kinds: *//p' "$script")"
done

summary="$(mktemp)" detail="$(mktemp)"
trap 'rm -f "$summary" "$detail"' EXIT
{
    header="| rule kind |"
    rule="|---|"
    for column in "${columns[@]}"; do header="$header $(label "$column") |"; rule="$rule---|"; done
    echo "$header"
    echo "$rule"
    for kind in "${kinds[@]}"; do
        row="| $kind |"
        for column in "${columns[@]}"; do
            # held/run over the checks of the cases that name this kind; skips are "cannot" or "skipped".
            cell="$(awk -v kind="$kind" -v cases="$(for c in "${!case_kinds[@]}"; do
                        [[ " ${case_kinds[$c]} " == *" $kind "* ]] && printf '%s ' "$c"; done)" '
                BEGIN { n = split(cases, list, " "); for (i = 1; i <= n; i++) wanted[list[i]] = 1 }
                /^VMTEST (ok|fail|skip) / {
                    name = $3; sub(/:$/, "", name)
                    if (!(name in wanted)) next
                    if ($2 == "ok") ok++
                    else if ($2 == "fail") bad++
                    else if ($0 ~ /cannot hold on/) cannot++
                    else skipped++
                }
                END {
                    run = ok + bad
                    if (run + cannot + skipped == 0) { print "not run"; exit }
                    text = (ok + 0) "/" run
                    if (bad) text = text " (**" bad " fail**)"
                    if (cannot) text = text ", " cannot " cannot"
                    if (skipped) text = text ", " skipped " skipped"
                    print text
                }' "$results/$column.txt")"
            row="$row $cell |"
        done
        echo "$row"
    done
} >"$summary"

{
    header="| case | check |"
    rule="|---|---|"
    for column in "${columns[@]}"; do header="$header $(label "$column") |"; rule="$rule---|"; done
    echo "$header"
    echo "$rule"
    # Every check any run reported, in the order of the cases; only those not holding everywhere they ran.
    for column in "${columns[@]}"; do cat "$results/$column.txt"; done |
        sed -n 's/^VMTEST \(ok\|fail\|skip\) \([^:]*\): \([^:]*\).*/\2\t\3/p' | awk -F'\t' '!seen[$0]++' |
        while IFS=$'\t' read -r case check; do
            [[ "$case" == policy_* ]] || continue
            row="| ${case#policy_} | $check |"
            all_hold=1
            literal="$(printf '%s' "$case: $check" | sed 's/[][\.*^$()+?{}|]/\\&/g')"
            for column in "${columns[@]}"; do
                line="$(grep -E "^VMTEST [a-z]+ $literal(:|$)" "$results/$column.txt" | tail -n1 || true)"
                backend="$(backend_of "${column#*/}")"
                case "$line" in
                "VMTEST ok "*) cell="holds" ;;
                "VMTEST fail "*) cell="**fails**"; all_hold=0 ;;
                "VMTEST skip "*"cannot hold on $backend: "*) cell="cannot: ${line#*cannot hold on $backend: }"; all_hold=0 ;;
                "VMTEST skip "*) cell="skipped: ${line##*: }"; all_hold=0 ;;
                *) cell="not run"; all_hold=0 ;;
                esac
                row="$row ${cell//|//} |"
            done
            [[ $all_hold -eq 1 ]] || echo "$row"
        done
} >"$detail"

replace() { # MARKER-NAME FILE
    local begin="<!-- $1: scripts/coverage-table.sh writes what follows -->" end="<!-- end of $1 -->"
    grep -qF "$begin" "$doc" || { echo "coverage-table: no marker '$begin' in $doc" >&2; exit 1; }
    awk -v begin="$begin" -v end="$end" -v table="$2" '
        $0 == begin { print; while ((getline line < table) > 0) print line; skipping = 1; next }
        $0 == end { skipping = 0 }
        !skipping { print }' "$doc" >"$doc.tmp" && mv "$doc.tmp" "$doc"
}
replace "coverage by rule kind" "$summary"
replace "coverage table" "$detail"
echo "coverage-table: ${#columns[@]} kernel and backend columns; $(($(wc -l <"$detail") - 2)) checks that do not hold everywhere; written to $doc"
