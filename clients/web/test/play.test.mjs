// Playing the page as a player would (issue 32), in a real headless Chromium at 1280×800: a whole
// Klondike game won by dragging cards with the mouse (an open deal, whose winning line comes from
// the server's own Solve over REST: the test plays it on the board), a few moves by keyboard
// only, seeds checked on the page, and Solve disabled with its reason on a game with hidden cards.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { chromium } from "playwright-core";

const BASE = process.env.BASE_URL;
const SHOTS = process.env.SCREENSHOTS ?? "test-results";
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
assert.ok(BASE, "set BASE_URL to the page's origin");
mkdirSync(SHOTS, { recursive: true });
let context;
let profile;

before(async () => {
  profile = mkdtempSync(join(tmpdir(), "accordion-play-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
  });
});

after(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

const version = async (page) => Number(await page.getAttribute("#status", "data-version"));
const waitVersion = (page, v) => page.waitForSelector(`#board .table[data-version="${v}"]`, { timeout: 20_000 });

async function deal(page, { variant, seed = "", options = {} }) {
  await page.goto(`${BASE}/`);
  await page.waitForSelector("#variant option[value='klondike']", { state: "attached" });
  await page.selectOption("#variant", variant);
  for (const [name, value] of Object.entries(options)) await page.selectOption(`#option-${name}`, value);
  await page.fill("#seed", seed);
  await page.click("#new-game");
  await waitVersion(page, 1);
}

/** The server's Solve of the page's game, over REST with the token the page keeps. */
async function solveOf(page) {
  const id = /#game=([A-Za-z0-9_-]+)/.exec(page.url())[1];
  const token = await page.evaluate((g) => localStorage.getItem(`accordion:token:${g}`), id);
  const reply = await fetch(`${BASE}/v1/games/${id}:solve`, {
    method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: "{}",
  });
  assert.equal(reply.status, 200, await reply.clone().text());
  return reply.json();
}

const ZONE = { ZONE_KIND_TABLEAU: "tableau", ZONE_KIND_FOUNDATION: "foundation", ZONE_KIND_WASTE: "waste" };

async function dragMove(page, move) {
  await page.waitForFunction(() => document.getAnimations().length === 0); // cards at rest, where they landed
  const from = page.locator(`#board .pile[data-zone="${ZONE[move.fromZone]}"][data-pile="${move.fromPile ?? 1}"]`);
  const faces = from.locator(".card-face:not(.open-down)");
  const card = faces.nth((await faces.count()) - (move.count ?? 1));
  const a = await card.boundingBox();
  const toZone = ZONE[move.toZone];
  const to = page.locator(`#board .pile[data-zone="${toZone}"]`).nth(Math.max(0, (move.toPile ?? 1) - 1));
  const b = await to.boundingBox();
  await page.mouse.move(a.x + a.width / 2, a.y + 8);
  await page.mouse.down();
  await page.mouse.move(a.x + a.width / 2 + 10, a.y + 20, { steps: 2 });
  await page.mouse.move(b.x + b.width / 2, b.y + Math.min(b.height - 10, 60), { steps: 4 });
  // While dragging: a ghost of the cards follows the pointer, and the target is lit.
  assert.equal(await page.locator(".ghost .card").count(), move.count ?? 1, move.notation);
  assert.ok(await to.evaluate((p) => p.classList.contains("target")), `${move.notation}: the target is lit`);
  await page.mouse.up();
}

test("a whole open Klondike game won by dragging the solver's line", async () => {
  const page = await context.newPage();
  let solved;
  for (const seed of ["3", "5", "8", "13", "21"]) {
    await deal(page, { variant: "klondike", seed, options: { open: "true", draw: "1" } });
    assert.equal(await page.isDisabled("#solve"), false, "every card is known: Solve can help");
    solved = await solveOf(page);
    if (solved.outcome === "SOLVE_OUTCOME_WON") break;
  }
  assert.equal(solved.outcome, "SOLVE_OUTCOME_WON", JSON.stringify(solved).slice(0, 300));
  await page.uncheck("#auto-complete"); // the solver's line, move by move, as it is
  let dragged = 0;
  for (const move of solved.moves) {
    const v = await version(page);
    if (move.kind === "MOVE_KIND_MOVE") {
      await dragMove(page, move);
      dragged++;
    } else {
      await page.locator("#board .stock").click(); // DRAW, or REDEAL from the empty stock
    }
    await waitVersion(page, v + 1);
  }
  assert.equal(await page.getAttribute("#status", "data-status"), "won");
  assert.ok(dragged > 20, `${dragged} cards dragged`);
  assert.match(await page.textContent("#end-title"), /You won/);
  assert.equal(await page.isDisabled("#hint"), true, "Hint cannot help once the game is over");
  await page.screenshot({ path: join(SHOTS, "play-klondike-won.png") });
  // New deal from the win panel: a new game of the same variant.
  await page.click("#end-new");
  await page.waitForFunction(() => document.querySelector("#status").dataset.version === "1" && document.querySelector("#end-panel").hidden);
  assert.equal(await page.getAttribute("#status", "data-variant"), "klondike");
  assert.match(await page.textContent("#status"), /^21 cards face down · 24 in the stock · /);
  await page.close();
});

test("keyboard only: focus a pile, pick it up with Enter, put it down; d draws, u undoes, h hints", async () => {
  const page = await context.newPage();
  await deal(page, { variant: "klondike", seed: "7", options: { draw: "1" } });
  await page.locator("#board .stock").focus();
  let moves = [];
  for (let i = 0; i < 12 && !moves.length; i++) {
    moves = await page.$$eval("#moves button[data-from-zone]", (bs) => bs.map((b) => ({ ...b.dataset })));
    if (moves.length) break;
    const v = await version(page);
    await page.keyboard.press("d");
    await waitVersion(page, v + 1);
  }
  assert.ok(moves.length, "a card move after a few draws");
  const move = moves[0];
  const focusOn = async (zone, pile) => {
    for (const arrow of ["ArrowRight", "ArrowLeft"]) {
      for (let i = 0; i < 16; i++) {
        const at = await page.evaluate(() => `${document.activeElement?.dataset.zone}:${document.activeElement?.dataset.pile}`);
        if (at === `${zone}:${pile}`) return;
        await page.keyboard.press(arrow);
      }
    }
    assert.fail(`no focus on ${zone} ${pile}`);
  };
  await focusOn(move.fromZone, move.from);
  await page.keyboard.press("Enter");
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute("aria-pressed")), "true", "picked up");
  assert.match(await page.evaluate(() => document.activeElement.getAttribute("aria-description")), /picked up/);
  await focusOn(move.toZone, move.to);
  assert.match(await page.evaluate(() => document.activeElement.getAttribute("aria-description")), /legal place/);
  const v = await version(page);
  await page.keyboard.press("Enter");
  await waitVersion(page, v + 1);
  // A screen reader hears the move in words ("7 of hearts onto tableau pile 5").
  assert.match(await page.textContent("#announce"), /^(ace|king|queen|jack|\d+) of (hearts|spades|diamonds|clubs)( and \d+ more)? onto (tableau pile \d+|foundation)\.$/);
  await page.keyboard.press("u");
  await waitVersion(page, v + 2);
  await page.keyboard.press("h");
  await page.waitForFunction(() => document.querySelector("#status").textContent.startsWith("Hint: "));
  assert.match(await page.locator("#board .pile.hinted").first().getAttribute("aria-description"), /hinted/);
  await page.close();
});

test("seeds are checked on the page; Solve on a game with hidden cards is disabled with its reason", async () => {
  const page = await context.newPage();
  await page.goto(`${BASE}/`);
  await page.waitForSelector("#variant option[value='wish']", { state: "attached" });
  for (const seed of ["abc", "-1", "1.5", "18446744073709551616"]) {
    await page.fill("#seed", seed);
    await page.click("#new-game");
    await page.waitForSelector("#error:not([hidden])");
    assert.equal(await page.getAttribute("#error", "data-reason"), "BAD_SEED", seed);
    const words = await page.textContent("#error");
    assert.match(words, /whole number from 0 to 18446744073709551615/, seed);
    assert.doesNotMatch(words, /BigInt|serialize|INTERNAL/, seed);
  }
  await deal(page, { variant: "wish", seed: "4" });
  assert.equal(await page.isDisabled("#solve"), true);
  assert.match(await page.textContent("#solve-why"), /every card face up/);
  assert.equal(await page.textContent("#title"), "Wish");
  assert.match(await page.title(), /^Wish/);
  await page.close();
});

// A deal of Accordion won (win_piles 50) in two moves: 6C>9C, then 6C>6H.
const SHORT_WIN =
  "QH 7C 8S 4C 8H 2D 3H 2S QC 9D 4H 6D 3S AD 10C KH JC 7D 8C 6S AC KD 2C 4D 5H AS 2H 8D KC 4S " +
  "3C QD 7H 10D JS 5D QS AH 10S 9H 5C 3D 7S 10H 9S JH 5S 6H KS JD 9C 6C";

test("Solve plays its line on the board a move at a time; reduced motion: no card slides", async () => {
  const page = await context.newPage();
  await page.emulateMedia({ reducedMotion: "reduce" });
  await page.goto(`${BASE}/`);
  await page.waitForSelector("#variant option[value='accordion']", { state: "attached" });
  await page.selectOption("#variant", "accordion");
  await page.fill("#option-win_piles", "50");
  await page.fill("#deal", SHORT_WIN);
  await page.click("#new-game");
  await waitVersion(page, 1);
  assert.equal(await page.isDisabled("#solve"), false, "every card face up: Solve can help");
  await page.click("#solve");
  await waitVersion(page, 2); // the first move of the line, then the second
  assert.equal(await page.evaluate(() => document.getAnimations().length), 0, "no slide when motion is reduced");
  await waitVersion(page, 3);
  assert.equal(await page.getAttribute("#status", "data-status"), "won");
  assert.match(await page.textContent("#end-panel"), /You won!/);
  assert.equal(await page.isDisabled("#solve"), true);
  await page.close();
});

test("on a phone (390×844, touch): a finger drags a pile onto its target, and tap-tap moves", async () => {
  const page = await context.newPage();
  await page.setViewportSize({ width: 390, height: 844 });
  const cdp = await context.newCDPSession(page);
  await cdp.send("Emulation.setTouchEmulationEnabled", { enabled: true, maxTouchPoints: 1 });
  await deal(page, { variant: "accordion", seed: "7" });
  const legal = () => page.$$eval("#moves button", (bs) => bs.map((b) => [Number(b.dataset.from), Number(b.dataset.to)]));
  const centre = async (n) => {
    const r = await page.locator(`#board .pile[data-pile="${n}"]`).boundingBox();
    return { x: Math.round(r.x + r.width / 2), y: Math.round(r.y + r.height / 2) };
  };
  const [from, to] = (await legal())[0];
  const a = await centre(from);
  const b = await centre(to);
  await cdp.send("Input.dispatchTouchEvent", { type: "touchStart", touchPoints: [a] });
  for (let i = 1; i <= 5; i++) {
    const p = { x: Math.round(a.x + ((b.x - a.x) * i) / 5), y: Math.round(a.y + ((b.y - a.y) * i) / 5) };
    await cdp.send("Input.dispatchTouchEvent", { type: "touchMove", touchPoints: [p] });
  }
  assert.equal(await page.locator(".ghost .card").count(), 1, "the card follows the finger");
  await cdp.send("Input.dispatchTouchEvent", { type: "touchEnd", touchPoints: [] });
  await waitVersion(page, 2);
  const [from2, to2] = (await legal())[0];
  for (const n of [from2, to2]) {
    await cdp.send("Input.dispatchTouchEvent", { type: "touchStart", touchPoints: [await centre(n)] });
    await cdp.send("Input.dispatchTouchEvent", { type: "touchEnd", touchPoints: [] });
  }
  await waitVersion(page, 3);
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), 0);
  await page.close();
});

test("auto-move (an option): aces and twos go to the foundations by themselves", async () => {
  const page = await context.newPage();
  await page.goto(`${BASE}/`);
  await page.waitForSelector("#variant option[value='streets-and-alleys']", { state: "attached" });
  await page.check("#auto-home");
  await page.selectOption("#variant", "streets-and-alleys");
  await page.fill("#seed", "5"); // aces on top of piles at the deal
  await page.click("#new-game");
  await page.waitForFunction(() => document.querySelectorAll('#board .pile[data-zone="foundation"] .card-face').length >= 2);
  const home = await page.$$eval('#board .pile[data-zone="foundation"] .card-face', (cs) => cs.map((c) => c.dataset.card));
  assert.ok(home.every((card) => /^[A2]/.test(card)), home.join(" "));
  assert.ok((await version(page)) >= 3, "the moves were the page's own, played on the server");
  await page.close();
});
