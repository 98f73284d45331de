// What the barrel network tests (network.test.js, perturb.test.js) check of a chain: JSON-RPC
// calls, the same blocks and app hashes on every node, transfers sent under load, and that each
// accepted transfer is mined exactly once on every node. A node is an entry of testnet.json.

import assert from "node:assert/strict";
import { ethers } from "ethers";
import { cometbft, sleep, waitFor } from "./harness.mjs";

export const CHAIN_ID = 1337n;
export const BASE_FEE = 7n;
export const RICH = 10n ** 24n;
/// The funded keys: the network test's transfers use the first four, perturb.test.js gives each
/// side of a partition its own (a nonce per key, counted by the sender).
export const keys = [1, 2, 3, 4, 5, 6, 7, 8].map((i) => "0x" + (0x100 + i).toString(16).padStart(64, "0"));
export const wallets = keys.map((k) => new ethers.Wallet(k));
export const recipients = [1, 2, 3, 4].map((i) => "0x" + ("ee" + i.toString().padStart(2, "0")).repeat(10));

/// One JSON-RPC call (or a batch, given an array of [method, params]) over HTTP.
export async function rpc(url, method, params = []) {
  const batch = Array.isArray(method);
  const body = batch
    ? method.map(([m, p], id) => ({ jsonrpc: "2.0", id, method: m, params: p }))
    : { jsonrpc: "2.0", id: 1, method, params };
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const json = await res.json();
  const one = (a) => {
    if (a.error) throw new Error(`${url}: ${JSON.stringify(a.error)}`);
    return a.result;
  };
  if (!batch) return one(json);
  return json.sort((a, b) => a.id - b.id).map(one);
}

export const height = async (node) => Number(await rpc(node.json_rpc, "eth_blockNumber"));
export const cometHeight = async (node) =>
  Number((await cometbft(node.cometbft_rpc, "/status")).sync_info.latest_block_height);

/// An ethers provider for `node`'s JSON-RPC: no batching, no caching, fast polling.
export const providerOf = (node) =>
  new ethers.JsonRpcProvider(node.json_rpc, Number(CHAIN_ID), {
    staticNetwork: true, batchMaxCount: 1, pollingInterval: 100, cacheTimeout: -1,
  });

/// Block hashes, state roots and transaction hashes of heights from..to on `node` (inclusive).
export async function blocks(node, from, to) {
  const out = [];
  for (let h = from; h <= to; h += 50) {
    const calls = [];
    for (let k = h; k <= Math.min(to, h + 49); k++) calls.push(["eth_getBlockByNumber", [ethers.toQuantity(k), false]]);
    for (const b of await rpc(node.json_rpc, calls))
      out.push({ hash: b.hash, stateRoot: b.stateRoot, number: Number(b.number), txs: b.transactions });
  }
  return out;
}

/// CometBFT's block hash and app hash of heights from..to on `node`.
export async function cometBlocks(node, from, to) {
  const out = new Map();
  for (let h = from; h <= to; h += 20) {
    const r = await cometbft(node.cometbft_rpc, `/blockchain?minHeight=${h}&maxHeight=${Math.min(to, h + 19)}`);
    for (const m of r.block_metas)
      out.set(Number(m.header.height), { hash: m.block_id.hash, appHash: m.header.app_hash.toLowerCase() });
  }
  return out;
}

/// Every node in `which` has height `h` or more; returns their heights.
export const reach = (which, h, what, deadlineMs) =>
  waitFor(what ?? `nodes ${which.map((n) => n.index)} at height ${h}`, async () => {
    const hs = await Promise.all(which.map(height));
    return hs.every((x) => x >= h) && hs;
  }, deadlineMs);

/// The same blocks 0..h on every node in `which`, and CometBFT's app hash of height k+1 is
/// barrel's state root of height k (the genesis state root for height 1).
export async function sameChain(which, h) {
  const reference = await blocks(which[0], 0, h);
  const refComet = await cometBlocks(which[0], 1, h);
  for (let k = 0; k < h; k++)
    assert.equal("0x" + refComet.get(k + 1).appHash, reference[k].stateRoot, `app hash of height ${k + 1} on node ${which[0].index}`);
  for (const n of which.slice(1)) {
    assert.deepEqual(await blocks(n, 0, h), reference, `node ${n.index}'s blocks 0..${h}`);
    assert.deepEqual(await cometBlocks(n, 1, h), refComet, `node ${n.index}'s CometBFT blocks 1..${h}`);
  }
}

/// Every hash has a receipt on every node in `which`.
export const receiptsEverywhere = (which, hashes) =>
  waitFor(`receipts of ${hashes.length} accepted transfers on nodes ${which.map((n) => n.index)}`, async () => {
    for (const n of which)
      for (let i = 0; i < hashes.length; i += 50) {
        const rs = await rpc(n.json_rpc, hashes.slice(i, i + 50).map((h) => ["eth_getTransactionReceipt", [h]]));
        const missing = rs.findIndex((r) => r === null);
        if (missing >= 0) return false;
        for (const r of rs) assert.equal(r.status, "0x1");
      }
    return true;
  });

/// Each hash is in exactly one block of 1..h on every node in `which`: a receipt shows it
/// mined, this shows it mined once.
export async function minedOnce(which, hashes, h) {
  for (const n of which) {
    const seen = new Map(hashes.map((tx) => [tx, 0]));
    for (const b of await blocks(n, 1, h))
      for (const tx of b.txs) if (seen.has(tx)) seen.set(tx, seen.get(tx) + 1);
    for (const [tx, count] of seen) assert.equal(count, 1, `node ${n.index}: blocks 1..${h} holding ${tx}`);
  }
}

/// Transfers sent one after another through `provider` by `signers` while the test does other
/// things. Nonces are counted here: a send that the node accepted (a hash came back) used its
/// nonce.
export class Flow {
  constructor(provider, signers) {
    this.signers = signers.map((w) => w.connect(provider));
    this.accepted = [];
    this.errors = [];
    this.stopped = false;
  }
  async start() {
    this.nonces = await Promise.all(this.signers.map((w) => w.getNonce("pending")));
    this.done = this.loop();
  }
  async loop() {
    for (let k = 0; !this.stopped; k++) {
      const i = k % this.signers.length;
      try {
        const tx = await this.signers[i].sendTransaction({
          type: 2, chainId: CHAIN_ID, nonce: this.nonces[i], to: recipients[k % recipients.length],
          value: 1000n + BigInt(k), gasLimit: 21000n, maxFeePerGas: 1000n, maxPriorityFeePerGas: 1n,
        });
        this.nonces[i]++;
        this.accepted.push(tx.hash);
      } catch (e) {
        this.errors.push(e.shortMessage ?? e.message);
        if (this.errors.length > 20) throw new Error(`sends keep failing: ${this.errors.slice(-3)}`);
      }
      await sleep(40);
    }
  }
  async stop() {
    this.stopped = true;
    await this.done;
    assert.deepEqual(this.errors, [], "the node refused transfers");
  }
  /// Stops it quietly (after a failure).
  async abandon() {
    this.stopped = true;
    await this.done?.catch(() => {});
  }
}
