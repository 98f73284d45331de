// What the network tests (network.test.js: barrel; kvstore.test.js: CometBFT's kvstore) share:
// `barrel-node testnet` run as a program, CometBFT RPC calls, polling with a deadline, a free
// range of loopback ports, and a test step that prints the nodes' logs when it fails. Node
// builtins only.

import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { it } from "node:test";
import net from "node:net";
import { promisify } from "node:util";

const NODE = process.env.BARREL_NODE;
if (!NODE) throw new Error("set BARREL_NODE to the barrel-node binary");
const COMETBFT = process.env.COMETBFT ? ["--cometbft", process.env.COMETBFT] : [];

export const DEADLINE_MS = 120_000;  // for any one wait: generous, the machine is shared

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const run = promisify(execFile);

/// `barrel-node testnet ARGS…`: its stdout, or an error holding what it printed.
export const testnet = (...args) => testnetWithEnv({}, ...args);

/// The same with more environment variables for the command and the nodes it starts (a test
/// seam such as BARREL_TEST_CORRUPT_SNAPSHOT_CHUNKS).
export async function testnetWithEnv(env, ...args) {
  const withComet = ["init", "start", "join"].includes(args[0]) ? COMETBFT : [];
  try {
    const { stdout } = await run(NODE, ["testnet", ...args, ...withComet],
      { encoding: "utf8", env: { ...process.env, ...env } });
    return stdout;
  } catch (e) {
    throw new Error(`barrel-node testnet ${args.join(" ")} failed (${e.code}):\n${e.stdout}${e.stderr}`);
  }
}

/// `barrel-node ARGS…` (not testnet): its exit code, stdout and stderr, whatever the code.
export async function barrelNode(...args) {
  try {
    const { stdout, stderr } = await run(NODE, args, { encoding: "utf8" });
    return { code: 0, stdout, stderr };
  } catch (e) {
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/// A CometBFT RPC call: GET url+pathAndQuery, or a POST of `body` (a JSON-RPC call or a batch,
/// whose array of answers is returned as it is). Its `result`, or an error naming the call.
export async function cometbft(url, pathAndQuery, body) {
  const res = body === undefined
    ? await fetch(url + pathAndQuery)
    : await fetch(url + pathAndQuery, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const json = await res.json();
  if (Array.isArray(json)) return json;
  if (json.error) throw new Error(`${url}${pathAndQuery}: ${JSON.stringify(json.error)}`);
  return json.result;
}

/// Polls `probe` until it returns a truthy value; fails naming `what` and the last answer.
export async function waitFor(what, probe, deadlineMs = DEADLINE_MS) {
  const end = Date.now() + deadlineMs;
  let last;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
      last = v;
    } catch (e) {
      last = e.message;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${last})`);
    await sleep(200);
  }
}

/// Whether every port of `count` nodes from `base` is free on loopback.
async function portsFree(base, count) {
  for (let i = 0; i < count * 10; i++) {
    if (i % 10 > 3) continue;
    const free = await new Promise((resolve) => {
      const s = net.createServer();
      s.once("error", () => resolve(false));
      s.listen(base + i, "127.0.0.1", () => s.close(() => resolve(true)));
    });
    if (!free) return false;
  }
  return true;
}

/// The first port the kernel hands out as a connection's own (ip_local_port_range; Linux's
/// default when it cannot be read).
function firstEphemeralPort() {
  try {
    return Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
  } catch {
    return 32768;
  }
}

/// A base port whose `count` nodes' ports are all free (a random range, so that runs side by
/// side do not collide), below the ephemeral ports: a port free when this looks can otherwise
/// be taken by any outgoing connection's own end before a node started minutes later binds it
/// (seen: a late node's P2P port "address already in use").
export async function freeBasePort(count) {
  const low = 10000;
  const slots = Math.floor((firstEphemeralPort() - low - count * 10) / 10);
  if (slots < 1) throw new Error("no loopback ports below the ephemeral range");
  for (let attempt = 0; attempt <= 20; attempt++) {
    const base = low + 10 * Math.floor(Math.random() * slots);
    if (await portsFree(base, count)) return base;
  }
  throw new Error("no free range of loopback ports");
}

/// The last `count` lines of every log of `nodes` (testnet.json's entries), on stderr.
export function dumpLogs(nodes, count = 40) {
  for (const n of nodes ?? [])
    for (const [which, file] of Object.entries(n.logs)) {
      if (!existsSync(file)) continue;
      const lines = readFileSync(file, "utf8").trimEnd().split("\n").slice(-count);
      console.error(`--- node ${n.index} ${which}: the last lines of ${file} ---\n${lines.join("\n")}`);
    }
}

/// A test step whose failure also prints the logs of the nodes `nodes()` returns then.
export const stepWithLogs = (nodes) => (name, fn) =>
  it(name, { timeout: 300_000 }, async (t) => {
    try {
      await fn(t);
    } catch (e) {
      dumpLogs(nodes());
      throw e;
    }
  });
