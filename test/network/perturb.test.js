// CometBFT's end-to-end perturbations that need a network, on a 4-validator barrel network whose
// validators each run in a network namespace of their own (netns.mjs: veths to a bridge in the
// test's own namespace, made by run.mjs; `testnet init --hosts` gives each node its address,
// BARREL_TESTNET_EXEC_PREFIX starts its processes in its namespace). Under load (transfers sent
// one after another, accepted ones counted), each asserts that every accepted transfer is mined
// exactly once on every node, with the same block hashes, state roots and CometBFT app hashes
// everywhere:
// - disconnect: validator 3's links to its peers cut for 10 s (its veth on a bridge of its own):
//   the other three commit heights meanwhile, it commits none; reconnected, it catches up, no
//   fork.
// - partition 2|2: validators 0,1 and 2,3 on two bridges for 10 s, a transfer flow into each
//   side: no height is committed on any node (neither side has 2/3 of the voting power); healed,
//   the chain resumes, no fork, and what either side accepted is mined once.
// network.test.js kills, pauses and restarts validators (no namespace needed there).
// Needs root (run.mjs's `unshare -n`, `ip netns add`): without it the test skips, saying why,
// unless CI is set, when it fails.

import { after, before, describe } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { writeGenesis } from "../node-harness.mjs";
import {
  BASE_FEE, CHAIN_ID, Flow, RICH, cometHeight, height, minedOnce, providerOf, reach, receiptsEverywhere,
  sameChain, wallets,
} from "./chain.mjs";
import { Namespaces, hubMissing } from "./netns.mjs";
import { sleep, stepWithLogs, testnet, testnetWithEnv } from "./harness.mjs";

const VALIDATORS = 4;
const TIMEOUT_COMMIT_MS = 250;
const CUT_MS = 10_000;
/// After a partition starts, a height whose votes were already on their way may still land.
const SETTLE_MS = 3000;
const missing = hubMissing();
const skip = missing && !process.env.CI ? `skipped: ${missing}` : false;

describe("perturbations in network namespaces: disconnect, partition 2|2", { skip }, () => {
  let dir, netDir, nodes, ns, env;
  const flows = [];
  const providers = [];

  /// A test step whose failure also prints the nodes' logs.
  const loggedStep = stepWithLogs(() => nodes);
  /// A step that first stops any flow a failed step left running (its nonces would collide with
  /// the new flows').
  const step = (name, fn) =>
    loggedStep(name, async (t) => {
      for (const f of flows) await f.abandon();
      await fn(t);
    });
  /// A flow of transfers into `node` by `signers`.
  async function flowInto(node, signers) {
    const provider = providerOf(node);
    providers.push(provider);
    const flow = new Flow(provider, signers);
    flows.push(flow);
    await flow.start();
    return flow;
  }

  before(async () => {
    // With CI set, a missing capability fails here rather than skipping.
    if (missing) throw new Error(`network namespaces unavailable: ${missing}`);
    ns = new Namespaces(VALIDATORS);
    await ns.setUp();
    env = { BARREL_TESTNET_EXEC_PREFIX: ns.execPrefix() };
    dir = mkdtempSync(path.join(tmpdir(), "barrel-perturb-"));
    netDir = path.join(dir, "net");
    const genesis = writeGenesis(dir, { addresses: wallets.map((w) => w.address), balance: RICH, baseFee: BASE_FEE, chainId: CHAIN_ID });
    const hosts = Array.from({ length: VALIDATORS }, (_, i) => ns.host(i));
    // The ports are the namespaces' own: no other process can hold them.
    const out = await testnet("init", "--dir", netDir, "--validators", `${VALIDATORS}`, "--genesis", genesis,
      "--hosts", hosts.join(","), "--timeout-commit", `${TIMEOUT_COMMIT_MS}`, "--snapshot-interval", "0");
    for (const h of hosts) assert.match(out, new RegExp(`http://${h.replaceAll(".", "\\.")}:[0-9]+ `));
    nodes = JSON.parse(readFileSync(path.join(netDir, "testnet.json"), "utf8")).nodes;
    assert.deepEqual(nodes.map((n) => n.host), hosts);
    await testnetWithEnv(env, "start", "--dir", netDir, "--timeout", "120");
    // Each process in its node's namespace (the exec prefix kept its pid: ip execs the command).
    const netnsOf = (pid) => readlinkSync(`/proc/${pid}/ns/net`);
    const own = readlinkSync("/proc/self/ns/net");
    for (const n of nodes) {
      const [b, c] = [n.pid_files.barrel, n.pid_files.cometbft].map((f) => Number(readFileSync(f, "utf8").trim()));
      assert.equal(netnsOf(b), netnsOf(c), `node ${n.index}'s two processes share a namespace`);
      assert.notEqual(netnsOf(b), own, `node ${n.index} runs in a namespace of its own`);
    }
  });

  after(async () => {
    for (const f of flows) await f.abandon();
    for (const p of providers) p.destroy();
    if (ns) await ns.heal().catch(() => {});
    if (netDir && existsSync(path.join(netDir, "testnet.json"))) await testnet("stop", "--dir", netDir, "--kill").catch(() => {});
    await ns?.tearDown();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  step("disconnect: a validator cut off from its peers for 10 s under load catches up; no fork", async (t) => {
    const flow = await flowInto(nodes[0], wallets.slice(0, 4));
    await sleep(1000);
    const atCut = await height(nodes[0]);
    const live = nodes.slice(0, 3);
    await ns.isolate([3]);
    let alone;
    try {
      await sleep(SETTLE_MS);
      alone = await height(nodes[3]);
      await sleep(CUT_MS - SETTLE_MS);
      const during = await Promise.all(live.map(height));
      // At least 2 heights: one in four is node 3's to propose, and costs a propose timeout (3 s)
      // and a round; on a busy machine 10 s hold few heights.
      assert.ok(Math.min(...during) >= atCut + 2, `the other 3 went on while node 3 was cut off: heights ${during} from ${atCut}`);
      assert.equal(await height(nodes[3]), alone, "node 3's height while cut off (one vote of four)");
    } finally {
      await ns.heal();
    }
    const atRestore = await height(nodes[0]);
    await reach(nodes, atRestore + 4, `node 3 caught up past ${atRestore}`);
    await flow.stop();
    await receiptsEverywhere(nodes, flow.accepted);
    const head = await height(nodes[0]);
    await reach(nodes, head);
    await sameChain(nodes, head);
    await minedOnce(nodes, flow.accepted, head);
    t.diagnostic(`node 3 cut off at height ${atCut} (stuck at ${alone}), reconnected at ${atRestore}, caught up; ` +
      `${flow.accepted.length} transfers, each mined once on every node up to height ${head}`);
  });

  step("partition 2|2 for 10 s under load: no height commits; healed, the chain resumes with no fork", async (t) => {
    // A flow into each side, each by keys of its own (the other side cannot see its nonces).
    const flowA = await flowInto(nodes[0], wallets.slice(0, 4));
    const flowB = await flowInto(nodes[2], wallets.slice(4, 8));
    await sleep(1000);
    const before = [flowA.accepted.length, flowB.accepted.length];
    await ns.isolate([2, 3]);
    let stalled, cometStalled;
    try {
      await sleep(SETTLE_MS);
      stalled = await Promise.all(nodes.map(height));
      cometStalled = await Promise.all(nodes.map(cometHeight));
      await sleep(CUT_MS);
      assert.deepEqual(await Promise.all(nodes.map(height)), stalled, "barrel heights while partitioned 2|2");
      assert.deepEqual(await Promise.all(nodes.map(cometHeight)), cometStalled, "CometBFT heights while partitioned 2|2");
    } finally {
      await ns.heal();
    }
    const accepted = [flowA.accepted.length, flowB.accepted.length];
    // After the heal CometBFT's rounds have grown their timeouts, and the stalled TCP
    // connections resume at their next retransmission: the default deadline allows for both.
    const healed = Date.now();
    await reach(nodes, Math.max(...stalled) + 1, "the chain resumed after the heal");
    const resumedMs = Date.now() - healed;
    await reach(nodes, Math.max(...stalled) + 3, "the chain went on after the heal");
    await flowA.stop();
    await flowB.stop();
    assert.ok(flowA.accepted.length > accepted[0] && flowB.accepted.length > accepted[1],
      `transfers accepted after the heal on both sides: before ${before}, at the heal ${accepted}, at the end ${[flowA.accepted.length, flowB.accepted.length]}`);
    const all = [...flowA.accepted, ...flowB.accepted];
    await receiptsEverywhere(nodes, all);
    const minedMs = Date.now() - healed;
    const head = await height(nodes[0]);
    await reach(nodes, head);
    await sameChain(nodes, head);
    await minedOnce(nodes, all, head);
    t.diagnostic(`partitioned at heights ${stalled} (CometBFT ${cometStalled}), none committed for ${CUT_MS / 1000} s; ` +
      `healed, the next height on every node ${(resumedMs / 1000).toFixed(1)} s later, every transfer mined everywhere ` +
      `${(minedMs / 1000).toFixed(1)} s later; ${flowA.accepted.length} + ${flowB.accepted.length} transfers (side 0,1 + side 2,3), each mined once on every node up to height ${head}`);
  });
});
