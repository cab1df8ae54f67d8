#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The egress proxy (allowed_http) with real clients against local HTTPS
# servers, run by egress.bats in a mount namespace of its own (unshare -m),
# where a fresh bpffs holds the maps and tmpfs the run directories and
# /etc/cerberus, so nothing of the host's is touched. In the container's
# network namespace: dnsmasq on 192.0.2.53 (its nameserver) and HTTPS servers
# on 203.0.113.7 (allowed.example) and 203.0.113.9 (second.example) whose
# certificates a CA made here signs, which /etc/cerberus/egress.json gives the
# proxy as its upstream trust. The container runs the host's /usr read-only
# (curl, python3). Each check prints "ok ..." or "FAIL ..."; the exit status
# counts the failures.
set -uo pipefail
: "${CERBERUS:?}" "${ROOT:?}" "${BUNDLE:?}" "${ID:?}" "${WORK:?}" "${HELPERS:?}"
. "$(dirname "$0")/script_checks.bash"

mount --make-rprivate /
mount -t bpf bpf /sys/fs/bpf
for dir in /run/cerberus-dns /run/cerberus-audit /run/cerberus-asks /etc/cerberus; do
    mkdir -p "$dir" && mount -t tmpfs tmpfs "$dir"
done
layout=$(grep -a -m1 -o '/sys/fs/bpf/cerberus/[0-9a-f]\{12\}' "$CERBERUS" | head -1)
run_dir=/run/cerberus-dns/${layout##*/}
cerb() { "$CERBERUS" --root "$ROOT" --audit-dir "$WORK/audit" --enforcement landlock "$@"; }
pids=() # of the processes started here (nsenter runs each in its own place, so $! is the process itself)
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
    wait 2>/dev/null
    cerb delete --force "$ID" >/dev/null 2>&1
}
trap cleanup EXIT

# The upstream servers' certificates, from a CA only the proxy trusts.
tls() { openssl "$@" 2>/dev/null; }
tls req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$WORK/ca.key" -out "$WORK/ca.pem" \
    -days 2 -subj /CN=cerberus-egress-test-upstream-ca
tls req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$WORK/server.key" -out "$WORK/server.csr" \
    -subj /CN=allowed.example
tls x509 -req -in "$WORK/server.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" -CAcreateserial -days 2 \
    -out "$WORK/server.pem" -extfile <(printf 'subjectAltName=DNS:allowed.example,DNS:second.example\n')
printf '{"upstream_ca": "%s"}\n' "$WORK/ca.pem" > /etc/cerberus/egress.json
cp "$WORK/ca.pem" "$BUNDLE/rootfs/etc/upstream-ca.pem" # for the client that pins its own CA
cp "$HELPERS/websocket_client.py" "$BUNDLE/rootfs/etc/websocket_client.py"

echo "nameserver 192.0.2.53" > "$BUNDLE/rootfs/etc/resolv.conf"
expect "create, with allowed_http" cerb create -b "$BUNDLE" "$ID"
pid=$(cerb state "$ID" | jq -r .pid)
in_ns() { nsenter --net="/proc/$pid/ns/net" "$@"; }
in_ns ip addr add 192.0.2.53/32 dev lo
for address in 203.0.113.7 203.0.113.9; do in_ns ip addr add "$address/32" dev lo; done
nsenter --net="/proc/$pid/ns/net" dnsmasq --keep-in-foreground --no-resolv --no-hosts --bind-interfaces --listen-address=192.0.2.53 \
    --local-ttl=30 --user=root --pid-file="$WORK/dnsmasq.pid" --address=/allowed.example/203.0.113.7 \
    --address=/second.example/203.0.113.9 --address=/other.example/203.0.113.8 &
pids+=($!)
for address in 203.0.113.7 203.0.113.9; do
    nsenter --net="/proc/$pid/ns/net" python3 "$HELPERS/https_server.py" "$address" 443 "$WORK/server.pem" "$WORK/server.key" 2>>"$WORK/https.log" &
    pids+=($!)
done
for _ in $(seq 100); do # both servers listening
    [ "$(in_ns ss -Hltn | grep -c -e '203.0.113.7:443 ' -e '203.0.113.9:443 ')" = 2 ] && break
    sleep 0.1
done
cerb start "$ID"
trail="$WORK/audit/$ID.jsonl"
run_in() { cerb exec "$ID" "$@"; }
code_of() { run_in curl -sS -m 20 -o /dev/null -w '%{http_code}' "$@"; }

expect "control: the server answers from the container's namespace, without the proxy" \
    output_has 'method=GET' in_ns curl -sS -m 20 --cacert "$WORK/ca.pem" --resolve allowed.example:443:203.0.113.7 \
    https://allowed.example/repos/acme/x
expect "an allowed GET through the proxy: 200, with the server's answer" \
    output_has 'method=GET path=/repos/acme/x host=allowed.example' run_in curl -sS -m 20 https://allowed.example/repos/acme/x
expect "a POST the rules do not allow: 403" [ "$(code_of -X POST -d a=1 https://allowed.example/repos/acme/x)" = 403 ]
expect "its body names what refused it and what is allowed" \
    output_has 'GET https://allowed.example/repos/\*' run_in curl -sS -m 20 -X POST -d a=1 https://allowed.example/repos/acme/x
expect "control: the allowed POST passes, with a 5 MB body" \
    output_has 'method=POST path=/upload .* received=5000000' \
    bash -c "head -c 5000000 /dev/zero | $CERBERUS --root $ROOT exec $ID curl -sS -m 20 --data-binary @- https://allowed.example/upload"
expect "a 20 MB download passes whole" \
    [ "$(run_in curl -sS -m 20 -o /dev/null -w '%{size_download}' 'https://allowed.example/repos/big?n=20000000')" = 20000000 ]
expect "python3's urllib, through the same trust store" \
    output_has 'method=GET path=/repos/acme/py' run_in python3 -c \
    'import urllib.request; print(urllib.request.urlopen("https://allowed.example/repos/acme/py", timeout=20).read().decode())'
expect "control: second.example, allowed and admitted for its own address" \
    output_has 'host=second.example' run_in curl -sS -m 20 https://second.example/any
expect "fronting: second.example's name on allowed.example's address is refused" \
    bash -c "! $CERBERUS --root $ROOT exec $ID curl -sS -m 20 --connect-to second.example:443:203.0.113.7:443 https://second.example/any"
expect "a name allowed_http does not list, on an admitted address, is refused" \
    bash -c "! $CERBERUS --root $ROOT exec $ID curl -sS -m 20 --connect-to other.example:443:203.0.113.7:443 https://other.example/"
expect "a client pinning another CA fails closed" \
    bash -c "! $CERBERUS --root $ROOT exec $ID curl -sS -m 20 --cacert /etc/upstream-ca.pem https://allowed.example/repos/acme/x"
for _ in $(seq 30); do grep -q '"type":"http".*"POST"' "$trail" 2>/dev/null && break; sleep 0.1; done
expect "the trail has the POST's http denied record" \
    bash -c "grep '\"type\":\"http\"' '$trail' | grep '\"method\":\"POST\"' | grep -q '\"verdict\":\"denied\"'"
expect "control: and the GET's allowed one" \
    bash -c "grep '\"type\":\"http\"' '$trail' | grep '\"method\":\"GET\"' | grep -q '\"verdict\":\"allowed\"'"
expect "and the fronting attempt's refusal" \
    bash -c "grep '\"type\":\"http\"' '$trail' | grep '\"server_name\":\"second.example\"' | grep -q '\"verdict\":\"denied\"'"
expect "cerberus events --denials shows the refused POST" \
    output_has 'http POST https://allowed.example/repos/acme/x' cerb events --denials "$ID"

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
