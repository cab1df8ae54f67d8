#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# `cerberus dashboard` on this host, over plain HTTP (curl): where it listens, who it answers, what it
# serves and what it refuses. Its rows in a real browser, with denials the kernel made, are the browser
# tier's (tests/browser/). And `cerberus policy` refusing bad input.

load helpers

setup() {
    AUDIT="$BATS_TEST_TMPDIR/audit"
    mkdir -p "$AUDIT"
    PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    DASHBOARD=""
}

teardown() {
    [ -z "$DASHBOARD" ] || kill "$DASHBOARD" 2>/dev/null || true
    [ -z "$DASHBOARD" ] || wait "$DASHBOARD" 2>/dev/null || true
}

# start_dashboard ARG...: runs it in the background, waits until it answers.
start_dashboard() {
    "$CERBERUS" dashboard --audit-dir "$AUDIT" "$@" >"$BATS_TEST_TMPDIR/out" 2>&1 &
    DASHBOARD=$!
    for _ in $(seq 100); do
        grep -q "cerberus dashboard: http" "$BATS_TEST_TMPDIR/out" && return 0
        kill -0 "$DASHBOARD" 2>/dev/null || break
        sleep 0.05
    done
    cat "$BATS_TEST_TMPDIR/out"
    return 1
}

code() { # code CURL-ARGS...: the HTTP status
    curl -s -o /dev/null -w '%{http_code}' "$@"
}

@test "dashboard: loopback by default; serves the page, its script and the API to a loopback Host" {
    start_dashboard --listen "127.0.0.1:$PORT"
    grep -q "cerberus dashboard: http://127.0.0.1:$PORT/ (trails in $AUDIT)" "$BATS_TEST_TMPDIR/out"
    [ "$(code "http://127.0.0.1:$PORT/")" = 200 ]
    [ "$(code "http://127.0.0.1:$PORT/app.js")" = 200 ]
    [ "$(code -H "Host: localhost:$PORT" "http://127.0.0.1:$PORT/api/containers")" = 200 ]
    run curl -s "http://127.0.0.1:$PORT/api/containers"
    echo "$output" | jq -e 'type == "array"'
    # The rule lists the page sums a start record's policy up with, from the runtime's table.
    run curl -s "http://127.0.0.1:$PORT/api/rule-lists"
    echo "$output" | jq -e '.[0] == {"name": "allowed_hosts", "label": "hosts"} and (map(.name) | index("forbidden_caps"))'
    [ "$(code "http://127.0.0.1:$PORT/nothing-here")" = 404 ]
    [ "$(code "http://127.0.0.1:$PORT/api/trail?id=../../etc/passwd")" = 404 ]
}

@test "dashboard: a Host that is not loopback gets nothing (DNS rebinding), beside the control above" {
    start_dashboard --listen "127.0.0.1:$PORT"
    [ "$(code "http://127.0.0.1:$PORT/api/containers")" = 200 ]
    [ "$(code -H "Host: attacker.example:$PORT" "http://127.0.0.1:$PORT/api/containers")" = 403 ]
    [ "$(code -H "Host: attacker.example" "http://127.0.0.1:$PORT/")" = 403 ]
}

@test "dashboard: an answer to an ask needs JSON, the page's key or the token, and this origin; a cookie alone does not answer" {
    local token=dashboard-answer-token-0123456789
    start_dashboard --listen "127.0.0.1:$PORT" --token "$token"
    local url="http://127.0.0.1:$PORT/api/asks/0a1b2c3d/answer" cookie="Cookie: cerberus_dashboard=$token"
    local key
    key=$(curl -s -H "$cookie" "http://127.0.0.1:$PORT/api/session" | jq -r .answer_key)
    [ "${#key}" -eq 32 ]
    # The control: keyed JSON from this origin reaches the handler, which finds no such ask (409) or no holder (503).
    run code -X POST -H "$cookie" -H "X-Cerberus-Answer: $key" -H "Content-Type: application/json" \
        -H "Origin: http://127.0.0.1:$PORT" -d '{"answer":"once"}' "$url"
    [[ "$output" == 409 || "$output" == 503 ]]
    run code -X POST -H "Authorization: Bearer $token" -H "Content-Type: application/json" -d '{"answer":"once"}' "$url"
    [[ "$output" == 409 || "$output" == 503 ]]
    [ "$(code -X POST -H "$cookie" -H "Content-Type: application/json" -d '{"answer":"once"}' "$url")" = 403 ]
    [ "$(code -X POST -H "$cookie" -H "X-Cerberus-Answer: $key" -d 'answer=once' "$url")" = 415 ]
    [ "$(code -X POST -H "$cookie" -H "X-Cerberus-Answer: $key" -H "Content-Type: application/json" \
        -H "Origin: http://127.0.0.1:1" -d '{"answer":"once"}' "$url")" = 403 ]
    [ "$(code -X POST -H "$cookie" -H "X-Cerberus-Answer: $key" -H "Content-Type: application/json" \
        -H "Sec-Fetch-Site: same-site" -d '{"answer":"once"}' "$url")" = 403 ]
    [ "$(code -X POST -H "$cookie" -H "X-Cerberus-Answer: wrong" -H "Content-Type: application/json" -d '{}' "$url")" = 403 ]
    [ "$(code -X POST -H "X-Cerberus-Answer: $key" -H "Content-Type: application/json" -d '{"answer":"once"}' "$url")" = 401 ]
    [ "$(code -X POST -H "$cookie" -H "X-Cerberus-Answer: $key" -H "Content-Type: application/json" -d '{"answer":"maybe"}' "$url")" = 400 ]
    [ "$(code -X POST -H "$cookie" -H "X-Cerberus-Answer: $key" -H "Content-Type: application/json" -d 'nope' "$url")" = 400 ]
}

@test "dashboard: read-only, no CORS, a strict content security policy" {
    start_dashboard --listen "127.0.0.1:$PORT"
    [ "$(code -X POST "http://127.0.0.1:$PORT/api/containers")" = 405 ]
    [ "$(code -X DELETE "http://127.0.0.1:$PORT/api/containers")" = 405 ]
    run curl -s -D - -o /dev/null -H "Origin: http://attacker.example" "http://127.0.0.1:$PORT/api/containers"
    echo "$output"
    [[ "$output" != *"Access-Control-Allow-Origin"* ]]
    [[ "$output" == *"Content-Security-Policy: default-src 'none'; script-src 'self'"* ]]
    [[ "$output" == *"X-Content-Type-Options: nosniff"* ]]
}

@test "dashboard: any other address needs a token, and says so at start" {
    run "$CERBERUS" dashboard --listen "0.0.0.0:$PORT" --audit-dir "$AUDIT"
    [ "$status" -eq 1 ]
    [[ "$output" == *"--listen 0.0.0.0:$PORT is not a loopback address: give --token"* ]]
    run "$CERBERUS" dashboard --listen "0.0.0.0:$PORT" --token short
    [ "$status" -eq 1 ]
    [[ "$output" == *"--token: at least 16 characters"* ]]
    run "$CERBERUS" dashboard --listen "localhost:$PORT"
    [ "$status" -eq 1 ]
    [[ "$output" == *"--listen: not a numeric address"* ]]
    start_dashboard --listen "0.0.0.0:$PORT" --token 0123456789abcdef-token
    grep -q "is not a loopback address: every request needs the token" "$BATS_TEST_TMPDIR/out"
}

@test "dashboard: with a token, nothing without it; the token as a bearer or once in the address" {
    start_dashboard --listen "127.0.0.1:$PORT" --token 0123456789abcdef-token
    local url="http://127.0.0.1:$PORT"
    [ "$(code "$url/api/containers")" = 401 ]
    [ "$(code "$url/")" = 401 ]
    [ "$(code -H "Authorization: Bearer 0123456789abcdef-tokeN" "$url/api/containers")" = 401 ]
    [ "$(code -H "Authorization: Bearer 0123456789abcdef-token" "$url/api/containers")" = 200 ]
    [ "$(code "$url/?token=wrong")" = 401 ]
    run curl -s -D - -o /dev/null "$url/?token=0123456789abcdef-token"
    echo "$output"
    [[ "$output" == *"303"* && "$output" == *"Location: /"* ]]
    [[ "$output" == *"Set-Cookie: cerberus_dashboard=0123456789abcdef-token; HttpOnly; SameSite=Strict"* ]]
    [ "$(code -H "Cookie: cerberus_dashboard=0123456789abcdef-token" "$url/api/containers")" = 200 ]
}

@test "dashboard: a client the feed's window has left behind is told how many records it missed" {
    # 10,050 records before the dashboard starts: the event stream keeps the last 10,000.
    seq 1 10050 | awk '{ printf "{\"type\":\"denial\",\"id\":\"burst\",\"op\":\"connect\",\"n\":%d}\n", $1 }' \
        >"$AUDIT/burst.jsonl"
    start_dashboard --listen "127.0.0.1:$PORT"
    local url="http://127.0.0.1:$PORT/api/events"
    # The streams below end at curl's --max-time: first wait until the dashboard has read the whole trail, which a
    # loaded host can take seconds over.
    for _ in $(seq 50); do
        curl -sN --max-time 0.5 "$url?after=10049" | grep -q '^id: 10050$' && break
    done
    run curl -sN --max-time 2 "$url?after=0"
    [[ "$output" == "event: skipped"$'\n'"data: {\"skipped\":50}"$'\n\n'"id: 51"$'\n'* ]]
    [ "$(grep -c '^id: ' <<<"$output")" = 10000 ]
    # Control: a client within the window gets its records and no such event.
    run curl -sN --max-time 2 "$url?after=10040"
    [[ "$output" == "id: 10041"$'\n'* ]]
    [[ "$output" != *"event: skipped"* ]]
    [ "$(grep -c '^id: ' <<<"$output")" = 10 ]
}

@test "dashboard: stops on SIGTERM" {
    start_dashboard --listen "127.0.0.1:$PORT"
    kill -TERM "$DASHBOARD"
    for _ in $(seq 50); do kill -0 "$DASHBOARD" 2>/dev/null || break; sleep 0.1; done
    run ! kill -0 "$DASHBOARD"
    wait "$DASHBOARD"
    DASHBOARD=""
}

@test "policy learn and check: bad input is refused, naming it" {
    run "$CERBERUS" policy learn --trail "$BATS_TEST_TMPDIR/none.jsonl"
    [ "$status" -eq 1 ]
    [[ "$output" == *"$BATS_TEST_TMPDIR/none.jsonl"*"no such file or directory"* ]]
    run "$CERBERUS" policy learn
    [ "$status" -eq 1 ]
    [[ "$output" == *"usage: cerberus policy learn"* ]]
    run "$CERBERUS" policy learn --trail x some-id
    [ "$status" -eq 1 ]
    [[ "$output" == *"usage"* ]]
    run "$CERBERUS" policy learn ../escape
    [ "$status" -eq 1 ]
    # A trail without a start record (an older cerberus wrote it) needs --base.
    echo '{"type":"denial","id":"x","op":"connect","target":"203.0.113.9:443","verdict":"audit","rule":"not in allowed_hosts"}' \
        >"$BATS_TEST_TMPDIR/old.jsonl"
    run "$CERBERUS" policy learn --trail "$BATS_TEST_TMPDIR/old.jsonl"
    [ "$status" -eq 1 ]
    [[ "$output" == *"no start record"*"--base POLICY"* ]]
    echo '{"allowed_hosts": []}' >"$BATS_TEST_TMPDIR/base.json"
    run "$CERBERUS" policy learn --base "$BATS_TEST_TMPDIR/base.json" --trail "$BATS_TEST_TMPDIR/old.jsonl"
    [ "$status" -eq 0 ]
    echo "$output" | jq -e '.allowed_hosts == ["203.0.113.9:443"] and ._learned.base == "'"$BATS_TEST_TMPDIR/base.json"'"'
    echo '{"allowed_hosts": ["nonsense/99"]}' >"$BATS_TEST_TMPDIR/bad.json"
    run "$CERBERUS" policy check "$BATS_TEST_TMPDIR/bad.json" --trail "$BATS_TEST_TMPDIR/old.jsonl"
    [ "$status" -eq 1 ]
    [[ "$output" == *"policy file $BATS_TEST_TMPDIR/bad.json: policy.allowed_hosts[0]"* ]]
    run "$CERBERUS" policy check "$BATS_TEST_TMPDIR/base.json" --trail "$BATS_TEST_TMPDIR/old.jsonl"
    [ "$status" -eq 1 ]
    [[ "$output" == *"connect 203.0.113.9:443 DENIED (not in allowed_hosts)"* ]]
    echo '{"allowed_hosts": ["203.0.113.0/24:443"]}' >"$BATS_TEST_TMPDIR/wide.json"
    run "$CERBERUS" policy check "$BATS_TEST_TMPDIR/wide.json" --trail "$BATS_TEST_TMPDIR/old.jsonl"
    [ "$status" -eq 0 ]
    [[ "$output" == *"0 kinds of recorded action would be denied"* ]]
}
