#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs runc's own integration suite (prepared by build.sh) with RUNC set to each
# runtime given, file by file, and counts every test: pass, FAIL or skip.
#
# Usage: tests/runc-suite/run.sh [options] RUNTIME [RUNTIME...]
#   RUNTIME                   a path, or a name looked up on PATH; its basename
#                             labels the results (cerberus, runc)
#   --only REGEX              run only the files (names without .bats) that match
#   --expect-pass-list FILE   exit 1 unless every test named in FILE ("file.bats:
#                             test name" a line) passes for the first runtime
#   --only-listed             run only the files that the expect-pass list names
#   --markdown FILE           rewrite the tables of docs between the runc-suite
#                             markers in FILE from the logs of the runtimes
#                             labelled cerberus and runc (see table.sh)
#   --call-timeout SECONDS    per call of the runtime (default 90): a hung
#                             runtime would hold its test, and with it the file,
#                             for ever (bats's own BATS_TEST_TIMEOUT cannot be
#                             used: its watcher is a child that the tests' bare
#                             "wait" waits for)
#   --file-timeout SECONDS    per file (default 1200)
# Per file, the TAP output is kept in $RUNC_SUITE_DIR/logs/<label>/<file>.tap
# and the verdicts in <file>.tsv (verdict, tab, test name); a test the TAP
# never reported (bats killed at the file timeout) counts as FAIL.
# The last line printed is "N passed, N failed, N skipped" for the first runtime.
# Exit: 0 when done (failures are counted, not fatal), 1 when the expected-pass
# list is not met, 2 on a usage or harness error.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

only_regex=
expect_pass_file=
only_listed=0
markdown_file=
call_timeout=90
file_timeout=1200
runtimes=()

die() { echo "runc-suite/run: $*" >&2; exit 2; }

while (($#)); do
	case $1 in
	--only) only_regex=${2:?}; shift 2 ;;
	--expect-pass-list) expect_pass_file=${2:?}; shift 2 ;;
	--only-listed) only_listed=1; shift ;;
	--markdown) markdown_file=${2:?}; shift 2 ;;
	--call-timeout) call_timeout=${2:?}; shift 2 ;;
	--file-timeout) file_timeout=${2:?}; shift 2 ;;
	-h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
	-*) die "unknown option $1" ;;
	*) runtimes+=("$1"); shift ;;
	esac
done
((${#runtimes[@]})) || die "no runtime given (try --help)"
[[ -z $expect_pass_file || -r $expect_pass_file ]] || die "cannot read $expect_pass_file"
((only_listed == 0)) || [[ -n $expect_pass_file ]] || die "--only-listed needs --expect-pass-list"
runtime_paths=() labels=()
for runtime in "${runtimes[@]}"; do
	path=$(command -v "$runtime") || die "runtime $runtime not found"
	label=$(basename "$runtime")
	[[ " ${labels[*]} " != *" $label "* ]] || die "runtime label $label given twice"
	runtime_paths+=("$(realpath "$path")") labels+=("$label")
done

# The names in the expect-pass list: "file.bats: test name", comments after #.
listed_tests() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$expect_pass_file" | grep -v '^$'
}

select_files() {
	find "$integration" -maxdepth 1 -name '*.bats' -printf '%f\n' | sed 's/\.bats$//' | sort |
		if ((only_listed)); then
			grep -Fxf <(listed_tests | sed 's/\.bats: .*//' | sort -u)
		elif [[ -n $only_regex ]]; then
			grep -E -- "$only_regex"
		else
			cat
		fi
}

cache=${RUNC_SUITE_DIR:-${CERBERUS_CACHE:-/var/cache/cerberus}/runc-suite}
tree=$("$here/build.sh") || die "build.sh failed"
integration=$tree/tests/integration
mapfile -t files < <(select_files)
((${#files[@]})) || die "no test file selected"
# hooks.bats is the one file that needs the Debian image.
if [[ " ${files[*]} " == *" hooks "* ]]; then
	"$here/build.sh" --debian >/dev/null || die "build.sh --debian failed"
fi
log_root=$cache/logs

work=$(mktemp -d /tmp/cerberus-runc-suite.XXXXXX) || die "mktemp failed"
chmod 755 "$work"
current_pid=
current_runtime=
current_dir=

# Containers a killed file left in the suite's state dirs ($ROOT/state).
delete_leftover_containers() {
	local dir=$1 runtime=$2 state id
	while read -r state; do
		for id in $("$runtime" --root "$state" list -q 2>/dev/null); do
			"$runtime" --root "$state" delete -f "$id" >/dev/null 2>&1 ||
				echo "runc-suite/run: could not delete leftover container $id" >&2
		done
	done < <(find "$dir" -mindepth 2 -maxdepth 6 -type d -name state 2>/dev/null)
}

# shellcheck source=../tier_lib.sh
. "$here/../tier_lib.sh"

# The cgroups the suite names (set_cgroups_path's parent) that appear during the run.
suite_cgroups() {
	local -a hierarchies
	mapfile -t hierarchies < <(findmnt -rn -t cgroup,cgroup2 -o TARGET)
	((${#hierarchies[@]})) || return 0
	find "${hierarchies[@]}" -maxdepth 4 -type d -name 'runc-cgroups-integration-test' 2>/dev/null | sort
}
preexisting_cgroups=$(suite_cgroups)
remove_new_suite_cgroups() {
	local parent
	comm -13 <(echo "$preexisting_cgroups") <(suite_cgroups) | while read -r parent; do
		find "$parent" -depth -type d -exec rmdir {} \; 2>/dev/null ||
			echo "runc-suite/run: could not remove cgroup $parent" >&2
	done
}

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	[[ -n $current_pid ]] && kill -TERM "$current_pid" 2>/dev/null && wait "$current_pid" 2>/dev/null
	[[ -n $current_dir ]] && delete_leftover_containers "$current_dir" "$current_runtime"
	remove_new_suite_cgroups
	remove_test_dir "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

declare -A tally_pass tally_fail tally_skip  # label -> count

# Writes <file>.tsv from the TAP: one verdict per @test of the file, in order.
verdicts() {
	local bats_file=$1 tap=$2
	awk -F'\t' '
		FNR == NR {
			if (match($0, /^(not )?ok [0-9]+ /)) {
				line = $0
				not_ok = (line ~ /^not ok/)
				sub(/^(not )?ok [0-9]+ /, "", line)
				verdict = not_ok ? "FAIL" : "pass"
				if (match(line, / # skip( |$)/)) {
					verdict = "skip"
					line = substr(line, 1, RSTART - 1)
				}
				seen[line] = verdict
			}
			next
		}
		/^@test "/ {
			name = $0
			sub(/^@test "/, "", name)
			sub(/" *\{ *$/, "", name)
			print (name in seen ? seen[name] : "FAIL") "\t" name
		}' "$tap" "$bats_file"
}

# Processes a file's tests left running (a failed test's recvtty holding
# bats's output open, a runtime still waiting): every process with that file's
# marker in its environment (containers' processes have their own environment).
kill_strays() {
	local marker="CERBERUS_RUNC_SUITE_FILE=$1" environ pid
	for environ in /proc/[0-9]*/environ; do
		pid=${environ#/proc/} pid=${pid%/environ}
		[[ $pid != "$BASHPID" ]] && grep -qzxF "$marker" "$environ" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	done
	return 0
}

# Waits for bats; once its TAP has every result its plan announced, a stray
# that keeps bats's output open gets 10 s before it is killed.
wait_for_bats() {
	local pid=$1 tap=$2 dir=$3 complete_since=
	while kill -0 "$pid" 2>/dev/null; do
		if [[ -z $complete_since ]] && awk '/^1\.\.[0-9]+$/ { plan = substr($0, 4) + 0 } /^(not )?ok / { n++ }
				END { exit !(plan > 0 && n >= plan) }' "$tap" 2>/dev/null; then
			complete_since=$SECONDS
		fi
		if [[ -n $complete_since ]] && ((SECONDS - complete_since >= 10)); then
			kill_strays "$dir"
		fi
		sleep 0.2
	done
	wait "$pid"
}

run_file() {
	local runtime=$1 label=$2 file=$3
	local dir=$work/$label/$file log=$log_root/$label/$file
	mkdir -p "$dir"
	# RUNC is a wrapper of the same name under timeout; --foreground keeps the
	# runtime in the terminal's process group (the tty tests read from it).
	# The suite starts its recvtty in the background and calls the runtime at
	# once: the wrapper waits (up to 10 s) for the console socket to exist, or
	# a runtime that starts faster than recvtty loses the race on a busy host.
	local wrapper=$work/bin/$label/$label
	if [[ ! -x $wrapper ]]; then
		mkdir -p "${wrapper%/*}"
		{
			printf '#!/bin/bash\n'
			printf 'for ((i = 1; i < $#; i++)); do\n'
			printf '\t[[ ${!i} == --console-socket ]] || continue\n'
			printf '\tnext=$((i + 1)); for _ in {1..100}; do [[ -S ${!next} ]] && break; sleep 0.1; done\n'
			printf 'done\n'
			printf 'exec timeout --foreground -k 5 %q %q "$@"\n' "$call_timeout" "$runtime"
		} >"$wrapper"
		chmod 755 "$wrapper"
	fi
	current_runtime=$runtime current_dir=$dir
	local started=$SECONDS rc
	# bats puts BATS_RUN_TMPDIR (the tests' ROOT dirs) under TMPDIR. The suite
	# wants a controlling terminal (runc run in the foreground opens /dev/tty for
	# a config with "terminal": true), as runc's own CI gives it: script(1) runs
	# bats on a new pty, its output going to the log files.
	local bats_command
	: >"$log.tap" # wait_for_bats reads it before bats has opened it
	bats_command=$(printf 'bats --tap %q >%q 2>%q' "$file.bats" "$log.tap" "$log.err")
	(cd "$integration" && exec env TMPDIR="$dir" CERBERUS_RUNC_SUITE_FILE="$dir" RUNC="$wrapper" \
		timeout -k 10 "$file_timeout" script -qec "$bats_command" /dev/null) </dev/null >/dev/null 2>&1 &
	current_pid=$!
	wait_for_bats "$current_pid" "$log.tap" "$dir"
	rc=$?
	current_pid=
	kill_strays "$dir"
	delete_leftover_containers "$dir" "$runtime"
	current_dir=
	remove_new_suite_cgroups
	remove_test_dir "$dir"
	verdicts "$integration/$file.bats" "$log.tap" >"$log.tsv"

	local p f s
	p=$(grep -c '^pass' "$log.tsv") f=$(grep -c '^FAIL' "$log.tsv") s=$(grep -c '^skip' "$log.tsv")
	tally_pass[$label]=$((${tally_pass[$label]:-0} + p))
	tally_fail[$label]=$((${tally_fail[$label]:-0} + f))
	tally_skip[$label]=$((${tally_skip[$label]:-0} + s))
	local note=
	((rc == 124 || rc == 137)) && note=" (file timed out)"
	printf 'runc-suite: %-9s %-24s %3d passed %3d failed %3d skipped %4ds%s\n' \
		"$label" "$file" "$p" "$f" "$s" $((SECONDS - started)) "$note"
}

# Exit status 1 when a listed test did not pass for the label.
check_expected_passes() {
	local label=$1 entry file name verdict missing=0
	while IFS= read -r entry; do
		file=${entry%%.bats: *} name=${entry#*.bats: }
		if [[ ! -f $log_root/$label/$file.tsv || " ${files[*]} " != *" $file "* ]]; then
			echo "runc-suite/run: $expect_pass_file names $file.bats, which was not run" >&2
			missing=1
			continue
		fi
		verdict=$(awk -F'\t' -v name="$name" '$2 == name { print $1; exit }' "$log_root/$label/$file.tsv")
		if [[ -z $verdict ]]; then
			echo "runc-suite/run: $expect_pass_file names \"$name\", which $file.bats does not have" >&2
			missing=1
		elif [[ $verdict != pass ]]; then
			echo "runc-suite/run: expected $file.bats: $name to pass for $label: $verdict" >&2
			missing=1
		fi
	done < <(listed_tests)
	return $missing
}

for i in "${!runtime_paths[@]}"; do
	path=${runtime_paths[i]} label=${labels[i]}
	mkdir -p "$log_root/$label"
	echo "runc-suite/run: RUNC=$path ($("$path" --version 2>/dev/null | head -n1))" >&2
	for file in "${files[@]}"; do run_file "$path" "$label" "$file"; done
done

for label in "${labels[@]}"; do
	printf 'runc-suite: %-9s total %d passed, %d failed, %d skipped\n' "$label" \
		"${tally_pass[$label]}" "${tally_fail[$label]}" "${tally_skip[$label]}"
done
if [[ -n $markdown_file ]]; then
	"$here/table.sh" "$log_root" "$markdown_file" || die "could not write the tables to $markdown_file"
fi
status=0
if [[ -n $expect_pass_file ]]; then
	check_expected_passes "${labels[0]}" || status=1
fi
echo "${tally_pass[${labels[0]}]} passed, ${tally_fail[${labels[0]}]} failed, ${tally_skip[${labels[0]}]} skipped"
exit $status
