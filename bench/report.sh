# SPDX-License-Identifier: Apache-2.0
# The table of bench/run.sh, as Markdown; sourced by it after the measurements.
# Reads: $work (json/, rss.*, scale.*), $build, $runs, $scale, $load_before, $load_after, $policy_error.

# stats FILE...: "median min max count" of the hyperfine times in the files, in ms.
stats() {
    [ -e "$1" ] || { echo "- - - 0"; return; }
    jq -rs '[.[].results[].times[]] | sort | length as $n
        | [(if $n % 2 == 1 then .[($n - 1) / 2] else (.[$n / 2 - 1] + .[$n / 2]) / 2 end), .[0], .[-1]]
        | map(. * 1000) | "\(.[0]) \(.[1]) \(.[2]) \($n)"' "$@"
}

# list_stats DIVISOR FILE: the same for numbers one a line, each divided by DIVISOR.
list_stats() {
    [ -s "$2" ] || { echo "- - - 0"; return; }
    sort -n "$2" | awk -v d="$1" '{ v[NR] = $1 / d } END {
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        print m, v[1], v[NR], NR }'
}

cell() { # cell "MED MIN MAX N" DIGITS: "12.3 (11.0–15.2)"
    local med min max n
    read -r med min max n <<<"$1"
    [ "$n" = 0 ] && { echo "-"; return; }
    printf "%.${2}f (%.${2}f–%.${2}f)" "$med" "$min" "$max"
}

ratio() { # ratio STATS STATS: the ratio of the medians
    local a=${1%% *} b=${2%% *}
    if [ "$a" = - ] || [ "$b" = - ]; then echo "-"; else awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }'; fi
}

widths=(32 4 26 20 20 6 6 20)
line() { # line CELL...: one table line, padded by characters (the en dash is one)
    local out="|" i=0 cell
    for cell in "$@"; do
        out+=" $cell$(printf "%*s" $((widths[i] - ${#cell})) "") |"
        i=$((i + 1))
    done
    echo "$out"
}

declare -A summary
row() { # row LABEL UNIT DIGITS STATS_CERBERUS STATS_CRUN STATS_RUNC [STATS_FLOOR]
    local r1 r2
    r1=$(ratio "$4" "$5")
    r2=$(ratio "$4" "$6")
    summary[$1]="c/crun $r1, c/runc $r2"
    line "$1" "$2" "$(cell "$4" "$3")" "$(cell "$5" "$3")" "$(cell "$6" "$3")" "$r1" "$r2" "${7:+$(cell "$7" "$3")}"
}

step_row() { # step_row LABEL STEP [floor]: hyperfine times of STEP
    local j=$work/json/$2
    row "$1" ms "${4:-1}" "$(stats "$j".cerberus.*.json)" "$(stats "$j".crun.*.json)" "$(stats "$j".runc.*.json)" \
        "${3:+$(stats "$j".floor.*.json)}"
}

print_report() {
    local k name dashes=()
    echo
    echo "cerberus $("$build/cerberus" --version | awk 'NR == 1 { print $3 }'), $(crun --version | head -n1), $(runc --version | head -n1)"
    echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)," \
        "load average $load_before before, $load_after after"
    echo "median (min–max) of $runs runs per cell, runtimes alternating; c/crun and c/runc are ratios of medians"
    echo
    line measurement unit cerberus crun runc c/crun c/runc "floor (no runtime)"
    for k in "${widths[@]}"; do dashes+=("$(printf -- '-%.0s' $(seq "$k"))"); done
    line "${dashes[@]}"
    step_row "run /bin/true" run floor
    step_row "100 sequential runs (total)" seq100 floor 0
    step_row "create+start+delete" cycle
    step_row "  create" create
    step_row "  start" start
    step_row "  delete (stopped)" delete
    step_row "  state" state
    step_row "exec /bin/true in a container" exec
    row "peak RSS of run" MB 1 "$(list_stats 1024 "$work/rss.cerberus")" "$(list_stats 1024 "$work/rss.crun")" \
        "$(list_stats 1024 "$work/rss.runc")" "$(list_stats 1024 "$work/rss.floor")"
    if [ -z "$policy_error" ]; then
        step_row "run /bin/true with a policy" policy
    else
        line "run /bin/true with a policy" ms "needs the real-kernel lane" "(has no policies)" "(has no policies)" - - ""
    fi
    if [ "$scale" -gt 0 ]; then
        for k in 1 100 "$scale"; do
            [ "$k" -le "$scale" ] || continue
            for name in cerberus crun runc; do sed -n "$k,$((k + 4))p" "$work/scale.$name" >"$work/scale.$name.$k"; done
            row "create #$k ($((k - 1)) others exist)" ms 1 "$(list_stats 1000 "$work/scale.cerberus.$k")" \
                "$(list_stats 1000 "$work/scale.crun.$k")" "$(list_stats 1000 "$work/scale.runc.$k")"
        done
    fi
    echo
    [ -z "$policy_error" ] || echo "policy: cerberus fails closed on this host ($policy_error); measure it in the real-kernel lane"
    [ "$scale" = 0 ] || echo "scale: containers created, not started, each in its own cgroup, no policy (policed ones: the" \
        "policy table below); a cell is creates #k to #k+4, each timed from bash"
    echo "summary: run /bin/true ${summary["run /bin/true"]}; 100 runs ${summary["100 sequential runs (total)"]};" \
        "create+start+delete ${summary["create+start+delete"]}; peak RSS ${summary["peak RSS of run"]}"
}
