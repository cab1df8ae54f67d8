#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The egress proxy (allowed_http) with real clients against local HTTPS
# servers, run by egress.bats in a mount namespace of its own (unshare -m), on
# the stage egress_setup.bash builds, with a credential for allowed.example in
# /etc/cerberus/egress.json (its secret in a host file; the container holds a
# placeholder). Each check prints "ok ..." or "FAIL ..."; the exit status
# counts the failures.
set -uo pipefail
: "${CERBERUS:?}" "${ROOT:?}" "${BUNDLE:?}" "${ID:?}" "${WORK:?}" "${HELPERS:?}"
. "$(dirname "$0")/script_checks.bash"
. "$(dirname "$0")/egress_setup.bash"

egress_script_stage
secret="s3cr3t-$RANDOM$RANDOM-token"
placeholder=cerberus-credential-allowed
echo "$secret" > "$WORK/allowed.token"
cat > /etc/cerberus/egress.json <<EOF
{"upstream_ca": "$WORK/ca.pem",
 "credentials": {"allowed": {"host": "allowed.example", "header": "Authorization", "value": "Bearer {secret}",
                             "secret_file": "$WORK/allowed.token", "env": "ALLOWED_TOKEN"}}}
EOF
cp "$WORK/ca.pem" "$BUNDLE/rootfs/etc/upstream-ca.pem" # for the client that pins its own CA
cp "$HELPERS/websocket_client.py" "$BUNDLE/rootfs/etc/websocket_client.py"
expect "create, with allowed_http" cerb create -b "$BUNDLE" "$ID"
pid=$(cerb state "$ID" | jq -r .pid)
in_ns() { nsenter --net="/proc/$pid/ns/net" "$@"; }
# make_git_repository: $WORK/git/project.git, bare, for git's dumb HTTP protocol (the servers serve
# $WORK/git at /<any>/git/), holding README "made for the egress test".
make_git_repository() {
    local source=$WORK/git-source
    git init -q "$source" && echo "made for the egress test" >"$source/README" &&
        git -C "$source" add README && git -C "$source" -c user.name=test -c user.email=test@example.org \
        commit -q -m README &&
        git clone -q --bare "$source" "$WORK/git/project.git" && git -C "$WORK/git/project.git" update-server-info
}
make_git_repository
egress_servers "$pid" "$WORK/git"
cerb start "$ID"
trail="$WORK/audit/$ID.jsonl"
run_in() { cerb exec "$ID" "$@"; }
# curl offers HTTP/2 first: the checks before the HTTP/2 section below pin HTTP/1.1, as the proxy spoke it alone.
code_of() { run_in curl --http1.1 -sS -m 20 -o /dev/null -w '%{http_code}' "$@"; }

expect "control: the server answers from the container's namespace, without the proxy" \
    output_has 'method=GET' in_ns curl -sS -m 20 --cacert "$WORK/ca.pem" --resolve allowed.example:443:203.0.113.7 \
    https://allowed.example/repos/acme/x
expect "an allowed GET through the proxy: 200, with the server's answer" \
    output_has 'method=GET path=/repos/acme/x host=allowed.example' run_in curl --http1.1 -sS -m 20 https://allowed.example/repos/acme/x
expect "a POST the rules do not allow: 403" [ "$(code_of -X POST -d a=1 https://allowed.example/repos/acme/x)" = 403 ]
expect "its body names what refused it and what is allowed" \
    output_has 'GET https://allowed.example/repos/\*' run_in curl --http1.1 -sS -m 20 -X POST -d a=1 https://allowed.example/repos/acme/x
expect "control: the allowed POST passes, with a 5 MB body" \
    output_has 'method=POST path=/upload .* received=5000000' \
    bash -c "head -c 5000000 /dev/zero | $CERBERUS --root $ROOT exec $ID curl --http1.1 -sS -m 20 --data-binary @- https://allowed.example/upload"
expect "a 20 MB download passes whole" \
    [ "$(run_in curl --http1.1 -sS -m 20 -o /dev/null -w '%{size_download}' 'https://allowed.example/repos/big?n=20000000')" = 20000000 ]
expect "python3's urllib, through the same trust store" \
    output_has 'method=GET path=/repos/acme/py' run_in python3 -c \
    'import urllib.request; print(urllib.request.urlopen("https://allowed.example/repos/acme/py", timeout=20).read().decode())'
expect "control: git clones the repository at a path allowed_http does not list, without the proxy" \
    in_ns timeout 60 env GIT_SSL_CAINFO="$WORK/ca.pem" git -c http.curloptResolve=allowed.example:443:203.0.113.7 \
    clone -q https://allowed.example/private/git/project.git "$WORK/direct-clone"
expect "git clone over HTTPS through the proxy, from an allowed path" \
    output_has 'made for the egress test' run_in timeout 60 sh -c \
    'git clone -q https://allowed.example/repos/git/project.git /dev/shm/clone && cat /dev/shm/clone/README'
expect "git clone from the path not allowed: 403" output_has 'returned error: 403' \
    run_in timeout 60 git clone -q https://allowed.example/private/git/project.git /dev/shm/denied
wget_in() { run_in wget -T 20 --tries=1 "$@"; }
expect "wget, an allowed GET: its body" \
    output_has 'method=GET path=/repos/acme/wget' wget_in -q -O- https://allowed.example/repos/acme/wget
expect "wget, a POST the rules do not allow: 403" \
    output_has 'ERROR 403' wget_in -O- --method=POST --body-data=a=1 https://allowed.example/repos/acme/wget
expect "control: wget's allowed POST passes, with its body" \
    output_has 'method=POST path=/upload .* received=3' \
    wget_in -q -O- --method=POST --body-data=a=1 https://allowed.example/upload
expect "control: second.example, allowed and admitted for its own address" \
    output_has 'host=second.example' run_in curl --http1.1 -sS -m 20 https://second.example/any
expect "fronting: second.example's name on allowed.example's address is refused" \
    bash -c "! $CERBERUS --root $ROOT exec $ID curl --http1.1 -sS -m 20 --connect-to second.example:443:203.0.113.7:443 https://second.example/any"
expect "a name allowed_http does not list, on an admitted address, is refused" \
    bash -c "! $CERBERUS --root $ROOT exec $ID curl --http1.1 -sS -m 20 --connect-to other.example:443:203.0.113.7:443 https://other.example/"
expect "a client pinning another CA fails closed" \
    bash -c "! $CERBERUS --root $ROOT exec $ID curl --http1.1 -sS -m 20 --cacert /etc/upstream-ca.pem https://allowed.example/repos/acme/x"

# The credential: the agent holds the placeholder; the proxy sets the secret on allowed.example's requests
# alone, and the server's echo of it (body and header) comes back masked.
masked=$(printf '%*s' ${#secret} '' | sed 's/ /\\*/g') # as a pattern: the secret's length in '*'s
expect "the agent's variable holds the placeholder" [ "$(run_in sh -c 'echo $ALLOWED_TOKEN')" = "$placeholder" ]
expect "control: straight to the server, its echo shows what it got" \
    output_has "authorization=Bearer $placeholder" in_ns curl -sS -m 20 --cacert "$WORK/ca.pem" \
    --resolve allowed.example:443:203.0.113.7 -H "Authorization: Bearer $placeholder" https://allowed.example/repos/acme/x
expect "through the proxy, the server got the secret (its echo masked to the secret's length)" \
    output_has "authorization=Bearer $masked received" \
    run_in sh -c 'curl --http1.1 -sS -m 20 -H "Authorization: Bearer $ALLOWED_TOKEN" https://allowed.example/repos/acme/x'
expect "and without the agent sending the header at all" \
    output_has "authorization=Bearer $masked received" run_in curl --http1.1 -sS -m 20 https://allowed.example/repos/acme/y
expect "the echoing response header is masked too" \
    output_has "X-Echo-Authorization: Bearer $masked" \
    run_in curl --http1.1 -sS -m 20 -D - -o /dev/null https://allowed.example/repos/acme/x
# encoded_echo_masked URL: the server's base64 echo of the header carries no base64 of the secret: a run of '*'.
encoded_echo_masked() {
    local out
    out=$(run_in curl --http1.1 -sS -m 20 "$1" 2>&1)
    grep -q 'base64=[A-Za-z0-9+/]*\*\{16,\}' <<<"$out" && ! grep -qF "$(printf 'Bearer %s' "$secret" | base64 -w0)" <<<"$out" &&
        return
    echo "said: $out"
    return 1
}
expect "control: another host's base64 echo of the header shows the placeholder's encoding, unmasked" \
    output_has "base64=$(printf 'Bearer %s' "$placeholder" | base64 -w0) " \
    run_in sh -c 'curl --http1.1 -sS -m 20 -H "Authorization: Bearer $ALLOWED_TOKEN" https://second.example/any/encoded'
expect "the server's base64 echo of the header with the secret comes back masked" \
    encoded_echo_masked https://allowed.example/repos/acme/encoded
expect "another allowed host gets the placeholder, never the secret" \
    output_has "authorization=Bearer $placeholder" \
    run_in sh -c 'curl --http1.1 -sS -m 20 -H "Authorization: Bearer $ALLOWED_TOKEN" https://second.example/any'
expect "control: an encoded answer from the host without a credential passes" \
    [ "$(code_of --compressed https://second.example/any/gzip)" = 200 ]
expect "an encoded answer to a request carrying the credential is refused (502), its body unreadable to the scrub" \
    [ "$(code_of --compressed https://allowed.example/repos/acme/gzip)" = 502 ]
expect "but the same answer's header to HEAD, with no body to read, passes" \
    [ "$(code_of --compressed -I https://allowed.example/repos/acme/gzip)" = 200 ]
expect "the secret is nowhere the agent reads: the responses, its processes' environments, its /etc" \
    bash -c "! { $CERBERUS --root $ROOT exec $ID sh -c 'cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline; grep -rs . /etc' 2>/dev/null
                 $CERBERUS --root $ROOT exec $ID curl --http1.1 -sS -m 20 -D - https://allowed.example/repos/acme/x; } | grep -qF '$secret'"
for _ in $(seq 30); do grep -q '"credential":"allowed"' "$trail" 2>/dev/null && break; sleep 0.1; done
expect "the trail names the credential the proxy set" \
    bash -c "grep '\"type\":\"http\"' '$trail' | grep '\"url\":\"https://allowed.example/repos/acme/y\"' | grep -q '\"credential\":\"allowed\"'"
expect "control: and names none for the other host" \
    bash -c "grep '\"type\":\"http\"' '$trail' | grep '\"server_name\":\"second.example\"' | grep '\"verdict\":\"allowed\"' | grep -vq '\"credential\"'"
expect "and never the secret" bash -c "! grep -qF '$secret' '$trail'"

for _ in $(seq 30); do grep -q '"type":"http".*"POST"' "$trail" 2>/dev/null && break; sleep 0.1; done
expect "the trail has the POST's http denied record" \
    bash -c "grep '\"type\":\"http\"' '$trail' | grep '\"method\":\"POST\"' | grep -q '\"verdict\":\"denied\"'"
expect "control: and the GET's allowed one" \
    bash -c "grep '\"type\":\"http\"' '$trail' | grep '\"method\":\"GET\"' | grep -q '\"verdict\":\"allowed\"'"
expect "and the fronting attempt's refusal" \
    bash -c "grep '\"type\":\"http\"' '$trail' | grep '\"server_name\":\"second.example\"' | grep -q '\"verdict\":\"denied\"'"
expect "cerberus events --denials shows the refused POST" \
    output_has 'http POST https://allowed.example/repos/acme/x' cerb events --denials "$ID"

# HTTP/2: curl offers h2 and the proxy takes it; each check prints curl's %{http_version}, so a connection that
# fell back to HTTP/1.1 fails it. The servers speak HTTP/1.1 only: the proxy sends each stream on as a request.
h2() { run_in curl --http2 -sS -m 20 -w ' version=%{http_version} code=%{http_code}' "$@" 2>&1 | tr '\n' ' '; }
expect "HTTP/2: an allowed GET gets 200 and the server's answer" \
    output_has 'method=GET path=/repos/acme/h2?q=1 host=allowed.example .* version=2 code=200' \
    h2 'https://allowed.example/repos/acme/h2?q=1'
expect "HTTP/2: a POST the rules do not allow gets 403, naming the rule and what is allowed" \
    output_has \
    'h2-denied is not in allowed_http.*GET https://allowed.example/repos/\*.* version=2 code=403' \
    h2 -X POST -d a=1 https://allowed.example/repos/acme/h2-denied
expect "control: the same POST over HTTP/1.1 gets the same 403" \
    output_has 'version=1.1 code=403' run_in curl --http1.1 -sS -m 20 -o /dev/null \
    -w 'version=%{http_version} code=%{http_code}' -X POST -d a=1 https://allowed.example/repos/acme/h2-denied
expect "control: the allowed POST passes over HTTP/2, with its body" \
    output_has "path=/upload .* received=3 sha256=$(printf a=1 | sha256sum | cut -d' ' -f1) .*version=2 code=200" \
    h2 -d a=1 https://allowed.example/upload
expect "HTTP/2: HEAD gets the header alone" output_has 'content-length: [0-9]*.*version=2 code=200' \
    h2 -I https://allowed.example/repos/acme/h2
expect "HTTP/2: a Host other than :authority is refused as fronting" \
    output_has 'the Host header names second.example.* version=2 code=403' \
    h2 -H 'Host: second.example' https://allowed.example/repos/acme/h2
expect "HTTP/2: the proxy swaps the placeholder for the secret, the server's echo masked in body and header" \
    output_has "x-echo-authorization: Bearer $masked.*authorization=Bearer $masked received.* version=2 code=200" \
    h2 -D - -H "Authorization: Bearer $placeholder" https://allowed.example/repos/acme/h2
expect "control: over HTTP/2 another allowed host gets the placeholder" \
    output_has "authorization=Bearer $placeholder received.* version=2 code=200" \
    h2 -H "Authorization: Bearer $placeholder" https://second.example/any
# streamed_first VERSION: over HTTP/VERSION, .../drip's first part has reached curl while the server holds the
# rest back (waited for up to 10 s), and the rest comes once the server sends it. From second.example: for a
# host with a credential the scrub holds a response's last bytes back until it knows they are not the secret's.
streamed_first() {
    local curl_pid seen _
    rm -f "$WORK/git/release-drip"
    run_in curl "--http$1" -sS -N -m 30 https://second.example/events/drip >"$WORK/drip.out" 2>&1 &
    curl_pid=$!
    for _ in $(seq 100); do grep -q first "$WORK/drip.out" && break; sleep 0.1; done
    seen=$(cat "$WORK/drip.out")
    touch "$WORK/git/release-drip"
    wait "$curl_pid"
    [ "$seen" = first ] && grep -q last "$WORK/drip.out" && return
    echo "said before the server's rest: $seen; after: $(cat "$WORK/drip.out")"
    return 1
}
expect "HTTP/2: a response's first part reaches the agent while the server holds the rest (as events stream)" \
    streamed_first 2
expect "and over HTTP/1.1" streamed_first 1.1
# multiplexed URL...: curl's transfers at once, over one connection when it can: "<transfers over h2> <200s> <403s>
# <connections made>".
multiplexed() {
    local url transfers=()
    for url in "$@"; do transfers+=(-o /dev/null "$url"); done
    run_in curl --http2 -sS -m 20 -Z -w '%{http_version} %{http_code} %{num_connects}\n' "${transfers[@]}" |
        awk '{ h2 += $1 == 2; ok += $2 == 200; refused += $2 == 403; connects += $3 }
             END { print h2, ok, refused, connects }'
}
expect "HTTP/2: streams multiplexed on one connection are each judged: two allowed, one refused" \
    output_has '^3 2 1 1$' multiplexed "https://allowed.example/repos/big?n=3000000" \
    https://allowed.example/repos/acme/m https://allowed.example/private/m
head -c 2000000 /dev/urandom >"$WORK/upload.bin"
upload_sum=$(sha256sum <"$WORK/upload.bin" | cut -d' ' -f1)
upload_h2() { # upload_h2 CURL-ARG...: upload.bin from the host as the request body, over HTTP/2
    "$CERBERUS" --root "$ROOT" exec "$ID" curl --http2 -sS -m 60 -w ' version=%{http_version}' "$@" \
        <"$WORK/upload.bin" 2>&1 | tr '\n' ' '
}
expect "HTTP/2: a 2 MB upload of a known length (POST) arrives whole (its checksum)" \
    output_has "method=POST path=/upload .* received=2000000 sha256=$upload_sum .*version=2" \
    upload_h2 --data-binary @- https://allowed.example/upload
expect "HTTP/2: a 2 MB upload of no stated length (from a pipe: chunked upstream) arrives whole" \
    output_has "method=POST path=/upload .* received=2000000 sha256=$upload_sum .*version=2" \
    upload_h2 -X POST -T - https://allowed.example/upload
expect "HTTP/2: a PUT no entry allows gets 403, its body left unread" \
    output_has ' version=2 code=403' h2 -T /etc/resolv.conf https://allowed.example/repos/acme/put
download_sum=$(python3 -c 'import hashlib; print(hashlib.sha256((bytes(range(251)) * 7969)[:2000000]).hexdigest())')
expect "HTTP/2: a 2 MB download arrives whole (its checksum)" \
    output_has "^2 $download_sum" run_in sh -c 'curl --http2 -sS -m 60 -o /dev/shm/down -w "%{http_version} " \
    "https://allowed.example/repos/big?n=2000000" && sha256sum </dev/shm/down'
for _ in $(seq 30); do has_record '"url":"https://allowed.example/repos/acme/put"' 2>/dev/null && break; sleep 0.1; done
expect "HTTP/2: the trail has the refused POST's http denied record" \
    has_record '"method":"POST"' '"url":"https://allowed.example/repos/acme/h2-denied"' '"verdict":"denied"'
expect "HTTP/2: cerberus events --denials shows it" \
    output_has 'http POST https://allowed.example/repos/acme/h2-denied' cerb events --denials "$ID"
expect "control: and the allowed GET's allowed record, with the credential the proxy set" \
    has_record '"url":"https://allowed.example/repos/acme/h2"' '"verdict":"allowed"' '"credential":"allowed"'

# WebSocket: "GET wss://allowed.example/socket/*" allows the upgrade there; /repos/ has only an https entry.
websocket() { run_in python3 /etc/websocket_client.py allowed.example "$@" 2>&1 | tr '\n' ' '; }
expect "a WebSocket upgrade a wss entry allows: 101, and the server's echo of a frame" \
    output_has 'status=101 echo=hello through the tunnel' websocket /socket/chat 'hello through the tunnel'
expect "an upgrade where only an https entry reaches: 403, naming the rule and the wss entry" \
    output_has 'status=403 .*wss://allowed.example/repos/acme/socket is not in allowed_http.*GET wss://allowed.example/socket/\*' \
    websocket /repos/acme/socket hello
for _ in $(seq 30); do grep -q '"url":"wss://allowed.example/repos' "$trail" 2>/dev/null && break; sleep 0.1; done
expect "the trail has the upgrade's allowed record, status 101" \
    bash -c "grep '\"url\":\"wss://allowed.example/socket/chat\"' '$trail' | grep '\"verdict\":\"allowed\"' | grep -q '\"status\":101'"
expect "and the refused upgrade's denied one" \
    bash -c "grep '\"url\":\"wss://allowed.example/repos/acme/socket\"' '$trail' | grep -q '\"verdict\":\"denied\"'"

gate_pid=$(cat "$run_dir/gate.lock" 2>/dev/null)
if [ -n "$gate_pid" ] && kill "$gate_pid" 2>/dev/null; then
    for _ in $(seq 50); do kill -0 "$gate_pid" 2>/dev/null || break; sleep 0.1; done
    expect "the proxy gone, connections fail closed" \
        bash -c "! $CERBERUS --root $ROOT exec $ID curl -sS -m 20 -m 5 https://allowed.example/repos/acme/x"
    cerb state "$ID" >/dev/null # starts a gate again for the registrations left
    for _ in $(seq 50); do [ -S "$run_dir/gate.sock" ] && break; sleep 0.1; done
    expect "restarted, it serves again" \
        output_has 'method=GET' run_in curl -sS -m 20 -m 10 https://allowed.example/repos/acme/x
else
    fail "the gate's pid from $run_dir/gate.lock"
fi
expect "delete succeeds" cerb delete --force "$ID"
expect "and leaves no registration" bash -c "! ls $run_dir/containers/*.json 2>/dev/null | grep -q ."
exit "$failures"
