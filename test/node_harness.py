"""What the Python tests that start a node share (test/fault/faults.py, test/integration/*.py):
`barrel-node run` on a datadir with its JSON-RPC on a free loopback port, read from its
"JSON-RPC on …" line, and requests to it. Standard library only; a test imports it by path
(test/node-harness.mjs is the JavaScript tests' counterpart)."""

import json
import re
import signal
import subprocess
import threading
import urllib.request

# The line `run` prints once it serves (src/cli/node.cpp), IPv4 or bracketed IPv6.
SERVING = re.compile(r"JSON-RPC on (http://(?:\[[0-9A-Fa-f:.]+\]|[0-9.]+):([0-9]+))")


class Node:
    """`barrel-node run --datadir DATADIR --http 127.0.0.1:0 ARGS…` in the background. Its stderr
    is read as it comes, so that it never blocks on a full pipe, and kept in `log`; `url` and
    `port` are set once it serves."""

    def __init__(self, binary, datadir, args=(), env=None):
        self.args = [binary, "run", "--datadir", datadir, "--http", "127.0.0.1:0", *args]
        self.process = subprocess.Popen(self.args, env=env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True)
        self.log, self.url, self.port = [], None, None
        self._served = threading.Event()
        self._reader = threading.Thread(target=self._read_log, daemon=True)
        self._reader.start()

    def _read_log(self):
        for line in self.process.stderr:
            self.log.append(line)
            m = SERVING.search(line)
            if m and self.url is None:
                self.url, self.port = m.group(1), int(m.group(2))
                self._served.set()
        self._served.set()  # it exited: no url

    def serving(self, timeout):
        """Whether it serves within `timeout` seconds (False once it has exited without)."""
        return self._served.wait(timeout) and self.url is not None

    def post(self, payload, timeout=10):
        """`payload` as a JSON-RPC request body; the parsed response."""
        request = urllib.request.Request(self.url, data=json.dumps(payload).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())

    def call(self, method, *params):
        """One call's result; ValueError with the answer when it is an error."""
        answer = self.post({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)})
        if "result" not in answer:
            raise ValueError(f"{method}: {answer}")
        return answer["result"]

    def stop(self, timeout):
        """SIGTERM and its exit status, or None when it has not exited within `timeout` seconds
        (it is killed then). Its log is whole afterwards."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            status = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            status = None
        self._reader.join(timeout=5)
        return status
