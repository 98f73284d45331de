// foundry's `cast`, the binary npm installs (@foundry-rs/cast-linux-amd64, pinned by
// package-lock.json), against `barrel-node run`: each command a user types against a dev chain,
// asserting what it prints. send (--private-key; EIP-1559 and --legacy, awaited and --async),
// receipt, tx, balance, nonce, block (latest, a number, a field), block-number, code, storage,
// logs, estimate, mktx + publish, rpc (a method by name, and --raw), chain-id, and the node's
// rejections as cast reports them.
//
// Run by scripts/test.sh: BARREL_NODE=<path to barrel-node> npm test (in test/cast, after npm ci).
// The node runs at its default block time (0: a block as soon as transactions are pending);
// BARREL_BLOCK_TIME (ms), when set, is passed as --block-time.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { startNode as startBarrelNode, writeGenesis } from "../node-harness.mjs";

const NODE = process.env.BARREL_NODE;
if (!NODE) throw new Error("set BARREL_NODE to the barrel-node binary");
const BLOCK_TIME = process.env.BARREL_BLOCK_TIME;
// The binary the package ships (its package.json's "bin").
const CAST = path.join(path.dirname(createRequire(import.meta.url).resolve("@foundry-rs/cast-linux-amd64/package.json")), "bin", "cast");

const CHAIN_ID = 1337;
const BASE_FEE = 7n;
// Fixed keys and their addresses (keys 0x…01 to 0x…03), so a failure names the same accounts
// every run.
const keys = [1, 2, 3].map((i) => `0x${i.toString(16).padStart(64, "0")}`);
const addresses = [
  "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf",
  "0x2B5AD5c4795c026514f8317c7a215E218DcCD6cF",
  "0x6813Eb9362372EEF6200f3b1dbC3f819671cBA69",
];
const RICH = 10n ** 24n;
const POOR_KEY = `0x${"99".repeat(32)}`;  // its account has nothing
const SINK = "0x000000000000000000000000000000000000dEaD";
const ZERO_WORD = `0x${"00".repeat(32)}`;

const genesisFor = (dir) =>
  writeGenesis(dir, { addresses: addresses, balance: RICH, baseFee: BASE_FEE, chainId: CHAIN_ID });
const startNode = (datadir, extra = []) => startBarrelNode(NODE, datadir, extra);

describe("foundry's cast against barrel-node run", () => {
  let dir, node, url;

  /// Runs cast with the node's URL; resolves with its exit code, stdout and stderr (trimmed).
  /// Asynchronous, so the node's stderr keeps being read meanwhile.
  function run(...args) {
    return new Promise((resolve) => {
      // A home of its own: cast reads and writes ~/.foundry (its config, a chain cache).
      const env = { ...process.env, HOME: dir, NO_COLOR: "1", ETH_RPC_URL: url };
      execFile(CAST, args, { env, cwd: dir, timeout: 30000 }, (error, stdout, stderr) => {
        resolve({ code: error ? (error.code ?? 1) : 0, stdout: stdout.trim(), stderr: stderr.trim() });
      });
    });
  }

  /// cast's stdout, failing with its stderr when it did not succeed.
  async function cast(...args) {
    const r = await run(...args);
    assert.equal(r.code, 0, `cast ${args.join(" ")} failed: ${r.stderr}`);
    return r.stdout;
  }

  /// cast's stderr, failing unless it failed.
  async function castFails(...args) {
    const r = await run(...args);
    assert.notEqual(r.code, 0, `cast ${args.join(" ")} succeeded: ${r.stdout}`);
    return r.stderr;
  }

  /// The value of `name` in cast's two-column text output (`name   value`).
  function field(text, name) {
    const m = text.match(new RegExp(`^${name}\\s+(.*)$`, "m"));
    assert.ok(m, `no ${name} in:\n${text}`);
    return m[1].trim();
  }

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "barrel-cast-"));
    const datadir = path.join(dir, "d");
    execFileSync(NODE, ["init", "--datadir", datadir, "--genesis", genesisFor(dir)]);
    node = startNode(datadir, BLOCK_TIME === undefined ? [] : ["--block-time", BLOCK_TIME]);
    url = await node.url;
  });

  after(async () => {
    if (node && node.child.exitCode === null) {
      node.child.kill("SIGTERM");
      await node.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("chain-id, block-number, balance and nonce at genesis", async () => {
    assert.equal(await cast("chain-id"), String(CHAIN_ID));
    assert.match(await cast("block-number"), /^\d+$/);
    assert.equal(await cast("balance", addresses[0]), RICH.toString());
    assert.equal(await cast("balance", "--ether", addresses[0]), "1000000.000000000000000000");
    assert.equal(await cast("balance", SINK), "0");
    assert.equal(await cast("nonce", addresses[2]), "0");
  });

  for (const [flags, type, name] of [[[], "0x2", "EIP-1559"], [["--legacy"], "0x0", "legacy"]]) {
    it(`send (${name}) with --private-key, then receipt, tx, balance and nonce`, async () => {
      const nonce = Number(await cast("nonce", addresses[0]));
      const before = BigInt(await cast("balance", addresses[0]));
      const sinkBefore = BigInt(await cast("balance", SINK));
      const receipt = JSON.parse(await cast("send", ...flags, "--private-key", keys[0], SINK, "--value", "1000", "--json"));
      assert.equal(receipt.status, "0x1");
      assert.equal(receipt.type, type);
      assert.equal(receipt.gasUsed, "0x5208");
      assert.equal(receipt.from, addresses[0].toLowerCase());
      assert.equal(receipt.to, SINK.toLowerCase());
      assert.equal(receipt.contractAddress, null);
      assert.deepEqual(receipt.logs, []);
      const hash = receipt.transactionHash;

      // cast receipt: the table, one field, and JSON.
      const table = await cast("receipt", hash);
      assert.equal(field(table, "status"), "1 (success)");
      assert.equal(field(table, "gasUsed"), "21000");
      assert.equal(field(table, "blockHash"), receipt.blockHash);
      assert.equal(field(table, "transactionHash"), hash);
      assert.equal(await cast("receipt", hash, "gasUsed"), "21000");
      assert.deepEqual(JSON.parse(await cast("receipt", hash, "--json")), receipt);

      const tx = JSON.parse(await cast("tx", hash, "--json"));
      assert.equal(tx.hash, hash);
      assert.equal(tx.type, type);
      assert.equal(tx.value, "0x3e8");
      assert.equal(tx.nonce, `0x${nonce.toString(16)}`);
      assert.equal(tx.blockHash, receipt.blockHash);
      assert.equal(await cast("tx", hash, "value"), "1000");

      const fee = 21000n * BigInt(receipt.effectiveGasPrice);
      assert.equal(BigInt(await cast("balance", addresses[0])), before - 1000n - fee);
      assert.equal(BigInt(await cast("balance", SINK)), sinkBefore + 1000n);
      assert.equal(await cast("nonce", addresses[0]), String(nonce + 1));
    });
  }

  it("send --async prints the hash; receipt waits for it", async () => {
    const hash = await cast("send", "--async", "--private-key", keys[1], SINK, "--value", "1");
    assert.match(hash, /^0x[0-9a-f]{64}$/);
    const receipt = JSON.parse(await cast("receipt", hash, "--json"));
    assert.equal(receipt.transactionHash, hash);
    assert.equal(receipt.status, "0x1");
  });

  it("block: latest, a number, earliest, one field, JSON", async () => {
    const head = Number(await cast("block-number"));
    assert.ok(head >= 2);
    const latest = await cast("block", "latest");
    assert.equal(field(latest, "number"), String(head));
    assert.equal(field(latest, "baseFeePerGas"), String(BASE_FEE));
    assert.equal(field(latest, "gasLimit"), "30000000");
    assert.equal(field(latest, "miner").toLowerCase(), `0x${"c0".repeat(20)}`);
    assert.equal(field(latest, "sha3Uncles"), "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347");
    const hash = field(latest, "hash");
    assert.match(hash, /^0x[0-9a-f]{64}$/);
    const byNumber = JSON.parse(await cast("block", String(head), "--json"));
    assert.equal(byNumber.hash, hash);
    assert.equal(byNumber.number, `0x${head.toString(16)}`);
    assert.ok(byNumber.transactions.length >= 1);
    assert.equal(await cast("block", String(head), "-f", "hash"), hash);
    assert.equal(await cast("block", String(head - 1), "-f", "hash"), field(latest, "parentHash"));
    assert.equal(await cast("block", "earliest", "-f", "number"), "0");
    assert.equal(await cast("block", "0", "-f", "number"), "0");
    const full = JSON.parse(await cast("block", String(head), "--full", "--json"));
    assert.equal(full.transactions[0].blockHash, hash);
  });

  it("estimate: a transfer is 21000 gas", async () => {
    assert.equal(await cast("estimate", SINK, "--value", "1", "--from", addresses[0]), "21000");
    assert.equal(await cast("estimate", SINK, "--from", addresses[0]), "21000");
  });

  it("mktx + publish: sign offline, then send the raw transaction (EIP-1559 and legacy)", async () => {
    for (const [flags, prefix] of [[[], /^0x02f8/], [["--legacy"], /^0xf8/]]) {
      const raw = await cast("mktx", ...flags, "--private-key", keys[2], SINK, "--value", "7");
      assert.match(raw, prefix);
      const hash = await cast("keccak", raw);
      const receipt = JSON.parse(await cast("publish", raw));
      assert.equal(receipt.transactionHash, hash);
      assert.equal(receipt.status, "0x1");
      assert.equal(await cast("tx", hash, "value"), "7");
      // The same bytes again: mined already, so its nonce is spent.
      assert.match(await castFails("publish", raw), /nonce too low: next nonce \d+, tx nonce \d+/);
    }
  });

  it("rpc: a method by name, and --raw", async () => {
    assert.equal(await cast("rpc", "eth_chainId"), '"0x539"');
    assert.match(await cast("rpc", "web3_clientVersion"), /^"barrel\/v/);
    assert.equal(await cast("rpc", "eth_getBalance", SINK, "latest"),
      `"0x${BigInt(await cast("balance", SINK)).toString(16)}"`);
    assert.equal(await cast("rpc", "--raw", "eth_getTransactionCount", JSON.stringify([addresses[1], "latest"])),
      `"0x${Number(await cast("nonce", addresses[1])).toString(16)}"`);
    assert.deepEqual(JSON.parse(await cast("rpc", "txpool_status")), { pending: "0x0", queued: "0x0" });
    // An unknown method: cast shows the node's -32601.
    assert.match(await castFails("rpc", "eth_sendTransaction", "{}"),
      /-32601: the method eth_sendTransaction does not exist\/is not available/);
  });

  it("rpc: the net_ and web3_ methods dapps probe", async () => {
    assert.equal(await cast("rpc", "net_listening"), "true");
    assert.equal(await cast("rpc", "net_peerCount"), '"0x0"');
    assert.equal(await cast("rpc", "web3_sha3", "0x68656c6c6f"), `"${await cast("keccak", "0x68656c6c6f")}"`);
  });

  it("code and storage: barrel has no contracts", async () => {
    assert.equal(await cast("code", addresses[0]), "0x");
    assert.equal(await cast("code", SINK, "--block", "latest"), "0x");
    assert.equal(await cast("codesize", SINK), "0");
    assert.equal(await cast("storage", addresses[0], "0"), ZERO_WORD);
  });

  it("logs: none, over any range and filter", async () => {
    assert.equal(await cast("logs", "--from-block", "0", "--to-block", "latest", "--json"), "[]");
    assert.equal(await cast("logs", "--from-block", "earliest", "--address", SINK, "--json"), "[]");
    const topic = await cast("keccak", "Transfer(address,address,uint256)");
    assert.equal(await cast("logs", "--from-block", "0", topic, "--json"), "[]");
    // A range that ends before it begins: go-ethereum's words. (`cast logs` itself prints nothing
    // and exits 0 for such a range although the node refused it, so the call is made raw.)
    const head = Number(await cast("block-number"));
    const range = JSON.stringify({ fromBlock: `0x${(head + 1).toString(16)}`, toBlock: `0x${head.toString(16)}` });
    assert.match(await castFails("rpc", "eth_getLogs", range), /invalid block range params/);
  });

  it("reports the node's rejections", async () => {
    assert.match(await castFails("send", "--private-key", keys[0], SINK, "--value", "1", "--nonce", "0"),
      /nonce too low: next nonce \d+, tx nonce 0/);
    assert.match(await castFails("send", "--private-key", keys[0], SINK, "--value", "1", "--gas-limit", "20000"),
      /intrinsic gas too low: gas 20000, minimum needed 21000/);
    // cast estimates the gas at its fees first: the value alone is not covered.
    assert.match(await castFails("send", "--private-key", POOR_KEY, SINK, "--value", "1"),
      /insufficient funds for transfer/);
    assert.match(await castFails("send", "--private-key", POOR_KEY, SINK, "--value", "1", "--gas-limit", "21000"),
      /insufficient funds for gas \* price \+ value: balance 0, tx cost/);
    // A fee below the base fee: the estimate names the sender, the pool does not.
    assert.match(await castFails("send", "--private-key", keys[0], SINK, "--value", "1", "--gas-price", "1", "--legacy"),
      /max fee per gas less than block base fee: address 0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf, maxFeePerGas: 1, baseFee: 7/);
    assert.match(await castFails("send", "--private-key", keys[0], SINK, "--value", "1", "--gas-price", "1", "--legacy",
      "--gas-limit", "21000"), /max fee per gas less than block base fee: maxFeePerGas: 1, baseFee: 7/);
    // Signed for another chain: the estimate refuses the call's chainId, the pool the signature.
    assert.match(await castFails("send", "--private-key", keys[0], SINK, "--value", "1", "--chain", "1"),
      /chainId does not match node's \(have=1, want=1337\)/);
    const foreign = await cast("mktx", "--private-key", keys[0], SINK, "--value", "1", "--chain", "1",
      "--nonce", "0", "--gas-limit", "21000", "--gas-price", "10000000000", "--priority-gas-price", "1");
    assert.match(await castFails("publish", foreign), /invalid sender: invalid chain id for signer: have 1 want 1337/);
  });
});
