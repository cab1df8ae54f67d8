#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A stand-in for the command broker's decision hook (tests/integration/broker.bats): a webhook at /decide and
# OPA's data API at /v1/data/cerberus/commands, speaking their JSON. It denies `id`, leaves `date` undefined
# (OPA: no result), answers `sleep` too late, allows the rest; every request body is appended to LOG.
# Usage: decision_hook_server.py PORT_FILE LOG
import http.server
import json
import sys
import time

port_file, log = sys.argv[1], sys.argv[2]


class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with open(log, "a") as out:
            out.write(json.dumps({"path": self.path, "body": body}) + "\n")
        call = body["input"] if self.path.startswith("/v1/data/") else body
        args = call["args"]
        if args and args[0] == "sleep":
            time.sleep(3)
        verdict = {"allow": not (args and args[0] == "id"), "reason": "id is not for agents" if args and args[0] == "id" else "fine"}
        if self.path.startswith("/v1/data/"):
            answer = {} if args and args[0] == "date" else {"result": verdict}
        elif self.path == "/decide":
            answer = verdict
        else:
            self.send_response(404)
            self.end_headers()
            return
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
with open(port_file + ".tmp", "w") as out:
    out.write(str(server.server_address[1]))
import os
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
