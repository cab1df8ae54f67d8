# SPDX-License-Identifier: Apache-2.0
# Booting the VM lane for a benchmark (bench/policy.sh, bench/systemd.sh): sourced, not run.
# Needs $repo. The cases print `BENCH <metric> <value>` and `BENCH info <key> <value>` lines.

# The BENCH lines of a console log on stdin, and the `VMINFO boot NAME` line that opens each boot's
# (tests/vm/run.sh boots once per --boots entry).
bench_lines() { grep -aoE 'BENCH (info )?[a-z0-9._]+ [0-9]+|VMINFO boot [a-z-]+' || true; }

# bench_lane OUT LOG_COPY LANE_ARG...: boots tests/vm/run.sh with the arguments (and --keep), shows its
# output on stderr, writes the console's BENCH lines to OUT and, when LOG_COPY is set, the console log there.
# Sets bench_elapsed (s). Returns the lane's status; 1 also when it kept no console log.
bench_lane() {
    local out=$1 log_copy=$2 lane_out status=0 vm_work started
    shift 2
    lane_out=$(mktemp /tmp/cerberus-bench-lane.XXXXXX)
    started=$(date +%s)
    "$repo/tests/vm/run.sh" "$@" --keep >"$lane_out" 2>&1 || status=$?
    bench_elapsed=$(($(date +%s) - started))
    # The lane prints only verdicts; the BENCH lines are in the console log it keeps with --keep.
    grep -v '^vm: console log and initramfs kept' "$lane_out" >&2 || true
    vm_work=$(sed -n 's/^vm: console log and initramfs kept in //p' "$lane_out")
    rm -f "$lane_out"
    if [ -z "$vm_work" ] || [ ! -f "$vm_work/console.log" ]; then
        echo "bench: the lane kept no console log" >&2
        return 1
    fi
    tr -d '\r' <"$vm_work/console.log" | bench_lines >"$out"
    [ -z "$log_copy" ] || cp "$vm_work/console.log" "$log_copy"
    rm -rf "$vm_work"
    return "$status"
}

# bench_collect OUT LOG_COPY FROM_LOG BUILD LANE_ARG...: the BENCH lines of FROM_LOG, a console log kept
# before (bench_elapsed "?"), or, without one, of a boot of the lane (bench_lane) after building cerberus
# and cerberus-probe in BUILD when either is missing. Returns the lane's status.
bench_collect() {
    local out=$1 log_copy=$2 from_log=$3 build=$4
    shift 4
    if [ -n "$from_log" ]; then
        tr -d '\r' <"$from_log" | bench_lines >"$out"
        bench_elapsed="?"
        return 0
    fi
    if [ ! -x "$build/cerberus" ] || [ ! -x "$build/cerberus-probe" ]; then
        cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release >&2
        cmake --build "$build" -j"$(nproc)" --target cerberus cerberus-probe >&2
    fi
    bench_lane "$out" "$log_copy" "$@"
}

# awk functions over the BENCH values, kept as v[METRIC, i] for i in 1..count[METRIC]: the median, least
# and greatest of a metric ("" when it has none). Put before an awk program: awk "$bench_awk_stats"'...'.
bench_awk_stats='
function sortn(a, n,    i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
function median(m,    a, n, i) { n = count[m]; if (!n) return ""; for (i = 1; i <= n; i++) a[i] = v[m, i]; sortn(a, n)
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
function lo(m,    i, x) { x = v[m, 1]; for (i = 2; i <= count[m]; i++) if (v[m, i] < x) x = v[m, i]; return x }
function hi(m,    i, x) { x = v[m, 1]; for (i = 2; i <= count[m]; i++) if (v[m, i] > x) x = v[m, i]; return x }
'
