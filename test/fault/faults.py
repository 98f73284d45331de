#!/usr/bin/env python3
"""The fault-injection suite (issue 20): barrel-node and barrel-bench under a full disk, damaged
datadirs and endless or huge inputs. It asserts the target behaviour of docs/faults.md:

  exit 0, or 2 with ONE line 'error: ...' on stderr (1 is a bug, a signal is a crash);
  nothing half-written: whole blocks only, no hidden temporary file, a failed init leaves
  nothing that init then refuses;
  a datadir is never answered from silently (an older state than its head without saying so)
  and never changed by a command that refuses it;
  every input is bounded: a limit is hit, in bounded time and memory, with exit 2.

Usage: test/fault/faults.py [--build DIR] [--only GROUPS] [--matrix FILE] [--keep] [-j N]

  --build DIR     the build tree with src/barrel-node, bench/barrel-bench and
                  test/fault/enospc_shim.so (default: build/release beside this repo)
  --only GROUPS   comma-separated: full (ENOSPC at every write position, LD_PRELOAD shim),
                  tmpfs (a real full filesystem under init, import and a sealing run; where
                  mount is refused, skipped, or with CI set in the environment a failure),
                  fsize (a
                  file size limit, ulimit -f), damage
                  (truncations and bit flips of every datadir file), input (endless and huge
                  inputs under a memory limit), node (`run` sealing while the disk
                  fills, then empties: the shim's control file); default all
  --matrix FILE   write the fault matrix (markdown rows, one per fault x command) to FILE
  --keep          keep the scratch directory (printed at the start)
  -j N            run N cases at once (default: the number of cores)

Each case prints one line, 'ok' or 'FAIL'; a failure prints the command, its exit code and
stderr. Exit status 1 when a case failed, 0 otherwise. ctest runs it as the test `faults`
(label faults; test/fault/CMakeLists.txt).
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import node_harness  # noqa: E402 (test/node_harness.py)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENOSPC = "No space left on device"
# A command that answers from an older state than the datadir's head must say so on stderr.
NOTICE = re.compile(r"recover", re.IGNORECASE)
# The memory limit of the input cases: a bounded reader never comes near it, an unbounded one
# meets it within a second (RLIMIT_AS, so it covers every allocation, not only the heap).
MEMORY_LIMIT = 1 << 30
INPUT_TIMEOUT = 30  # seconds; a bounded reader stops long before


# ---- running a command ---------------------------------------------------------------------


class Result:
    def __init__(self, args, rc, out, err, secs):
        self.args, self.rc, self.out, self.err, self.secs = args, rc, out, err, secs

    @property
    def status(self):
        if self.rc is None:
            return "timeout"
        return f"signal {-self.rc}" if self.rc < 0 else f"exit {self.rc}"

    def error_lines(self):
        return [l for l in self.err.splitlines() if l.strip()]


def endless(chunk):
    while True:
        yield chunk


def run(args, *, env=None, cwd=None, stdin=None, feed=None, limit_as=None, limit_fsize=None,
        timeout=120, keep_out=True):
    """Runs args; stdin is a path to open, or feed an iterator of byte chunks written to a pipe
    until the process stops reading. rc None means it was killed at the timeout."""
    full_env = dict(os.environ)
    full_env.pop("LD_PRELOAD", None)
    if env:
        full_env.update(env)

    if limit_as:
        # prlimit(1) (util-linux) rather than a preexec_fn, which is unsafe in a threaded parent.
        args = ["prlimit", f"--as={limit_as}", "--", *args]
    if limit_fsize:
        args = ["prlimit", f"--fsize={limit_fsize}", "--", *args]
    start = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        stdin_file = open(stdin, "rb") if stdin else None
        try:
            p = subprocess.Popen(
                args, cwd=cwd, env=full_env,
                stdin=subprocess.PIPE if feed is not None else (stdin_file or subprocess.DEVNULL),
                stdout=out if keep_out else subprocess.DEVNULL, stderr=err)
        finally:
            if stdin_file:
                stdin_file.close()
        writer = None
        if feed is not None:
            def write_all():
                try:
                    for chunk in feed:
                        p.stdin.write(chunk)
                    p.stdin.close()
                except (BrokenPipeError, ValueError, OSError):
                    pass
            writer = threading.Thread(target=write_all, daemon=True)
            writer.start()
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            rc = None
        if writer:
            try:
                p.stdin.close()
            except (BrokenPipeError, OSError):
                pass
            writer.join(timeout=5)
        secs = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        return Result(args, rc, out.read().decode("utf-8", "replace"),
                      err.read().decode("utf-8", "replace"), secs)


# ---- files ---------------------------------------------------------------------------------

# Files RocksDB rewrites on every open whatever happens (its info log and lock file): not data.
def is_info_file(name):
    return name == "LOCK" or name == "LOG" or name.startswith("LOG.old")


def dir_digest(path):
    """{name: sha256} of the data files of a datadir (not the info log or LOCK)."""
    digest = {}
    if not os.path.isdir(path):
        return digest
    for name in sorted(os.listdir(path)):
        full = os.path.join(path, name)
        if is_info_file(name) or not os.path.isfile(full):
            continue
        with open(full, "rb") as f:
            digest[name] = hashlib.sha256(f.read()).hexdigest()
    return digest


def digest_diff(before, after):
    gone = sorted(set(before) - set(after))
    new = sorted(set(after) - set(before))
    changed = sorted(n for n in before if n in after and before[n] != after[n])
    parts = []
    if gone:
        parts.append("deleted " + ",".join(gone))
    if changed:
        parts.append("changed " + ",".join(changed))
    if new:
        parts.append("created " + ",".join(new))
    return "; ".join(parts)


# RocksDB's own metadata, which every writable open rewrites.
ROCKSDB_METADATA = re.compile(r"^(MANIFEST-\d+|CURRENT|OPTIONS-\d+|IDENTITY|\d+\.log)$")


def opened_then_failed(command, res, before, after):
    """An import that opened the datadir and failed at a block (not refused at open), having
    changed only RocksDB's metadata: every table file and every file of barrel's is as before."""
    if command != "import" or not res.err.startswith("error: block "):
        return False
    for name in set(before) | set(after):
        if before.get(name) != after.get(name) and not ROCKSDB_METADATA.match(name):
            return False
    return True


def no_hidden_files(*dirs):
    """The problem, if any, of temporary files left in dirs: barrel's are hidden
    ('.NAME.tmpPID-N', a datadir built beside its target until it is renamed), RocksDB's end
    in '.dbtmp' (an OPTIONS or CURRENT file not yet renamed into place)."""
    found = []
    for d in dirs:
        if os.path.isdir(d):
            found += [os.path.join(d, n) for n in sorted(os.listdir(d))
                      if n.startswith(".") or n.endswith(".dbtmp")]
    return ["temporary files left: " + ", ".join(found)] if found else []


def file_kind(name):
    if name.startswith("MANIFEST-"):
        return "MANIFEST"
    if name.startswith("OPTIONS-"):
        return "OPTIONS"
    if name.endswith(".log"):
        return "WAL"
    if name.endswith(".sst"):
        return "SST"
    if name in ("CURRENT", "IDENTITY"):
        return name
    return re.sub(r"\d+", "N", name)  # another file, e.g. the store's COMMITTED record


# More write positions than this are sampled evenly (first and last included), to keep the
# suite fast if the store ever writes many more times per command.
MAX_POSITIONS = 150


def positions(total):
    if total <= MAX_POSITIONS:
        return list(range(1, total + 1))
    return sorted({1 + round(i * (total - 1) / (MAX_POSITIONS - 1)) for i in range(MAX_POSITIONS)})


def split_chain(data):
    """The wire blocks of a chain file (RLP lists concatenated)."""
    blocks, i = [], 0
    while i < len(data):
        b = data[i]
        if b < 0xc0:
            raise ValueError("chain file: not a list at offset %d" % i)
        if b <= 0xf7:
            n, h = b - 0xc0, 1
        else:
            ll = b - 0xf7
            n, h = int.from_bytes(data[i + 1:i + 1 + ll], "big"), 1 + ll
        blocks.append(data[i:i + h + n])
        i += h + n
    return blocks


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


# ---- a running node ------------------------------------------------------------------------


class RunningNode(node_harness.Node):
    """`barrel-node run` in the background (test/node_harness.py), sealing every `block_time` ms:
    calls to it, and waits on what it says. What goes wrong is appended to `problems`."""

    def __init__(self, node, dd, problems, env=None, block_time=100):
        self.problems = problems
        self.started = time.monotonic()
        super().__init__(node, dd, ["--block-time", str(block_time)], env=env)

    def serving(self, timeout=30):
        if not super().serving(timeout):
            self.problems.append("the node did not serve")
            return False
        return True

    def logged(self, *parts):
        """Whether a line of the log holds every one of `parts`."""
        return any(all(part in line for part in parts) for line in list(self.log))

    def gauge(self, name):
        with urllib.request.urlopen(self.url + "/metrics", timeout=10) as response:
            for line in response.read().decode().splitlines():
                if line.startswith(name + " "):
                    return float(line.split()[1])
        return None

    def send(self, raws):
        """Sends the signed transactions `raws` (0x hex) in one batch."""
        answers = self.post([{"jsonrpc": "2.0", "id": i, "method": "eth_sendRawTransaction",
                              "params": [raw]} for i, raw in enumerate(raws)])
        refused = [a for a in answers if "result" not in a]
        if refused:
            self.problems.append(f"{len(refused)} transactions not admitted: {refused[0]}")

    def mined(self, tx_hash):
        return self.call("eth_getTransactionReceipt", tx_hash) is not None

    def head(self):
        return int(self.call("eth_blockNumber"), 16)

    def block_hash(self, number):
        return self.call("eth_getBlockByNumber", hex(number), False)["hash"]

    def wait_for(self, what, condition, secs=30):
        """Polls `condition` until it holds or `secs` have passed (a problem then)."""
        deadline = time.monotonic() + secs
        while time.monotonic() < deadline:
            if condition():
                return True
            time.sleep(0.05)
        self.problems.append(f"{what}: not within {secs}s")
        return False

    def stop(self):
        """SIGTERM and the exit: a Result whose stderr is the whole log; a problem unless 0."""
        rc = super().stop(60)
        if rc is None:
            rc = self.process.returncode
            self.problems.append("SIGTERM did not stop the node within 60 s")
        res = Result(self.args, rc, "", "".join(self.log), time.monotonic() - self.started)
        if rc != 0:
            self.problems.append(f"the stop did not exit 0 ({res.status})")
        return res


# ---- the suite -----------------------------------------------------------------------------


class Suite:
    def __init__(self, build, work, jobs):
        self.node = os.path.join(build, "src", "barrel-node")
        self.bench = os.path.join(build, "bench", "barrel-bench")
        self.shim = os.path.join(build, "test", "fault", "enospc_shim.so")
        for f in (self.node, self.bench, self.shim):
            if not os.path.exists(f):
                sys.exit(f"faults.py: {f} is missing; build the targets barrel-node, barrel-bench "
                         f"and barrel-fault-enospc of {build} first")
        self.work = work
        self.jobs = jobs
        self.rows = []  # (group, fault, command, ok, status, message, state)
        self.failed = 0
        self.lock = threading.Lock()

    # ---- reporting ----

    def report(self, group, name, fault, command, res, problems, state):
        ok = not problems
        message = self.message_of(res)
        with self.lock:
            self.rows.append((group, fault, command, ok, res.status if res else "-", message,
                              state))
            if ok:
                print(f"ok   {group:6} {name}: {res.status if res else ''} {state}".rstrip())
            else:
                self.failed += 1
                print(f"FAIL {group:6} {name}: {'; '.join(problems)}")
                if res:
                    print(f"       command: {' '.join(res.args)}")
                    print(f"       {res.status} after {res.secs:.1f}s; stderr:")
                    for line in res.err.splitlines()[:6]:
                        print(f"         {line}")
            sys.stdout.flush()

    def cannot_run(self, group, what):
        """Cases this machine cannot run: skipped with a message locally, a failure in CI (CI set
        in the environment), where every case must run."""
        with self.lock:
            if os.environ.get("CI"):
                self.failed += 1
                print(f"FAIL {group:6} {what} (CI is set: every case must run here)")
            else:
                print(f"skip {group:6} {what} (without CI set this only skips)")
            sys.stdout.flush()

    def message_of(self, res):
        if res is None or res.rc == 0:
            return ""
        lines = res.error_lines()
        m = lines[0] if lines else "(no message)"
        m = re.sub(re.escape(self.work) + r"/[\w.-]+/[\w.-]+/", "DIR/", m)
        m = m.replace(self.work, "W")
        m = re.sub(r"\.tmp\d+-\d+", ".tmpPID-N", m)
        m = re.sub(r"\b0x[0-9a-f]{16,}\b", "0x…", m)
        m = re.sub(r"\b\d{6}\.(sst|log)\b", r"NNNNNN.\1", m)
        m = re.sub(r"MANIFEST-\d+", "MANIFEST-N", m)
        m = re.sub(r"OPTIONS-\d+", "OPTIONS-N", m)
        return m[:160]

    def parallel(self, tasks):
        """Runs the callables, self.jobs at a time; a task reports its own cases."""
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.jobs) as pool:
            for f in [pool.submit(t) for t in tasks]:
                f.result()

    def target_error(self, res, needle=None):
        """What is wrong with a refusal: the exit code and the one error line."""
        problems = []
        if res.rc is None:
            return [f"no answer within the timeout ({res.secs:.0f}s)"]
        if res.rc < 0 or res.rc > 2:
            problems.append(f"crashed ({res.status})")
        elif res.rc == 1:
            problems.append("exit 1 (a bug in barrel), not 2")
        lines = res.error_lines()
        if res.rc != 0:
            if len(lines) != 1 or not lines[0].startswith("error: "):
                problems.append(f"stderr is not one 'error: ...' line ({len(lines)} lines)")
            if needle and needle not in res.err:
                problems.append(f"message lacks '{needle}'")
        return problems

    # ---- fixtures ----

    def node_run(self, *args, **kw):
        return run([self.node, *args], **kw)

    def setup(self):
        """A 5-block chain of small blocks, its genesis, datadirs at genesis, at block 3, at 5."""
        self.fx = os.path.join(self.work, "fixture")
        os.makedirs(self.fx)
        fx = self.fx
        self.genesis = os.path.join(fx, "g.json")
        self.chain = os.path.join(fx, "c.rlp")
        must(self.node_run("gen", "--genesis", self.genesis, "--out", self.chain, "--blocks", "5",
                           "--txs", "4", "--accounts", "8", "--seed", "7"))
        self.chain_bytes = read(self.chain)
        self.blocks = split_chain(self.chain_bytes)
        self.chain3 = os.path.join(fx, "c3.rlp")
        write(self.chain3, b"".join(self.blocks[:3]))
        inspect = json.loads(must(self.node_run("block", "inspect", self.chain)).out)
        self.hashes = {i + 1: b["hash"] for i, b in enumerate(inspect)}
        self.tx_hashes = {i + 1: [t["hash"] for t in b["transactions"]]
                          for i, b in enumerate(inspect)}
        self.coinbase = inspect[0]["header"]["coinbase"]

        self.dd_genesis = os.path.join(fx, "dd0")
        must(self.node_run("init", "--datadir", self.dd_genesis, "--genesis", self.genesis))
        self.hashes[0] = json.loads(must(self.node_run("get", "block", "0", "--datadir",
                                                       self.dd_genesis)).out)["hash"]
        self.dd3 = os.path.join(fx, "dd3")
        shutil.copytree(self.dd_genesis, self.dd3)
        must(self.node_run("import", "--datadir", self.dd3, self.chain3))
        self.account3 = must(self.node_run("get", "account", self.coinbase, "--datadir",
                                           self.dd3)).out
        self.dd5 = os.path.join(fx, "dd5")
        shutil.copytree(self.dd3, self.dd5)
        must(self.node_run("import", "--datadir", self.dd5, self.chain))
        print(f"fixture: 5 blocks of 4 transactions, head {self.hashes[5][:18]}…, in {fx}")

    def head_of(self, dd):
        """(number, problem): the highest block present, and what is wrong with it — a header
        without its transactions or receipts, or transactions of the block after it (a
        partial block)."""
        for n in range(5, -1, -1):
            r = self.node_run("get", "block", str(n), "--datadir", dd)
            if r.rc == 0:
                if json.loads(r.out).get("hash") != self.hashes[n]:
                    return n, f"block {n} has another hash"
                break
            if r.rc != 2 or "not found" not in r.err:
                return None, f"get block {n}: {r.status}: {r.err.strip()[:120]}"
        else:
            return None, "no block 0"
        if n > 0:
            for what in ("tx", "receipt"):
                last = self.tx_hashes[n][-1]
                r = self.node_run("get", what, last, "--datadir", dd)
                if r.rc != 0:
                    return n, f"head {n} lacks its {what} {last[:10]}…"
        if n < 5:
            first = self.tx_hashes[n + 1][0]
            r = self.node_run("get", "tx", first, "--datadir", dd)
            if r.rc != 2:
                return n, f"a transaction of block {n + 1} is stored past head {n}"
        return n, None

    def count_writes(self, args, cwd, prepare):
        """How many write calls args make without a fault (the shim's count mode)."""
        prepare()
        counter = os.path.join(cwd, "write-count")
        must(run(args, cwd=cwd, env={"LD_PRELOAD": self.shim, "BARREL_FAULT_COUNT": counter}))
        n = int(read(counter))
        os.unlink(counter)
        return n

    # ---- 1. a full disk (LD_PRELOAD shim) ----

    def full(self):
        self.full_init()
        self.full_import(self.dd_genesis, "import")
        # Finding 1 aborted even when every block was already stored.
        self.full_import(self.dd5, "import (all stored)")
        self.full_export()
        self.full_gen()
        # A shim that no longer reaches the writes (another I/O path in RocksDB, a static libc)
        # would make every case above pass unfaulted: each command must have seen the fault.
        for command in ("init", "import", "import (all stored)", "export", "gen"):
            seen = [r for r in self.rows if r[0] == "full" and r[2] == command]
            if seen and all(r[4] == "exit 0" for r in seen):
                self.report("full", f"{command}: the shim bit", "ENOSPC", command, None,
                            ["every write position exited 0: the ENOSPC shim never bit"], "")

    def case_dir(self, *parts):
        d = os.path.join(self.work, *parts)
        os.makedirs(d, exist_ok=True)
        return d

    def faulted(self, n):
        return {"LD_PRELOAD": self.shim, "BARREL_FAULT_FAIL_AT": str(n)}

    def full_init(self):
        base = self.case_dir("full-init")

        def prepare():
            shutil.rmtree(os.path.join(base, "count"), ignore_errors=True)
        total = self.count_writes([self.node, "init", "--datadir", os.path.join(base, "count"),
                                   "--genesis", self.genesis], base, prepare)

        def one(n):
            d = self.case_dir("full-init", str(n))
            dd = os.path.join(d, "dd")
            res = self.node_run("init", "--datadir", dd, "--genesis", self.genesis, cwd=d,
                                env=self.faulted(n))
            problems = self.target_error(res, ENOSPC if res.rc else None)
            state = ""
            if res.rc == 0:
                head, why = self.head_of(dd)
                state = f"head {head}"
                if why:
                    problems.append(why)
            elif res.rc is not None:
                if os.path.isdir(dd) and os.listdir(dd):
                    problems.append(f"left a datadir of {len(os.listdir(dd))} files "
                                    f"({', '.join(sorted(os.listdir(dd))[:4])}…)")
                    state = "left files"
                else:
                    state = "no datadir"
                again = self.node_run("init", "--datadir", dd, "--genesis", self.genesis)
                if again.rc != 0:
                    problems.append(f"init after the fault: {again.status}: "
                                    f"{again.err.strip()[:100]}")
                    state += ", init again refused"
                else:
                    state += ", init again ok"
            problems += no_hidden_files(d, dd)
            self.report("full", f"init ENOSPC at write {n}/{total}", f"ENOSPC at write 1..{total}",
                        "init", res, problems, state)
            shutil.rmtree(d, ignore_errors=True)
        self.parallel([lambda n=n: one(n) for n in positions(total)])

    def full_import(self, start, command):
        tag = "full-" + re.sub(r"\W+", "-", command).strip("-")
        base = self.case_dir(tag)
        dd_count = os.path.join(base, "count")

        def prepare():
            shutil.rmtree(dd_count, ignore_errors=True)
            shutil.copytree(start, dd_count)
        total = self.count_writes([self.node, "import", "--datadir", dd_count, self.chain], base,
                                  prepare)

        def one(n):
            d = self.case_dir(tag, str(n))
            dd = os.path.join(d, "dd")
            shutil.copytree(start, dd)
            res = self.node_run("import", "--datadir", dd, self.chain, cwd=d,
                                env=self.faulted(n))
            problems = self.target_error(res, ENOSPC if res.rc else None)
            head, why = self.head_of(dd)
            state = f"head {head}" if head is not None else "unreadable"
            if why:
                problems.append(why)
            if res.rc == 0 and head != 5:
                problems.append(f"exit 0 but head {head}")
            again = self.node_run("import", "--datadir", dd, self.chain)
            head2, why2 = self.head_of(dd)
            if again.rc != 0 or head2 != 5 or why2:
                problems.append(f"import after the fault: {again.status}, head {head2} "
                                f"{why2 or ''} {again.err.strip()[:100]}")
                state += ", resume failed"
            else:
                state += ", resumed to 5"
            problems += no_hidden_files(d, dd)
            self.report("full", f"{command} ENOSPC at write {n}/{total}",
                        f"ENOSPC at write 1..{total}", command, res, problems, state)
            shutil.rmtree(d, ignore_errors=True)
        self.parallel([lambda n=n: one(n) for n in positions(total)])

    def full_export(self):
        base = self.case_dir("full-export")
        total = self.count_writes([self.node, "export", "--datadir", self.dd5, "--out",
                                   os.path.join(base, "count.rlp")], base, lambda: None)
        before = dir_digest(self.dd5)

        def one(n):
            d = self.case_dir("full-export", str(n))
            out = os.path.join(d, "out.rlp")
            write(out, b"the previous file")
            res = self.node_run("export", "--datadir", self.dd5, "--out", out, cwd=d,
                                env=self.faulted(n))
            problems = self.target_error(res, ENOSPC if res.rc else None)
            now = read(out)
            if res.rc == 0:
                state = "written whole" if now == self.chain_bytes else "written wrong"
                if now != self.chain_bytes:
                    problems.append("exit 0 but the file is not the chain")
            else:
                state = "old file kept" if now == b"the previous file" else "old file replaced"
                if now != b"the previous file":
                    problems.append("a failed export replaced the file")
            problems += no_hidden_files(d)
            self.report("full", f"export ENOSPC at write {n}/{total}",
                        f"ENOSPC at write 1..{total}", "export", res, problems, state)
            shutil.rmtree(d, ignore_errors=True)
        # Serially: all cases read the one datadir, and RocksDB locks it.
        for n in positions(total):
            one(n)
        diff = digest_diff(before, dir_digest(self.dd5))
        if diff:
            self.report("full", "export leaves the datadir as it was", "ENOSPC", "export", None,
                        [diff], "")

    def full_gen(self):
        base = self.case_dir("full-gen")
        args = ["gen", "--genesis", "g.json", "--out", "c.rlp", "--blocks", "5", "--txs", "4",
                "--accounts", "8", "--seed", "7"]
        total = self.count_writes([self.node, *args], base, lambda: None)
        want = {"g.json": read(self.genesis), "c.rlp": self.chain_bytes}

        def one(n):
            d = self.case_dir("full-gen", str(n))
            res = self.node_run(*args, cwd=d, env=self.faulted(n))
            problems = self.target_error(res, ENOSPC if res.rc else None)
            states = []
            for name, data in want.items():
                p = os.path.join(d, name)
                if not os.path.exists(p):
                    states.append(f"no {name}")
                    if res.rc == 0:
                        problems.append(f"exit 0 without {name}")
                elif read(p) != data:
                    states.append(f"partial {name}")
                    problems.append(f"{name} is not whole")
                else:
                    states.append(f"whole {name}")
            problems += no_hidden_files(d)
            self.report("full", f"gen ENOSPC at write {n}/{total}", f"ENOSPC at write 1..{total}",
                        "gen", res, problems, ", ".join(states))
            shutil.rmtree(d, ignore_errors=True)
        self.parallel([lambda n=n: one(n) for n in positions(total)])

    # ---- 1b. a real full filesystem (tmpfs) ----

    TMPFS_FREE_KIB = (16, 64, 160, 400)

    def tmpfs(self):
        """A real full filesystem: a 16 MiB tmpfs filled by a filler file to leave a few KiB
        free, the command run, the filler removed (space is back) and the command run again."""
        mnt = self.case_dir("tmpfs")
        probe = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", mnt],
                               capture_output=True, text=True)
        if probe.returncode != 0:
            self.cannot_run("tmpfs", "a real full filesystem: cannot mount a tmpfs here (needs "
                            "root or CAP_SYS_ADMIN: "
                            f"{probe.stderr.strip() or 'exit %d' % probe.returncode})")
            return
        try:
            for kib in self.TMPFS_FREE_KIB:
                self.tmpfs_case(mnt, "init", kib)
                self.tmpfs_case(mnt, "import", kib)
            self.tmpfs_node(mnt)
        finally:
            subprocess.run(["umount", mnt], capture_output=True)

    @staticmethod
    def fill(mnt, free_kib):
        filler = os.path.join(mnt, "filler")
        st = os.statvfs(mnt)
        size = st.f_bavail * st.f_frsize - free_kib * 1024
        with open(filler, "wb") as f:
            f.truncate(0)
            chunk = b"\xff" * (1 << 20)
            while size > 0:
                size -= f.write(chunk[:min(size, len(chunk))])
        return filler

    def tmpfs_case(self, mnt, command, free_kib):
        d = os.path.join(mnt, f"{command}-{free_kib}")
        os.makedirs(d)
        dd = os.path.join(d, "dd")
        if command == "import":
            shutil.copytree(self.dd_genesis, dd, ignore=lambda _, names: [
                n for n in names if is_info_file(n)])
            args = ["import", "--datadir", dd, self.chain]
        else:
            args = ["init", "--datadir", dd, "--genesis", self.genesis]
        filler = self.fill(mnt, free_kib)
        res = self.node_run(*args)
        problems = self.target_error(res, ENOSPC if res.rc else None)
        if command == "init" and res.rc != 0:
            left = os.listdir(dd) if os.path.isdir(dd) else []
            if left:
                problems.append(f"left a datadir of {len(left)} files")
            state = "left files" if left else "no datadir"
        else:
            head, why = self.head_of(dd)
            if why:
                problems.append(why)
            state = f"head {head}"
        os.unlink(filler)  # space is back
        again = self.node_run(*args) if command == "import" or res.rc != 0 else res
        head2, why2 = self.head_of(dd)
        want = 5 if command == "import" else 0
        if again.rc != 0 or head2 != want or why2:
            problems.append(f"{command} once space is back: {again.status}, head {head2} "
                            f"{why2 or ''} {again.err.strip()[:100]}")
            state += ", failed again once space is back"
        else:
            state += f", {command} ok once space is back"
        problems += no_hidden_files(d, dd)
        self.report("tmpfs", f"{command} on a tmpfs with {free_kib} KiB free", "full tmpfs",
                    command, res, problems, state)
        shutil.rmtree(d, ignore_errors=True)

    def tmpfs_node(self, mnt):
        """Issue 40: `barrel-node run` sealing until the tmpfs is full, then the filler deleted.
        RocksDB's own recovery from a full disk waits for as much free space as its largest write
        buffer (16 MiB), which this 16 MiB tmpfs never has again: the node must resume all the
        same, mine what is sent once space is back, keep every block it had (same hashes) and
        leave a datadir that verifies after its stop."""
        d = os.path.join(mnt, "node")
        os.makedirs(d)
        dd = os.path.join(d, "dd")
        # Blocks of 200 transactions (the fixture's 4 would take long to fill even 64 KiB), their
        # genesis and chain outside the tmpfs.
        genesis = os.path.join(self.work, "tmpfs-node-g.json")
        chain = os.path.join(self.work, "tmpfs-node-c.rlp")
        must(self.node_run("gen", "--genesis", genesis, "--out", chain, "--blocks", "8", "--txs",
                           "200", "--accounts", "100", "--seed", "11"))
        blocks = split_chain(read(chain))
        raws = [self.raw_transactions(b) for b in blocks]
        last_tx = [b["transactions"][-1]["hash"]
                   for b in json.loads(must(self.node_run("block", "inspect", chain)).out)]
        must(self.node_run("init", "--datadir", dd, "--genesis", genesis))
        problems, state = [], "the disk never filled"
        node = RunningNode(self.node, dd, problems)
        filler = None
        try:
            if node.serving():
                node.send(raws[0])
                node.wait_for("block 1 mined", lambda: node.mined(last_tx[0]))
                filler = self.fill(mnt, 64)
                sent = 1
                while sent < len(raws) - 1 and not node.logged("the store is in a write error"):
                    node.send(raws[sent])
                    k = sent
                    node.wait_for(f"workload block {k + 1} mined or the store in error",
                                  lambda: node.mined(last_tx[k]) or
                                  node.logged("the store is in a write error"))
                    sent += 1
                if not node.logged("seal failed", ENOSPC):
                    problems.append(f"no 'seal failed: ... {ENOSPC}' line while the tmpfs is "
                                    f"full ({sent} workload blocks sent)")
                head = node.head()
                hashes = [node.block_hash(n) for n in range(head + 1)]
                state = f"full at head {head}"
                os.unlink(filler)  # space is back
                filler = None
                node.send(raws[sent])
                if node.wait_for("a transaction sent once space is back mined",
                                 lambda: node.mined(last_tx[sent])):
                    state += ", resumed once space is back"
                else:
                    state += ", never resumed once space is back"
                node.wait_for("the log says the store resumed",
                              lambda: node.logged("the store resumed"))
                if [node.block_hash(n) for n in range(head + 1)] != hashes:
                    problems.append(f"a block at or below head {head} changed once space was "
                                    "back")
                unmined = [k + 1 for k in range(sent + 1) if not node.mined(last_tx[k])]
                if unmined:
                    problems.append(f"workload blocks {unmined} are not all mined")
        except (OSError, ValueError) as e:
            problems.append(f"JSON-RPC failed: {e}")
        finally:
            if filler:
                os.unlink(filler)
            res = node.stop()
        verified = self.node_run("verify", "--datadir", dd)
        if verified.rc != 0:
            problems.append(f"verify after the stop: {verified.status}: "
                            f"{verified.err.strip()[:120]}")
        problems += no_hidden_files(d, dd)
        self.report("tmpfs", "run on a tmpfs filled while sealing, then emptied", "full tmpfs",
                    "run", res, problems, state)
        shutil.rmtree(d, ignore_errors=True)

    # ---- 1c. a file size limit (ulimit -f) ----

    def fsize(self):
        """RLIMIT_FSIZE below what the command writes: SIGXFSZ is the default answer (exit 153,
        finding 6); the target is exit 2 'File too large' and nothing half-written."""
        def case(command, args, limit, check):
            d = self.case_dir("fsize", re.sub(r"\W+", "-", command))
            res = run([self.node, *args(d)], cwd=d, limit_fsize=limit)
            problems = self.target_error(res, "File too large" if res.rc else None)
            state, more = check(d, res)
            problems += more + no_hidden_files(d, os.path.join(d, "dd"))
            self.report("fsize", f"{command} under a {limit}-byte file size limit",
                        "file size limit (ulimit -f)", command, res, problems, state)
            shutil.rmtree(d, ignore_errors=True)

        def init_check(d, res):
            dd = os.path.join(d, "dd")
            if res.rc == 0:  # the limit bit nothing that matters: a whole datadir
                head, why = self.head_of(dd)
                return f"head {head}", [why] if why else []
            left = os.listdir(dd) if os.path.isdir(dd) else []
            again = self.node_run("init", "--datadir", dd, "--genesis", self.genesis)
            state = ("left files" if left else "no datadir") + \
                (", init again ok" if again.rc == 0 else ", init again refused")
            return state, ([f"left a datadir of {len(left)} files"] if left else []) + \
                ([f"init without the limit: {again.status}"] if again.rc else [])

        def import_check(d, res):
            dd = os.path.join(d, "dd")
            head, why = self.head_of(dd)
            again = self.node_run("import", "--datadir", dd, self.chain)
            head2, why2 = self.head_of(dd)
            problems = [why] if why else []
            if again.rc or head2 != 5 or why2:
                problems.append(f"import without the limit: {again.status}, head {head2}")
            return f"head {head}, " + ("resumed to 5" if head2 == 5 else "resume failed"), \
                problems

        def output_check(name):
            def check(d, res):
                path = os.path.join(d, name)
                if res.rc == 0:
                    whole = os.path.exists(path) and read(path) == self.chain_bytes
                    return ("wrote it whole", []) if whole else \
                        ("wrote it", [f"exit 0 without a whole {name}"])
                there = os.path.exists(path)
                return ("left " + name if there else "no output"), \
                    ([f"a refused run left {name}"] if there else [])
            return check

        case("init", lambda d: ["init", "--datadir", os.path.join(d, "dd"), "--genesis",
                                self.genesis], 16384, init_check)

        def import_args(d):
            shutil.copytree(self.dd_genesis, os.path.join(d, "dd"))
            return ["import", "--datadir", os.path.join(d, "dd"), self.chain]
        # Above every file of the datadir at genesis but the info log, below a new OPTIONS file.
        case("import", import_args, 16384, import_check)
        case("export", lambda d: ["export", "--datadir", self.dd5, "--out",
                                  os.path.join(d, "out.rlp")], 1024, output_check("out.rlp"))
        case("gen", lambda d: ["gen", "--genesis", "g.json", "--out", "c.rlp", "--blocks", "5",
                               "--txs", "4", "--accounts", "8", "--seed", "7"], 1024,
             output_check("c.rlp"))

    # ---- 2. damaged datadirs ----

    DAMAGES = ["truncate to 0", "truncate to half", "truncate by 1 byte", "flip a bit at start",
               "flip a bit in the middle", "flip a bit at the end"]

    @staticmethod
    def damage(path, how):
        data = bytearray(read(path))
        if not data:
            return False
        if how == "truncate to 0":
            data = b""
        elif how == "truncate to half":
            data = data[:len(data) // 2]
        elif how == "truncate by 1 byte":
            data = data[:-1]
        else:
            at = {"start": 0, "middle": len(data) // 2, "end": len(data) - 1}[how.split()[-1]]
            data[at] ^= 0x10
        write(path, bytes(data))
        return True

    def wal_datadir(self):
        """A datadir whose blocks 1..3 are in the WAL only: the import is killed (SIGKILL, by
        the shim) at the first write to an SST — the memtable flush of its close — when every
        block is committed to the WAL and none is flushed. Deterministic: no timing."""
        dd = os.path.join(self.fx, "dd3-wal")
        shutil.copytree(self.dd_genesis, dd)
        res = self.node_run("import", "--datadir", dd, self.chain3,
                            env={"LD_PRELOAD": self.shim, "BARREL_FAULT_KILL_ON": ".sst"})
        wal = [n for n in os.listdir(dd) if n.endswith(".log") and os.path.getsize(
            os.path.join(dd, n)) > 0]
        if res.rc != -9 or not wal:
            self.cannot_run("damage", "the unflushed-WAL datadir: the import was not killed at "
                            f"an SST write ({res.status}, WAL {wal})")
            return None
        probe = os.path.join(self.fx, "dd3-wal-probe")
        shutil.copytree(dd, probe)
        head, why = self.head_of(probe)
        shutil.rmtree(probe)
        if head != 3 or why:
            self.cannot_run("damage", "the unflushed-WAL datadir does not read back as head 3 "
                            f"({head}, {why})")
            return None
        return dd

    def damage_all(self):
        states = [("after a clean close", self.dd3)]
        wal = self.wal_datadir()
        if wal:
            states.append(("blocks in the WAL only", wal))
        tasks = []
        for state, src in states:
            for name in sorted(os.listdir(src)):
                if is_info_file(name) or not os.path.isfile(os.path.join(src, name)):
                    continue
                for how in self.DAMAGES:
                    tasks.append(lambda s=state, src=src, n=name, h=how: self.damaged(s, src, n, h))
        self.parallel(tasks)

    def damaged(self, state, src, name, how):
        kind = file_kind(name)
        d = self.case_dir("damage", f"{state.split()[-1]}-{name}-{how.replace(' ', '_')}")
        pristine = os.path.join(d, "pristine")
        shutil.copytree(src, pristine)
        if not self.damage(os.path.join(pristine, name), how):
            shutil.rmtree(d, ignore_errors=True)
            return  # an empty file (the WAL after a clean close): nothing to damage
        fault = f"{kind}, {state}: truncated or a bit flipped"
        base_digest = dir_digest(pristine)
        dd = os.path.join(d, "dd")
        fresh = True
        out = os.path.join(d, "out.rlp")
        commands = [
            ("get block", ["get", "block", "3", "--datadir", dd]),
            ("get account", ["get", "account", self.coinbase, "--datadir", dd]),
            ("export", ["export", "--datadir", dd, "--out", out]),
            ("import", ["import", "--datadir", dd, self.chain]),
        ]
        older = False  # a command saw the state before the head (a rollback)
        for command, args in commands:
            if fresh:
                shutil.rmtree(dd, ignore_errors=True)
                shutil.copytree(pristine, dd)
            res = self.node_run(*args, timeout=60)
            problems = self.target_error(res)
            after = dir_digest(dd)
            diff = digest_diff(base_digest, after)
            fresh = bool(diff)
            noticed = bool(NOTICE.search(res.err))
            if res.rc == 0:
                if command == "get block":
                    got = json.loads(res.out).get("hash")
                    ok = got == self.hashes[3]
                elif command == "get account":
                    ok = res.out == self.account3
                elif command == "export":
                    ok = read(out) == b"".join(self.blocks[:3])
                else:
                    head, why = self.head_of(dd)
                    ok = head == 5 and not why
                    if ok and older and not noticed:
                        problems.append("exit 0 after a silent rollback (the gets saw an older "
                                        "state), and nothing on stderr says it recovered")
                older = older or not ok
                if not ok and not noticed:
                    problems.append("exit 0 with an answer from another (older) state, "
                                    "and nothing on stderr says so")
                state_txt = "answered" + (" (says it recovered)" if noticed else "") + \
                    ("" if ok else ", from an older state")
            elif res.rc is None:
                state_txt = "hung"
            else:
                state_txt = "refused"
                if command.startswith("get") and "not found" in res.err and not noticed:
                    # The head block, or an account it holds, missing: the state before it.
                    older = True
                    problems.append("the head's data reported missing (an older state), and "
                                    "nothing on stderr says the datadir was recovered")
                    state_txt = "refused as missing"
                if diff and opened_then_failed(command, res, base_digest, after):
                    # The open accepted the datadir (the damage is in a table file no check at
                    # open reads) and a block then failed on it: RocksDB's writable open rewrote
                    # its own metadata, no data file of the datadir was deleted or changed.
                    state_txt += ", failed mid-import (RocksDB rewrote its metadata)"
                elif diff:
                    problems.append(f"refused, yet the datadir changed: {diff}")
                    state_txt += ", datadir changed"
                else:
                    state_txt += ", datadir unchanged"
            self.report("damage", f"{command} on {name} ({state}): {how}", fault, command, res,
                        problems, state_txt)
            if os.path.exists(out):
                os.unlink(out)
        shutil.rmtree(d, ignore_errors=True)

    # ---- 3. endless and huge inputs ----

    def inputs(self):
        d = self.case_dir("input")
        self.prefix4g = os.path.join(d, "prefix4g.rlp")  # an RLP list that declares 4 GiB
        write(self.prefix4g, b"\xfc\x01\x00\x00\x00\x00" + b"\xc0" * 16)
        self.sparse = os.path.join(d, "sparse-8g")  # 8 GiB of zeros, sparse on disk
        with open(self.sparse, "wb") as f:
            f.truncate(8 << 30)
        self.inputs_dd = os.path.join(d, "dd")
        shutil.copytree(self.dd_genesis, self.inputs_dd)

        zero = ("/dev/zero", "/dev/zero", None)
        text = ("endless text", "/dev/stdin", lambda: endless(b"y\n" * 32768))
        big = ("4 GiB RLP prefix", self.prefix4g, None)
        sparse = ("8 GiB sparse file", self.sparse, None)

        def via_pipe(name, head):
            return (name, "/dev/stdin", lambda: self.chained(head, b"\0" * 65536))

        piped_big = via_pipe("4 GiB RLP prefix, then zeros, on a pipe",
                             b"\xfc\x01\x00\x00\x00\x00")
        hex_big = ("hex of a 4 GiB prefix, then endless 00", "-",
                   lambda: self.chained(b"0xfc0100000000", b"00" * 32768))
        nested = ("endless '[' nesting", "-", lambda: endless(b"[" * 65536))
        stdin_zero = ("/dev/zero on stdin", "-", None)
        stdin_text = ("endless text on stdin", "-", lambda: endless(b"y\n" * 32768))
        dd = self.inputs_dd
        outdir = self.case_dir("input", "out")

        cases = []  # (command, fault, args with {} for the input, feed)
        for fault, path, feed in [zero, text, sparse]:
            cases.append(("init --genesis", fault,
                          ["init", "--datadir", os.path.join(outdir, "x"), "--genesis", path],
                          feed))
        for fault, path, feed in [zero, text, big, sparse, piped_big]:
            cases.append(("import CHAIN", fault, ["import", "--datadir", dd, path], feed))
            cases.append(("block inspect", fault, ["block", "inspect", path], feed))
            cases.append(("barrel-bench --input", fault,
                          [self.bench, "--quick", "--input", path, "--genesis", self.genesis],
                          feed))
        for fault, feed in [(stdin_zero[0], None), (stdin_text[0], stdin_text[2]),
                            (piped_big[0], piped_big[2])]:
            stdin = "/dev/zero" if feed is None else None
            cases.append(("import -", fault, ["import", "--datadir", dd, "-"], feed or stdin))
            cases.append(("block inspect -", fault, ["block", "inspect", "-"], feed or stdin))
        for fault, feed in [(stdin_zero[0], None), (stdin_text[0], stdin_text[2]),
                            (hex_big[0], hex_big[2])]:
            stdin = "/dev/zero" if feed is None else None
            cases.append(("tx decode -", fault, ["tx", "decode", "-"], feed or stdin))
            cases.append(("rlp decode -", fault, ["rlp", "decode", "-"], feed or stdin))
        for fault, feed in [(stdin_zero[0], None), (stdin_text[0], stdin_text[2]),
                            (nested[0], nested[2])]:
            stdin = "/dev/zero" if feed is None else None
            cases.append(("rlp encode -", fault, ["rlp", "encode", "-"], feed or stdin))
        for fault, path, feed in [zero, text, sparse]:
            cases.append(("barrel-bench --genesis", fault,
                          [self.bench, "--quick", "--input", self.chain, "--genesis", path], feed))

        # A control: the same memory limit lets a valid input through.
        ctl = self.node_run("block", "inspect", self.chain, limit_as=MEMORY_LIMIT)
        self.report("input", "control: block inspect of a valid chain under the memory limit",
                    "none (control)", "block inspect", ctl,
                    [] if ctl.rc == 0 else [f"{ctl.status} on a valid input"], "")

        # `import -` reads a chain from stdin (finding 9): without it the cases above pass
        # vacuously ('-' is no file), so a valid chain on stdin must import.
        piped = os.path.join(d, "dd-stdin")
        shutil.copytree(self.dd_genesis, piped)
        ctl = self.node_run("import", "--datadir", piped, "-", stdin=self.chain,
                            limit_as=MEMORY_LIMIT)
        head, why = self.head_of(piped)
        self.report("input", "control: import - of a valid chain on stdin", "none (control)",
                    "import -", ctl,
                    [] if ctl.rc == 0 and head == 5 and not why else
                    [f"{ctl.status}, head {head} {why or ''}"], f"head {head}")

        # Each import case gets its own datadir (RocksDB locks it), so the cases run at once.
        tasks = []
        for i, (command, fault, args, feed) in enumerate(cases):
            if command.startswith("import"):
                own = os.path.join(d, f"dd{i}")
                shutil.copytree(self.dd_genesis, own)
                args = [own if a == dd else a for a in args]
            tasks.append(lambda c=command, f=fault, a=args, fd=feed: self.endless_case(c, f, a, fd))
        self.parallel(tasks)

    @staticmethod
    def chained(head, chunk):
        yield head
        while True:
            yield chunk

    def endless_case(self, command, fault, args, feed):
        argv = args if args[0] == self.bench else [self.node, *args]
        if isinstance(feed, str):  # a file on stdin
            stdin, feed = feed, None
        else:
            stdin = None
        if feed is not None:
            feed = feed()  # a fresh generator for each case
        res = run(argv, stdin=stdin, feed=feed, limit_as=MEMORY_LIMIT, timeout=INPUT_TIMEOUT,
                  keep_out=False)
        problems = self.target_error(res)
        if res.rc == 0:
            problems.append("exit 0 on an endless or huge input")
        if re.search(r"bad_alloc|out of memory|cannot allocate memory", res.err, re.I):
            problems.append("ran out of memory (the limit was hit, not a size limit)")
        state = f"{res.secs:.1f}s"
        self.report("input", f"{command}: {fault}", fault, command, res, problems, state)

    # ---- 4. a full disk under the running node ----

    def raw_transactions(self, wire):
        """The signed transactions of a wire block, as 0x hex (docs/formats.md's offset-indexed
        list, taken out of the block with `rlp decode`)."""
        items = json.loads(must(run([self.node, "rlp", "decode", wire.hex()])).out)
        payload = bytes.fromhex(items[1][2:])
        count = int.from_bytes(payload[0:4], "big")
        offsets = [int.from_bytes(payload[4 + 4 * i:8 + 4 * i], "big") for i in range(count + 1)]
        area = payload[4 + 4 * (count + 1):]
        return ["0x" + area[offsets[i]:offsets[i + 1]].hex() for i in range(count)]

    def node_full_disk(self):
        """Issue 29, finding 8: `barrel-node run` sealing when the disk fills (the shim's control
        file), then when space returns. Sealing must resume without a restart, the log and
        /metrics (barrel_store_write_error) must say so, and a stop must exit 0 with the blocks
        whole."""
        base = self.case_dir("node")
        dd = os.path.join(base, "dd")
        shutil.copytree(self.dd_genesis, dd)
        control = os.path.join(base, "disk-full")
        raws = [self.raw_transactions(b) for b in self.blocks[:2]]
        problems = []
        node = RunningNode(self.node, dd, problems,
                           env=dict(os.environ, LD_PRELOAD=self.shim, BARREL_FAULT_CONTROL=control))
        try:
            if node.serving():
                node.send(raws[0])
                node.wait_for("block 1 mined", lambda: node.mined(self.tx_hashes[1][-1]))
                write(control, b"")  # the disk is full from now on
                node.send(raws[1])
                node.wait_for("the log says the store is in error",
                              lambda: node.logged("the store is in a write error; retrying"))
                if not node.logged("seal failed", ENOSPC):
                    problems.append(f"no 'seal failed: ... {ENOSPC}' line")
                if node.gauge("barrel_store_write_error") != 1:
                    problems.append("barrel_store_write_error is not 1 while the disk is full")
                if node.mined(self.tx_hashes[2][-1]):
                    problems.append("block 2 was mined on a full disk")
                os.unlink(control)  # space returns
                node.wait_for("block 2 mined once space returned",
                              lambda: node.mined(self.tx_hashes[2][-1]))
                node.wait_for("the log says the store resumed",
                              lambda: node.logged("the store resumed"))
                if node.gauge("barrel_store_write_error") != 0:
                    problems.append("barrel_store_write_error is not 0 after the store resumed")
        except (OSError, ValueError) as e:
            problems.append(f"JSON-RPC failed: {e}")
        finally:
            if os.path.exists(control):
                os.unlink(control)
            res = node.stop()
        # The node sealed its own blocks (not the fixture's): every transaction sent is stored.
        for h in self.tx_hashes[1] + self.tx_hashes[2]:
            r = self.node_run("get", "tx", h, "--datadir", dd)
            if r.rc != 0:
                problems.append(f"transaction {h[:10]}… is not stored: {r.err.strip()[:120]}")
                break
        self.report("node", "run: ENOSPC while sealing, then space back", "ENOSPC then space",
                    "run", res, problems, "")

    # ---- the matrix ----

    GROUPS = ["full", "tmpfs", "fsize", "damage", "input", "node"]
    COMMANDS = ["init", "import", "import (all stored)", "export", "gen", "get block",
                "get account"]

    def matrix(self, path):
        groups = {}

        def order(row):
            group, fault, command = row[:3]
            c = self.COMMANDS.index(command) if command in self.COMMANDS else len(self.COMMANDS)
            if group == "input":
                return (self.GROUPS.index(group), "", c, command, fault)
            return (self.GROUPS.index(group), fault if group != "full" else "", c, command, "")
        for group, fault, command, ok, status, message, state in sorted(self.rows, key=order):
            message = re.sub(r"\d{3,}", "N", message)[:120]
            key = (group, fault, command)
            g = groups.setdefault(key, {"n": 0, "fail": 0, "status": {}, "message": {},
                                        "state": {}})
            g["n"] += 1
            g["fail"] += 0 if ok else 1
            for field, v in (("status", status), ("message", message), ("state", state)):
                if v:
                    g[field][v] = g[field].get(v, 0) + 1

        def top(counts, k=3):
            items = sorted(counts.items(), key=lambda kv: -kv[1])
            text = "<br>".join(f"{v.replace('|', '/')}" + (f" ({c})" if len(counts) > 1 else "")
                               for v, c in items[:k])
            if len(items) > k:
                text += f"<br>… {len(items) - k} more"
            return text or "—"

        lines = ["| fault | command | cases (failing) | exit | message | datadir / outputs |",
                 "|---|---|---|---|---|---|"]
        for (group, fault, command), g in groups.items():
            lines.append(f"| {fault} | `{command}` | {g['n']} ({g['fail']}) | "
                         f"{top(g['status'])} | {top(g['message'], 2)} | {top(g['state'])} |")
        write(path, ("\n".join(lines) + "\n").encode())


def must(res):
    if res.rc != 0:
        sys.exit(f"faults.py: setup failed: {' '.join(res.args)}: {res.status}\n{res.err}")
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build", "release"))
    ap.add_argument("--only", default="full,tmpfs,fsize,damage,input,node")
    ap.add_argument("--matrix")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    groups = a.only.split(",")
    unknown = set(groups) - set(Suite.GROUPS)
    if unknown:
        sys.exit(f"faults.py: unknown group(s) {', '.join(sorted(unknown))}")

    work = tempfile.mkdtemp(prefix="barrel-faults-")
    print(f"faults.py: scratch directory {work}")
    suite = Suite(os.path.abspath(a.build), work, a.j)
    start = time.monotonic()
    try:
        suite.setup()
        timings = []
        for group, fn in (("full", suite.full), ("tmpfs", suite.tmpfs), ("fsize", suite.fsize),
                          ("damage", suite.damage_all), ("input", suite.inputs),
                          ("node", suite.node_full_disk)):
            if group in groups:
                t = time.monotonic()
                fn()
                timings.append(f"{group} {time.monotonic() - t:.0f}s")
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    if a.matrix:
        suite.matrix(a.matrix)
    print(f"faults.py: {len(suite.rows)} cases, {suite.failed} failed, in "
          f"{time.monotonic() - start:.0f}s ({', '.join(timings)})")
    return 1 if suite.failed else 0


if __name__ == "__main__":
    sys.exit(main())
