#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes the runc-suite tables of a markdown file from run.sh's verdict logs
# (<log dir>/<label>/<file>.tsv) of the runtimes labelled cerberus and runc:
# - between <!-- runc-suite-files:begin/end -->: passed / failed / skipped per
#   file and runtime, the totals, and how many of the tests runc passes
#   cerberus passes;
# - between <!-- runc-suite-tests:begin/end -->: every test that does not pass
#   for both (tests both skip left out), with its reason, kept from the table
#   being replaced by file and test name ("not investigated" for a new row).
# Usage: tests/runc-suite/table.sh LOG_DIR MARKDOWN_FILE
set -euo pipefail

log_dir=${1:?log dir} markdown=${2:?markdown file}
readonly LABELS=(cerberus runc)

for label in "${LABELS[@]}"; do
	compgen -G "$log_dir/$label/*.tsv" >/dev/null || { echo "runc-suite/table: no results for $label in $log_dir" >&2; exit 1; }
done
[[ -f $markdown ]] || { echo "runc-suite/table: no $markdown" >&2; exit 1; }

# One stream: "label<TAB>file<TAB>verdict<TAB>test" for both runtimes.
results() {
	local label tsv file
	for label in "${LABELS[@]}"; do
		for tsv in "$log_dir/$label"/*.tsv; do
			file=$(basename "$tsv" .tsv).bats
			awk -F'\t' -v OFS='\t' -v label="$label" -v file="$file" '{ print label, file, $1, $2 }' "$tsv"
		done
	done
}

tables=$(
	results | awk -F'\t' -v markdown="$markdown" '
		# Reasons of the table being replaced, by "file|test".
		BEGIN {
			while ((getline line < markdown) > 0) {
				if (line == "<!-- runc-suite-tests:begin -->") inside = 1
				else if (line == "<!-- runc-suite-tests:end -->") inside = 0
				else if (inside && line ~ /^\| [a-z_-]+\.bats \|/) {
					n = split(line, cell, / \| /)
					sub(/^\| /, "", cell[1]); sub(/ \|$/, "", cell[n])
					reason[cell[1] "|" cell[2]] = cell[n]
				}
			}
		}
		{
			key = $2 "|" $4
			verdict[$1 "|" key] = $3
			count[$1 "|" $2 "|" $3]++
			total[$1 "|" $3]++
			if (!(key in known)) { known[key] = 1; order[++tests] = key }
			if (!($2 in file_seen)) { file_seen[$2] = 1; files[++nfiles] = $2 }
		}
		function counts(label, file) {
			return (count[label "|" file "|pass"] + 0) " / " (count[label "|" file "|FAIL"] + 0) " / " \
				(count[label "|" file "|skip"] + 0)
		}
		END {
			print "<!-- runc-suite-files:begin -->"
			print "| file | cerberus | runc |"
			print "|---|---|---|"
			for (i = 1; i <= nfiles; i++) print "| " files[i] " | " counts("cerberus", files[i]) " | " counts("runc", files[i]) " |"
			printf "| **passed / failed / skipped** | %d / %d / %d | %d / %d / %d |\n",
				total["cerberus|pass"], total["cerberus|FAIL"], total["cerberus|skip"],
				total["runc|pass"], total["runc|FAIL"], total["runc|skip"]
			for (i = 1; i <= tests; i++) {
				key = order[i]
				if (verdict["runc|" key] != "pass") continue
				runc_passes++
				if (verdict["cerberus|" key] == "pass") both_pass++
			}
			print ""
			printf "Of the %d tests runc passes here, cerberus passes %d (%.1f%%).\n", runc_passes, both_pass,
				runc_passes ? 100 * both_pass / runc_passes : 0
			print "<!-- runc-suite-files:end -->"
			print "<!-- runc-suite-tests:begin -->"
			print "| file | test | cerberus | runc | reason |"
			print "|---|---|---|---|---|"
			for (i = 1; i <= tests; i++) {
				key = order[i]
				c = verdict["cerberus|" key]; r = verdict["runc|" key]
				if (c == "") c = "not run"
				if (r == "") r = "not run"
				if ((c == "pass" && r == "pass") || (c == "skip" && r == "skip")) continue
				split(key, part, "|")
				print "| " part[1] " | " part[2] " | " c " | " r " | " (key in reason ? reason[key] : "not investigated") " |"
			}
			print "<!-- runc-suite-tests:end -->"
		}'
)

# Replaces each marked block, or appends both blocks when the file has none.
if grep -qxF '<!-- runc-suite-files:begin -->' "$markdown"; then
	TABLES=$tables awk '
		BEGIN {
			n = split(ENVIRON["TABLES"], line, "\n")
			for (i = 1; i <= n; i++) {
				if (line[i] ~ /^<!-- runc-suite-[a-z]+:begin -->$/) block = line[i]
				text[block] = text[block] line[i] "\n"
			}
		}
		/^<!-- runc-suite-[a-z]+:begin -->$/ { printf "%s", text[$0]; skipping = 1; next }
		/^<!-- runc-suite-[a-z]+:end -->$/ { skipping = 0; next }
		!skipping { print }' "$markdown" >"$markdown.new"
	mv "$markdown.new" "$markdown"
else
	printf '%s\n' "$tables" >>"$markdown"
fi
echo "runc-suite/table: wrote the tables to $markdown" >&2
