// The same network layout on CometBFT's built-in kvstore application (`testnet init --app
// kvstore`), with real processes: what issue 32 measures barrel's network against. `testnet
// start` starts only the 4 `cometbft node` processes; transactions of the kvstore's format
// (`key=value`) sent through node 0's CometBFT RPC are committed and readable on every node; one
// validator SIGKILLed and started again replays the chain into its in-memory store and agrees on
// the app hash; a full node joins; `testnet stop` leaves no process and no pid file. The CometBFT
// settings given at init are in every node's files.
//
// Run by scripts/test.sh with network.test.js: BARREL_NODE=<path> [COMETBFT=<path>] npm test.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { cometbft, freeBasePort, testnet, waitFor } from "./harness.mjs";

const VALIDATORS = 4;

/// The pid in a pid file, if its process runs with `marker` among its arguments.
function runningPid(pidFile, marker) {
  if (!existsSync(pidFile)) return null;
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return args.includes(marker) ? pid : null;
  } catch {
    return null;
  }
}

/// A kvstore transaction of 110 bytes, as barrel's transfers are: one `=`, no `:`, unique.
const kvTx = (k) => `k${String(k).padStart(12, "0")}=` + "abcdefghijklmnopqrstuvwxyz".repeat(4).slice(0, 96);

describe("a 4-validator kvstore network on CometBFT", () => {
  let dir, netDir, info, nodes;
  const height = async (n) => Number((await cometbft(n.cometbft_rpc, "/status")).sync_info.latest_block_height);
  const query = async (n, key) => (await cometbft(n.cometbft_rpc, `/abci_query?data="${key}"`)).response;

  const step = (name, fn) =>
    it(name, { timeout: 300_000 }, async (t) => {
      try {
        await fn(t);
      } catch (e) {
        for (const n of info?.nodes ?? []) {
          const file = n.logs.cometbft;
          if (!existsSync(file)) continue;
          const lines = readFileSync(file, "utf8").trimEnd().split("\n").slice(-40);
          console.error(`--- node ${n.index}: the last lines of ${file} ---\n${lines.join("\n")}`);
        }
        throw e;
      }
    });

  /// The same app hash at height h on every node in `which`.
  async function sameAppHash(which, h) {
    const hashes = await Promise.all(which.map(async (n) =>
      (await cometbft(n.cometbft_rpc, `/block?height=${h}`)).block.header.app_hash));
    for (const x of hashes) assert.equal(x, hashes[0], `app hash of height ${h}`);
  }

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "barrel-kvstore-"));
    netDir = path.join(dir, "kv");
    const base = await freeBasePort(VALIDATORS + 1);
    const out = await testnet("init", "--dir", netDir, "--validators", `${VALIDATORS}`, "--app", "kvstore",
      "--base-port", `${base}`, "--timeout-commit", "250", "--mempool-size", "20000", "--recheck", "false",
      "--max-block-bytes", "2000000");
    assert.match(out, /^testnet of 4 validators in .*application CometBFT's built-in kvstore \(no barrel-node\)\n/);
    assert.match(out, /\nCometBFT settings: timeout_commit 250 ms, mempool_size 20000, max_block_bytes 2000000, recheck false /);
    assert.match(out, /\nnode +CometBFT RPC +P2P\n/);
    info = JSON.parse(readFileSync(path.join(netDir, "testnet.json"), "utf8"));
    nodes = info.nodes;
    assert.equal(info.app, "kvstore");
    assert.deepEqual(info.settings, { mempool_size: 20000, max_block_bytes: 2000000, recheck: false });
  });

  after(async () => {
    if (netDir && existsSync(path.join(netDir, "testnet.json"))) await testnet("stop", "--dir", netDir, "--kill").catch(() => {});
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  step("testnet start starts only the cometbft processes, each with its settings", async () => {
    const out = await testnet("start", "--dir", netDir, "--timeout", "120");
    assert.match(out, /^node +CometBFT RPC +height\n/);
    for (const n of nodes) assert.match(out, new RegExp(`\\n${n.index} +${n.cometbft_rpc} +[1-9][0-9]*\\n`));
    for (const n of nodes) {
      assert.equal(n.json_rpc, undefined);
      assert.notEqual(runningPid(n.pid_files.cometbft, n.home), null, `node ${n.index}'s cometbft`);
      assert.equal(existsSync(path.join(n.home, "barrel")), false);
      const config = readFileSync(path.join(n.home, "config", "config.toml"), "utf8");
      assert.match(config, /\nproxy_app = "kvstore"\n/);
      assert.match(config, /\nsize = 20000\n/);
      assert.match(config, /\nrecheck = false\n/);
    }
    assert.match(await testnet("start", "--dir", netDir, "--node", "1"), /^node 1 is already running\n/);
  });

  step("kvstore transactions sent through node 0 are committed and read on every node", async () => {
    const r = await cometbft(nodes[0].cometbft_rpc, `/broadcast_tx_commit?tx="abc=def"`);
    assert.equal(r.check_tx.code, 0);
    assert.equal(r.tx_result.code, 0);
    // Refused: no `=`, and two of them.
    assert.equal((await cometbft(nodes[0].cometbft_rpc, `/broadcast_tx_sync?tx="abc"`)).code, 2);
    assert.equal((await cometbft(nodes[0].cometbft_rpc, `/broadcast_tx_sync?tx="a=b=c"`)).code, 2);
    // A batch of 100 broadcast_tx_async, as a load generator sends them.
    const batch = [];
    for (let k = 0; k < 100; k++)
      batch.push({ jsonrpc: "2.0", id: k, method: "broadcast_tx_async", params: { tx: Buffer.from(kvTx(k)).toString("base64") } });
    const answers = await cometbft(nodes[0].cometbft_rpc, "/", batch);
    assert.equal(answers.length, 100);
    for (const a of answers) assert.equal(a.result?.code, 0, JSON.stringify(a));
    const value = Buffer.from(kvTx(99).split("=")[1]).toString("base64");
    for (const n of nodes) {
      await waitFor(`the last transaction on node ${n.index}`, async () => (await query(n, kvTx(99).split("=")[0])).value === value);
      assert.equal((await query(n, "abc")).value, Buffer.from("def").toString("base64"));
    }
  });

  step("a validator killed and started again replays into its store and agrees", async () => {
    assert.equal(await testnet("stop", "--dir", netDir, "--node", "2", "--kill"), "node 2 killed\n");
    assert.equal(runningPid(nodes[2].pid_files.cometbft, nodes[2].home), null);
    const h = (await waitFor("3 nodes going on", async () => {
      const hs = await Promise.all([0, 1, 3].map((i) => height(nodes[i])));
      return Math.min(...hs) >= 3 && hs;
    }))[0];
    await testnet("start", "--dir", netDir, "--node", "2", "--timeout", "120");
    await waitFor(`node 2 at height ${h + 1}`, async () => (await height(nodes[2])) >= h + 1);
    await sameAppHash(nodes, h);
    assert.equal((await query(nodes[2], "abc")).value, Buffer.from("def").toString("base64"));
  });

  step("a full node joins and syncs; stop leaves no process", async () => {
    const out = await testnet("join", "--dir", netDir, "--timeout", "120");
    assert.match(out, /^node 4 joins as a full node \(not a validator\), peers: the 4 validators\n/);
    info = JSON.parse(readFileSync(path.join(netDir, "testnet.json"), "utf8"));
    const joined = info.nodes[4];
    assert.equal(joined.abci, "kvstore");
    assert.equal(joined.validator, false);
    const config = readFileSync(path.join(joined.home, "config", "config.toml"), "utf8");
    assert.match(config, /\nproxy_app = "kvstore"\n/);
    assert.match(config, /\nsize = 20000\n/);  // the network's settings, kept in testnet.json
    const h = await height(nodes[0]);
    await waitFor(`node 4 at height ${h}`, async () => (await height(joined)) >= h);
    await sameAppHash([nodes[0], joined], h);
    const stopped = await testnet("stop", "--dir", netDir);
    assert.equal(stopped, "node 0 stopped\nnode 1 stopped\nnode 2 stopped\nnode 3 stopped\nnode 4 stopped\n");
    for (const n of info.nodes) {
      assert.equal(existsSync(n.pid_files.cometbft), false);
      assert.equal(runningPid(n.pid_files.cometbft, n.home), null);
    }
  });
});
