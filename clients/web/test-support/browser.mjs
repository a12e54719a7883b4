// What the browser tests in test/ share (test/browser.test.mjs, test/sharing.test.mjs,
// test/tableau.test.mjs): the one origin (BASE_URL) and the screenshot folder, a headless
// Chromium (Debian's package, driven by playwright-core; nothing is downloaded) that records what
// the Content-Security-Policy refused, and the page's helpers (deal a game, wait for a version,
// read the legal moves and the piles). It lives outside test/ because `node --test test/` runs
// every module there as a test file.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { chromium } from "playwright-core";

export const BASE = process.env.BASE_URL;
export const SHOTS = process.env.SCREENSHOTS ?? "test-results";
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";

/** A Chromium with its own profile, for one test file: call from its before() and close() in
 * its after(). ``refusedByPolicy``: what Chromium reported of the static server's
 * Content-Security-Policy (tools/serve_web.py), a script, style, image or call it refused; each
 * file's last test asserts there was none on any of its pages. */
export async function openBrowser() {
  assert.ok(BASE, "set BASE_URL to the page's origin");
  mkdirSync(SHOTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), "accordion-chromium-"));
  const refusedByPolicy = [];
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1100, height: 900 },
      args: [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
      ],
    });
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
  context.on("console", (msg) => {
    if (/Content Security Policy/i.test(msg.text())) refusedByPolicy.push(`${msg.location().url}: ${msg.text()}`);
  });
  const close = async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  };
  return { context, refusedByPolicy, close };
}

/** The calling test file's Chromium: opened before its first test, closed after its last (the
 * hooks registered here, at the file's top level). The holder gets ``context`` and
 * ``refusedByPolicy`` (openBrowser's) once it is open. */
export function browserForThisFile() {
  const held = {};
  before(async () => {
    Object.assign(held, await openBrowser());
  });
  after(async () => {
    await held.close?.();
  });
  return held;
}

export const version = (page) => page.locator("#status").getAttribute("data-version");

export async function waitVersion(page, v) {
  await page.waitForSelector(`#status[data-version="${v}"]`, { timeout: 10_000 });
  await page.waitForSelector(`#board .table[data-version="${v}"]`, { timeout: 10_000 });
}

export async function newGame(page, { variant = "accordion", seed = "", deal = "", options = {} } = {}) {
  await page.goto(`${BASE}/`);
  await page.waitForSelector("#variant option[value='accordion']", { state: "attached" });
  await page.selectOption("#variant", variant);
  for (const [name, value] of Object.entries(options)) await page.fill(`#option-${name}`, value);
  await page.fill("#seed", seed);
  await page.fill("#deal", deal);
  await page.click("#new-game");
  await waitVersion(page, "1");
}
