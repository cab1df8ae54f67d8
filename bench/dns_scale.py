#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/dns.sh --scale's hands (bench/dns_scale.sh): registrations written straight into the DNS gate's run
directory, and lookups sent to a container's gate port as its agent's resolver would send them.

    dns_scale.py register RUN_DIR WORK NAMES NAMESERVER FIRST CGROUP_ID...
        writes each cgroup's registration (container I, counted from FIRST: the names n0.cI.test ..
        n<NAMES-1>.cI.test on port 443, and *.w.test for container 1) and asks the gate to serve it; exits
        non-zero on a refusal.
    dns_scale.py write RUN_DIR WORK NAMES NAMESERVER FIRST CGROUP_ID...
        the registrations alone (before the gate starts).
    dns_scale.py ask PORTS CGROUPS NAMES FIRST LAST
        in the containers' network namespace: for containers FIRST to LAST, each one's NAMES names asked (A), one
        after the other, on its gate port (PORTS: `ports`'s JSON; CGROUPS: a file of the cgroup ids in the order
        registered, container 1 first). Prints the rcodes, JSON.
    dns_scale.py wildcard PORT FROM TO
        x<FROM>.w.test .. x<TO-1>.w.test asked (A) on the port, one after the other. Prints the rcodes, JSON.
    dns_scale.py ports LAYOUT_DIR
        the cerb_dns_gates map as a JSON object, cgroup id -> port.
"""
import collections
import json
import os
import random
import socket
import struct
import subprocess
import sys

GATE = "127.53.0.1"
RCODES = {0: "NOERROR", 2: "SERVFAIL", 3: "NXDOMAIN", 5: "REFUSED"}


def query(name, qid):
    labels = b"".join(bytes([len(part)]) + part.encode() for part in name.split("."))
    return struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + labels + b"\0" + struct.pack("!HH", 1, 1)


def ask_gate(run_dir, request):
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as sock:
        sock.connect(os.path.join(run_dir, "gate.sock"))
        sock.send(request.encode())
        return sock.recv(4096).decode()


def register(run_dir, work, names, nameserver, first, cgroups, serve=True):
    for index, cgroup in enumerate(cgroups, start=first):
        rules = [{"name": f"n{j}.c{index}.test", "ports": [[443, 443]]} for j in range(names)]
        if index == 1:
            rules.append({"name": "*.w.test", "ports": [[443, 443]]})
        registration = {"id": f"scale-{index}", "cgroup_id": int(cgroup), "trail": f"{work}/trail-{index}.jsonl",
                        "mode": "enforce", "names": rules, "networks": [], "nameservers": [nameserver]}
        path = os.path.join(run_dir, "containers", f"{cgroup}.json")
        with open(path + ".tmp", "w") as out:
            json.dump(registration, out)
        os.rename(path + ".tmp", path)
        if not serve:
            continue
        answer = ask_gate(run_dir, f"serve {cgroup}")
        if answer != "ok":
            sys.exit(f"dns_scale.py: serve {cgroup}: {answer}")


class Asker:
    """One UDP socket; each name asked and its answer waited for (2 s), as a resolver does."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.settimeout(2)
        self.rcodes = collections.Counter()

    def ask(self, port, name):
        qid = random.randrange(65536)
        self.sock.sendto(query(name, qid), (GATE, port))
        try:
            while True:
                reply = self.sock.recv(4096)
                if len(reply) >= 12 and struct.unpack("!H", reply[:2])[0] == qid:
                    break
        except socket.timeout:
            self.rcodes["timeout"] += 1
            return
        self.rcodes[RCODES.get(reply[3] & 0x0F, str(reply[3] & 0x0F))] += 1


def ask_names(ports, cgroups_file, names, first, last):
    with open(cgroups_file) as lines:
        cgroups = lines.read().split()
    asker = Asker()
    for index in range(first, last + 1):
        port = ports[cgroups[index - 1]]
        for j in range(names):
            asker.ask(port, f"n{j}.c{index}.test")
    print(json.dumps(asker.rcodes))


def wildcard(port, start, end):
    asker = Asker()
    for k in range(start, end):
        asker.ask(port, f"x{k}.w.test")
    print(json.dumps(asker.rcodes))


def gate_ports(layout_dir):
    dump = json.loads(subprocess.check_output(["bpftool", "-j", "map", "dump", "pinned",
                                               os.path.join(layout_dir, "cerb_dns_gates")]))
    ports = {}
    for entry in dump:
        key, value = (bytes(int(b, 16) for b in entry[part]) for part in ("key", "value"))
        ports[str(int.from_bytes(key, "little"))] = int.from_bytes(value[:2], "little")
    return ports


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "register":
        register(args[0], args[1], int(args[2]), args[3], int(args[4]), args[5:])
    elif command == "write":
        register(args[0], args[1], int(args[2]), args[3], int(args[4]), args[5:], serve=False)
    elif command == "ask":
        ask_names(json.loads(args[0]), args[1], int(args[2]), int(args[3]), int(args[4]))
    elif command == "wildcard":
        wildcard(int(args[0]), int(args[1]), int(args[2]))
    elif command == "ports":
        print(json.dumps(gate_ports(args[0])))
    else:
        sys.exit(f"dns_scale.py: unknown command {command}")


if __name__ == "__main__":
    main()
