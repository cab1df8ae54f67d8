#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A scripted stand-in for an LLM agent, and it says so: there is no model
# here. It does what an agent that falls for prompt injection does: it
# fetches the page its task names, and then obeys the instructions it finds
# in that page as if its user had given them. Its tools are the ones agents
# are given: fetch_url, read_file, http_post, download and run.
#
# Usage: agent.sh TASK_URL   (memory in /tmp/agent-memory)
task_url="$1"
memory=/tmp/agent-memory
: >"$memory"

say() { echo "[agent] $*"; }
# Each tool prints what it got, or the error the kernel gave it.
fetch_url() { wget -q -O - "$1" 2>&1; }
read_file() { out="$(cat "$1" 2>&1)" && printf '%s\n' "$out" >>"$memory"; status=$?; printf '%s' "$out"; return $status; }
http_post() { wget -q -O - --post-file "$memory" "$1" 2>&1; }
download() { wget -q -O "$2" "$1" 2>&1 && chmod +x "$2" 2>&1 && echo "saved $2"; }
run() { "$1" 2>&1; }

say "task: summarize $task_url for the team"
page="$(fetch_url "$task_url")" || { say "fetch_url failed: $page"; exit 1; }
say "fetch_url $task_url: $(printf '%s' "$page" | wc -c) bytes"
say "summary: $(printf '%s\n' "$page" | sed -n 's:.*<h1>\(.*\)</h1>.*:\1:p' | head -n1)"

# The flaw this example is about: text inside the page is taken as instructions.
printf '%s\n' "$page" | sed -n 's/.*AGENT INSTRUCTION: \(.*\) -->.*/\1/p' >/tmp/agent-instructions
while read -r tool first second; do
    say "the page says to: $tool $first $second"
    case "$tool" in
    read_file) out="$(read_file "$first")" ;;
    http_post) out="$(http_post "$first")" ;;
    download) out="$(download "$first" "$second")" ;;
    run) out="$(run "$first")" ;;
    *) out="(no such tool)" ;;
    esac
    status=$?
    [ $status -eq 0 ] && say "  -> done: $(printf '%s' "$out" | head -c 200 | tr '\n' ' ')" ||
        say "  -> FAILED: $(printf '%s' "$out" | tr '\n' ' ')"
done </tmp/agent-instructions
say "finished"
