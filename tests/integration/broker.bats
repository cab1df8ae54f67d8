#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The command broker (policy.commands): a listed tool in the container is the
# shim, which has the host's tool run by the broker under the policy's rules,
# with credentials from the host's /etc/cerberus/credentials only; a `command`
# record per call in the trail. Each denial has an allowed control beside it.

load helpers
load broker_helpers

CREDENTIALS=/etc/cerberus/credentials

# The agent works in /work, the test's $BATS_TEST_TMPDIR/work bound there.
work_in_workspace() {
    mkdir -p "$BATS_TEST_TMPDIR/work"
    edit_config --arg w "$BATS_TEST_TMPDIR/work" '.process.cwd = "/work"
        | .mounts += [{"destination": "/work", "type": "bind", "source": $w, "options": ["rbind", "rw"]}]'
}

setup() {
    [ "$(id -u)" -eq 0 ] || skip "needs root"
    command -v git >/dev/null || skip "needs git"
    [ -x "${CERBERUS_SHIM:-}" ] || skip "needs CERBERUS_SHIM (tests/integration/run.sh sets it)"
    setup_bundle
    ln -sf busybox "$BUNDLE/rootfs/bin/seq"
    ln -sf busybox "$BUNDLE/rootfs/bin/kill"
    ln -sf busybox "$BUNDLE/rootfs/bin/tr"
    AUDIT="$BATS_TEST_TMPDIR/audit"
}

teardown() {
    cerb delete --force "$ID" >/dev/null 2>&1 || true
    [ -z "${SERVER_PID:-}" ] || kill "$SERVER_PID" 2>/dev/null || true
    [ -z "${CREDENTIAL_FILE:-}" ] || rm -f "$CREDENTIAL_FILE"
    [ -z "${TOOL_POLICY:-}" ] || rm -f "$TOOL_POLICY"
    [ -z "${BROKER_CONFIG:-}" ] || rm -f "$BROKER_CONFIG"
    [ -z "${STANDINS:-}" ] || rm -rf "$STANDINS" "$CREDENTIALS/kubectl.env" "$CREDENTIALS/terraform.env"
    [ -z "${AUDIT_BEFORE:-}" ] || "$(dirname "$CERBERUS")/cerberus-audit-switch" set "$AUDIT_BEFORE"
}

@test "broker: git --version runs the host's git through the broker; without commands the image has none" {
    set_args sh -c 'git --version'
    run -127 cerb --audit-dir "$AUDIT" run -b "$BUNDLE" "$ID" # control: busybox has no git, and nothing was added
    with_policy '{"commands": {"git": {"allow": ["--version"]}}}'
    run_policed sh -c 'git --version'
    [ "$status" -eq 0 ]
    [ "$output" = "$(git --version)" ]
    run trail_text
    echo "$output"
    [[ "$output" == *'command git --version ALLOWED (commands.git.allow[0] "--version"), exit 0 in '* ]]
}

@test "broker: the bytes a call moved: what the shim gave the tool's stdin, what came back on stdout and stderr" {
    with_policy '{"commands": {"env": {"allow": ["sh -c *"]}}}'
    # 200000 bytes in; out, the tool's count of them ("200000\n") on stdout and 70001 bytes on stderr: the
    # output arrives whole, before the shim exits. Twice: stdout alone, then both streams counted.
    local call='head -c 200000 /dev/zero | /usr/bin/env sh -c "wc -c; head -c 70001 /dev/zero >&2"'
    run_policed sh -c "$call 2>/dev/null; $call 2>&1 | wc -c"
    [ "$status" -eq 0 ]
    [ "$(echo "${lines[0]}" | tr -d ' ')" = 200000 ]
    [ "$(echo "${lines[1]}" | tr -d ' ')" = 70008 ]
    jq -se 'map(select(.type == "command")) | length == 2 and all(.bytes_in == 200000 and .bytes_out == 70008)' \
        "$AUDIT/$ID.jsonl"
    run trail_text
    echo "$output"
    [[ "$output" == *'command env sh -c wc -c; head -c 70001 /dev/zero >&2 ALLOWED'*', exit 0 in '*' ms, 200000 bytes in, 70008 out'* ]]
    run cerb --audit-dir "$AUDIT" events --denials --format json "$ID"
    [[ "$output" == *'"status":0,"bytes_in":200000,"bytes_out":70008,"duration_ms":'* ]]
    # control: a call with nothing in and nothing out counts none
    rm -f "$AUDIT/$ID.jsonl"
    run_policed sh -c '/usr/bin/env sh -c true </dev/null'
    [ "$status" -eq 0 ]
    jq -se 'map(select(.type == "command")) | .[0] | .bytes_in == 0 and .bytes_out == 0' "$AUDIT/$ID.jsonl"
}

@test "broker: a call arrives byte for byte (not UTF-8: refused), closed stdio is /dev/null, a signal is 128+N" {
    with_policy '{"commands": {"env": {"allow": ["sh -c *"]}}}'
    # Quotes, a backslash, control characters, UTF-8 and an empty argument, printed by the host's sh through
    # the shim and the broker; the same script run here is the control.
    cat >"$BUNDLE/rootfs/bin/args" <<'SCRIPT'
#!/bin/sh
/usr/bin/env sh -c 'printf "[%s]" "$@"; echo' x "a b" 'q"b\s' "$(printf 't\tn\nl\001')" \
    "$(printf 'caf\303\251 \360\237\220\225')" ''
SCRIPT
    chmod +x "$BUNDLE/rootfs/bin/args"
    local closed="/usr/bin/env sh -c 'echo out; echo err >&2' <&- >&- 2>&-; echo closed=\$?"
    local killed="/usr/bin/env sh -c 'kill -TERM \$\$'; echo signal=\$?"
    local latin="/usr/bin/env sh -c true \"\$(printf 'caf\351')\"; echo latin=\$?" # not UTF-8: refused, not run
    run_policed sh -c "args; $closed; /usr/bin/env sh -c 'echo open'; $killed; $latin"
    [ "$status" -eq 0 ]
    [ "${lines[0]}${lines[1]}" = "$(sh "$BUNDLE/rootfs/bin/args" | tr -d '\n')" ]
    [[ "${lines[0]}" == *'[a b][q"b\s][t'* && "${lines[1]}" == *$'caf\xc3\xa9 \xf0\x9f\x90\x95][]' ]]
    [[ "$output" == *"closed=0"* && "$output" != *out* && "$output" != *err* ]]
    [[ "$output" == *open* ]] # control: the same call's output with stdio open
    [[ "$output" == *"signal=143"* ]]
    [[ "$output" == *"env: the command broker: malformed call: its tool, working directory or an argument is not UTF-8 text"*"latin=125"* ]]
    jq -se 'map(select(.type == "command")) | length == 4' "$AUDIT/$ID.jsonl"
}

@test "broker: git push --force origin main is DENIED with its rule named; an allowed push runs" {
    with_policy '{"commands": {"git": {"allow": ["--version", "push origin feature/*"], "deny": ["push --force *"]}}}'
    run_policed sh -c 'git push --force origin main'
    [ "$status" -eq 126 ]
    [[ "$output" == *'git: denied by the policy (commands.git.deny[0] "push --force *")'* ]]
    # control: an allowed push runs the host's git (in /, no repository: git's own failure)
    run_policed sh -c 'git push origin feature/x'
    [ "$status" -eq 128 ]
    [[ "$output" == *"not a git repository"* ]]
    run trail_text
    echo "$output"
    [[ "$output" == *'command git push --force origin main DENIED (commands.git.deny[0] "push --force *")'* ]]
    [[ "$output" == *'command git push origin feature/x ALLOWED (commands.git.allow[1] "push origin feature/*"), exit 128'* ]]
    run cerb --audit-dir "$AUDIT" events --denials --format json "$ID"
    [[ "$output" == *'"type":"command","time":'*'"tool":"git","args":["push","--force","origin","main"],"cwd":"/","verdict":"denied","backend":"static"'* ]]
}

@test "broker: a bad commands entry is refused at create, naming the entry and the bundle" {
    with_policy '{"commands": {"git": {"allow": ["st*tus"]}}}'
    run_policed true
    [ "$status" -ne 0 ]
    [[ "$output" == *config.json* ]]
    [[ "$output" == *'policy.commands.git.allow[0]: "st*tus": a "*" stands for a whole word'* ]]
    with_policy '{"commands": {"git": {"allow": ["status"]}}}' # control
    run_policed true
    [ "$status" -eq 0 ]
}

@test "broker: clone and push of a feature branch over HTTP with a token the agent never sees; main and --force denied" {
    command -v python3 >/dev/null || skip "needs python3"
    local srv="$BATS_TEST_TMPDIR/srv" token="tok-$RANDOM$RANDOM$RANDOM"
    mkdir -p "$srv" "$BATS_TEST_TMPDIR/work"
    git init -q --bare -b main "$srv/repo.git"
    git -C "$BATS_TEST_TMPDIR" -c init.defaultBranch=main clone -q "$srv/repo.git" seed 2>/dev/null
    git -C "$BATS_TEST_TMPDIR/seed" -c user.email=t@t -c user.name=t commit -q --allow-empty -m seed
    git -C "$BATS_TEST_TMPDIR/seed" push -q origin main
    python3 "$BATS_TEST_DIRNAME/../helpers/git_http_server.py" "$srv" "$token" "$BATS_TEST_TMPDIR/port" \
        2>"$BATS_TEST_TMPDIR/server.log" &
    SERVER_PID=$!
    for _ in $(seq 50); do [ -s "$BATS_TEST_TMPDIR/port" ] && break; sleep 0.1; done
    local url="http://127.0.0.1:$(cat "$BATS_TEST_TMPDIR/port")/repo.git"
    GIT_TERMINAL_PROMPT=0 run git ls-remote "$url" # control: the server wants the token
    [ "$status" -ne 0 ]
    mkdir -p "$CREDENTIALS"
    CREDENTIAL_FILE="$CREDENTIALS/git.env"
    printf '%s\n' "# the broker's, for the tests" GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=http.extraHeader \
        "GIT_CONFIG_VALUE_0=Authorization: Bearer $token" GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.org \
        GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.org GIT_TERMINAL_PROMPT=0 >"$CREDENTIAL_FILE"
    chmod 600 "$CREDENTIAL_FILE"
    edit_config --arg w "$BATS_TEST_TMPDIR/work" \
        '.mounts += [{"destination": "/work", "type": "bind", "source": $w, "options": ["rbind", "rw"]}]'
    with_policy '{"commands": {"git": {"allow": ["clone -q *", "checkout -b feature/*", "add *", "commit -m *",
        "push origin feature/*", "push origin main"], "deny": ["push --force *", "push * main"]}}}'
    # What the agent can see of its processes while a call runs, kept for the host to search: the
    # agent itself never holds the token, so it cannot grep for it.
    # (one line: set_args takes a line an argument)
    run_policed sh -c "cd /work && git clone -q $url r && cd r && git checkout -b feature/a && echo hi > f && git add f && git commit -m change && git push origin feature/a && echo PUSHED; git push origin main; echo main=\$?; git push --force origin feature/a; echo force=\$?; git clone -q $url r2 & cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline > /work/seen 2>/dev/null; wait"
    [[ "$output" == *PUSHED* ]]
    [[ "$output" == *"main=126"* && "$output" == *'(commands.git.deny[1] "push * main")'* ]]
    [[ "$output" == *"force=126"* && "$output" == *'(commands.git.deny[0] "push --force *")'* ]]
    [ -s "$BATS_TEST_TMPDIR/work/seen" ]
    # the token: in no process the agent sees, no file of its root or workspace (the clones' .git/config
    # among them), not in the trail
    run ! grep -rqs "$token" "$BATS_TEST_TMPDIR/work" "$BUNDLE/rootfs" "$AUDIT"
    git --git-dir="$srv/repo.git" rev-parse -q --verify refs/heads/feature/a
    [ "$(git --git-dir="$srv/repo.git" rev-list --count main)" -eq 1 ] # main untouched
}

# The host's kubectl and terraform, stood in for by scripts the broker's configuration names (the host's
# own, if any, stay untouched): each answers only with the token of its credentials file, as nobody.
install_standins() {
    STANDINS=$(mktemp -d /tmp/cerberus-standins.XXXXXX)
    chmod 0755 "$STANDINS"
    mkdir -p "$CREDENTIALS"
    local tool hash
    hash=$(printf %s "$1" | sha256sum | cut -c1-64)
    for tool in kubectl terraform; do
        printf '%s\n' '#!/bin/sh' \
            "[ \"\$(printf %s \"\$CLUSTER_TOKEN\" | sha256sum | cut -c1-64)\" = $hash ] || { echo $tool: unauthorized >&2; exit 1; }" \
            'sleep 0.3' "echo \"$tool \$* as \$(id -u): authorized\"" >"$STANDINS/$tool"
        chmod 0755 "$STANDINS/$tool"
        printf 'CLUSTER_TOKEN=%s\n' "$1" >"$CREDENTIALS/$tool.env"
        chmod 0600 "$CREDENTIALS/$tool.env"
    done
    hook_config "{\"tools\": {\"kubectl\": \"$STANDINS/kubectl\", \"terraform\": \"$STANDINS/terraform\"}}"
}

@test "broker: kubectl and terraform (stand-ins) run with the host's token; delete ns prod and destroy denied" {
    local token="tok-$RANDOM$RANDOM$RANDOM"
    install_standins "$token"
    edit_config '.root.readonly = false'
    with_policy '{"commands": {"kubectl": {"allow": ["get *", "delete pod *"], "deny": ["delete ns prod"]},
        "terraform": {"allow": ["plan *"], "deny": ["destroy *"]}}}'
    run_policed sh -c "kubectl get pods; kubectl delete ns prod; echo delete=\$?; terraform plan -no-color; terraform destroy -auto-approve; echo destroy=\$?; kubectl get pods -w & cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline >/tmp/seen 2>/dev/null; wait"
    [[ "$output" == *'kubectl get pods as 65534: authorized'* ]] # the control: its credential reached it
    [[ "$output" == *'terraform plan -no-color as 65534: authorized'* ]]
    [[ "$output" == *"delete=126"* && "$output" == *'(commands.kubectl.deny[0] "delete ns prod")'* ]]
    [[ "$output" == *"destroy=126"* && "$output" == *'(commands.terraform.deny[0] "destroy *")'* ]]
    [[ "$output" != *'ns prod as'* && "$output" != *'destroy -auto-approve as'* ]]
    [[ "$output" == *'kubectl get pods -w as 65534: authorized'* ]]
    [ -s "$BUNDLE/rootfs/tmp/seen" ] # what the agent could see of its processes while a call ran
    run ! grep -rqs "$token" "$BUNDLE/rootfs" "$AUDIT"
    run trail_text
    [[ "$output" == *'command kubectl delete ns prod DENIED (commands.kubectl.deny[0] "delete ns prod")'* ]]
    [[ "$output" == *'command terraform destroy -auto-approve DENIED (commands.terraform.deny[0] "destroy *")'* ]]
    rm "$CREDENTIALS/kubectl.env" # the control of the token: without it the host's tool refuses
    run_policed kubectl get pods
    [[ "$status" -ne 0 && "$output" == *'kubectl: unauthorized'* ]]
}

@test "broker: malformed calls, huge argv and a caller outside the container get clear errors" {
    command -v python3 >/dev/null || skip "needs python3"
    with_policy '{"commands": {"git": {"allow": ["--version"]}}}'
    set_args sh -c 'git $(seq 1 30000); echo huge=$?; git $(seq 1 3); echo small=$?; sleep 30'
    cerb --audit-dir "$AUDIT" run -d -b "$BUNDLE" "$ID" </dev/null >"$BATS_TEST_TMPDIR/out" 2>&1
    for _ in $(seq 50); do grep -q small= "$BATS_TEST_TMPDIR/out" && break; sleep 0.1; done
    cat "$BATS_TEST_TMPDIR/out"
    grep -q 'more than the broker takes' "$BATS_TEST_TMPDIR/out"
    grep -q huge=125 "$BATS_TEST_TMPDIR/out"
    grep -q small=126 "$BATS_TEST_TMPDIR/out" # control: a call of usual size reaches the broker (and its rules)
    # Raw calls on the wire (runtime/lib/broker/broker_wire.h): a header {magic "cbw1", argument count},
    # then the tool, the working directory and the arguments, each NUL-terminated.
    run python3 - "$ROOT/$ID/broker/broker.sock" <<'EOF'
import array, socket, struct, sys
MAGIC = 0x31776263
def call(*strings, magic=MAGIC, count=None):
    header = struct.pack("=II", magic, len(strings) - 2 if count is None else count)
    return header + b"".join(s + b"\0" for s in strings)
def ask(payload, fds=(0, 1, 2)):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
    s.sendmsg([payload], anc)
    answer = s.recv(65536)
    magic, kind, number, length = struct.unpack("=IIiI", answer[:16])
    assert magic == MAGIC and length == len(answer) - 16, answer
    print(kind, number, answer[16:].decode())
ask(call(b"git", b"/", b"--version")[:6])
ask(call(b"git", b"/", b"--version", magic=0x6F74227B))  # '{"to': a call on the JSON wire of before
ask(call(b"git", b"/", count=4097))
ask(call(b"git", b"/", b"--version")[:-1])
ask(call(b"git", b"/", b"--version", count=2))
ask(call(b"git", b"work", b"--version"))
ask(call(b"git", b"/", b"--version"), ())
ask(call(b"git", b"/", b"x" * 200000))
ask(call(b"git", b"/", b"--version"))
EOF
    echo "$output"
    [[ "${lines[0]}" == "4 0 malformed call: 6 bytes, shorter than a request's header" ]]
    [[ "${lines[1]}" == "4 0 malformed call: not a request of this broker's wire (another version of the shim?)" ]]
    [[ "${lines[2]}" == '4 0 malformed call: 4097 arguments, more than 4096' ]]
    [[ "${lines[3]}" == '4 0 malformed call: its last string is not NUL-terminated' ]]
    [[ "${lines[4]}" == '4 0 malformed call: 3 strings, not the tool, the working directory and 2 arguments' ]]
    [[ "${lines[5]}" == '4 0 malformed call: the working directory is not an absolute path' ]]
    [[ "${lines[6]}" == '4 0 malformed call: 0 fds, not stdin, stdout and stderr' ]]
    [[ "${lines[7]}" == '4 0 malformed call: longer than 131072 bytes' ]]
    [[ "${lines[8]}" == "4 0 "*"is not in the container's cgroup"* ]] # well-formed: read, and refused for its caller
    cerb exec "$ID" git --version # control: the same call from inside the container runs
}

@test "broker: a shim killed mid-call or the broker killed mid-command leave nothing running, the shim fails" {
    with_policy '{"commands": {"sleep": {"allow": ["*"]}}}'
    # The shim is killed only once its tool runs on the host: killed earlier, nothing ran and nothing is recorded.
    set_args sh -c '/usr/bin/sleep 31.7 & p=$!; until [ -e /tmp/kill-the-shim ]; do /bin/sleep 0.1; done; kill -9 $p; /usr/bin/sleep 32.7; echo status=$?; /bin/sleep 60'
    cerb --audit-dir "$AUDIT" run -d -b "$BUNDLE" "$ID" </dev/null >"$BATS_TEST_TMPDIR/out" 2>&1
    for _ in $(seq 100); do pgrep -fx 'sleep 31.7' >/dev/null && break; sleep 0.1; done
    pgrep -fx 'sleep 31.7' # the tool runs on the host
    touch "$BUNDLE/rootfs/tmp/kill-the-shim"
    for _ in $(seq 100); do pgrep -fx 'sleep 32.7' >/dev/null && break; sleep 0.1; done
    run ! pgrep -fx 'sleep 31.7' # the shim was killed: so was its tool
    pgrep -fx 'sleep 32.7'   # the next call runs on the host
    local pid
    pid=$(broker_pid)
    kill -9 "$pid"
    for _ in $(seq 50); do grep -q status= "$BATS_TEST_TMPDIR/out" && break; sleep 0.1; done
    cat "$BATS_TEST_TMPDIR/out"
    grep -q 'the command broker ended without answering' "$BATS_TEST_TMPDIR/out"
    grep -q status=125 "$BATS_TEST_TMPDIR/out"
    for _ in $(seq 20); do pgrep -fx 'sleep 32.7' >/dev/null || break; sleep 0.1; done
    run ! pgrep -fx 'sleep 32.7' # died with the broker
    run trail_text
    echo "$output"
    [[ "$output" == *'command sleep 31.7 ALLOWED (commands.sleep.allow[0] "*"; the caller went away, the tool was killed), signal 9'* ]]
    cerb state "$ID" >/dev/null # starts a broker for the registrations left
    cerb exec "$ID" /usr/bin/sleep 0 # control: calls run again
}

@test "broker: the tool runs as nobody: root's files unreadable, the host's unwritable; the agent's directory writable, its owner kept" {
    work_in_workspace
    with_policy '{"commands": {"env": {"allow": ["sh -c *"]}}}'
    marker=/etc/cerberus-broker-test-$$
    # /usr/bin/env is the shim (the image's env is busybox's, in /bin): the host's env runs the host's sh.
    local script="id -u; id -G; cat /etc/shadow >/dev/null && echo SHADOW-READ; touch $marker && echo HOST-WRITTEN"
    run_policed /usr/bin/env sh -c "$script; head -c0 /etc/passwd && echo HOST-READ; echo made >made-by-tool && echo WORK-WRITTEN"
    rm -f "$marker"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = 65534 ] # nobody, no supplementary group
    [ "${lines[1]}" = 65534 ]
    [[ "$output" != *SHADOW-READ* && "$output" == *"/etc/shadow: Permission denied"* ]]
    [[ "$output" != *HOST-WRITTEN* ]]
    [[ "$output" == *HOST-READ* ]]    # control: a file everyone may read
    [[ "$output" == *WORK-WRITTEN* ]] # control: the agent's own directory
    [ "$(stat -c %u:%g "$BATS_TEST_TMPDIR/work/made-by-tool")" = 0:0 ] # on disk, the caller's owner
}

@test "broker: learn mode proposes the calls an audit run made; the learned policy runs them and still denies the others" {
    with_policy '{"mode": "audit", "commands": {"git": {"allow": ["--version"], "deny": ["push --force *"]}}}'
    run_policed sh -c 'git --version >/dev/null; git -c core.pager=cat --exec-path; git push --force origin main; echo done'
    [ "$status" -eq 0 ]
    [[ "$output" == *done* ]]
    jq -se 'map(select(.type == "command") | (.args | join(" ")) + " " + .verdict)
        == ["--version allowed", "-c core.pager=cat --exec-path audit", "push --force origin main audit"]' "$AUDIT/$ID.jsonl"
    run "$CERBERUS" policy learn --trail "$AUDIT/$ID.jsonl"
    echo "$output"
    [ "$status" -eq 0 ]
    echo "$output" | jq -e '._learned.added == {"commands.git.allow": ["-c core.pager=cat --exec-path"]}'
    echo "$output" | jq -e '._learned.still_denied | map(.target) == ["git push --force origin main"]'
    learned="$(echo "$output" | jq -c 'del(._learned)')"
    cerb delete --force "$ID" >/dev/null 2>&1
    rm -f "$AUDIT/$ID.jsonl"
    with_policy "$learned"
    run_policed sh -c 'git -c core.pager=cat --exec-path >/dev/null && echo learned-ran; git push --force origin main; echo "push=$?"'
    [[ "$output" == *learned-ran* ]]
    [[ "$output" == *'push=126'* ]]
    run_policed sh -c 'git -c core.pager=less --exec-path; echo "other=$?"' # a neighbour of the learned call
    [[ "$output" == *'other=126'* ]]
}

# The tool's own policy for one test: $CREDENTIALS/env.policy, removed by teardown.
tool_policy() {
    TOOL_POLICY="$CREDENTIALS/env.policy"
    mkdir -p "$CREDENTIALS"
    printf '%s\n' "$1" >"$TOOL_POLICY"
    chmod 0644 "$TOOL_POLICY"
}

@test "broker: a tool's own policy: only its hosts and its files, the agent's directory writable; nothing left after" {
    command -v python3 >/dev/null || skip "needs python3"
    work_in_workspace
    with_policy '{"commands": {"env": {"allow": ["python3 probe.py"]}}}'
    local mine=$((40000 + RANDOM % 10000)) other=$((50000 + RANDOM % 10000)) scratch="/tmp/cerberus-tool-$$"
    # Nothing listens on either port: a connect the policy lets through is refused by the host (111), one it
    # stops never leaves (1). The script is in the agent's directory, where the tool runs.
    cat >"$BATS_TEST_TMPDIR/work/probe.py" <<PROBE
import socket
for port in ($mine, $other):
    s = socket.socket()
    try:
        s.connect(('127.0.0.1', port)); print(port, 'connected')
    except OSError as e:
        print(port, e.errno)
for name in ('$scratch', 'made-by-tool'):
    try:
        open(name, 'w').write('x'); print(name, 'written')
    except OSError as e:
        print(name, e.errno)
print('etc', len(open('/etc/passwd').read()) > 0)
PROBE
    run_policed /usr/bin/env python3 probe.py # the control: no policy of the tool's own
    rm -f "$scratch" "$BATS_TEST_TMPDIR/work/made-by-tool"
    [[ "$output" == *"$other 111"* && "$output" == *"$scratch written"* ]]
    tool_policy "{\"allowed_hosts\": [\"127.0.0.1:$mine\"], \"read_only_paths\": [\"/usr\", \"/lib\", \"/lib64\", \"/etc\", \"/bin\", \"/proc\", \"/dev\"]}"
    run_policed /usr/bin/env python3 probe.py
    [ "$status" -eq 0 ]
    [[ "$output" == *"$mine 111"* ]]       # its host: let through
    [[ "$output" == *"$other 1"* ]]        # another: EPERM
    [[ "$output" == *"$scratch 13"* ]]     # outside its files: EACCES
    [ ! -e "$scratch" ]
    [[ "$output" == *"made-by-tool written"* ]] # the agent's directory
    [[ "$output" == *"etc True"* ]]             # a file its policy lets it read
    local cgroup2
    cgroup2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
    [ ! -e "$cgroup2/cerberus-tools" ] # each call's cgroup is gone, and their parent with the last
}

@test "broker: a tool's own denials are in the calling container's trail, marked with the call; an allowed call's none" {
    command -v python3 >/dev/null || skip "needs python3"
    work_in_workspace
    with_policy '{"commands": {"env": {"allow": ["python3 probe.py *"]}}}'
    local mine=$((40000 + RANDOM % 10000)) other=$((50000 + RANDOM % 10000))
    cat >"$BATS_TEST_TMPDIR/work/probe.py" <<'PROBE'
import socket, sys
try:
    socket.create_connection(('127.0.0.1', int(sys.argv[1]))); print(sys.argv[1], 'connected')
except OSError as e:
    print(sys.argv[1], e.errno)
PROBE
    tool_policy "{\"allowed_hosts\": [\"127.0.0.1:$mine\"]}"
    run_policed sh -c "/usr/bin/env python3 probe.py $mine; /usr/bin/env python3 probe.py $other"
    [ "$status" -eq 0 ]
    [[ "$output" == *"$mine 111"* && "$output" == *"$other 1"* ]] # its host refused by the host; another by its policy
    jq -se --arg t "127.0.0.1:$other" --arg p "$other" 'map(select(.type == "denial")) |
        length == 1 and .[0].op == "connect" and .[0].target == $t and .[0].rule == "not in allowed_hosts"
        and .[0].brokered == {"tool": "env", "args": ["python3", "probe.py", $p]}' "$AUDIT/$ID.jsonl"
    run trail_text
    echo "$output"
    [[ "$output" == *"connect 127.0.0.1:$other DENIED (not in allowed_hosts), in brokered env python3 probe.py $other"* ]]
    local cgroup2
    cgroup2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
    [ ! -e "$cgroup2/cerberus-tools" ]
    run ! grep -l '"brokered"' /run/cerberus-audit/*/containers/* # each call's registration gone with it
}

@test "broker: a tool's Landlock denial (kernel audit on) is in the calling container's trail, marked with the call" {
    command -v python3 >/dev/null || skip "needs python3"
    local switch
    switch="$(dirname "$CERBERUS")/cerberus-audit-switch"
    "$CERBERUS" check | grep -q 'Landlock ABI: *\([7-9]\|[1-9][0-9]\)' || skip "Landlock logs denials from ABI 7 on"
    AUDIT_BEFORE=$("$switch" get) || skip "kernel audit cannot be read here"
    "$switch" set 1
    work_in_workspace
    with_policy '{"commands": {"env": {"allow": ["python3 probe.py *"]}}}'
    local scratch="/tmp/cerberus-tool-ll-$$"
    # The tool lives a moment after its denial: the collector learns the domain's cgroup from its maker.
    printf '%s\n' 'import sys, time' 'try:' '    open(sys.argv[1], "w").write("x"); print("written")' \
        'except OSError as e:' '    print("errno", e.errno)' 'time.sleep(0.3)' >"$BATS_TEST_TMPDIR/work/probe.py"
    tool_policy '{"read_only_paths": ["/usr", "/lib", "/lib64", "/etc", "/bin", "/proc", "/dev"]}'
    run_policed sh -c "/usr/bin/env python3 probe.py made-by-tool; /usr/bin/env python3 probe.py $scratch"
    "$switch" set "$AUDIT_BEFORE"
    [[ "$output" == *"written"* && "$output" == *"errno 13"* ]] # its directory written; outside its files refused
    [ ! -e "$scratch" ]
    jq -se --arg p "$scratch" 'map(select(.type == "denial")) | length == 1
        and .[0].brokered == {"tool": "env", "args": ["python3", "probe.py", $p]}' "$AUDIT/$ID.jsonl"
}

@test "broker: a tool's policy it cannot have fails the call, naming the file and the field; no tool runs" {
    with_policy '{"commands": {"env": {"allow": ["true"]}}}'
    tool_policy '{"allowed_hosts": ["example.com:443"]}'
    run_policed /usr/bin/env true
    [ "$status" -ne 0 ]
    [[ "$output" == *"$CREDENTIALS/env.policy: policy.allowed_hosts[0]: host name example.com:443"* ]]
    tool_policy '{"allowed_hosts": ["192.0.2.1:443"], "denied_paths": ["/etc/shadow"]}'
    run_policed /usr/bin/env true
    [ "$status" -ne 0 ]
    [[ "$output" == *"env.policy: policy.denied_paths: nothing is hidden from a tool"* ]]
    tool_policy '{"allowed_hosts": ["192.0.2.1:443"]}' # the control
    run_policed /usr/bin/env true
    [ "$status" -eq 0 ]
}

# hook_config JSON: the host's broker configuration for one test, removed by teardown.
hook_config() {
    BROKER_CONFIG=/etc/cerberus/broker.json
    printf '%s\n' "$1" >"$BROKER_CONFIG"
    chmod 0644 "$BROKER_CONFIG"
}

@test "broker: the host's decision hook (a webhook, OPA's data API) has its say after the rules; no answer denies" {
    command -v python3 >/dev/null || skip "needs python3"
    python3 "$BATS_TEST_DIRNAME/../helpers/decision_hook_server.py" "$BATS_TEST_TMPDIR/port" "$BATS_TEST_TMPDIR/hook.log" &
    SERVER_PID=$!
    for _ in $(seq 50); do [ -s "$BATS_TEST_TMPDIR/port" ] && break; sleep 0.1; done
    local hook="http://127.0.0.1:$(cat "$BATS_TEST_TMPDIR/port")"
    with_policy '{"commands": {"env": {"allow": ["true", "id *", "date *", "sleep *"]}}}'
    hook_config "{\"decision\": {\"webhook\": \"$hook/decide\", \"timeout_ms\": 1000}}"
    run_policed sh -c '/usr/bin/env true; echo "true=$?"; /usr/bin/env id -u; echo "id=$?"; /usr/bin/env sleep 0; echo "sleep=$?"; /usr/bin/env false; echo "false=$?"'
    [[ "$output" == *"true=0"* ]]                                   # the rules and the hook allow
    [[ "$output" == *"denied by the policy (webhook: id is not for agents)"* && "$output" == *"id=126"* ]]
    [[ "$output" == *"webhook: no answer"* && "$output" == *"sleep=126"* ]] # later than timeout_ms: denied
    [[ "$output" == *"false=126"* ]]                                # the control: the rules deny, the hook is not asked
    jq -se --arg id "$ID" 'map(.body) | length == 3 and .[0].container == $id and .[0].tool == "env"
        and .[0].rules.allow and map(.args[0]) == ["true", "id", "sleep"]' "$BATS_TEST_TMPDIR/hook.log"
    run trail_text
    echo "$output"
    [[ "$output" == *'command env id -u DENIED (commands.env.allow[1] "id *"; webhook: id is not for agents)'* ]]
    jq -se 'map(select(.type == "command")) | map(.backend) == ["webhook", "webhook", "webhook", "static"]' "$AUDIT/$ID.jsonl"
    # OPA's data API: the call as "input", the verdict as "result"; an undefined rule denies.
    hook_config "{\"decision\": {\"opa\": \"$hook/v1/data/cerberus/commands\"}}"
    run_policed sh -c '/usr/bin/env true; echo "true=$?"; /usr/bin/env date; echo "date=$?"'
    [[ "$output" == *"true=0"* ]]
    [[ "$output" == *"opa: no result"* && "$output" == *"date=126"* ]]
    jq -se --arg id "$ID" 'map(select(.path == "/v1/data/cerberus/commands")) | length == 2
        and all(.body.input.container == $id and .body.input.tool == "env")' "$BATS_TEST_TMPDIR/hook.log"
    # A configuration the broker cannot use fails the call, naming the file and the field.
    hook_config '{"decision": {"webhook": "https://hooks.example/decide"}}'
    run_policed /usr/bin/env true
    [ "$status" -ne 0 ]
    [[ "$output" == *'/etc/cerberus/broker.json: decision.webhook: "https://hooks.example/decide": an http:// URL'* ]]
}
