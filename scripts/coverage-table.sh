#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes the policy coverage table in docs/policy.md from test results, not by hand: one row per check
# of the policy cases (tests/vm/cases/policy_*.sh), one column per backend, from the verdict lines that
# run (VMTEST ok|fail|skip <case>: <check>[: <detail>]) kept in tests/policy/results/<backend>.txt.
#   native (landlock): tests/policy/run-native.sh build --results tests/policy/results/landlock.txt
#   VM lane (bpf-lsm, and fmod-ret from the boot without bpf in lsm=):
#     tests/vm/run.sh --build build --cases 'tests/vm/cases/policy_*.sh' > lane.txt
#     grep '^VMTEST' lane.txt | grep -v '\[no-bpf-lsm\]' > tests/policy/results/bpf-lsm.txt
#     grep '^VMTEST.*\[no-bpf-lsm\]' lane.txt | sed 's/ \[no-bpf-lsm\]//' > tests/policy/results/fmod-ret.txt
# Usage: scripts/coverage-table.sh [DOC]   (default docs/policy.md; replaces what lies between its markers)
set -euo pipefail
cd "$(dirname "$0")/.."
doc="${1:-docs/policy.md}"
results=tests/policy/results
backends=(bpf-lsm fmod-ret landlock)

table="$(mktemp)"
trap 'rm -f "$table"' EXIT
{
    header="| case | check |"
    for backend in "${backends[@]}"; do header="$header $backend |"; done
    echo "$header"
    printf '|---|---|%s\n' "$(printf -- '---|%.0s' "${backends[@]}")"
    # Every check any backend reported, in the order of the cases.
    cat "$results"/*.txt 2>/dev/null | sed -n 's/^VMTEST \(ok\|fail\|skip\) \([^:]*\): \([^:]*\).*/\2\t\3/p' |
        awk -F'\t' '!seen[$0]++' | while IFS=$'\t' read -r case check; do
        row="| ${case#policy_} | $check |"
        for backend in "${backends[@]}"; do
            # The check's own text as a literal (names hold regex characters: "bpf() denied").
            literal="$(printf '%s' "$case: $check" | sed 's/[][\.*^$()+?{}|]/\\&/g')"
            line="$(grep -E "^VMTEST [a-z]+ $literal(:|$)" "$results/$backend.txt" 2>/dev/null | tail -n1 || true)"
            case "$line" in
            "VMTEST ok "*) cell="holds" ;;
            "VMTEST fail "*) cell="**fails**" ;;
            "VMTEST skip "*"cannot hold on $backend: "*) cell="cannot: ${line#*cannot hold on $backend: }" ;;
            "VMTEST skip "*) cell="skipped: ${line##*: }" ;;
            *) cell="not run" ;;
            esac
            row="$row ${cell//|//} |"
        done
        echo "$row"
    done
} >"$table"

begin='<!-- coverage table: scripts/coverage-table.sh writes what follows -->'
end='<!-- end of coverage table -->'
grep -qF "$begin" "$doc" || { echo "coverage-table: no marker in $doc" >&2; exit 1; }
awk -v begin="$begin" -v end="$end" -v table="$table" '
    $0 == begin { print; while ((getline line < table) > 0) print line; skipping = 1; next }
    $0 == end { skipping = 0 }
    !skipping { print }' "$doc" >"$doc.tmp" && mv "$doc.tmp" "$doc"
echo "coverage-table: $(($(wc -l <"$table") - 2)) checks written to $doc"
