# Booting the VM lane for a benchmark (bench/policy.sh, bench/systemd.sh): sourced, not run.
# Needs $repo. The cases print `BENCH <metric> <value>` and `BENCH info <key> <value>` lines.

# The BENCH lines of a console log on stdin.
bench_lines() { grep -aoE 'BENCH (info )?[a-z0-9._]+ [0-9]+' || true; }

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
