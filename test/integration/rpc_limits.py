#!/usr/bin/env python3
"""The RPC limits of a real `barrel-node run`, each option shown to reach the node.

Starts the node with small limits (--rpc-max-response, --rpc-header-timeout,
--rpc-max-connections) and checks, through raw sockets: a batch past the response limit answers
its remaining calls -32003 "response too large"; a connection that sends no header is closed at
the header timeout; at the connection limit a new client is served and the longest idle
connection closed for it; `Expect: 100-continue` is answered before the body; a
`Transfer-Encoding` other than chunked is 501; ids come back as sent; SIGTERM exits 0.

Usage (ctest node_rpc_limits): rpc_limits.py --node build/release/src/barrel-node
"""

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import node_harness  # noqa: E402 (test/node_harness.py)

DEADLINE = 30
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)


class Conn:
    """One keep-alive connection, raw: requests as bytes, responses read by Content-Length."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
        self.buffer = b""

    def send(self, data):
        self.sock.sendall(data)

    def post(self, body, extra_headers=""):
        body = body.encode() if isinstance(body, str) else body
        self.send(b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n" +
                  extra_headers.encode() + b"Content-Length: " + str(len(body)).encode() +
                  b"\r\n\r\n" + body)
        return self.response()

    def response(self):
        """(status, body) of the next response."""
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None, b""
            self.buffer += chunk
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        status = int(head.split(b" ")[1])
        m = re.search(rb"(?i)content-length: *(\d+)", head)
        length = int(m.group(1)) if m else 0
        while len(self.buffer) < length:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            self.buffer += chunk
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, body

    def closed_by_server(self, within):
        self.sock.settimeout(within)
        try:
            return self.sock.recv(1) == b""
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False


def call(method, id_):
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": []}


def run(port):
    # --rpc-max-response 200: each answer is {"id":N,"jsonrpc":"2.0","result":"barrel/v0.1.0-…"},
    # 68-80 bytes (the client version names the commit and the compiler); the third passes 200
    # bytes, so the calls after it get -32003.
    c = Conn(port)
    status, body = c.post(json.dumps([call("web3_clientVersion", i) for i in range(1, 11)]))
    out = json.loads(body)
    check(status == 200 and len(out) == 10, f"a batch of 10: {status} {body[:200]}")
    check(all("result" in r for r in out[:3]), f"the first answers are results: {out[:3]}")
    too_large = {"code": -32003, "message": "response too large"}
    check(out[-1].get("error") == too_large, f"the last call is -32003: {out[-1]}")

    # Ids as sent.
    status, body = c.post('{"jsonrpc":"2.0","id":1e2,"method":"eth_chainId"}')
    check(body.startswith(b'{"id":1e2,'), f"id 1e2 echoed as sent: {body}")

    # 100 Continue before the body.
    continued = json.dumps(call("eth_chainId", 7)).encode()
    c.send(b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
           b"Expect: 100-continue\r\nContent-Length: " + str(len(continued)).encode() +
           b"\r\n\r\n")
    c.sock.settimeout(5)
    interim = c.sock.recv(4096)
    check(interim == b"HTTP/1.1 100 Continue\r\n\r\n", f"100 Continue first: {interim}")
    c.sock.settimeout(DEADLINE)
    c.send(continued)
    status, body = c.response()
    check(status == 200 and json.loads(body).get("result") == "0x1", f"then the answer: {status} {body}")

    # gzip, chunked: 501.
    g = Conn(port)
    g.send(b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
           b"Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
    status, body = g.response()
    check((status, body) == (501, b"unsupported transfer encoding\n"),
          f"gzip, chunked is 501: {status} {body}")

    # --rpc-header-timeout 300: a connection that sends nothing is closed within seconds.
    del c, g
    time.sleep(0.5)
    silent = Conn(port)
    t0 = time.monotonic()
    closed = silent.closed_by_server(10)
    took = time.monotonic() - t0
    check(closed and 0.1 <= took < 5, f"a silent connection closed at the header timeout: "
                                      f"{closed} after {took:.2f} s")

    # --rpc-max-connections 2: two idle keep-alive connections, then a third is served and the
    # longest idle one is closed for it.
    a, b = Conn(port), Conn(port)
    check(a.post(json.dumps(call("eth_chainId", 1)))[0] == 200, "a served")
    time.sleep(0.05)
    check(b.post(json.dumps(call("eth_chainId", 2)))[0] == 200, "b served")
    third = Conn(port)
    status, _ = third.post(json.dumps(call("eth_chainId", 3)))
    check(status == 200, f"a third connection at the limit is served, not {status}")
    check(a.closed_by_server(5), "the longest idle connection is closed for it")
    check(b.post(json.dumps(call("eth_chainId", 4)))[0] == 200, "the other still served")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--node", required=True, help="the barrel-node binary")
    binary = parser.parse_args().node
    with tempfile.TemporaryDirectory(prefix="barrel-rpc-limits-") as work:
        genesis, chain = os.path.join(work, "genesis.json"), os.path.join(work, "chain.rlp")
        subprocess.run([binary, "gen", "--genesis", genesis, "--out", chain, "--blocks", "1",
                        "--txs", "2", "--accounts", "4"], check=True, stdout=subprocess.DEVNULL)
        datadir = os.path.join(work, "d")
        subprocess.run([binary, "init", "--datadir", datadir, "--genesis", genesis], check=True,
                       stdout=subprocess.DEVNULL)
        node = node_harness.Node(binary, datadir,
                                 ["--rpc-max-response", "200", "--rpc-header-timeout", "300",
                                  "--rpc-max-connections", "2"])
        if not node.serving(DEADLINE):
            node.stop(DEADLINE)
            sys.exit("error: barrel-node run did not serve:\n" + "".join(node.log))
        try:
            run(node.port)
        finally:
            code = node.stop(DEADLINE)
        check(code == 0, f"barrel-node run exits 0 on SIGTERM, not {code}")
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print("rpc_limits: every limit reaches the node and holds")


if __name__ == "__main__":
    main()
