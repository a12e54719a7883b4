// The page's layout and accessibility in a real headless Chromium (issue 32): every variant at a
// phone's 390×844 and a desktop's 1280×800 — no horizontal overflow, every pile a touch target
// of at least 44×44 CSS px on the phone (and every face-up card's visible strip in a fanned pile,
// which picks the run from that card: on a deal and on a long face-up run), Klondike's whole board in view on the desktop — and
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

/** Every face-up card of a fanned (tableau) pile as the finger sees it: its width, and the height
 * of its strip left showing (up to the next card's top; the whole card for the last). Face-down
 * cards (backs, or dealt-open faces) are not picked, so they are not touch targets. */
async function faceUpStrips(page) {
  return page.$$eval('#board .pile[data-zone="tableau"]', (ps) =>
    ps.flatMap((p) => {
      const cards = [...p.querySelectorAll(".card")];
      return cards.flatMap((c, i) => {
        if (!c.matches(".card-face:not(.open-down)")) return [];
        const r = c.getBoundingClientRect();
        const next = cards[i + 1]?.getBoundingClientRect();
        return [{ card: `tableau ${p.dataset.pile}: ${c.dataset.card}`, w: r.width, h: next ? Math.min(r.height, next.top - r.top) : r.height,
          run: cards.length - i }];
      });
    }),
  );
}

function assertTouchable(strips, what) {
  for (const s of strips) assert.ok(s.w >= 44 && s.h >= 44, `${what} ${s.card}: its visible strip ${s.w}×${s.h} is under 44×44`);
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
    let longestRun = 0;
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
      if (size === "phone") {
        const strips = await faceUpStrips(page);
        assertTouchable(strips, variant);
        longestRun = Math.max(longestRun, ...strips.map((x) => x.run), 0);
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
    if (size === "phone") assert.ok(longestRun >= 6, `a dealt fan of face-up cards was checked (longest ${longestRun})`);
    await page.close();
  });
}

test("390×844: a long face-up run in open Klondike keeps every face-up card touchable", async () => {
  const page = await browser.newPage();
  await page.setViewportSize(SIZES.phone);
  await page.goto(`${BASE}/`);
  await page.waitForSelector("#variant option[value='klondike']", { state: "attached" });
  await page.selectOption("#variant", "klondike");
  await page.selectOption("#option-open", "true");
  await page.selectOption("#option-draw", "1");
  await page.fill("#seed", "3");
  await page.click("#new-game");
  await page.waitForSelector('#board .table[data-version="1"]', { timeout: 15_000 });
  // The solver's line (an open deal has one), played by typed notation until a tableau pile
  // holds a run of four face-up cards; every position on the way is checked.
  const id = /#game=([A-Za-z0-9_-]+)/.exec(page.url())[1];
  const token = await page.evaluate((g) => localStorage.getItem(`accordion:token:${g}`), id);
  const reply = await fetch(`${BASE}/v1/games/${id}:solve`, {
    method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: "{}",
  });
  assert.equal(reply.status, 200, await reply.clone().text());
  const line = (await reply.json()).moves ?? [];
  assert.ok(line.length > 20, `the solver's line has ${line.length} moves`);
  let longest = 0;
  for (let v = 1; v <= line.length && longest < 4; v++) {
    await page.fill("#notation", line[v - 1].notation);
    await page.click("#play-notation");
    await page.waitForSelector(`#board .table[data-version="${v + 1}"]`, { timeout: 15_000 });
    await page.waitForFunction(() => document.getAnimations().length === 0); // the cards at rest where they landed
    const strips = await faceUpStrips(page);
    assertTouchable(strips, `after ${v} moves`);
    longest = Math.max(longest, ...strips.map((x) => x.run));
    assert.equal(await overflow(page), 0, `after ${v} moves: no horizontal overflow`);
  }
  assert.ok(longest >= 4, `no face-up run of four cards was reached (longest ${longest})`);
  console.log(`open Klondike seed 3: a face-up run of ${longest} after ${await page.getAttribute("#status", "data-version")} versions`);
  await page.screenshot({ path: join(SHOTS, "layout-phone-klondike-long-run.png") });
  if (DOC_SHOTS) await page.screenshot({ path: join(DOC_SHOTS, "phone-klondike-long-run.png"), fullPage: true });
  await page.close();
});
