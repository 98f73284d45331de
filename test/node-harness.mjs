// What the real-client tests (test/ethers, test/viem, test/cast) share: a dev genesis funding
// some addresses, and a `barrel-node run` started on a free port. Node builtins only, so each
// test's npm package imports it by path (../node-harness.mjs) without a dependency.

import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";

/// Writes DIR/genesis.json: `addresses` funded with `balance` wei each, go-ethereum's dev-mode
/// base fee and the given chain id; returns its path.
export function writeGenesis(dir, { addresses, balance, baseFee, chainId }) {
  const accounts = {};
  for (const a of addresses)
    accounts[a.toLowerCase()] = { balance: `0x${balance.toString(16)}`, nonce: "0x0" };
  const genesis = {
    accounts,
    base_fee: `0x${baseFee.toString(16)}`,
    chain_id: `0x${chainId.toString(16)}`,
    coinbase: `0x${"c0".repeat(20)}`,
    gas_limit: "0x1c9c380",
    timestamp: "0x0",
    users: {},
  };
  const file = path.join(dir, "genesis.json");
  writeFileSync(file, JSON.stringify(genesis));
  return file;
}

/// Starts `node run` (the barrel-node binary at `node`) on a free loopback port: its process,
/// a promise of its URL once it serves, a promise of its exit, and its log so far.
export function startNode(node, datadir, extra = []) {
  const child = spawn(node, ["run", "--datadir", datadir, "--http", "127.0.0.1:0", ...extra], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const url = new Promise((resolve, reject) => {
    child.stderr.on("data", (chunk) => {
      log += chunk.toString();
      const m = log.match(/JSON-RPC on (http:\/\/[0-9.]+:[0-9]+)/);
      if (m) resolve(m[1]);
    });
    exited.then(({ code }) => reject(new Error(`barrel-node run exited (${code}) before serving:\n${log}`)));
  });
  return { child, url, exited, log: () => log };
}
