// Network namespaces for perturb.test.js: each validator's two processes in a namespace of its
// own, joined by a veth pair to a bridge in the hub. The hub is the test's own network namespace:
// run.mjs starts `node --test` in a fresh one (`unshare -n`), so that the bridges, the veths'
// hub ends and the addresses below exist nowhere else and vanish with the test. Only the node
// namespaces have names (`ip netns exec` needs one); they carry a per-run prefix (run.mjs's
// BARREL_NETNS_PREFIX), and run.mjs deletes any left behind when the test exits.
//
//   hub (the test): br0 10.77.0.254/24 ── vI ══ eth0 10.77.0.(I+1)/24 in PREFIX-nI (node I)
//
// - isolate(nodes): their veths moved to a second bridge, br1: they share no link with the others
//   (their TCP connections stall, as a pulled cable's do). One node is a disconnect, two of four
//   a partition 2|2. The hub keeps reaching every node (the test reads heights on both sides,
//   the cut node's too): br1 has an address of its own and a /32 route per moved node. heal()
//   moves them back.
// Root and iproute2 are needed; iptables is not (there is none here).

import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";

const run = promisify(execFile);

export const IP = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].find((p) => existsSync(p));
const SUBNET = "10.77.0";

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
    for (const br of ["br0", "br1"]) {
      await ip("link", "add", br, "type", "bridge");
      await ip("link", "set", br, "up");
    }
    await ip("addr", "add", `${SUBNET}.254/24`, "dev", "br0");
    await ip("addr", "add", `${SUBNET}.253/32`, "dev", "br1");
    for (let i = 0; i < this.count; i++) {
      await ip("netns", "add", this.name(i));
      this.made.push(this.name(i));
      await ip("link", "add", `v${i}`, "type", "veth", "peer", "name", "eth0", "netns", this.name(i));
      await ip("link", "set", `v${i}`, "master", "br0", "up");
      await ip("-n", this.name(i), "link", "set", "lo", "up");
      await ip("-n", this.name(i), "addr", "add", `${this.host(i)}/24`, "dev", "eth0");
      await ip("-n", this.name(i), "link", "set", "eth0", "up");
    }
  }
  async isolate(side) {
    for (const i of side) {
      await ip("link", "set", `v${i}`, "master", "br1");
      await ip("route", "add", `${this.host(i)}/32`, "dev", "br1", "src", `${SUBNET}.253`);
      this.moved.push(i);
    }
  }
  async heal() {
    for (const i of this.moved.splice(0)) {
      await ip("route", "del", `${this.host(i)}/32`);
      await ip("link", "set", `v${i}`, "master", "br0");
    }
  }
  /// Deletes the node namespaces (their eth0s go with them, and the veths' hub ends with those);
  /// the bridges go with the hub when the test exits.
  async tearDown() {
    for (const name of this.made.splice(0)) await ip("netns", "del", name).catch(() => {});
  }
}
