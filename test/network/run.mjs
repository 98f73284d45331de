// `npm test`: node --test on this folder's tests, in a network namespace of its own when it can
// make one (root: `unshare -n`), so that perturb.test.js's bridges and addresses live only there
// (netns.mjs); loopback is brought up in it, and the loopback tests run there as they would
// outside. Without one (not root), the tests run as they are and perturb.test.js skips, or fails
// when CI is set. The node namespaces the tests name start with BARREL_NETNS_PREFIX (this run's
// own); any left when the tests exit (a crash) are deleted here.

import { execFileSync, spawn } from "node:child_process";
import { IP } from "./netns.mjs";

const test = ["node", "--test", "--test-concurrency=1", ...process.argv.slice(2)];
const prefix = `brl${process.pid.toString(36)}${Math.floor(Math.random() * 36 ** 3).toString(36)}`;

function canUnshare() {
  if (process.getuid?.() !== 0 || !IP) return false;
  try {
    execFileSync("unshare", ["-n", "true"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

function leftBehind() {
  try {
    return execFileSync(IP, ["netns", "list"], { encoding: "utf8" })
      .split("\n").map((l) => l.split(" ")[0]).filter((n) => n.startsWith(`${prefix}-`));
  } catch {
    return [];
  }
}

const inHub = canUnshare();
const [program, ...args] = inHub
  ? ["unshare", "-n", "sh", "-c", `"${IP}" link set lo up && exec "$@"`, "sh", ...test]
  : test;
const child = spawn(program, args, {
  stdio: "inherit",
  env: inHub ? { ...process.env, BARREL_NETNS_PREFIX: prefix } : process.env,
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => {
  for (const name of leftBehind()) {
    console.error(`run.mjs: deleting network namespace ${name}, left behind`);
    try {
      execFileSync(IP, ["netns", "del", name]);
    } catch {}
  }
  process.exit(code ?? (signal ? 1 : 0));
});
