#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the OCI runtime-tools validation programs (built by build.sh) against
# one or more runtimes and counts, per program: pass, FAIL or skip.
#
# Usage: tests/conformance/run.sh [options] RUNTIME [RUNTIME...]
#   RUNTIME                   a path, or a name looked up on PATH; its basename
#                             labels the results (cerberus, crun, runc).
#   --timeout SECONDS         per program (default 60)
#   --markdown FILE           rewrite the results table in FILE (between the
#                             conformance-table markers), keeping its reasons
#                             and the columns of runtimes not run now
#   --expect-pass-list FILE   exit 1 unless every test named in FILE passes for
#                             the first runtime
#   --only REGEX              run only the tests whose name matches
#   --hide-cgroup2            run each program in a private mount namespace with
#                             an empty tmpfs over /sys/fs/cgroup/unified, so a
#                             hybrid host looks like pure cgroup v1 (crun 1.8.1
#                             refuses hybrid hosts whose cgroup2 has controllers);
#                             labels get the suffix -v1
# A program's verdict follows classify.awk: it passes when it exits 0 and prints
# no "not ok" (TODO excepted); it is skipped when all its test points are SKIP;
# one with no test points (the hook tests report only failures, as YAML; the
# *_fail tests print nothing when the runtime rightly refuses the config) passes
# unless it reports an error.
# The last line printed is "N passed, N failed, N skipped" for the first runtime.
# TAP output of every program is kept in $RUNTIME_TOOLS_DIR/logs/<label>/.
# Exit: 0 when done (failures are counted, not fatal), 1 when the expected-pass
# list is not met, 2 on a usage or harness error.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly TABLE_BEGIN='<!-- conformance-table:begin -->'
readonly TABLE_END='<!-- conformance-table:end -->'
readonly KNOWN_COLUMNS=(cerberus crun runc cerberus-v1 crun-v1 runc-v1)
readonly CGROUP2_MOUNT=/sys/fs/cgroup/unified

timeout_seconds=60
markdown_file=
expect_pass_file=
only_regex=
label_suffix=
view=()
runtimes=()

die() { echo "conformance/run: $*" >&2; exit 2; }

while (($#)); do
	case $1 in
	--timeout) timeout_seconds=${2:?}; shift 2 ;;
	--markdown) markdown_file=${2:?}; shift 2 ;;
	--expect-pass-list) expect_pass_file=${2:?}; shift 2 ;;
	--only) only_regex=${2:?}; shift 2 ;;
	--hide-cgroup2)
		# The tmpfs is writable because crun makes a directory for the "0::" line
		# of /proc/self/cgroup; it lives and dies with the namespace.
		view=(unshare --mount --propagation private sh -c \
			"mount -t tmpfs -o size=1m,mode=755 cerberus-conformance $CGROUP2_MOUNT && exec \"\$@\"" view)
		label_suffix=-v1
		shift ;;
	-h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
	-*) die "unknown option $1" ;;
	*) runtimes+=("$1"); shift ;;
	esac
done
((${#runtimes[@]})) || die "no runtime given (try --help)"
runtime_paths=() labels_wanted=()
for runtime in "${runtimes[@]}"; do
	path=$(command -v "$runtime") || die "runtime $runtime not found"
	label=$(basename "$runtime")$label_suffix
	[[ " ${labels_wanted[*]} " != *" $label "* ]] || die "runtime label $label given twice"
	runtime_paths+=("$(realpath "$path")") labels_wanted+=("$label")
done
[[ -z $expect_pass_file || -r $expect_pass_file ]] || die "cannot read $expect_pass_file"
if ((${#view[@]})) && [[ $(stat -f -c %T "$CGROUP2_MOUNT" 2>/dev/null) != cgroup2fs ]]; then
	die "--hide-cgroup2 needs a hybrid host with cgroup2 at $CGROUP2_MOUNT"
fi

bin_dir=$("$here/build.sh") || die "build.sh failed"
log_root=$(dirname "$bin_dir")/logs
mapfile -t all_tests < <(find "$bin_dir/validation" -maxdepth 1 -type f -printf '%f\n' | sort)
tests=("${all_tests[@]}")
if [[ -n $only_regex ]]; then
	mapfile -t tests < <(printf '%s\n' "${all_tests[@]}" | grep -E -- "$only_regex")
fi
((${#tests[@]})) || die "no validation program selected"

work=$(mktemp -d /tmp/cerberus-conformance.XXXXXX) || die "mktemp failed"
chmod 755 "$work"
current_pid=
current_runtime=
current_state=

# Removes the containers a program left behind in its private state dir.
delete_leftover_containers() {
	[[ -n $current_state && -d $current_state ]] || return 0
	local id
	for id in $("${view[@]}" "$current_runtime" --root "$current_state" list -q 2>/dev/null); do
		"${view[@]}" "$current_runtime" --root "$current_state" delete -f "$id" >/dev/null 2>&1 ||
			echo "conformance/run: could not delete leftover container $id" >&2
	done
}

# A container run without a mount namespace (linux_ns_itype "mnt") mounts proc,
# sysfs and /dev into our namespace under its bundle: remove_test_dir (from
# tier_lib.sh) unmounts them before removing the dir.
# shellcheck source=../tier_lib.sh
. "$here/../tier_lib.sh"

# Cgroups named by the suite: runtime-tools' cgroups.AbsCgroupPath and
# RelCgroupPath (whose parents runc leaves behind) and delete_only_create_resources'
# pids/cgrouptest. Only those that appear during this run are removed.
suite_cgroups() {
	local -a hierarchies
	mapfile -t hierarchies < <(findmnt -rn -t cgroup,cgroup2 -o TARGET)
	((${#hierarchies[@]})) || return 0
	find "${hierarchies[@]}" -maxdepth 6 -type d \( -name testdir -o -name cgrouptest \
		-o -path '*/testdir/cgrouptest/container' \) 2>/dev/null | sort
}
preexisting_cgroups=$(suite_cgroups)
remove_new_suite_cgroups() {
	local cgroup
	comm -13 <(echo "$preexisting_cgroups") <(suite_cgroups) | sort -r | while read -r cgroup; do
		rmdir "$cgroup" 2>/dev/null || echo "conformance/run: could not remove cgroup $cgroup" >&2
	done
}

# runc 1.1.5 and crun 1.8.1 chown a process's stdio to its user, the host's /dev/null too (runc's later
# fix skips it): the programs that run as another user leave it owned by them. Put back as found.
devnull_owner=$(stat -c %u:%g /dev/null)

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	[[ -n $current_pid ]] && kill -TERM "$current_pid" 2>/dev/null && wait "$current_pid" 2>/dev/null
	delete_leftover_containers
	remove_new_suite_cgroups
	remove_test_dir "$work"
	chown "$devnull_owner" /dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

declare -A result  # "label|test" -> "pass 3/0/1", "FAIL 2/1/0 (exit 1)", ...
labels=()

# Runs one program in its own dir: TMPDIR (where it puts bundles), its own copy
# of runtimetest and the rootfs tarball it expects in the working directory, and
# a runtime wrapper that keeps container state in a private --root.
run_one() {
	local runtime=$1 label=$2 test=$3
	local dir=$work/$label/$test log=$log_root/$label/$test
	mkdir -p "$dir/tmp" "$dir/state"
	cp "$bin_dir/runtimetest" "$dir/"
	ln -s "$bin_dir/rootfs-amd64.tar.gz" "$dir/"
	printf '#!/bin/bash\nexec %q --root %q "$@"\n' "$runtime" "$dir/state" >"$dir/runtime"
	chmod +x "$dir/runtime"

	current_runtime=$runtime current_state=$dir/state
	local started=$SECONDS rc
	(cd "$dir" && exec env TMPDIR="$dir/tmp" RUNTIME="$dir/runtime" \
		"${view[@]}" timeout -k 5 "$timeout_seconds" "$bin_dir/validation/$test") \
		</dev/null >"$log.tap" 2>"$log.err" &
	current_pid=$!
	wait "$current_pid"
	rc=$?
	current_pid=
	delete_leftover_containers
	current_state=
	remove_new_suite_cgroups
	remove_test_dir "$dir"

	result["$label|$test"]=$(awk -v rc="$rc" -f "$here/classify.awk" "$log.tap")
	printf 'conformance: %-9s %-40s %-24s %3ds\n' "$label" "$test" "${result[$label|$test]}" $((SECONDS - started))
}

# Prints "passed failed skipped" over the cells given as arguments.
tally() {
	local passed=0 failed=0 skipped=0 cell
	for cell in "$@"; do
		case $cell in
		pass*) ((passed++)) ;;
		FAIL*) ((failed++)) ;;
		skip*) ((skipped++)) ;;
		esac
	done
	echo "$passed $failed $skipped"
}

column_cells() {
	local label=$1 test
	for test in "${tests[@]}"; do echo "${result[$label|$test]}"; done
}

print_table() {
	local label test
	echo
	printf '%-40s' test
	for label in "${labels[@]}"; do printf ' %-24s' "$label"; done
	echo
	for test in "${tests[@]}"; do
		printf '%-40s' "$test"
		for label in "${labels[@]}"; do printf ' %-24s' "${result[$label|$test]}"; done
		echo
	done
	printf '%-40s' 'passed/failed/skipped'
	for label in "${labels[@]}"; do
		local -a cells
		mapfile -t cells < <(column_cells "$label")
		printf ' %-24s' "$(tally "${cells[@]}" | tr ' ' /)"
	done
	echo
	echo "(cells: status ok/not-ok/skipped TAP test points)"
}

# Reads the table between the markers of an existing markdown file into
# previous["test|column"]; "\|" inside a cell is kept as such.
declare -A previous
read_previous_table() {
	local file=$1 line inside=0 cell i
	local -a header=() cells
	[[ -f $file ]] || return 0
	while IFS= read -r line; do
		[[ $line == "$TABLE_BEGIN" ]] && { inside=1; continue; }
		[[ $line == "$TABLE_END" ]] && inside=0
		[[ $inside == 1 && $line == '|'* ]] || continue
		line=${line//\\|/$'\x1f'}
		IFS='|' read -ra cells <<<"$line"
		for i in "${!cells[@]}"; do
			cell=${cells[i]//$'\x1f'/\\|}
			cell=${cell#"${cell%%[![:space:]]*}"}
			cells[i]=${cell%"${cell##*[![:space:]]}"}
		done
		if ((${#header[@]} == 0)); then
			header=("${cells[@]}")
		elif [[ ${cells[1]} != -* ]]; then
			for i in "${!cells[@]}"; do
				((i >= 2 && i < ${#header[@]})) && previous["${cells[1]}|${header[i]}"]=${cells[i]}
			done
		fi
	done <"$file"
}

render_markdown_table() {
	local -a columns=("${KNOWN_COLUMNS[@]}")
	local label test column cell reason p f s
	for label in "${labels[@]}"; do
		[[ " ${columns[*]} " == *" $label "* ]] || columns+=("$label")
	done
	declare -A cells_of
	echo "| test |$(printf ' %s |' "${columns[@]}") reason |"
	printf '|%s\n' "$(printf -- '---|%.0s' $(seq $((${#columns[@]} + 2))))"
	for test in "${all_tests[@]}"; do
		local row="| $test |" any_not_pass=0
		for column in "${columns[@]}"; do
			if [[ -n ${result[$column|$test]:-} ]]; then
				cell=${result[$column|$test]}
			else
				cell=${previous[$test|$column]:-not yet measured}
			fi
			[[ $cell == FAIL* || $cell == skip* ]] && any_not_pass=1
			cells_of[$column]+="$cell"$'\n'
			row+=" $cell |"
		done
		reason=
		((any_not_pass)) && reason=${previous[$test|reason]:-not investigated}
		echo "$row $reason |"
	done
	local row="| **passed / failed / skipped** |"
	for column in "${columns[@]}"; do
		local -a cells
		mapfile -t cells <<<"${cells_of[$column]}"
		read -r p f s < <(tally "${cells[@]}")
		if ((p + f + s)); then row+=" $p / $f / $s |"; else row+=" not yet measured |"; fi
	done
	echo "$row |"
}

write_markdown() {
	local file=$1 table
	read_previous_table "$file"
	table=$(render_markdown_table)
	if [[ -f $file ]] && grep -qxF "$TABLE_BEGIN" "$file" && grep -qxF "$TABLE_END" "$file"; then
		TABLE=$table awk -v begin="$TABLE_BEGIN" -v end="$TABLE_END" '
			$0 == begin { print; print ENVIRON["TABLE"]; skipping = 1; next }
			$0 == end { skipping = 0 }
			!skipping { print }' "$file" >"$file.new" && mv "$file.new" "$file"
	else
		printf '%s\n%s\n%s\n' "$TABLE_BEGIN" "$table" "$TABLE_END" >>"$file"
	fi
	echo "conformance/run: wrote table to $file" >&2
}

# Exit status 1 when a test named in the list does not pass for the first runtime.
check_expected_passes() {
	local file=$1 label=$2 name missing=0
	while read -r name; do
		name=${name%%#*}
		name=${name//[[:space:]]/}
		[[ -n $name ]] || continue
		if [[ -z ${result[$label|$name]:-} ]]; then
			echo "conformance/run: $file names $name, which was not run" >&2
			missing=1
		elif [[ ${result[$label|$name]} != pass* ]]; then
			echo "conformance/run: expected $name to pass for $label: ${result[$label|$name]}" >&2
			missing=1
		fi
	done <"$file"
	return $missing
}

for i in "${!runtime_paths[@]}"; do
	path=${runtime_paths[i]} label=${labels_wanted[i]}
	labels+=("$label")
	rm -rf "${log_root:?}/$label"
	mkdir -p "$log_root/$label"
	echo "conformance/run: $label = $path ($("$path" --version 2>/dev/null | head -n1))" >&2
	for test in "${tests[@]}"; do run_one "$path" "$label" "$test"; done
done

print_table
[[ -n $markdown_file ]] && write_markdown "$markdown_file"
status=0
if [[ -n $expect_pass_file ]]; then
	check_expected_passes "$expect_pass_file" "${labels[0]}" || status=1
fi
mapfile -t first_cells < <(column_cells "${labels[0]}")
read -r passed failed skipped < <(tally "${first_cells[@]}")
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
