#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Audit mode at the egress proxy, and learn mode over its records, run by egress.bats like egress.sh (on the
# stage egress_setup.bash builds): a container whose policy (the bats file's allowed_http) is in audit mode
# gets the server's answer to requests allowed_http does not allow, each recorded with verdict audit;
# `cerberus policy learn` turns that trail into allowed_http entries; a container in enforce mode under the
# learned policy gets 200 for what was learned and 403 for the rest. Each check prints "ok ..." or
# "FAIL ..."; the exit status counts the failures.
set -uo pipefail
: "${CERBERUS:?}" "${ROOT:?}" "${BUNDLE:?}" "${ID:?}" "${WORK:?}" "${HELPERS:?}"
. "$(dirname "$0")/script_checks.bash"
. "$(dirname "$0")/egress_setup.bash"

egress_script_stage
cp "$HELPERS/websocket_client.py" "$BUNDLE/rootfs/etc/websocket_client.py"
trail="$WORK/audit/$ID.jsonl"
run_in() { cerb exec "$ID" "$@"; }
code_of() { run_in curl -sS -m 20 -o /dev/null -w '%{http_code}' "$@"; }
with_policy() {
    jq --arg policy "$1" '.annotations["io.cerberus.policy"] = $policy' "$BUNDLE/config.json" >"$WORK/config.json" &&
        mv "$WORK/config.json" "$BUNDLE/config.json"
}
# run_container: created and started with the bundle's policy, its servers in its network namespace.
run_container() {
    cerb create -b "$BUNDLE" "$ID" || return 1
    egress_servers "$(cerb state "$ID" | jq -r .pid)"
    cerb start "$ID"
}
# end_container: deleted, its servers gone with it.
end_container() {
    cerb delete --force "$ID"
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
    wait 2>/dev/null
    pids=()
}

with_policy "$(jq -r '.annotations["io.cerberus.policy"]' "$BUNDLE/config.json" | jq -c '.mode = "audit"')"
expect "create and start in audit mode, with allowed_http" run_container
expect "audit: a POST allowed_http does not allow gets the server's answer" \
    output_has 'method=POST path=/repos/acme/x' \
    run_in curl --http1.1 -sS -m 20 -X POST -d a=1 https://allowed.example/repos/acme/x
expect "audit: and over HTTP/2 as well" \
    output_has 'method=POST path=/repos/acme/x .* version=2' \
    bash -c "$CERBERUS --root $ROOT exec $ID curl --http2 -sS -m 20 -w ' version=%{http_version}' -X POST -d a=1 \
        https://allowed.example/repos/acme/x | tr '\n' ' '"
expect "control: an allowed GET passes" \
    output_has 'method=GET path=/repos/acme/x' run_in curl -sS -m 20 https://allowed.example/repos/acme/x
expect "audit: three GETs of one parent no entry allows get 200" \
    [ "$(for name in a b c; do code_of "https://allowed.example/issues/$name"; done)" = 200200200 ]
expect "audit: a path no entry can spell gets 200" [ "$(code_of 'https://allowed.example/files/a%20b')" = 200 ]
websocket() { run_in python3 /etc/websocket_client.py allowed.example "$@" 2>&1 | tr '\n' ' '; }
expect "audit: a WebSocket upgrade no wss entry allows is switched" \
    output_has 'status=101 echo=hello' websocket /repos/acme/socket hello
for _ in $(seq 30); do grep -q '"url":"wss://allowed.example/repos' "$trail" 2>/dev/null && break; sleep 0.1; done
expect "the trail has the POST's audit record, with the rule enforce mode refuses it by and the server's status" \
    has_record '"method":"POST"' '"url":"https://allowed.example/repos/acme/x"' '"verdict":"audit"' \
    '"rule":"not in allowed_http"' '"status":200'
expect "and the upgrade's, status 101" \
    has_record '"url":"wss://allowed.example/repos/acme/socket"' '"verdict":"audit"' '"status":101'
expect "control: the allowed GET's record is allowed" \
    has_record '"method":"GET"' '"url":"https://allowed.example/repos/acme/x"' '"verdict":"allowed"'
expect "and it has no audit record" \
    no_record '"method":"GET"' '"url":"https://allowed.example/repos/acme/x"' '"verdict":"audit"'
end_container

"$CERBERUS" policy learn --trail "$trail" >"$WORK/learned.json"
expect "learn: the requests as entries, three siblings as their parent's glob" \
    jq -e '._learned.added.allowed_http == ["GET https://allowed.example/issues/*",
        "GET wss://allowed.example/repos/acme/socket", "POST https://allowed.example/repos/acme/x"]' \
    "$WORK/learned.json"
expect "learn: the path no entry spells stays denied" \
    jq -e '._learned.still_denied | map(.target) | index("GET https://allowed.example/files/a%20b") != null' \
    "$WORK/learned.json"

with_policy "$(jq -c . "$WORK/learned.json")"
expect "create and start in enforce mode with the learned policy, as learn wrote it" run_container
expect "learned: the POST passes" [ "$(code_of -X POST -d a=1 https://allowed.example/repos/acme/x)" = 200 ]
expect "learned: the glob allows a fourth sibling" [ "$(code_of https://allowed.example/issues/d)" = 200 ]
expect "a POST never made gets 403" [ "$(code_of -X POST -d a=1 https://allowed.example/repos/acme/never)" = 403 ]
expect "control: the request audit mode let through and learn left denied gets 403 in enforce mode" \
    [ "$(code_of 'https://allowed.example/files/a%20b')" = 403 ]
end_container
exit "$failures"
