#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Asks (policy.commands.<tool>.ask): the broker holds a call an ask pattern
# matches, the shim waiting, until root answers with `cerberus ask` or
# ask_timeout passes; --for and --always grant the container that exact call.
# Every call here is the host's env running the host's echo (/usr/bin/env in
# the container is the shim). Each denial has an allowed control beside it.

load helpers
load broker_helpers
load ask_helpers

setup() {
    [ "$(id -u)" -eq 0 ] || skip "needs root"
    [ -x "${CERBERUS_SHIM:-}" ] || skip "needs CERBERUS_SHIM (tests/integration/run.sh sets it)"
    setup_bundle
    AUDIT="$BATS_TEST_TMPDIR/audit"
    OUT="$BATS_TEST_TMPDIR/out"
}

teardown() {
    cerb delete --force "$ID" >/dev/null 2>&1 || true
    [ -z "${DASHBOARD:-}" ] || kill "$DASHBOARD" 2>/dev/null || true
}

# start_policed SCRIPT: the container runs sh -c SCRIPT detached, its output in $OUT.
start_policed() {
    set_args sh -c "$1"
    cerb --audit-dir "$AUDIT" run -d -b "$BUNDLE" "$ID" </dev/null >"$OUT" 2>&1
}

# no_pending_ask: this container has no pending ask.
no_pending_ask() {
    [ "$(pending_asks)" -eq 0 ]
}

# wait_out TEXT: until the container's output holds TEXT (10 s).
wait_out() {
    for _ in $(seq 100); do grep -qF -- "$1" "$OUT" && return 0; sleep 0.1; done
    cat "$OUT"
    return 1
}

@test "ask: allowed once from the CLI while the shim waits, its output arrives; the same call asks again" {
    with_policy '{"commands": {"env": {"allow": ["true"], "ask": ["echo *"]}}}'
    start_policed '/usr/bin/env echo asked-call; echo "first=$?"; /usr/bin/env echo asked-call; echo "second=$?"; sleep 60'
    local id
    id=$(wait_ask)
    run "$CERBERUS" ask list
    echo "$output"
    [[ "$output" == *"$id"*"$ID"*"env echo asked-call"* ]]
    run ! grep -q first= "$OUT" # held
    run "$CERBERUS" ask allow "$id"
    [ "$status" -eq 0 ]
    [ "$output" = "ask $id allowed once by uid 0" ]
    wait_out first=0
    grep -qx asked-call "$OUT"
    local again
    again=$(wait_ask "$id") # the control: once is once
    run "$CERBERUS" ask deny "$again"
    [ "$status" -eq 0 ]
    wait_out second=126
    grep -q "denied by the policy (ask $again denied by uid 0)" "$OUT"
    [ "$(grep -c asked-call "$OUT")" -eq 1 ]
    run trail_text
    echo "$output"
    [[ "$output" == *"ask $id env echo asked-call ASKED (commands.env.ask[0] \"echo *\"), pid "* ]]
    [[ "$output" == *"command env echo asked-call ALLOWED (commands.env.ask[0] \"echo *\"; ask $id allowed once by uid 0), exit 0"* ]]
    [[ "$output" == *"command env echo asked-call DENIED (commands.env.ask[0] \"echo *\"; ask $again denied by uid 0)"* ]]
    jq -se 'map(select(.type == "command")) | map([.backend, .verdict, .answer, .answered_by])
        == [["ask", "allowed", "once", 0], ["ask", "denied", "deny", 0]]' "$AUDIT/$ID.jsonl"
}

@test "ask: unanswered within ask_timeout, the call is denied with the reason; an allowed call is not held" {
    with_policy '{"commands": {"env": {"allow": ["true"], "ask": ["echo *"], "ask_timeout": "2s"}}}'
    run_policed sh -c '/usr/bin/env true; echo "allowed=$?"; /usr/bin/env echo late; echo "asked=$?"'
    [[ "$output" == *allowed=0* ]]
    [[ "$output" == *asked=126* ]]
    [[ "$output" == *'timed out after 2s unanswered'* ]]
    [[ " ${lines[*]} " != *" late "* ]] # the tool never ran
    jq -se 'map(select(.type == "command")) | map([.verdict, .answer // null])
        == [["allowed", null], ["denied", "timeout"]]' "$AUDIT/$ID.jsonl"
    no_pending_ask
}

@test "ask: --for 2s grants the exact call: it runs unasked, a neighbour asks, and after expiry it asks again" {
    with_policy '{"commands": {"env": {"ask": ["echo *"], "ask_timeout": "20s"}}}'
    start_policed '/usr/bin/env echo granted; echo "a=$?"; /usr/bin/env echo granted; echo "b=$?"; /usr/bin/env echo other; echo "n=$?"; sleep 3; /usr/bin/env echo granted; echo "c=$?"; sleep 60'
    local id
    id=$(wait_ask)
    run "$CERBERUS" ask allow "$id" --for 2s
    [ "$status" -eq 0 ]
    [[ "$output" == "ask $id allowed for 2s by uid 0, grant g-"* ]]
    local grant=${output##*grant }
    run "$CERBERUS" ask grants "$ID"
    echo "$output"
    [[ "$output" == *"$grant"*"$ID"*"env echo granted"* ]]
    wait_out b=0 # the grant: no ask
    local neighbour
    neighbour=$(wait_ask "$id") # the control: another call asks
    "$CERBERUS" ask deny "$neighbour"
    wait_out n=126
    local after
    after=$(wait_ask "$neighbour") # expired
    "$CERBERUS" ask deny "$after"
    wait_out c=126
    run "$CERBERUS" ask grants "$ID" --format json
    [ "$output" = "[]" ]
    jq -se --arg g "grant $grant" 'map(select(.type == "command")) | map(.answer)
        == ["for 2s", $g, "deny", "deny"]' "$AUDIT/$ID.jsonl"
}

@test "ask: two answers race, one wins and the other is told who answered; grants go with the container" {
    with_policy '{"commands": {"env": {"ask": ["echo *"]}}}'
    start_policed '/usr/bin/env echo raced; echo "r=$?"; sleep 60'
    local id
    id=$(wait_ask)
    "$CERBERUS" ask allow "$id" --always >"$BATS_TEST_TMPDIR/a1" 2>&1 &
    local first=$!
    "$CERBERUS" ask deny "$id" >"$BATS_TEST_TMPDIR/a2" 2>&1 &
    local second=$!
    local s1=0 s2=0
    wait "$first" || s1=$?
    wait "$second" || s2=$?
    cat "$BATS_TEST_TMPDIR/a1" "$BATS_TEST_TMPDIR/a2"
    [ $((s1 == 0)) -ne $((s2 == 0)) ] # exactly one won
    grep -q "ask $id was answered already: " "$BATS_TEST_TMPDIR/a1" "$BATS_TEST_TMPDIR/a2"
    if [ "$s1" -eq 0 ]; then
        wait_out r=0
        run "$CERBERUS" ask grants "$ID" --format json
        [ "$(echo "$output" | jq 'length')" -eq 1 ]
        grep -q "was answered already: allowed always by uid 0, grant g-" "$BATS_TEST_TMPDIR/a2"
        cerb delete --force "$ID"
        run "$CERBERUS" ask grants "$ID" --format json
        [ "$output" = "[]" ] # gone with its container
    else
        wait_out r=126
        grep -q "was answered already: denied by uid 0" "$BATS_TEST_TMPDIR/a1"
    fi
}

@test "ask: --always grants survive a broker restart and go when revoked" {
    with_policy '{"commands": {"env": {"ask": ["echo *"], "ask_timeout": "20s"}}}'
    start_policed '/usr/bin/env echo kept; echo "k=$?"; sleep 60'
    local id
    id=$(wait_ask)
    run "$CERBERUS" ask allow "$id" --always
    local grant=${output##*grant }
    wait_out k=0
    kill -9 "$(broker_pid)"
    cerb state "$ID" >/dev/null # starts a broker for the registrations left
    run "$CERBERUS" ask grants "$ID"
    [[ "$output" == *"$grant"*always*"env echo kept"* ]]
    run cerb exec "$ID" /usr/bin/env echo kept # granted: runs unasked
    [ "$status" -eq 0 ]
    [ "$output" = kept ]
    run "$CERBERUS" ask revoke "$grant"
    [ "$status" -eq 0 ]
    [ "$output" = "grant $grant revoked" ]
    run "$CERBERUS" ask grants "$ID" --format json
    [ "$output" = "[]" ]
}

@test "ask: a broker restart fails the held call, recorded as denied; nothing hangs" {
    with_policy '{"commands": {"env": {"ask": ["echo *"]}}}'
    start_policed '/usr/bin/env echo held; echo "h=$?"; sleep 60'
    local id
    id=$(wait_ask)
    kill -9 "$(broker_pid)"
    wait_out h=125
    grep -q 'the command broker ended without answering' "$OUT"
    cerb state "$ID" >/dev/null # a new broker: the ask a dead one held is recorded
    for _ in $(seq 50); do grep -q "was pending when the command broker ended" "$AUDIT/$ID.jsonl" && break; sleep 0.1; done
    jq -se --arg id "$id" 'map(select(.type == "command")) | .[-1] | .verdict == "denied" and .answer == "broker ended"
        and (.rule | contains("ask " + $id + " was pending"))' "$AUDIT/$ID.jsonl"
    no_pending_ask
}

@test "ask: bad input gets a clear error and a non-zero exit" {
    with_policy '{"commands": {"env": {"ask": ["echo *"]}}}'
    start_policed '/usr/bin/env echo bad; sleep 60'
    local id
    id=$(wait_ask)
    run "$CERBERUS" ask allow 00000000
    [ "$status" -ne 0 ]
    [[ "$output" == *"no pending ask 00000000"* ]]
    run "$CERBERUS" ask allow "$id" --for 10x
    [ "$status" -ne 0 ]
    [[ "$output" == *'"10x" is not a duration'* ]]
    run "$CERBERUS" ask allow "$id" --once --always
    [ "$status" -ne 0 ]
    [[ "$output" == *"one of --once, --for DURATION, --always"* ]]
    run "$CERBERUS" ask allow '../x'
    [ "$status" -ne 0 ]
    [[ "$output" == *'"../x" is not an ask id'* ]]
    run "$CERBERUS" ask revoke g-00000000
    [ "$status" -ne 0 ]
    [[ "$output" == *"no grant g-00000000"* ]]
    run "$CERBERUS" ask list --format yaml
    [ "$status" -ne 0 ]
    run "$CERBERUS" ask allow "$id" # the control: the ask was left pending by all of that
    [ "$status" -eq 0 ]
    wait_out bad
}

@test "ask: a bad ask_timeout is refused at create, naming the field and the bundle" {
    with_policy '{"commands": {"env": {"ask": ["echo *"], "ask_timeout": "soon"}}}'
    run_policed true
    [ "$status" -ne 0 ]
    [[ "$output" == *config.json* ]]
    [[ "$output" == *'policy.commands.env.ask_timeout: "soon": a duration of at most 24h'* ]]
    with_policy '{"commands": {"env": {"ask": ["echo *"], "ask_timeout": "5s"}}}' # control
    run_policed true
    [ "$status" -eq 0 ]
}

@test "ask: the dashboard shows a pending ask and answers it for 10 minutes; the ask goes, the grant shows until when" {
    command -v curl >/dev/null || skip "needs curl"
    with_policy '{"commands": {"env": {"ask": ["echo *"]}}}'
    start_policed '/usr/bin/env echo shown; echo "s=$?"; sleep 60'
    local id port
    id=$(wait_ask)
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$CERBERUS" dashboard --audit-dir "$AUDIT" --listen "127.0.0.1:$port" >"$BATS_TEST_TMPDIR/dashboard" 2>&1 &
    DASHBOARD=$!
    for _ in $(seq 100); do grep -q "cerberus dashboard: http" "$BATS_TEST_TMPDIR/dashboard" && break; sleep 0.05; done
    run curl -s "http://127.0.0.1:$port/api/containers"
    echo "$output" | jq -e --arg c "$ID" --arg id "$id" 'map(select(.id == $c)) | .[0].asks
        | length == 1 and .[0].id == $id and .[0].tool == "env" and .[0].args == ["echo", "shown"]'
    local key
    key=$(curl -s "http://127.0.0.1:$port/api/session" | jq -r .answer_key)
    run curl -s -X POST -H "Content-Type: application/json" -d '{"answer":"once"}' \
        "http://127.0.0.1:$port/api/asks/$id/answer"
    [[ "$output" == *"a cookie alone does not answer"* ]] # no key: refused, still held
    run ! grep -q s= "$OUT"
    run curl -s "http://127.0.0.1:$port/api/containers"
    echo "$output" | jq -e --arg c "$ID" 'map(select(.id == $c)) | .[0].grants == []' # nothing granted yet
    run curl -s -X POST -H "Content-Type: application/json" -H "X-Cerberus-Answer: $key" -d '{"answer":"for 10m"}' \
        "http://127.0.0.1:$port/api/asks/$id/answer"
    echo "$output" | jq -e --arg id "$id" '.done | startswith("ask \($id) allowed for 10m by uid 0, grant ")'
    wait_out s=0
    run curl -s "http://127.0.0.1:$port/api/containers"
    echo "$output" | jq -e --arg c "$ID" 'map(select(.id == $c)) | .[0].asks == []' # the control
    echo "$output" | jq -e --arg c "$ID" 'map(select(.id == $c)) | .[0].grants
        | length == 1 and .[0].tool == "env" and .[0].args == ["echo", "shown"] and (.[0].expires | test("^20[0-9-]+T"))'
}
