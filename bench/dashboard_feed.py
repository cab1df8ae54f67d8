#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How many trail records a second `cerberus dashboard` carries to a live
Server-Sent Events client without losing one, and its memory meanwhile.

A writer appends denial records to a trail in a temporary audit directory at a
steady rate (in batches every 10 ms, as the collector writes); one client
(curl, which reads faster than the dashboard sends) follows /api/events into a
file. A rate passes when every record written reached the client, in order. Nothing here needs a kernel policy: the dashboard reads
trails, whoever wrote them.

usage: bench/dashboard_feed.py [--build DIR] [--seconds S] [RATE ...]
       (default build, 5 s, rates 1000 10000 20000 30000 50000 100000)
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def record(n):
    return json.dumps({
        "type": "denial", "time": "2024-05-01T12:03:04.%09dZ" % (n % 1000000000), "id": "bench-agent",
        "pid": 4242, "comm": "agent", "exe": "/bin/busybox", "op": "connect",
        "target": "203.0.113.9:443", "rule": "not in allowed_hosts", "errno": "EPERM", "verdict": "denied",
        "n": n}, separators=(",", ":"))


def peak_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def received(stream):
    """The records the event stream carried, and whether they came in order."""
    count, expected, in_order = 0, 0, True
    with open(stream, "rb") as f:
        for line in f:
            if line.startswith(b"data: "):
                n = json.loads(line[6:])["n"]
                in_order = in_order and n == expected
                expected = n + 1
                count += 1
    return count, in_order


def run_rate(build, rate, seconds):
    audit_dir = tempfile.mkdtemp(prefix="cerberus-dashbench-")
    trail = os.path.join(audit_dir, "bench-agent.jsonl")
    open(trail, "w").close()
    port = free_port()
    stream = os.path.join(audit_dir, "events.sse")
    dash = subprocess.Popen([os.path.join(build, "cerberus"), "dashboard", "--listen", "127.0.0.1:%d" % port,
                             "--audit-dir", audit_dir], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    client = None
    try:
        dash.stdout.readline()  # "cerberus dashboard: http://..." once it listens
        client = subprocess.Popen(["curl", "-sN", "-o", stream, "http://127.0.0.1:%d/api/events?after=0" % port])
        time.sleep(0.3)
        written = 0
        start = time.monotonic()
        with open(trail, "a") as out:
            while time.monotonic() - start < seconds:
                due = int((time.monotonic() - start) * rate)
                if due > written:
                    out.write("".join(record(n) + "\n" for n in range(written, due)))
                    out.flush()
                    written = due
                time.sleep(0.01)
        time.sleep(3)  # to catch up
        rss = peak_rss_kib(dash.pid)
        client.terminate()
        client.wait()
        count, in_order = received(stream)
        return written, count, in_order, rss
    finally:
        if client:
            client.kill()
            client.wait()
        dash.terminate()
        dash.wait(timeout=10)
        shutil.rmtree(audit_dir)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("rates", nargs="*", type=int, default=[1000, 10000, 20000, 30000, 50000, 100000])
    args = parser.parse_args()
    print("%10s %10s %10s %6s %12s" % ("records/s", "written", "received", "order", "peak RSS"))
    for rate in args.rates:
        written, received, in_order, rss = run_rate(args.build, rate, args.seconds)
        print("%10d %10d %10d %6s %9.1f MiB%s" % (rate, written, received, "yes" if in_order else "NO",
                                                   rss / 1024, "" if received == written else "  (lost some)"))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
