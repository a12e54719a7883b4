// The page's layout and accessibility in a real headless Chromium (issue 32): every variant at a
// phone's 390×844 and a desktop's 1280×800 — no horizontal overflow, every pile a touch target
// of at least 44×44 CSS px on the phone, Klondike's whole board in view on the desktop — and
// axe-core (run inside the page) with no serious or critical violation, on the New game panel
// and on each board. Screenshots of each game at both sizes go to SCREENSHOTS, and to DOC_SHOTS
// when set (docs/web/, shown in docs/web.md). One browser, one page per size, reused.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { chromium } from "playwright-core";

const BASE = process.env.BASE_URL;
const SHOTS = process.env.SCREENSHOTS ?? "test-results";
const DOC_SHOTS = process.env.DOC_SHOTS ?? "";
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const SIZES = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } };

assert.ok(BASE, "set BASE_URL to the page's origin");
mkdirSync(SHOTS, { recursive: true });
if (DOC_SHOTS) mkdirSync(DOC_SHOTS, { recursive: true });
let browser;
let profile;

before(async () => {
  profile = mkdtempSync(join(tmpdir(), "accordion-layout-"));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: SIZES.desktop,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
  });
});

after(async () => {
  await browser?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** axe-core's serious and critical violations on the page as it is now. */
async function axeViolations(page) {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE); // (CDP evaluates it: the page's CSP allows no inline script)
  const found = await page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) }));
  });
  return found.filter((v) => v.impact === "serious" || v.impact === "critical");
}

async function overflow(page) {
  return page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
}

async function deal(page, variant) {
  await page.goto(`${BASE}/`);
  await page.waitForSelector("#variant option[value='klondike']", { state: "attached" });
  await page.selectOption("#variant", variant);
  await page.fill("#seed", "5");
  await page.click("#new-game");
  await page.waitForSelector('#board .table[data-version="1"]', { timeout: 15_000 });
}

for (const [size, viewport] of Object.entries(SIZES)) {
  test(`every variant at ${viewport.width}×${viewport.height}: fits, touchable, accessible`, async () => {
    const page = await browser.newPage();
    await page.setViewportSize(viewport);
    await page.goto(`${BASE}/`);
    await page.waitForSelector("#variant option[value='klondike']", { state: "attached" });
    assert.equal(await overflow(page), 0, "the New game panel fits the width");
    assert.deepEqual(await axeViolations(page), [], "the New game panel");
    if (DOC_SHOTS) await page.screenshot({ path: join(DOC_SHOTS, `${size}-new-game.png`) });
    const variants = await page.$$eval("#variant option", (os) => os.map((o) => o.value));
    assert.ok(variants.length >= 10, variants.join(","));
    for (const variant of variants) {
      await deal(page, variant);
      const name = (await page.textContent("#title")).trim();
      assert.ok(name && (await page.title()).startsWith(name), `${variant}: the heading and title name the game`);
      assert.equal(await overflow(page), 0, `${variant}: no horizontal overflow`);
      const piles = await page.$$eval("#board .pile, #board .stock", (ps) =>
        ps.map((p) => {
          const r = p.getBoundingClientRect();
          const top = [...p.querySelectorAll(".card")].at(-1)?.getBoundingClientRect();
          return { pile: `${p.dataset.zone}:${p.dataset.pile ?? ""}`, w: r.width, h: r.height, right: r.right, bottom: r.bottom,
            topW: top?.width ?? r.width, topH: top?.height ?? r.height };
        }),
      );
      assert.ok(piles.length > 0, variant);
      for (const p of piles) {
        assert.ok(p.right <= viewport.width + 0.5, `${variant} ${p.pile}: inside the screen's width (${p.right})`);
        if (size === "phone") {
          assert.ok(p.w >= 44 && p.h >= 44, `${variant} ${p.pile}: ${p.w}×${p.h} is under 44×44`);
          assert.ok(p.topW >= 44 && p.topH >= 44, `${variant} ${p.pile}: its top card ${p.topW}×${p.topH} is under 44×44`);
        }
      }
      if (size === "desktop" && variant === "klondike") {
        const bottom = Math.max(...piles.map((p) => p.bottom));
        assert.ok(bottom <= viewport.height, `Klondike's board ends at ${bottom}, below the screen (${viewport.height})`);
        assert.equal(await page.evaluate(() => document.scrollingElement.scrollTop), 0);
      }
      assert.deepEqual(await axeViolations(page), [], `${variant}: axe-core`);
      await page.screenshot({ path: join(SHOTS, `layout-${size}-${variant}.png`) });
      if (DOC_SHOTS) await page.screenshot({ path: join(DOC_SHOTS, `${size}-${variant}.png`) });
    }
    await page.close();
  });
}
