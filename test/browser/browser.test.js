// A real browser against `barrel-node run`: Debian's Chromium, headless, driven by playwright-core
// (no browser download: CHROMIUM names the binary).
//
// 1. A dapp page served by a static server of the test's own (another origin than the node's)
//    reads the chain id and a balance with ethers.js (its self-contained ESM build), signs a
//    transfer and sees its receipt, through a node started with --http-cors-origins set to that
//    origin; the same page from an origin the node does not allow gets the browser's CORS
//    refusal (fetch rejects, the console says "blocked by CORS policy").
// 2. The node's status page (GET /) loads with no console error, and its TPS chart moves while
//    barrel-load sends transfers to the node; a screenshot goes to OUT_DIR (its path printed).
//
// Run by ctest (browser_dapp_and_status_page, test/browser/run.sh): BARREL_NODE, BARREL_LOAD,
// CHROMIUM and OUT_DIR set.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { Wallet } from "ethers";
import { startNode, writeGenesis } from "../node-harness.mjs";

const NODE = process.env.BARREL_NODE;
const LOAD = process.env.BARREL_LOAD;
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const OUT_DIR = process.env.OUT_DIR || tmpdir();
if (!NODE || !LOAD) throw new Error("set BARREL_NODE and BARREL_LOAD to the binaries");

const here = path.dirname(fileURLToPath(import.meta.url));
const CHAIN_ID = 1337;
const dappKey = `0x${"0a".repeat(32)}`;  // fixed: a failure names the same account every run
const RICH = 10n ** 21n;
const SINK = `0x${"5e".repeat(20)}`;

/// The dapp: its page and ethers' ESM build, from 127.0.0.1 on a port of its own.
function startDappServer() {
  const files = {
    "/": ["text/html", readFileSync(path.join(here, "dapp.html"))],
    "/ethers.js": ["text/javascript", readFileSync(path.join(here, "node_modules/ethers/dist/ethers.min.js"))],
  };
  const server = createServer((req, res) => {
    const file = files[req.url];
    if (!file) return res.writeHead(404).end();
    res.writeHead(200, { "Content-Type": file[0] }).end(file[1]);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

async function stopNode(node) {
  node.child.kill("SIGTERM");
  const { code } = await node.exited;
  assert.equal(code, 0, `barrel-node run exited ${code}:\n${node.log()}`);
}

/// A page that records its console errors and uncaught exceptions.
async function openPage(browser) {
  const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
  const errors = [];
  const messages = [];
  page.on("console", (m) => {
    messages.push(m.text());
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  return { page, errors, messages };
}

describe("a browser against barrel-node run", () => {
  let dir, browser, dapp, dappOrigin;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "barrel-browser-"));
    mkdirSync(OUT_DIR, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    dapp = await startDappServer();
    dappOrigin = `http://127.0.0.1:${dapp.address().port}`;
  });

  after(async () => {
    await browser?.close();
    dapp?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("a dapp page of an allowed origin reads, sends a signed transfer and sees its receipt", async () => {
    const wallet = new Wallet(dappKey);
    const datadir = path.join(dir, "dapp-node");
    const genesis = writeGenesis(dir, { addresses: [wallet.address], balance: RICH, baseFee: 7n, chainId: CHAIN_ID });
    execFileSync(NODE, ["init", "--datadir", datadir, "--genesis", genesis]);
    const node = startNode(NODE, datadir, ["--http-cors-origins", dappOrigin]);
    try {
      const url = await node.url;
      const { page, errors } = await openPage(browser);
      await page.goto(`${dappOrigin}/`);
      const result = await page.evaluate(([u, k, to]) => window.transfer(u, k, to), [url, dappKey, SINK]);
      assert.equal(result.chainId, String(CHAIN_ID));
      assert.equal(result.balance, String(RICH));
      assert.equal(result.status, 1);
      assert.equal(result.sinkBalance, "1000");
      assert.match(result.hash, /^0x[0-9a-f]{64}$/);
      assert.deepEqual(errors, []);
      console.log(`dapp at ${dappOrigin}: chain ${result.chainId}, transfer ${result.hash} mined in block ${result.block}`);
      await page.close();
    } finally {
      await stopNode(node);
    }
  });

  it("a dapp page of an origin not allowed gets the browser's CORS refusal", async () => {
    const datadir = path.join(dir, "refusing-node");
    const genesis = writeGenesis(dir, { addresses: [SINK], balance: RICH, baseFee: 7n, chainId: CHAIN_ID });
    execFileSync(NODE, ["init", "--datadir", datadir, "--genesis", genesis]);
    const node = startNode(NODE, datadir, ["--http-cors-origins", "http://localhost:5173"]);
    try {
      const url = await node.url;
      const { page, messages } = await openPage(browser);
      await page.goto(`${dappOrigin}/`);
      const refusal = await page.evaluate((u) => window.chainIdByFetch(u), url);
      assert.equal(refusal.ok, false);
      assert.equal(refusal.error, "TypeError: Failed to fetch");
      assert.ok(messages.some((m) => m.includes("has been blocked by CORS policy")),
                `no CORS message in the console:\n${messages.join("\n")}`);
      console.log(`dapp at ${dappOrigin} refused: ${messages.find((m) => m.includes("CORS policy"))}`);
      await page.close();
    } finally {
      await stopNode(node);
    }
  });

  it("the status page loads without a console error and its chart moves under barrel-load", async () => {
    // barrel-load --url needs the genesis `barrel-node gen` makes for its --seed and --accounts.
    const datadir = path.join(dir, "loaded-node");
    const genesis = path.join(dir, "gen.json");
    execFileSync(NODE, ["gen", "--genesis", genesis, "--out", "/dev/null", "--blocks", "1", "--seed", "1", "--accounts", "200"]);
    execFileSync(NODE, ["init", "--datadir", datadir, "--genesis", genesis]);
    const node = startNode(NODE, datadir, ["--block-time", "200"]);
    let load;
    try {
      const url = await node.url;
      const { page, errors } = await openPage(browser);
      await page.goto(`${url}/`);
      await page.waitForFunction(() => document.getElementById("state").className === "live");
      const before = await page.getAttribute("#tps-line", "points");
      load = spawn(LOAD, ["--url", url, "--seed", "1", "--accounts", "200", "--senders", "100", "--txs", "12000",
                          "--rate", "1500", "--window", "3000", "--threads", "1"], { stdio: ["ignore", "pipe", "pipe"] });
      let loadLog = "";
      load.stdout.on("data", (c) => { loadLog += c; });
      load.stderr.on("data", (c) => { loadLog += c; });
      const loadExit = new Promise((resolve) => load.on("exit", (code) => resolve(code)));
      // Moving: a point of more than 100 TPS drawn, and more points than before.
      await page.waitForFunction(() => Number(document.getElementById("tps-chart").dataset.max) > 100,
                                 null, { timeout: 30_000 });
      await page.waitForTimeout(3000);
      const during = await page.getAttribute("#tps-line", "points");
      assert.notEqual(during, before);
      assert.ok(during.split(" ").length >= 4, `too few points: ${during}`);
      const shot = path.join(OUT_DIR, "status-page-under-load.png");
      await page.screenshot({ path: shot });
      console.log(`status page screenshot: ${shot}`);
      const shown = await page.evaluate(() => ({
        head: document.getElementById("head-number").textContent,
        tps: document.getElementById("tps").textContent,
        cache: document.getElementById("cache-rate").textContent,
      }));
      console.log(`status page under load: head ${shown.head}, ${shown.tps} TPS over the last minute, sender cache ${shown.cache}`);
      assert.equal(await loadExit, 0, `barrel-load failed:\n${loadLog}`);
      assert.deepEqual(errors, []);
      await page.close();
    } finally {
      if (load && load.exitCode === null) load.kill("SIGTERM");
      await stopNode(node);
    }
  });
});
