#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# An HTTPS server for the egress proxy's tests, run in a network namespace the
# test made: answers every method with 200 and a body naming the method, the
# path, the Host and the Authorization header it got (also echoed in the
# X-Echo-Authorization header), and the length and SHA-256 of the body it read
# (sent with a Content-Length or chunked);
# GET .../big?n=BYTES answers that many bytes (0, 1, ... 250, 0, 1, ...); .../drip answers "first", then
# (chunked) "last" once the file FILES/release-drip exists, as a stream of events comes; .../gzip the same body
# gzip-encoded (HEAD: the same header, no body), .../encoded with the Authorization
# header in base64 and percent-encoded too. HTTP/1.1 keep-alive.
# Given FILES, GET /<any>/git/PATH answers the file FILES/PATH (404 when there is
# none): a git repository there is cloned over git's dumb HTTP protocol.
# A WebSocket upgrade is accepted (101) and each frame echoed until a close frame.
# Usage: https_server.py ADDRESS PORT CERT KEY [FILES]
import base64
import gzip
import hashlib
import http.server
import os
import socketserver
import ssl
import struct
import sys
import time
import urllib.parse

ADDRESS, PORT, CERT, KEY = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
FILES = sys.argv[5] if len(sys.argv) > 5 else None


def file_under_files(path):
    """The file of FILES a GET for /<any>/git/PATH names, or None when the path is not one of those."""
    parts = path.split("/")
    if FILES is None or len(parts) < 4 or parts[0] != "" or parts[2] != "git" or ".." in parts:
        return None
    return os.path.join(FILES, *parts[3:])


def send_file(handler, name):
    if not os.path.isfile(name):
        handler.send_error(404)
        return
    with open(name, "rb") as f:
        body = f.read()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/octet-stream")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # A response's header and body go in two writes: with Nagle's algorithm the second waits for the
    # client's delayed ACK (40 ms) on a keep-alive connection.
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        sys.stderr.write(fmt % args + "\n")

    def websocket_echo(self):
        """RFC 6455: the accept key, then each frame the client sends (masked) back unmasked, the same opcode."""
        key = self.headers.get("Sec-WebSocket-Key", "")
        accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept.decode())
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        while True:
            head = self.rfile.read(2)
            if len(head) < 2:
                return
            opcode, length = head[0] & 0x0F, head[1] & 0x7F
            if length == 126:
                length = struct.unpack("!H", self.rfile.read(2))[0]
            elif length == 127:
                length = struct.unpack("!Q", self.rfile.read(8))[0]
            mask = self.rfile.read(4) if head[1] & 0x80 else b"\0\0\0\0"
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(length)))
            size = struct.pack("!B", len(payload)) if len(payload) < 126 else struct.pack("!BH", 126, len(payload))
            self.wfile.write(bytes([0x80 | opcode]) + size + payload)
            self.wfile.flush()
            if opcode == 8:
                return

    def read_body(self, digest):
        """The request body into digest, its length given or chunked; how many bytes it had."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            received = 0
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                digest.update(self.rfile.read(size))
                received += size
                self.rfile.readline()  # the chunk's CRLF; after the last, the end of the (empty) trailer
                if size == 0:
                    return received
        length = int(self.headers.get("Content-Length") or 0)
        received = 0
        while received < length:
            chunk = self.rfile.read(min(65536, length - received))
            if not chunk:
                break
            digest.update(chunk)
            received += len(chunk)
        return received

    def answer(self):
        if self.headers.get("Upgrade", "").lower() == "websocket":
            return self.websocket_echo()
        digest = hashlib.sha256()
        received = self.read_body(digest)
        path, _, query = self.path.partition("?")
        name = file_under_files(path) if self.command == "GET" else None
        if name is not None:
            return send_file(self, name)
        if path.endswith("/drip"):
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"6\r\nfirst\n\r\n")
            self.wfile.flush()
            while not os.path.exists(os.path.join(FILES or "/nonexistent", "release-drip")):
                time.sleep(0.05)
            self.wfile.write(b"5\r\nlast\n\r\n0\r\n\r\n")
            return
        if path.endswith("/big"):
            size = int(query.partition("=")[2])
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.end_headers()
            block = bytes(range(251)) * 262  # 65762 bytes, whole periods: each block goes on from the last
            while size > 0:
                self.wfile.write(block[: min(size, len(block))])
                size -= min(size, len(block))
            return
        body = ("method=%s path=%s host=%s authorization=%s received=%d sha256=%s\n" % (
            self.command, self.path, self.headers.get("Host"), self.headers.get("Authorization"),
            received, digest.hexdigest())).encode()
        if path.endswith("/encoded"):  # the Authorization header echoed in base64 and percent-encoded
            authorization = self.headers.get("Authorization") or ""
            body += ("base64=%s percent=%s\n" % (base64.b64encode(authorization.encode()).decode(),
                                                 urllib.parse.quote(authorization, safe=""))).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("X-Echo-Authorization", self.headers.get("Authorization") or "")
        if path.endswith("/gzip"):
            body = gzip.compress(body)
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = answer


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(CERT, KEY)
server = Server((ADDRESS, PORT), Handler)
server.socket = context.wrap_socket(server.socket, server_side=True)
server.serve_forever()
