#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A WebSocket client for the egress proxy's tests, run in the container with
# the system's trust store: sends the upgrade for wss://HOST/PATH, then, when
# switched (101, the accept key checked), one masked text frame MESSAGE and
# prints the frame echoed back as "echo=...". Prints "status=N" first, and the
# body of any other answer.
# Usage: websocket_client.py HOST PATH MESSAGE
import base64
import hashlib
import os
import socket
import ssl
import struct
import sys

HOST, PATH, MESSAGE = sys.argv[1], sys.argv[2], sys.argv[3].encode()


def read_exactly(conn, size):
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            sys.exit("the connection ended early")
        data += chunk
    return data


conn = ssl.create_default_context().wrap_socket(socket.create_connection((HOST, 443), timeout=20),
                                                server_hostname=HOST)
key = base64.b64encode(os.urandom(16)).decode()
conn.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (PATH, HOST, key)).encode())
head = b""
while b"\r\n\r\n" not in head:
    head += read_exactly(conn, 1)
lines = head.decode().split("\r\n")
status = int(lines[0].split()[1])
headers = {line.partition(":")[0].strip().lower(): line.partition(":")[2].strip() for line in lines[1:] if line}
print("status=%d" % status)
if status != 101:
    print(read_exactly(conn, int(headers.get("content-length", 0))).decode())
    sys.exit(0)
expected = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
if headers.get("sec-websocket-accept") != expected:
    sys.exit("wrong Sec-WebSocket-Accept")
mask = os.urandom(4)
conn.sendall(struct.pack("!BB", 0x81, 0x80 | len(MESSAGE)) + mask +
             bytes(b ^ mask[i % 4] for i, b in enumerate(MESSAGE)))
first, length = read_exactly(conn, 2)
print("echo=" + read_exactly(conn, length & 0x7F).decode())
