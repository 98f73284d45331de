// Network namespaces for perturb.test.js: each validator's two processes in a namespace of its
// own. The hub is the test's own network namespace: run.mjs starts `node --test` in a fresh one
// (`unshare -n`), so that the bridges, the veths' hub ends and the addresses below exist nowhere
// else and vanish with the test. Only the node namespaces have names (`ip netns exec` needs one);
// they carry a per-run prefix (run.mjs's BARREL_NETNS_PREFIX), and run.mjs deletes any left
// behind when the test exits. Each node has two links:
//
//   peers:   eth0 10.77.0.(I+1)/24 in PREFIX-nI ══ pI ── bridge br0 (or br1) in the hub
//   control: ctl in PREFIX-nI ══ cI in the hub, routed: 10.77.0.(I+1)/32 ⇄ 10.77.1.254 (the hub)
//
// The peers' bridges carry only the nodes' own traffic; the hub (the test's RPC calls, its
// transfers) reaches each node over its control link, which no perturbation touches. Had the
// hub used the bridges too, moving a node between them would leave its neighbour entry for the
// hub naming the other bridge's MAC until probed again, stalling the test's connections to it
// (with that first layout the partition step took 20 to 70 s, with this one about 20 s). The hub does not forward (a new namespace's ip_forward is 0, and
// each node routes 10.77.0.0/24 on eth0 only): no peer traffic takes the control links.
// - isolate(nodes): their peer veths moved to a second bridge, br1: they share no link with the
//   others (their TCP connections stall, as a pulled cable's do). One node is a disconnect, two
//   of four a partition 2|2. heal() moves them back.
// Root and iproute2 are needed; iptables is not (there is none here).

import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";

const run = promisify(execFile);

export const IP = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].find((p) => existsSync(p));
const SUBNET = "10.77.0";
const HUB = "10.77.1.254";

/// Whether this test runs in its own hub namespace (run.mjs made one), or why not.
export function hubMissing() {
  if (!process.env.BARREL_NETNS_PREFIX) return "not started by run.mjs in a network namespace of its own (it needs root and unshare -n)";
  if (!IP) return "no ip (iproute2) found";
  return null;
}

async function ip(...args) {
  try {
    await run(IP, args);
  } catch (e) {
    throw new Error(`ip ${args.join(" ")} failed: ${e.stderr || e.message}`);
  }
}

export class Namespaces {
  constructor(count) {
    this.prefix = process.env.BARREL_NETNS_PREFIX;
    this.count = count;
    this.made = [];
    this.moved = [];
  }
  name(i) {
    return `${this.prefix}-n${i}`;
  }
  host(i) {
    return `${SUBNET}.${i + 1}`;
  }
  /// What `testnet start` prefixes each node's processes with (BARREL_TESTNET_EXEC_PREFIX).
  execPrefix() {
    return `${IP} netns exec ${this.prefix}-n{node}`;
  }
  async setUp() {
    await ip("link", "set", "lo", "up");
    await ip("addr", "add", `${HUB}/32`, "dev", "lo");
    for (const br of ["br0", "br1"]) {
      await ip("link", "add", br, "type", "bridge");
      await ip("link", "set", br, "up");
    }
    for (let i = 0; i < this.count; i++) {
      const ns = this.name(i);
      await ip("netns", "add", ns);
      this.made.push(ns);
      await ip("-n", ns, "link", "set", "lo", "up");
      // The peer link, on br0.
      await ip("link", "add", `p${i}`, "type", "veth", "peer", "name", "eth0", "netns", ns);
      await ip("link", "set", `p${i}`, "master", "br0", "up");
      await ip("-n", ns, "addr", "add", `${this.host(i)}/24`, "dev", "eth0");
      await ip("-n", ns, "link", "set", "eth0", "up");
      // The control link: the hub and the node, one route each way.
      await ip("link", "add", `c${i}`, "type", "veth", "peer", "name", "ctl", "netns", ns);
      await ip("link", "set", `c${i}`, "up");
      await ip("-n", ns, "link", "set", "ctl", "up");
      await ip("-n", ns, "route", "add", `${HUB}/32`, "dev", "ctl");
      await ip("route", "add", `${this.host(i)}/32`, "dev", `c${i}`, "src", HUB);
    }
  }
  async isolate(side) {
    for (const i of side) {
      await ip("link", "set", `p${i}`, "master", "br1");
      this.moved.push(i);
    }
  }
  async heal() {
    for (const i of this.moved.splice(0)) await ip("link", "set", `p${i}`, "master", "br0");
  }
  /// Deletes the node namespaces (their eth0 and ctl go with them, and the veths' hub ends with
  /// those);
  /// the bridges go with the hub when the test exits.
  async tearDown() {
    for (const name of this.made.splice(0)) await ip("netns", "del", name).catch(() => {});
  }
}
