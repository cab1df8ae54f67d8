# SPDX-License-Identifier: Apache-2.0
# The egress proxy's stage, shared by its checks (egress.bats, egress.sh) and its bench (bench/egress.sh): a
# policed container whose clients (the host's /usr, read-only) reach HTTPS servers in its own network
# namespace, dnsmasq on 192.0.2.53 naming allowed.example 203.0.113.7, second.example 203.0.113.9 and
# other.example 203.0.113.8, the servers' certificates from a CA made here that only the proxy trusts. The
# scripts run in a mount namespace of their own (unshare -m): a fresh bpffs holds the maps and tmpfs the run
# directories and /etc/cerberus, so nothing of the host's is touched.
# Uses CERBERUS, ROOT, BUNDLE, ID, WORK and HELPERS, and the script's cerb (its cerberus command line).

# egress_bundle POLICY: the bundle's parts for clients (a `cerberus spec` config, busybox or the host's
# coreutils for its process): the host's /usr read-only, the system trust store (where the proxy adds the
# container's CA), the policy annotation.
egress_bundle() {
    mkdir -p "$BUNDLE/rootfs/usr" "$BUNDLE/rootfs/etc/ssl/certs"
    ln -sfn usr/lib "$BUNDLE/rootfs/lib"
    ln -sfn usr/lib64 "$BUNDLE/rootfs/lib64"
    cp /etc/ssl/certs/ca-certificates.crt "$BUNDLE/rootfs/etc/ssl/certs/"
    jq --arg policy "$1" '.annotations["io.cerberus.policy"] = $policy
        | .mounts += [{"destination": "/usr", "type": "bind", "source": "/usr", "options": ["rbind", "ro"]}]' \
        "$BUNDLE/config.json" >"$BUNDLE/config.json.new" && mv "$BUNDLE/config.json.new" "$BUNDLE/config.json"
}

# egress_private_mounts: in the script's mount namespace, the fresh bpffs and tmpfs; sets layout and run_dir
# (the DNS gate's, which runs the proxy).
egress_private_mounts() {
    mount --make-rprivate /
    mount -t bpf bpf /sys/fs/bpf
    for dir in /run/cerberus-dns /run/cerberus-audit /run/cerberus-asks /etc/cerberus; do
        mkdir -p "$dir" && mount -t tmpfs tmpfs "$dir"
    done
    layout=$(grep -a -m1 -o '/sys/fs/bpf/cerberus/[0-9a-f]\{12\}' "$CERBERUS" | head -1)
    run_dir=/run/cerberus-dns/${layout##*/}
}

# egress_upstream_certs: $WORK/ca.pem and the servers' certificate ($WORK/server.pem, .key, for
# allowed.example and second.example); /etc/cerberus/egress.json has the proxy trust that CA upstream.
egress_upstream_certs() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$WORK/ca.key" \
        -out "$WORK/ca.pem" -days 2 -subj /CN=cerberus-egress-test-upstream-ca 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$WORK/server.key" \
        -out "$WORK/server.csr" -subj /CN=allowed.example 2>/dev/null
    openssl x509 -req -in "$WORK/server.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" -CAcreateserial -days 2 \
        -out "$WORK/server.pem" -extfile <(printf 'subjectAltName=DNS:allowed.example,DNS:second.example\n') \
        2>/dev/null
    printf '{"upstream_ca": "%s"}\n' "$WORK/ca.pem" >/etc/cerberus/egress.json
    echo "nameserver 192.0.2.53" >"$BUNDLE/rootfs/etc/resolv.conf"
}

# egress_script_stage: how the proxy's check scripts (egress.sh, egress_audit.sh) begin: the private mounts,
# their cerb (the landlock backend, the trails in $WORK/audit), the cleanup at exit, the upstream certificates.
egress_script_stage() {
    egress_private_mounts
    cerb() { "$CERBERUS" --root "$ROOT" --audit-dir "$WORK/audit" --enforcement landlock "$@"; }
    trap egress_cleanup EXIT
    egress_upstream_certs
}

pids=() # of the processes started here (nsenter runs each in its own place, so $! is the process itself)

# egress_servers PID [SERVER-ARG...]: in the network namespace of the created container PID, dnsmasq and
# the HTTPS servers (tests/helpers/https_server.py, given the extra arguments), waited for until they listen.
egress_servers() {
    local netns=/proc/$1/ns/net address
    shift
    nsenter --net="$netns" ip addr add 192.0.2.53/32 dev lo
    for address in 203.0.113.7 203.0.113.9; do nsenter --net="$netns" ip addr add "$address/32" dev lo; done
    nsenter --net="$netns" dnsmasq --keep-in-foreground --no-resolv --no-hosts --bind-interfaces \
        --listen-address=192.0.2.53 --local-ttl=30 --user=root --pid-file="$WORK/dnsmasq.pid" \
        --address=/allowed.example/203.0.113.7 --address=/second.example/203.0.113.9 \
        --address=/other.example/203.0.113.8 &
    pids+=($!)
    for address in 203.0.113.7 203.0.113.9; do
        nsenter --net="$netns" python3 "$HELPERS/https_server.py" "$address" 443 "$WORK/server.pem" \
            "$WORK/server.key" "$@" 2>>"$WORK/https.log" &
        pids+=($!)
    done
    for _ in $(seq 100); do # both servers listening
        [ "$(nsenter --net="$netns" ss -Hltn | grep -c -e '203.0.113.7:443 ' -e '203.0.113.9:443 ')" = 2 ] && break
        sleep 0.1
    done
}

# has_record PART...: an http record of the trail ($trail) holds every part; no_record: none does.
has_record() {
    local records part
    records=$(grep '"type":"http"' "$trail")
    for part in "$@"; do records=$(grep -F -- "$part" <<<"$records"); done
    [ -n "$records" ]
}
no_record() { ! has_record "$@"; }

# egress_cleanup: the processes started here gone, the container deleted (an EXIT trap's work).
egress_cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
    wait 2>/dev/null
    cerb delete --force "$ID" >/dev/null 2>&1
}
