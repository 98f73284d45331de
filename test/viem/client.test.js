// viem, unmodified, against `barrel-node run`, over both of its transports: HTTP (`http()`) and
// WebSocket (`webSocket()`, an HTTP Upgrade on the same port). A local account
// (`privateKeyToAccount`) sends legacy, EIP-2930 and EIP-1559 transfers that viem prepares itself
// (nonce, fees and gas from the node), awaits them with waitForTransactionReceipt and reads them
// back; then what dapps call beyond a wallet: getCode, getStorageAt, getLogs, the filter family,
// watchBlocks / watchPendingTransactions / watchBlockNumber over eth_subscribe; and each rejection
// the node produces, as the error class viem's getNodeError gives it
// (node_modules/viem/_esm/utils/errors/getNodeError.js matches go-ethereum's messages).
//
// Run by scripts/test.sh: BARREL_NODE=<path to barrel-node> npm test (in test/viem, after npm ci).
// The node runs at its default block time (0: a block as soon as transactions are pending);
// BARREL_BLOCK_TIME (ms), when set, is passed as --block-time.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  BaseError, createPublicClient, createWalletClient, defineChain, http, keccak256, toHex, webSocket,
  EstimateGasExecutionError, ExecutionRevertedError, FeeCapTooLowError, InsufficientFundsError,
  IntrinsicGasTooLowError, InvalidInputRpcError, NonceTooHighError, NonceTooLowError,
  TipAboveFeeCapError, TransactionExecutionError, RpcRequestError,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { getNodeError } from "viem/utils";
import { startNode as startBarrelNode, writeGenesis } from "../node-harness.mjs";

const NODE = process.env.BARREL_NODE;
if (!NODE) throw new Error("set BARREL_NODE to the barrel-node binary");
const BLOCK_TIME = process.env.BARREL_BLOCK_TIME;

const CHAIN_ID = 1337;
const BASE_FEE = 7n;  // wei, as go-ethereum's dev mode starts
// Fixed keys, so a failure names the same accounts every run.
const accounts = [1, 2, 3, 4].map((i) => privateKeyToAccount(`0x${i.toString(16).padStart(64, "0")}`));
const RICH = 10n ** 24n;  // wei each funded account starts with
const poor = privateKeyToAccount(`0x${"99".repeat(32)}`);  // no balance at all
const SINK = `0x${"5e".repeat(20)}`;  // where the transfers of the tests go
const ZERO_WORD = `0x${"00".repeat(32)}`;

const genesisFor = (dir) =>
  writeGenesis(dir, { addresses: accounts.map((a) => a.address), balance: RICH, baseFee: BASE_FEE, chainId: CHAIN_ID });
const startNode = (datadir, extra = []) => startBarrelNode(NODE, datadir, extra);

/// What a promise rejects with.
async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail("expected a rejection");
}

/// The error of class `cls` in viem's chain of causes, failing with the whole chain if none is.
function causeOf(error, cls) {
  assert.ok(error instanceof BaseError, `not a viem error: ${error}`);
  const found = error.walk((e) => e instanceof cls);
  assert.ok(found instanceof cls, `no ${cls.name} in:\n${error.message}`);
  return found;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/// Waits until `done()` holds or `ms` have passed.
async function until(done, ms) {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await sleep(25);
}

const TYPES = [["legacy", "legacy"], ["eip2930", "EIP-2930"], ["eip1559", "EIP-1559"]];

describe("viem against barrel-node run", () => {
  let dir, node, chain, httpUrl, wsUrl;
  const clients = {};  // transport name -> { public, wallets }

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "barrel-viem-"));
    const datadir = path.join(dir, "d");
    execFileSync(NODE, ["init", "--datadir", datadir, "--genesis", genesisFor(dir)]);
    node = startNode(datadir, BLOCK_TIME === undefined ? [] : ["--block-time", BLOCK_TIME]);
    httpUrl = await node.url;
    wsUrl = httpUrl.replace(/^http:/, "ws:");
    chain = defineChain({
      id: CHAIN_ID, name: "barrel", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [httpUrl], webSocket: [wsUrl] } },
    });
    // Quick polls (blocks come every BLOCK_TIME ms, or at once), no cached block number, and no
    // retries: a failure is reported as the node gave it.
    const transports = {
      http: () => http(httpUrl, { retryCount: 0 }),
      webSocket: () => webSocket(wsUrl, { retryCount: 0, reconnect: false }),
    };
    for (const [name, transport] of Object.entries(transports)) {
      clients[name] = {
        public: createPublicClient({ chain, transport: transport(), pollingInterval: 50, cacheTime: 0 }),
        wallets: accounts.map((account) =>
          createWalletClient({ account, chain, transport: transport(), pollingInterval: 50, cacheTime: 0 })),
      };
    }
  });

  after(async () => {
    for (const c of Object.values(clients)) {
      for (const client of [c.public, ...c.wallets]) {
        if (client.transport.type === "webSocket")
          await client.transport.getRpcClient().then((s) => s.close()).catch(() => {});
      }
    }
    if (node && node.child.exitCode === null) {
      node.child.kill("SIGTERM");
      await node.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  for (const transport of ["http", "webSocket"]) {
    describe(`over ${transport}`, () => {
      const pub = () => clients[transport].public;
      // One sender per transport, so the two never race for a nonce.
      const sender = transport === "http" ? 1 : 2;
      const wallet = () => clients[transport].wallets[sender];

      it("reads the chain id, the genesis balances and nonces", async () => {
        assert.equal(await pub().getChainId(), CHAIN_ID);
        assert.equal(await pub().getBalance({ address: accounts[0].address }), RICH);
        assert.equal(await pub().getBalance({ address: poor.address }), 0n);
        assert.equal(await pub().getTransactionCount({ address: poor.address }), 0);
        assert.ok((await pub().getBlockNumber()) >= 0n);
      });

      for (const [type, name] of TYPES) {
        it(`sends a ${name} transfer, waits for its receipt and reads it back`, async () => {
          const to = privateKeyToAccount(generatePrivateKey()).address;
          const from = accounts[sender].address;
          const before = await pub().getBalance({ address: from });
          const nonce = await pub().getTransactionCount({ address: from });
          const hash = await wallet().sendTransaction({ to, value: 12345n, type });
          const receipt = await pub().waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 10000 });
          assert.equal(receipt.status, "success");
          assert.equal(receipt.transactionHash, hash);
          assert.equal(receipt.from, from.toLowerCase());
          assert.equal(receipt.to, to.toLowerCase());
          assert.equal(receipt.gasUsed, 21000n);
          assert.equal(receipt.cumulativeGasUsed >= 21000n, true);
          assert.equal(receipt.type, type);
          assert.deepEqual(receipt.logs, []);
          assert.equal(receipt.contractAddress, null);
          assert.ok(receipt.blockNumber >= 1n);
          assert.equal(await pub().getBalance({ address: to }), 12345n);
          const fee = receipt.gasUsed * receipt.effectiveGasPrice;
          assert.equal(await pub().getBalance({ address: from }), before - 12345n - fee);
          assert.equal(await pub().getTransactionCount({ address: from }), nonce + 1);

          const block = await pub().getBlock({ blockNumber: receipt.blockNumber });
          assert.equal(block.hash, receipt.blockHash);
          assert.equal(block.number, receipt.blockNumber);
          assert.ok(block.transactions.includes(hash));
          assert.equal(block.baseFeePerGas, BASE_FEE);
          const byHash = await pub().getBlock({ blockHash: receipt.blockHash, includeTransactions: true });
          const included = byHash.transactions.find((t) => t.hash === hash);
          assert.ok(included);
          assert.equal(included.from, from.toLowerCase());

          const fetched = await pub().getTransaction({ hash });
          assert.equal(fetched.hash, hash);
          assert.equal(fetched.type, type);
          assert.equal(fetched.blockNumber, receipt.blockNumber);
          assert.equal(fetched.from, from.toLowerCase());
          assert.equal(fetched.to, to.toLowerCase());
          assert.equal(fetched.value, 12345n);
          assert.equal(fetched.nonce, nonce);
          if (type !== "legacy") assert.equal(fetched.chainId, CHAIN_ID);
          if (type === "eip1559") assert.ok(fetched.maxFeePerGas >= BASE_FEE);
          else assert.ok(fetched.gasPrice >= BASE_FEE);
        });
      }

      it("estimates a transfer at 21000 gas", async () => {
        assert.equal(await pub().estimateGas({ account: accounts[0].address, to: SINK, value: 1n }), 21000n);
      });

      it("reads no code and zero storage: barrel has no contracts", async () => {
        // viem answers `undefined` for the "0x" of an account without code.
        assert.equal(await pub().getCode({ address: accounts[0].address }), undefined);
        assert.equal(await pub().getCode({ address: poor.address, blockTag: "latest" }), undefined);
        assert.equal(await pub().getStorageAt({ address: accounts[0].address, slot: "0x0" }), ZERO_WORD);
        assert.equal(await pub().getStorageAt({ address: poor.address, slot: toHex(7n, { size: 32 }) }), ZERO_WORD);
      });

      it("gets no logs, with the filter validated", async () => {
        const head = await pub().getBlockNumber();
        assert.deepEqual(await pub().getLogs(), []);
        assert.deepEqual(await pub().getLogs({ fromBlock: 0n, toBlock: head }), []);
        assert.deepEqual(await pub().getLogs({ address: accounts[0].address, fromBlock: "earliest", toBlock: "latest" }), []);
        const block = await pub().getBlock({ blockNumber: head });
        assert.deepEqual(await pub().getLogs({ blockHash: block.hash }), []);
        // go-ethereum: a range that ends before it begins is refused.
        const e = await rejection(pub().getLogs({ fromBlock: head + 1n, toBlock: head }));
        assert.match(e.details, /invalid block range/);
      });

      it("answers the net_ and web3_ methods dapps probe", async () => {
        assert.equal(await pub().request({ method: "net_listening" }), true);
        assert.equal(await pub().request({ method: "net_peerCount" }), "0x0");
        assert.equal(await pub().request({ method: "net_version" }), String(CHAIN_ID));
        assert.equal(await pub().request({ method: "web3_sha3", params: ["0x68656c6c6f"] }), keccak256("0x68656c6c6f"));
      });

      it("reports new blocks and pending transactions through filters", async () => {
        const blocks = await pub().createBlockFilter();
        const pending = await pub().createPendingTransactionFilter();
        assert.equal(blocks.type, "block");
        assert.equal(pending.type, "transaction");
        // Nothing happened yet since they were made.
        assert.deepEqual(await pub().getFilterChanges({ filter: pending }), []);
        const hash = await wallet().sendTransaction({ to: SINK, value: 1n });
        const receipt = await pub().waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 10000 });
        // go-ethereum reports a transaction to a pending filter as it enters the pool, so it is
        // there even when it was sealed at once.
        assert.ok((await pub().getFilterChanges({ filter: pending })).includes(hash));
        assert.ok((await pub().getFilterChanges({ filter: blocks })).includes(receipt.blockHash));
        // Changes are reported once.
        assert.ok(!(await pub().getFilterChanges({ filter: pending })).includes(hash));
        assert.ok(!(await pub().getFilterChanges({ filter: blocks })).includes(receipt.blockHash));
        assert.equal(await pub().uninstallFilter({ filter: blocks }), true);
        assert.equal(await pub().uninstallFilter({ filter: pending }), true);
        assert.equal(await pub().uninstallFilter({ filter: blocks }), false);
        const e = await rejection(pub().getFilterChanges({ filter: blocks }));
        assert.match(e.details, /filter not found/);
      });

      it("makes an event filter that finds no logs", async () => {
        const filter = await pub().createEventFilter({ address: SINK, fromBlock: 0n });
        assert.equal(filter.type, "event");
        assert.deepEqual(await pub().getFilterLogs({ filter }), []);
        const hash = await wallet().sendTransaction({ to: SINK, value: 1n });
        await pub().waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 10000 });
        assert.deepEqual(await pub().getFilterChanges({ filter }), []);
        assert.equal(await pub().uninstallFilter({ filter }), true);
        const e = await rejection(pub().getFilterLogs({ filter }));
        assert.match(e.details, /filter not found/);
      });

      /// Sends transfers, each awaited, until `ready()` holds (at most 50).
      async function warmUp(ready) {
        for (let i = 0; i < 50 && !ready(); ++i) {
          const hash = await wallet().sendTransaction({ to: SINK, value: 1n });
          await pub().waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 10000 });
          await until(ready, 200);
        }
        assert.ok(ready(), "the watchers reported nothing in 50 blocks");
      }

      it("watches blocks, the block number and pending transactions", async () => {
        // Over the WebSocket transport viem subscribes (eth_subscribe newHeads and
        // newPendingTransactions); over HTTP it polls (eth_getBlockByNumber, and a pending
        // transaction filter).
        const poll = transport === "http";
        const blocks = [], numbers = [], pending = [], errors = [];
        const onError = (e) => errors.push(e);
        const unwatch = [
          // viem fetches each head's block by number (and gives undefined if that fails).
          pub().watchBlocks({ poll, pollingInterval: 50, onBlock: (b) => (b ? blocks.push(b) : onError(new Error("a head's block not found"))), onError }),
          pub().watchBlockNumber({ poll, pollingInterval: 50, onBlockNumber: (n) => numbers.push(n), onError }),
          pub().watchPendingTransactions({ poll, pollingInterval: 50, onTransactions: (h) => pending.push(...h), onError }),
        ];
        try {
          // A watcher reports what happens once it is in place, which viem does not announce:
          // transfers until each has reported something, then the one each must report.
          await warmUp(() => blocks.length > 0 && numbers.length > 0 && pending.length > 0 || errors.length > 0);
          assert.deepEqual(errors, []);
          const hash = await wallet().sendTransaction({ to: SINK, value: 1n });
          const receipt = await pub().waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 10000 });
          const seen = () => blocks.some((b) => b.hash === receipt.blockHash) &&
            numbers.includes(receipt.blockNumber) && pending.includes(hash);
          await until(() => seen() || errors.length > 0, 5000);
          assert.deepEqual(errors, []);
          const block = blocks.find((b) => b.hash === receipt.blockHash);
          assert.ok(block, `blocks seen: ${blocks.map((b) => b.number)}, want ${receipt.blockNumber}`);
          assert.equal(block.number, receipt.blockNumber);
          assert.ok(block.transactions.includes(hash));
          assert.ok(numbers.includes(receipt.blockNumber), `block numbers seen: ${numbers}`);
          assert.ok(pending.includes(hash), `pending transactions seen: ${pending}, want ${hash}`);
        } finally {
          unwatch.forEach((u) => u());
        }
      });

      it("watches events: none come (barrel emits no logs), and nothing fails", async () => {
        // Over WebSocket viem subscribes to "logs"; over HTTP it polls an eth_newFilter.
        const poll = transport === "http";
        const logs = [], errors = [];
        const unwatch = pub().watchEvent({
          poll, pollingInterval: 50, address: SINK, onLogs: (l) => logs.push(...l), onError: (e) => errors.push(e),
        });
        try {
          if (!poll) {
            // The subscription itself, as viem's transport makes it: an id, then an unsubscribe.
            const { subscriptionId, unsubscribe } = await pub().transport.subscribe({
              params: ["logs", { address: SINK }], onData: (d) => logs.push(d), onError: (e) => errors.push(e),
            });
            assert.match(subscriptionId, /^0x[0-9a-f]+$/);
            await unsubscribe();
          }
          const hash = await wallet().sendTransaction({ to: SINK, value: 1n });
          await pub().waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 10000 });
          await sleep(200);  // a poll or two: they must find nothing and fail nowhere
          assert.deepEqual(errors, []);
          assert.deepEqual(logs, []);
        } finally {
          unwatch();
        }
      });

      it("sees every head in order through a subscription, across several blocks", async () => {
        // newHeads over WebSocket must not skip a block; over HTTP viem's poll fills gaps itself.
        const poll = transport === "http";
        const heads = [];
        const errors = [];
        const unwatch = pub().watchBlocks({
          poll, pollingInterval: 50, emitMissed: poll, onError: (e) => errors.push(e),
          onBlock: (b) => (b ? heads.push(b) : errors.push(new Error("a head's block not found"))),
        });
        try {
          await warmUp(() => heads.length > 0 || errors.length > 0);
          const hashes = [];
          for (let i = 0; i < 3; ++i) {
            const hash = await wallet().sendTransaction({ to: SINK, value: 1n });
            hashes.push(hash);
            await pub().waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 10000 });
          }
          const last = await pub().getTransactionReceipt({ hash: hashes.at(-1) });
          await until(() => heads.some((b) => b.number === last.blockNumber) || errors.length > 0, 5000);
          assert.deepEqual(errors, []);
          const numbers = heads.map((b) => b.number);
          const firstNumber = numbers[0];
          assert.ok(numbers.includes(last.blockNumber), `heads: ${numbers}`);
          // Consecutive from the first head seen to the last.
          const upTo = numbers.slice(0, numbers.indexOf(last.blockNumber) + 1);
          assert.deepEqual(upTo, upTo.map((_, i) => firstNumber + BigInt(i)));
          for (let i = 1; i < upTo.length; ++i) assert.equal(heads[i].parentHash, heads[i - 1].hash);
        } finally {
          unwatch();
        }
      });
    });
  }

  describe("the rejections viem classifies", () => {
    // Each goes through viem's own path (sendTransaction: prepare, sign, eth_sendRawTransaction;
    // estimateGas) and is recognised by getNodeError from the node's go-ethereum message.
    const pub = () => clients.http.public;
    const wallet = () => clients.http.wallets[3];
    const signer = accounts[3].address;
    const fees = { gas: 21000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n };

    it("a spent nonce: NonceTooLowError", async () => {
      const hash = await wallet().sendTransaction({ to: SINK, value: 1n });
      await pub().waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 10000 });
      const e = await rejection(wallet().sendTransaction({ to: SINK, value: 1n, nonce: 0, ...fees }));
      assert.ok(e instanceof TransactionExecutionError);
      const cause = causeOf(e, NonceTooLowError);
      assert.match(cause.details, /nonce too low: next nonce \d+, tx nonce 0/);
    });

    it("a nonce far ahead: NonceTooHighError", async () => {
      const nonce = (await pub().getTransactionCount({ address: signer, blockTag: "pending" })) + 2000;
      const e = await rejection(wallet().sendTransaction({ to: SINK, value: 1n, nonce, ...fees }));
      assert.match(causeOf(e, NonceTooHighError).details, /nonce too high: next nonce \d+, tx nonce \d+, more than 1024 ahead/);
    });

    it("no funds: InsufficientFundsError, from the estimate and from the pool", async () => {
      const poorWallet = createWalletClient({ account: poor, chain, transport: http(httpUrl, { retryCount: 0 }) });
      // Without a gas limit viem estimates first, at the fees it chose: the estimate fails as
      // go-ethereum's does when the value alone is not covered.
      const estimated = await rejection(poorWallet.sendTransaction({ to: signer, value: 1n }));
      assert.equal(causeOf(estimated, InsufficientFundsError).details, "insufficient funds for transfer");
      // Without fees, the estimate's balance check names the address, what it has and needs.
      const unpriced = await rejection(pub().estimateGas({ account: poor.address, to: signer, value: 1n }));
      assert.match(causeOf(unpriced, InsufficientFundsError).details,
        /insufficient funds for gas \* price \+ value: address 0x[0-9a-fA-F]{40} have 0 want 1/);
      // With one, the pool refuses it.
      const sent = await rejection(poorWallet.sendTransaction({ to: signer, value: 1n, ...fees }));
      assert.match(causeOf(sent, InsufficientFundsError).details,
        /insufficient funds for gas \* price \+ value: balance 0, tx cost/);
    });

    it("a gas limit below 21000: IntrinsicGasTooLowError", async () => {
      const e = await rejection(wallet().sendTransaction({ to: SINK, value: 1n, ...fees, gas: 20000n }));
      assert.match(causeOf(e, IntrinsicGasTooLowError).details, /intrinsic gas too low: gas 20000, minimum needed 21000/);
    });

    it("a fee cap below the base fee: FeeCapTooLowError, legacy and EIP-1559", async () => {
      const e1559 = await rejection(wallet().sendTransaction({
        to: SINK, value: 1n, gas: 21000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n }));
      assert.match(causeOf(e1559, FeeCapTooLowError).details,
        /max fee per gas less than block base fee: maxFeePerGas: 1, baseFee: 7/);
      const legacy = await rejection(wallet().sendTransaction({ to: SINK, value: 1n, gas: 21000n, gasPrice: 1n }));
      assert.ok(causeOf(legacy, FeeCapTooLowError));
      // The estimate checks it too, naming the sender.
      const estimated = await rejection(pub().estimateGas({
        account: signer, to: SINK, value: 1n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n }));
      assert.ok(estimated instanceof EstimateGasExecutionError);
      assert.match(causeOf(estimated, FeeCapTooLowError).details, /max fee per gas less than block base fee: address 0x/);
    });

    it("a tip above the fee cap: TipAboveFeeCapError (viem's own check, and the node's words)", async () => {
      // viem refuses this before it reaches the node ...
      const local = await rejection(wallet().sendTransaction({
        to: SINK, value: 1n, gas: 21000n, maxFeePerGas: 10n ** 9n, maxPriorityFeePerGas: 10n ** 10n }));
      assert.ok(causeOf(local, TipAboveFeeCapError));
      // ... so the node's answer to a raw estimate is checked against getNodeError directly.
      const raw = await rejection(pub().request({ method: "eth_estimateGas", params: [{
        from: signer, to: SINK, maxFeePerGas: toHex(10n ** 9n), maxPriorityFeePerGas: toHex(10n ** 10n) }] }));
      assert.ok(raw instanceof InvalidInputRpcError || raw instanceof RpcRequestError);
      assert.ok(getNodeError(raw, {}) instanceof TipAboveFeeCapError, raw.details);
    });

    it("a creation (barrel runs no EVM): ExecutionRevertedError from the estimate", async () => {
      const e = await rejection(pub().estimateGas({ account: signer, data: "0x6000" }));
      assert.ok(e instanceof EstimateGasExecutionError);
      assert.ok(causeOf(e, ExecutionRevertedError));
    });

    it("an EIP-7702 transaction: refused as an unsupported type", async () => {
      // go-ethereum's words, "transaction type not supported", which viem's
      // TransactionTypeNotSupportedError (/transaction type not valid/) does not match: viem
      // reports the node's InvalidInputRpcError unclassified.
      const authorization = await accounts[0].signAuthorization({ address: poor.address, chainId: CHAIN_ID, nonce: 0 });
      const e = await rejection(wallet().sendTransaction({
        to: SINK, value: 1n, ...fees, authorizationList: [authorization] }));
      assert.ok(e instanceof TransactionExecutionError);
      assert.equal(causeOf(e, InvalidInputRpcError).details, "transaction type not supported");
    });
  });
});
