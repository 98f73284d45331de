// A real wallet against `barrel-node run`: ethers.js v6, unmodified, sends legacy, EIP-2930 and
// EIP-1559 transfers with Wallet.sendTransaction, awaits them with tx.wait(), reads receipts,
// blocks and transactions, and reports the node's rejections with its own error codes. Then the
// node's lifecycle: SIGTERM with a non-empty pool (the journal brings its transactions back) and
// SIGKILL under load (whole blocks only, every receipt kept).
//
// Run by scripts/test.sh: BARREL_NODE=<path to barrel-node> npm test (in test/ethers, after npm ci).

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ethers } from "ethers";
import { startNode as startBarrelNode, writeGenesis } from "../node-harness.mjs";

const NODE = process.env.BARREL_NODE;
if (!NODE) throw new Error("set BARREL_NODE to the barrel-node binary");

const CHAIN_ID = 1337n;
const BASE_FEE = 7n;  // wei, as go-ethereum's dev mode starts
// Fixed keys, so a failure names the same accounts every run.
const keys = [1, 2, 3].map((i) => "0x" + i.toString(16).padStart(64, "0"));
const wallets = keys.map((k) => new ethers.Wallet(k));
const RICH = 10n ** 24n;  // wei each funded account starts with
const poor = new ethers.Wallet("0x" + "99".repeat(32));  // no balance at all

const genesisFor = (dir) =>
  writeGenesis(dir, { addresses: wallets.map((w) => w.address), balance: RICH, baseFee: BASE_FEE, chainId: CHAIN_ID });
const startNode = (datadir, extra = []) => startBarrelNode(NODE, datadir, extra);

/// ethers' provider for a node: the network is fixed (no chain id probe before every call),
/// receipts are polled quickly, and answers are not reused: blocks come every 100 ms here, and
/// ethers otherwise answers a repeated call (the pending nonce) from a 250 ms cache.
function providerFor(url) {
  return new ethers.JsonRpcProvider(url, Number(CHAIN_ID), {
    staticNetwork: true, batchMaxCount: 1, pollingInterval: 50, cacheTimeout: -1,
  });
}

/// The error an ethers call rejects with.
async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail("expected the call to be rejected");
}

describe("ethers.js v6 against barrel-node run", () => {
  let dir, datadir, node, provider, signers;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "barrel-ethers-"));
    datadir = path.join(dir, "d");
    execFileSync(NODE, ["init", "--datadir", datadir, "--genesis", genesisFor(dir)]);
    node = startNode(datadir, ["--block-time", "100"]);
    provider = providerFor(await node.url);
    signers = wallets.map((w) => w.connect(provider));
  });

  after(async () => {
    if (node && node.child.exitCode === null) {
      node.child.kill("SIGTERM");
      await node.exited;
    }
    provider?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it("reads the chain id and the genesis balances", async () => {
    assert.equal((await provider.getNetwork()).chainId, CHAIN_ID);
    assert.equal(await provider.send("eth_chainId", []), "0x539");
    assert.equal(await provider.getBalance(wallets[0].address), RICH);
    assert.equal(await provider.getBalance(poor.address), 0n);
    assert.equal(await provider.getTransactionCount(wallets[0].address), 0);
  });

  for (const [type, name] of [[0, "legacy"], [1, "EIP-2930"], [2, "EIP-1559"]]) {
    it(`sends a ${name} transfer and awaits its receipt`, async () => {
      const to = ethers.Wallet.createRandom().address;
      const before = await provider.getBalance(wallets[1].address);
      const tx = await signers[1].sendTransaction({ to, value: 12345n, type });
      assert.equal(tx.type, type);
      const receipt = await tx.wait();
      assert.equal(receipt.status, 1);
      assert.equal(receipt.hash, tx.hash);
      assert.equal(receipt.from, wallets[1].address);
      assert.equal(receipt.to, to);
      assert.equal(receipt.gasUsed, 21000n);
      assert.equal(receipt.type, type);
      assert.equal(receipt.logs.length, 0);
      assert.equal(receipt.contractAddress, null);
      assert.ok(receipt.blockNumber >= 1);
      assert.equal(await provider.getBalance(to), 12345n);
      const fee = receipt.gasUsed * receipt.gasPrice;
      assert.equal(await provider.getBalance(wallets[1].address), before - 12345n - fee);

      const block = await provider.getBlock(receipt.blockNumber);
      assert.equal(block.hash, receipt.blockHash);
      assert.ok(block.transactions.includes(tx.hash));
      assert.equal(block.baseFeePerGas, BASE_FEE);
      const full = await provider.getBlock(receipt.blockNumber, true);
      const included = full.prefetchedTransactions.find((t) => t.hash === tx.hash);
      assert.ok(included);
      assert.equal(included.from, wallets[1].address);

      const fetched = await provider.getTransaction(tx.hash);
      assert.equal(fetched.hash, tx.hash);
      assert.equal(fetched.blockNumber, receipt.blockNumber);
      assert.equal(fetched.from, wallets[1].address);
      assert.equal(fetched.to, to);
      assert.equal(fetched.value, 12345n);
      assert.equal(fetched.type, type);
      assert.equal(fetched.chainId, CHAIN_ID);
    });
  }

  it("reports a nonce too low as NONCE_EXPIRED", async () => {
    const e = await rejection(signers[1].sendTransaction({ to: wallets[0].address, value: 1n, nonce: 0 }));
    assert.equal(e.code, "NONCE_EXPIRED");
    assert.match(e.message, /nonce too low: next nonce 3, tx nonce 0/);
  });

  it("reports insufficient funds as INSUFFICIENT_FUNDS", async () => {
    const wallet = poor.connect(provider);
    // ethers estimates the gas first, and the estimate fails as go-ethereum's does: executed at
    // a fee of 0, its balance check names the address, what it has and what it needs ...
    const estimated = await rejection(wallet.sendTransaction({ to: wallets[0].address, value: 1n }));
    assert.equal(estimated.code, "INSUFFICIENT_FUNDS");
    assert.match(estimated.message, /insufficient funds for gas \* price \+ value: address 0x[0-9a-fA-F]{40} have 0 want 1/);
    // ... and with a gas limit given, the pool refuses it.
    const sent = await rejection(wallet.sendTransaction({ to: wallets[0].address, value: 1n, gasLimit: 21000n }));
    assert.equal(sent.code, "INSUFFICIENT_FUNDS");
    assert.match(sent.message, /insufficient funds for gas \* price \+ value: balance 0, tx cost/);
  });

  it("reports an underpriced replacement as REPLACEMENT_UNDERPRICED", async () => {
    // A nonce past a gap stays queued, so the replacement meets it in the pool.
    const nonce = (await provider.getTransactionCount(wallets[2].address)) + 5;
    const fees = { maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n, gasLimit: 21000n };
    await signers[2].sendTransaction({ to: wallets[0].address, value: 1n, nonce, ...fees });
    assert.deepEqual(await provider.send("txpool_status", []), { pending: "0x0", queued: "0x1" });
    const e = await rejection(signers[2].sendTransaction({ to: wallets[0].address, value: 2n, nonce, ...fees }));
    assert.equal(e.code, "REPLACEMENT_UNDERPRICED");
  });

  it("refuses a transaction signed for another chain", async () => {
    const signed = await wallets[0].signTransaction({
      to: wallets[1].address, value: 1n, nonce: await provider.getTransactionCount(wallets[0].address),
      chainId: 1n, gasLimit: 21000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n, type: 2,
    });
    const e = await rejection(provider.broadcastTransaction(signed));
    assert.match(e.message, /invalid sender: invalid chain id for signer: have 1 want 1337/);
  });

  it("found every sealed sender in the cache (recovered once, at admission)", async () => {
    const lines = node.log().match(/sender cache (\d+)\/(\d+) hits/g);
    assert.ok(lines && lines.length >= 3, node.log());
    const [, hits, lookups] = lines.at(-1).match(/(\d+)\/(\d+)/);
    assert.ok(Number(lookups) >= 3);
    assert.equal(hits, lookups);
    const metrics = await (await fetch(`${await node.url}/metrics`)).text();
    assert.match(metrics, /^barrel_sender_cache_misses_total 0$/m);
  });

  it("keeps the pool across a SIGTERM: its transactions are mined after the restart", async () => {
    // A long block time keeps the transactions in the pool until the stop.
    node.child.kill("SIGTERM");
    assert.deepEqual(await node.exited, { code: 0, signal: null });
    node = startNode(datadir, ["--block-time", "60000"]);
    provider.destroy();
    provider = providerFor(await node.url);
    const sender = wallets[0].connect(provider);
    const sent = [];
    for (let i = 0; i < 3; ++i) sent.push(await sender.sendTransaction({ to: wallets[1].address, value: 1n }));
    assert.equal(await provider.getTransactionReceipt(sent[0].hash), null);
    node.child.kill("SIGTERM");
    assert.deepEqual(await node.exited, { code: 0, signal: null });
    // The three, and the queued transaction of the replacement test, still behind its gap.
    assert.match(node.log(), /stopped at block \d+; 4 pool transactions journaled/);

    node = startNode(datadir, ["--block-time", "100"]);
    provider.destroy();
    provider = providerFor(await node.url);
    for (const tx of sent) {
      const receipt = await provider.waitForTransaction(tx.hash, 1, 10000);
      assert.equal(receipt.status, 1);
    }
    assert.match(node.log(), /4 of 4 journaled transactions re-admitted/);
  });

  /// The receipt of `hash`, asked for until there is one. Not tx.wait() in the loop below: ethers
  /// waits for a block after the one it first sees, and a node that seals only when it has
  /// transactions makes none once this round's are in; when the block that mines the transaction
  /// is sealed between ethers' first receipt check and its first block-number poll, wait() never
  /// returns (seen once in CI, in thirty waits of this test on a busy machine).
  async function receiptOf(hash) {
    const end = Date.now() + 60_000;
    for (;;) {
      const r = await provider.getTransactionReceipt(hash);
      if (r) return r;
      if (Date.now() > end) throw new Error(`no receipt of ${hash} after 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it("keeps whole blocks and every receipt across a SIGKILL under load", async () => {
    const sender = wallets[1].connect(provider);
    let nonce = await provider.getTransactionCount(wallets[1].address, "pending");
    const receipts = new Map();
    // Send and await in rounds until enough have receipts, then kill mid-round.
    for (let round = 0; round < 4; ++round) {
      const txs = [];
      for (let i = 0; i < 10; ++i)
        txs.push(await sender.sendTransaction({ to: wallets[2].address, value: 1n, nonce: nonce++,
                                                gasLimit: 21000n, maxFeePerGas: 10n ** 10n,
                                                maxPriorityFeePerGas: 1n }));
      if (round === 3) break;  // these may or may not be mined at the kill
      for (const tx of txs) receipts.set(tx.hash, await receiptOf(tx.hash));
    }
    node.child.kill("SIGKILL");
    assert.equal((await node.exited).signal, "SIGKILL");

    node = startNode(datadir, ["--block-time", "100"]);
    provider.destroy();
    provider = providerFor(await node.url);
    for (const [hash, before] of receipts) {
      const after = await provider.getTransactionReceipt(hash);
      assert.ok(after, `receipt of ${hash} lost`);
      assert.equal(after.blockHash, before.blockHash);
      assert.equal(after.blockNumber, before.blockNumber);
      assert.equal(after.index, before.index);
      assert.equal(after.status, before.status);
    }
    // The head is a whole block: it and its transactions are all there.
    const head = await provider.getBlock("latest", true);
    for (const t of head.prefetchedTransactions) assert.ok(await provider.getTransactionReceipt(t.hash));
    // And the node seals again.
    const next = await (wallets[2].connect(provider)).sendTransaction({ to: wallets[0].address, value: 1n });
    assert.equal((await next.wait()).status, 1);
  });
});
