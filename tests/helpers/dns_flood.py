#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A hostile neighbour of the DNS gate and a well-behaved container's lookups (tests/integration/dns_flood.sh).

    dns_flood.py flood PORT SECONDS   run in the flooder's network namespace: at once, thousands of idle TCP
                                      connections to its gate port and readers that never read their answers;
                                      then UDP queries (names its policy allows, names it does not, malformed
                                      messages) as fast as this process can send them. Prints what it saw, JSON.
    dns_flood.py probe PORT COUNT     run in the well-behaved container's namespace: COUNT lookups of names never
                                      asked before, one after the other (every tenth over TCP, as glibc falls
                                      back), each waited for up to 2 s. Prints the latencies, JSON.
"""
import json
import random
import resource
import socket
import struct
import sys
import time

GATE = "127.53.0.1"


def query(name, qid, qtype=1):
    """A DNS query with one question, recursion desired."""
    labels = b"".join(bytes([len(part)]) + part.encode() for part in name.split("."))
    return struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + labels + b"\0" + struct.pack("!HH", qtype, 1)


def rcode(reply):
    return reply[3] & 0x0F


def framed(message):
    return struct.pack("!H", len(message)) + message


def read_framed(sock):
    head = b""
    while len(head) < 2:
        chunk = sock.recv(2 - len(head))
        if not chunk:
            raise ConnectionError("closed")
        head += chunk
    (size,) = struct.unpack("!H", head)
    body = b""
    while len(body) < size:
        chunk = sock.recv(size - len(body))
        if not chunk:
            raise ConnectionError("closed")
        body += chunk
    return body


def open_idle(port, count):
    """Connections that never send (the gate closes those over its limit; the kernel completes the others)."""
    conns = []
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.connect_ex((GATE, port))
        conns.append(sock)
    return conns


def slow_readers(port, count, queries_each):
    """Connections that send many queries and never read one answer."""
    readers = []
    for r in range(count):
        sock = socket.create_connection((GATE, port), timeout=2)
        sock.setblocking(False)
        batch = b"".join(framed(query(f"s{r}-{i}.flood.example", i & 0xFFFF)) for i in range(queries_each))
        try:
            sock.send(batch)
        except OSError:
            pass
        readers.append(sock)
    return readers


def flood(port, seconds):
    resource.setrlimit(resource.RLIMIT_NOFILE, (8192, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    readers = slow_readers(port, 8, 2000)
    idle = open_idle(port, 3000)
    packets = []
    for i in range(3000):
        kind = i % 3
        if kind == 0:
            packets.append(query(f"f{random.getrandbits(40):x}.flood.example", i))  # allowed: goes upstream
        elif kind == 1:
            packets.append(query(f"n{i}.refused.example", i))  # not in the policy
        else:
            packets.append(bytes([i & 0xFF, 0, 0x01, 0, 0, 1]) + b"\xff" * 9)  # a header, no readable question
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.setblocking(False)
    udp.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    sent = 0
    replies = {}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for packet in packets:
            try:
                udp.sendto(packet, (GATE, port))
                sent += 1
            except BlockingIOError:
                pass
        try:
            while True:
                reply = udp.recv(4096)
                replies[rcode(reply)] = replies.get(rcode(reply), 0) + 1
        except BlockingIOError:
            pass
    print(json.dumps({"udp_sent": sent, "udp_rate": round(sent / seconds),
                      "replies": {str(k): v for k, v in sorted(replies.items())},
                      "idle_opened": len(idle), "readers": len(readers)}))


def probe(port, count):
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.settimeout(2)
    latencies, failed = [], []
    for i in range(count):
        name = f"p{i}-{random.getrandbits(32):x}.victim.example"
        qid = random.getrandbits(16)
        start = time.monotonic()
        try:
            if i % 10 == 9:
                with socket.create_connection((GATE, port), timeout=2) as tcp:
                    tcp.sendall(framed(query(name, qid)))
                    reply = read_framed(tcp)
            else:
                udp.sendto(query(name, qid), (GATE, port))
                reply = udp.recv(4096)
                while struct.unpack("!H", reply[:2])[0] != qid:  # a late answer to an earlier query
                    reply = udp.recv(4096)
            if rcode(reply) != 0:
                failed.append(f"{name}: rcode {rcode(reply)}")
                continue
        except (OSError, ConnectionError) as e:
            failed.append(f"{name}: {e}")
            continue
        latencies.append((time.monotonic() - start) * 1000)
    latencies.sort()
    pick = lambda q: round(latencies[min(len(latencies) - 1, int(q * len(latencies)))], 2) if latencies else None
    print(json.dumps({"count": count, "answered": len(latencies), "failed": failed[:5], "p50_ms": pick(0.5),
                      "p99_ms": pick(0.99), "max_ms": round(latencies[-1], 2) if latencies else None}))


if __name__ == "__main__":
    mode, port, amount = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    flood(port, amount) if mode == "flood" else probe(port, amount)
