#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vm-modules: veth
# vm-timeout: 900
# The worked story of examples/prompt-injection/ in the real-kernel lane, under the BPF LSM: a
# prompt-injected agent under a policy (each step it is talked into fails in the kernel and is in the trail,
# and nothing reaches the attacker), then the same story in audit mode (everything goes through, and the
# trail says what enforce mode would have stopped), which the landlock backend cannot audit. Run by
# scripts/demo.sh after the story ran natively with the dashboard.
. /vm/lib.sh

vm_has_cerberus || exit 0
story=/vm/examples/prompt-injection/story.sh
if [ ! -x /usr/local/sbin/ip ] || [ ! -f "$story" ]; then
    vm_skip "prompt injection" "needs --add /usr/bin/ip:/usr/local/sbin/ip --add examples/prompt-injection:/vm/examples/prompt-injection"
    exit 0
fi
export IP=/usr/local/sbin/ip
denials() { # TRAIL VERDICT: op, target, rule, error of each denial with that verdict
    jq -r --arg verdict "$2" 'select(.type == "denial" and .verdict == $verdict) | "\(.op) \(.target) (\(.rule)) \(.error)"' "$1"
}
expect_step() { # CHECK TEXT FILE
    if grep -qF -- "$2" "$3"; then vm_ok "$1"; else vm_fail "$1" "no \"$2\" in $(tr '\n' ' ' <"$3")"; fi
}

rm -f /var/log/cerberus/prompt-injection.jsonl /var/log/cerberus/prompt-injection-audit.jsonl
sh "$story" --rootfs /rootfs --mode enforce >/tmp/story-enforce.out 2>&1
echo "==== story: mode enforce"
cat /tmp/story-enforce.out
denials /var/log/cerberus/prompt-injection.jsonl denied >/tmp/denied.txt
expect_step "enforce: the agent read the page it was asked to" "summary: Widget API quickstart" /tmp/story-enforce.out
expect_step "enforce: reading /workspace/.env fails with EACCES" "open /workspace/.env (denied_paths /workspace/.env) EACCES" /tmp/denied.txt
expect_step "enforce: reading the SSH key fails with EACCES" "open /root/.ssh/id_ed25519 (not in allowed_paths) EACCES" /tmp/denied.txt
expect_step "enforce: sending to the attacker fails with EPERM" "connect 203.0.113.66:8080 (not in allowed_hosts) EPERM" /tmp/denied.txt
expect_step "enforce: running the downloaded program fails with EACCES" "exec /workspace/update (not in allowed_bins) EACCES" /tmp/denied.txt
expect_step "enforce: the agent saw each failure" "can't open '/workspace/.env': Permission denied" /tmp/story-enforce.out
expect_step "enforce: nothing reached the attacker" "$(printf '== what reached the attacker at 203.0.113.66\n(nothing)')" /tmp/story-enforce.out

sh "$story" --rootfs /rootfs --mode audit --id prompt-injection-audit >/tmp/story-audit.out 2>&1
echo "==== story: mode audit"
cat /tmp/story-audit.out
echo "==== story: end"
denials /var/log/cerberus/prompt-injection-audit.jsonl audit >/tmp/audited.txt
expect_step "audit: the secret reached the attacker" "WIDGET_API_KEY=wk_live_4f1c9e0d7b2a" /tmp/story-audit.out
expect_step "audit: so did the SSH key" "made-up-key-for-the-story" /tmp/story-audit.out
expect_step "audit: the downloaded program ran" "the attacker's program is running" /tmp/story-audit.out
for step in "open /workspace/.env" "open /root/.ssh/id_ed25519" "connect 203.0.113.66:8080" "exec /workspace/update"; do
    expect_step "audit: the trail says enforce mode would have stopped $step" "$step" /tmp/audited.txt
done

exit 0
