// A network of barrel nodes on CometBFT, on loopback, with real processes: `barrel-node testnet
// init` writes 4 validators, `testnet start` starts them (each a `cometbft node` and a
// `barrel-node run --abci`), and ethers.js v6 sends transfers through node 0's JSON-RPC. Then:
// - the transfers are mined on every node with the same block hashes, state roots (CometBFT's app
//   hashes) and balances;
// - one validator SIGKILLed (both processes) while transactions flow: the chain goes on; started
//   again, it catches up (replay + block sync) to the same hashes;
// - one validator paused (SIGSTOP of both processes) for 10 s under load: the other three commit
//   heights meanwhile; resumed (SIGCONT), it catches up, and every transfer accepted so far is
//   mined exactly once on every node, with the same blocks and app hashes (perturb.test.js cuts
//   a validator's links and partitions the network 2|2 in network namespaces);
// - two of four stopped: no block is committed (heights stay put: a negative check that cannot
//   pass by luck, as it only ever asserts "no new height");
// - one brought back: the chain resumes, and every transaction node 0 accepted has a receipt on
//   every node;
// - `testnet join`: a late full node (not a validator) block-syncs to the same head;
// - `testnet join --state-sync` under load: a late node restores a validator's snapshot (the
//   light client's app hash checks it), although one validator serves damaged chunks (a seam),
//   then has the validators' block hashes and state roots at every later height; and
//   `barrel-node verify` passes on its datadir and on a validator's SIGKILLed one.
// Every barrel-node gets init's --node-args (a larger pool); each process is found by the pid
// file testnet.json names. kvstore.test.js runs the same layout on CometBFT's kvstore.
// Every wait polls with a generous deadline (CI's machine is busy); a failure prints the tail of
// every node's logs.
//
// Run by scripts/test.sh: BARREL_NODE=<path to barrel-node> [COMETBFT=<path>] npm test (in
// test/network, after npm ci).

import { after, before, describe } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { ethers } from "ethers";
import { writeGenesis } from "../node-harness.mjs";
import {
  BASE_FEE, CHAIN_ID, Flow, RICH, blocks, cometBlocks, cometHeight, height, minedOnce, providerOf,
  reach, receiptsEverywhere, recipients, rpc, sameChain, wallets,
} from "./chain.mjs";
import { DEADLINE_MS, barrelNode, freeBasePort, sleep, stepWithLogs, testnet, testnetWithEnv } from "./harness.mjs";

const VALIDATORS = 4;
const TIMEOUT_COMMIT_MS = 250;
const PAUSE_MS = 10_000;
const transferWallets = wallets.slice(0, 4);

describe("a 4-validator barrel network on CometBFT", () => {
  let dir, netDir, info, nodes, provider, signers, flow;
  /// A test step whose failure also prints the nodes' logs.
  const step = stepWithLogs(() => info?.nodes);

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "barrel-network-"));
    netDir = path.join(dir, "net");
    const genesis = writeGenesis(dir, { addresses: wallets.map((w) => w.address), balance: RICH, baseFee: BASE_FEE, chainId: CHAIN_ID });
    const base = await freeBasePort(VALIDATORS + 2);
    const out = await testnet("init", "--dir", netDir, "--validators", `${VALIDATORS}`, "--genesis", genesis,
      "--base-port", `${base}`, "--timeout-commit", `${TIMEOUT_COMMIT_MS}`, "--snapshot-interval", "10",
      "--node-arg", "--txpool-max-pending", "--node-arg", "40000");
    assert.match(out, /\nstate snapshots every 10 heights /);
    assert.match(out, /^testnet of 4 validators in /);
    assert.match(out, /\neach barrel-node run also gets: --txpool-max-pending 40000\n/);
    info = JSON.parse(readFileSync(path.join(netDir, "testnet.json"), "utf8"));
    nodes = info.nodes;
    provider = providerOf(nodes[0]);
    signers = transferWallets.map((w) => w.connect(provider));
  });

  after(async () => {
    await flow?.abandon();
    provider?.destroy();
    if (netDir && existsSync(path.join(netDir, "testnet.json"))) await testnet("stop", "--dir", netDir, "--kill").catch(() => {});
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  step("a node that cannot start is named with its log", async () => {
    // Node 0's JSON-RPC port taken: its barrel-node exits at once, and start says which node,
    // which process and where its log is.
    const holder = net.createServer((socket) => socket.destroy());
    await new Promise((resolve) => holder.listen(Number(new URL(nodes[0].json_rpc).port), "127.0.0.1", resolve));
    try {
      await assert.rejects(testnet("start", "--dir", netDir, "--timeout", "120"), (e) => {
        assert.match(e.message, new RegExp(`\nerror: node 0: barrel-node exited before it answered on ${nodes[0].json_rpc} ` +
          `\\(its log: ${nodes[0].logs.barrel}\\)\n$`));
        assert.match(e.message, /--- the last lines of .*barrel\.log ---\n/);
        return true;
      });
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
    const stopped = await testnet("stop", "--dir", netDir, "--kill");
    assert.match(stopped, /^node 0 is not running\n/);
  });

  step("testnet start starts every node; they agree on the genesis block", async () => {
    const out = await testnet("start", "--dir", netDir, "--timeout", "120");
    assert.match(out, /^node +JSON-RPC +CometBFT RPC +height\n/);
    for (const n of nodes) assert.match(out, new RegExp(`\\n${n.index} +${n.json_rpc} +${n.cometbft_rpc} +[1-9][0-9]*\\n`));
    assert.match(await testnet("start", "--dir", netDir, "--node", "1"), /^node 1 is already running\n/);
    // Each process by its pid file (what a load generator reads for CPU and RSS), barrel-node
    // with init's --node-args after its own.
    for (const n of nodes) {
      const cmdline = (file) => readFileSync(`/proc/${readFileSync(file, "utf8").trim()}/cmdline`, "utf8").split("\0");
      const barrel = cmdline(n.pid_files.barrel);
      assert.deepEqual(barrel.slice(1, 4), ["run", "--datadir", n.datadir]);
      assert.deepEqual(barrel.slice(-3, -1), ["--txpool-max-pending", "40000"]);
      assert.ok(cmdline(n.pid_files.cometbft).includes(n.home));
    }
    const genesis = await Promise.all(nodes.map((n) => rpc(n.json_rpc, "eth_getBlockByNumber", ["0x0", false])));
    for (const g of genesis) assert.equal(g.hash, genesis[0].hash);
    for (const n of nodes) assert.equal(await rpc(n.json_rpc, "eth_chainId"), ethers.toQuantity(CHAIN_ID));
  });

  step("transfers sent through node 0 are mined on every node: same blocks, app hashes, balances", async (t) => {
    const sent = [];
    for (let k = 0; k < 24; k++) {
      const i = k % signers.length;
      sent.push(await signers[i].sendTransaction({
        type: 2, chainId: CHAIN_ID, nonce: Math.floor(k / signers.length), to: recipients[k % recipients.length],
        value: 10n ** 15n + BigInt(k), gasLimit: 21000n, maxFeePerGas: 1000n, maxPriorityFeePerGas: 1n,
      }));
    }
    const receipts = await Promise.all(sent.map((tx) => tx.wait(1, DEADLINE_MS)));
    const last = Math.max(...receipts.map((r) => r.blockNumber));
    t.diagnostic(`${sent.length} transfers in blocks ${Math.min(...receipts.map((r) => r.blockNumber))} to ${last}`);
    await reach(nodes, last);
    await receiptsEverywhere(nodes, sent.map((t) => t.hash));
    await sameChain(nodes, last);
    // The balances at that height: equal on every node, and what the receipts say.
    const expected = new Map();
    const add = (a, v) => expected.set(a.toLowerCase(), (expected.get(a.toLowerCase()) ?? 0n) + v);
    for (const w of transferWallets) add(w.address, RICH);
    for (const r of receipts) {
      const tx = sent.find((t) => t.hash === r.hash);
      add(tx.from, -(tx.value + r.gasUsed * r.gasPrice));
      add(tx.to, tx.value);
    }
    // What each node's verify stage found in its sender cache (DESIGN: a sender recovered once,
    // at CheckTx, when the transaction came by gossip before the block did). Reported, not
    // asserted: a block may reach a validator before the gossip of its transactions does.
    const cache = [];
    for (const n of nodes) {
      const metrics = await (await fetch(n.json_rpc + "/metrics")).text();
      const value = (name) => Number((metrics.match(new RegExp(`^${name} ([0-9.e+]+)$`, "m")) ?? [])[1]);
      cache.push(`node ${n.index} ${value("barrel_sender_cache_hits_total")}/${value("barrel_sender_cache_hits_total") + value("barrel_sender_cache_misses_total")}`);
    }
    t.diagnostic(`sender cache hits of the verify stage: ${cache.join(", ")}`);
    // At the head: a node keeps the state of its head only, and empty blocks come every 250 ms,
    // so block `last` is no longer the head by now ("historical state is not available"); no
    // transfer is sent after these, so the head's balances are those of block `last`.
    for (const n of nodes)
      for (const [address, balance] of expected)
        assert.equal(BigInt(await rpc(n.json_rpc, "eth_getBalance", [address, "latest"])), balance,
          `balance of ${address} on node ${n.index}`);
  });

  step("a validator SIGKILLed while transactions flow: the chain goes on; restarted, it catches up", async (t) => {
    flow = new Flow(provider, transferWallets);
    await flow.start();
    await sleep(1000);
    assert.match(await testnet("stop", "--dir", netDir, "--node", "3", "--kill"), /^node 3 killed\n/);
    assert.match(await testnet("stop", "--dir", netDir, "--node", "3"), /^node 3 is not running\n/);
    const atKill = await height(nodes[0]);
    const live = nodes.slice(0, 3);
    await reach(live, atKill + 8, `the 3 live validators 8 blocks past ${atKill}`);
    const atRestart = await height(nodes[0]);
    assert.match(await testnet("start", "--dir", netDir, "--node", "3", "--timeout", "120"), /\n3 +http/);
    await reach(nodes, atRestart + 4, `node 3 caught up past ${atRestart}`);
    await sameChain(nodes, atRestart + 4);
    t.diagnostic(`node 3 killed at height ${atKill}, restarted at ${atRestart}, caught up; ${flow.accepted.length} transfers sent so far`);
  });

  step("a validator paused (SIGSTOP) for 10 s under load: the others go on; resumed, it catches up", async (t) => {
    // Both processes of node 3 stopped as they are (no signal handled, no socket closed): to its
    // peers, a node that stops answering. 3 of 4 validators are a quorum.
    const pids = Object.values(nodes[3].pid_files).map((f) => Number(readFileSync(f, "utf8").trim()));
    const sentBefore = flow.accepted.length;
    const atPause = await height(nodes[0]);
    const live = nodes.slice(0, 3);
    for (const pid of pids) process.kill(pid, "SIGSTOP");
    try {
      await sleep(PAUSE_MS);
      const during = await Promise.all(live.map(height));
      // At least 2 heights: node 3's turns to propose each cost a propose timeout (3 s).
      assert.ok(Math.min(...during) >= atPause + 2, `the 3 others went on while node 3 was paused: heights ${during} from ${atPause}`);
    } finally {
      for (const pid of pids) process.kill(pid, "SIGCONT");
    }
    const atResume = await height(nodes[0]);
    await reach(nodes, atResume + 4, `node 3 caught up past ${atResume}`);
    const accepted = flow.accepted.slice();
    await receiptsEverywhere(nodes, accepted);
    const head = await height(nodes[0]);
    await reach(nodes, head);
    await sameChain(nodes, head);
    await minedOnce(nodes, accepted, head);
    t.diagnostic(`node 3 paused at height ${atPause}, resumed at ${atResume}, caught up; ` +
      `${accepted.length - sentBefore} transfers accepted meanwhile, each mined once on every node`);
  });

  step("two of four stopped: no block is committed; one back: the chain resumes, nothing accepted is lost", async (t) => {
    await testnet("stop", "--dir", netDir, "--node", "2");
    await testnet("stop", "--dir", netDir, "--node", "3");
    const live = nodes.slice(0, 2);
    // A height whose precommits were on their way when the two stopped may still land: let it,
    // then no height may follow (2 of 4 votes are under CometBFT's two thirds).
    await sleep(3000);
    const stalled = await Promise.all(live.map(height));
    const cometStalled = await Promise.all(live.map(cometHeight));
    await sleep(12 * TIMEOUT_COMMIT_MS + 4000);  // past timeout_commit and a propose timeout
    assert.deepEqual(await Promise.all(live.map(height)), stalled, "barrel heights while 2 of 4 are down");
    assert.deepEqual(await Promise.all(live.map(cometHeight)), cometStalled, "CometBFT heights while 2 of 4 are down");
    const acceptedWhileHalted = flow.accepted.length;
    t.diagnostic(`halted at heights ${stalled} (CometBFT ${cometStalled}) with ${acceptedWhileHalted} transfers accepted`);

    await testnet("start", "--dir", netDir, "--node", "2", "--timeout", "120");
    const three = nodes.slice(0, 3);
    await reach(three, Math.max(...stalled) + 3, "the chain resumed with 3 of 4");
    await flow.stop();
    assert.ok(flow.accepted.length > acceptedWhileHalted, "transfers accepted after the restart");
    await receiptsEverywhere(three, flow.accepted);
    await testnet("start", "--dir", netDir, "--node", "3", "--timeout", "120");
    const head = await height(nodes[0]);
    await reach(nodes, head);
    await receiptsEverywhere(nodes, flow.accepted);
    await sameChain(nodes, head);
    t.diagnostic(`resumed; ${flow.accepted.length} accepted transfers, each with its receipt on every node at height ${head}`);
  });

  step("testnet join: a late full node reaches the same head", async (t) => {
    const out = await testnet("join", "--dir", netDir, "--timeout", "120");
    assert.match(out, /^node 4 joins as a full node/);
    info = JSON.parse(readFileSync(path.join(netDir, "testnet.json"), "utf8"));
    assert.equal(info.nodes.length, 5);
    const joined = info.nodes[4];
    assert.equal(joined.validator, false);
    const head = await height(nodes[0]);
    await reach([joined], head, `node 4 synced to ${head}`);
    await sameChain([nodes[0], joined], head);
    t.diagnostic(`node 4 synced blocks 1 to ${head}`);
    await receiptsEverywhere([joined], flow.accepted);
    nodes = info.nodes;
  });

  step("testnet join --state-sync under load: a late node restores a snapshot past a peer serving damaged chunks", async (t) => {
    // Validator 3 serves every snapshot chunk with a byte flipped from now on (the seam).
    await testnet("stop", "--dir", netDir, "--node", "3");
    await testnetWithEnv({ BARREL_TEST_CORRUPT_SNAPSHOT_CHUNKS: "1" }, "start", "--dir", netDir, "--node", "3", "--timeout", "120");
    await reach(nodes.slice(0, 4), 50, "50 heights before the late node joins");
    flow = new Flow(provider, transferWallets);
    await flow.start();
    const out = await testnet("join", "--dir", netDir, "--state-sync", "--timeout", "120");
    assert.match(out, /^node 5 joins as a full node/);
    assert.match(out, /\nit restores the state from a snapshot \(state sync\), trusting height [0-9]+ /);
    info = JSON.parse(readFileSync(path.join(netDir, "testnet.json"), "utf8"));
    const synced = info.nodes[5];
    const head = await height(nodes[0]);
    await reach([synced], head + 5, `node 5 past ${head + 5}`);
    await flow.stop();
    // It holds blocks from the snapshot's height on, not from 1: it did not replay history.
    const earliest = Number((await rpc(synced.json_rpc, "eth_getBlockByNumber", ["earliest", false])).number);
    assert.ok(earliest > 10, `earliest block ${earliest}`);
    assert.equal(await rpc(synced.json_rpc, "eth_getBlockByNumber", ["0x1", false]), null);
    await assert.rejects(rpc(synced.json_rpc, "eth_getLogs", [{ fromBlock: "0x1", toBlock: "latest" }]),
      /"code":4444,"message":"pruned history unavailable"/);
    // From there on: the validators' blocks, state roots and CometBFT app hashes.
    const last = await height(synced);
    const theirs = await blocks(nodes[0], earliest, last);
    assert.deepEqual(await blocks(synced, earliest, last), theirs, `node 5's blocks ${earliest}..${last}`);
    const comet = await cometBlocks(synced, earliest + 1, last);
    for (let k = earliest; k < last; k++)
      assert.equal("0x" + comet.get(k + 1).appHash, theirs[k - earliest].stateRoot, `app hash of height ${k + 1} on node 5`);
    // Every transfer mined after the snapshot has its receipt there.
    const mined = [];
    for (const h of flow.accepted) {
      const r = await rpc(nodes[0].json_rpc, "eth_getTransactionReceipt", [h]);
      if (r && Number(r.blockNumber) >= earliest) mined.push(h);
    }
    await receiptsEverywhere([synced], mined);
    // Its log says what it restored, and which damaged chunks it refused (CometBFT picks a peer at
    // random per chunk: node 3's may or may not have been asked; sync_abci_test covers the refusal).
    const log = readFileSync(synced.logs.barrel, "utf8");
    assert.match(log, new RegExp(`abci: state sync: snapshot of height ${earliest - 1} accepted: [0-9]+ chunks\n`));
    assert.match(log, new RegExp(`abci: state sync: state restored: head ${earliest - 1}, state root 0x[0-9a-f]{64}\n`));
    const refused = log.match(/abci: state sync: snapshot chunk [0-9]+ from peer [0-9a-f]+ refused: .*/g) ?? [];
    t.diagnostic(`node 5 restored height ${earliest - 1} by state sync and followed to ${last}; ${mined.length} transfers mined since; ` +
      `damaged chunks refused: ${refused.length}${refused.length ? ` (${refused[0]})` : ""}`);

    // A validator SIGKILLed, then the datadirs checked against their heads' state roots.
    assert.match(await testnet("stop", "--dir", netDir, "--node", "1", "--kill"), /^node 1 killed\n/);
    nodes = info.nodes;
    const stopped = await testnet("stop", "--dir", netDir);
    for (const n of nodes.filter((n) => n.index !== 1)) assert.match(stopped, new RegExp(`node ${n.index} stopped\\n`));
    for (const n of [nodes[1], synced]) {
      const v = await barrelNode("verify", "--datadir", n.datadir);
      assert.equal(v.code, 0, `verify of node ${n.index}: ${v.stderr}`);
      assert.match(v.stdout, /^verified .* entries sum to the state root of its head, block [0-9]+, 0x[0-9a-f]{64} \(/);
    }
  });
});
