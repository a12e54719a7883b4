// Tableau games in a real headless Chromium (test-support/browser.mjs): Klondike (face-down cards
// as backs, moves by clicking and typing, the stock draws; open play shows them, marked), a
// double click sending a card home, Wish's pairs by clicking, and Spider's stock.
// Needs BASE_URL, as test/browser.test.mjs.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { BASE, SHOTS, newGame, browserForThisFile, version, waitVersion } from "../test-support/browser.mjs";

const browser = browserForThisFile();

/** The page's legal MOVE buttons: [notation, fromZone, from, toZone, to]. */
async function zoneMoves(page) {
  return page.$$eval("#moves button[data-from-zone]", (bs) =>
    bs.map((b) => [b.dataset.notation, b.dataset.fromZone, Number(b.dataset.from), b.dataset.toZone, Number(b.dataset.to)]));
}

const zonePile = (page, zone, n) => page.locator(`#board .pile[data-zone="${zone}"][data-pile="${n}"]`);
const faceDown = async (page) => Number(await page.getAttribute("#status", "data-face-down"));

test("Klondike: face-down cards are backs, moves by clicking and typing, the stock draws", async () => {
  const page = await browser.context.newPage();
  await newGame(page, { variant: "klondike", seed: "11" });
  assert.equal(await page.textContent("#status"), "21 cards face down · 24 in the stock · score 52 (lower is better)");
  assert.equal(await page.getAttribute("#status", "data-face-down"), "21");
  assert.doesNotMatch(await page.textContent("#status"), /klondike|version|penalty|in progress/, "no engine words on screen");
  // Pile i: i - 1 backs under one face-up card; no face-down card (nor the stock's) is named.
  for (let i = 1; i <= 7; i++) {
    assert.equal(await zonePile(page, "tableau", i).locator(".card-back").count(), i - 1, `pile ${i}`);
    assert.equal(await zonePile(page, "tableau", i).locator("[data-card]").count(), 1, `pile ${i}`);
  }
  assert.equal(await page.locator("#board [data-card]").count(), 7, "only the seven face-up cards are named");
  assert.equal(await page.locator("#board .stock [data-card]").count(), 0);
  assert.equal(await page.locator('#board .pile[data-zone="foundation"]').count(), 4);
  await page.screenshot({ path: join(SHOTS, "8-klondike.png") });

  // Up to a dozen turns: a legal MOVE by clicking its pile and then its target, else a click on
  // the stock (DRAW). Every face-down card stays a back; the count in the status follows.
  let at = 1;
  let clicked = 0;
  for (let turn = 0; turn < 12 && clicked < 3; turn++) {
    const [move] = await zoneMoves(page);
    if (move) {
      const [notation, fromZone, from, toZone, to] = move;
      await zonePile(page, fromZone, from).click();
      assert.ok(await zonePile(page, toZone, to).evaluate((g) => g.classList.contains("target")), notation);
      await zonePile(page, toZone, to).click();
      clicked++;
    } else {
      await page.locator("#board .stock").click();
    }
    await waitVersion(page, String(++at));
    const backs = await page.locator('#board .pile[data-zone="tableau"] .card-back').count();
    assert.equal(backs, await faceDown(page), "one back per face-down card");
  }
  assert.ok(clicked >= 1, "no MOVE was legal in a dozen turns");
  // Typed notation: draw.
  await page.fill("#notation", "draw");
  await page.click("#play-notation");
  await waitVersion(page, String(++at));
  // An illegal MOVE typed is refused in words and changes nothing.
  await page.fill("#notation", "1>1");
  await page.click("#play-notation");
  await page.waitForSelector("#error:not([hidden])");
  assert.match(await page.getAttribute("#error", "data-reason"), /ILLEGAL_MOVE|INVALID_MOVE/);
  assert.equal(await version(page), String(at));
  await page.screenshot({ path: join(SHOTS, "9-klondike-played.png") });
  await page.close();
});

test("a double click sends a card home; Wish pairs two piles by clicking", async () => {
  const page = await browser.context.newPage();
  await newGame(page, { variant: "klondike", seed: "11" });
  await zonePile(page, "tableau", 7).click();
  await zonePile(page, "tableau", 2).click(); // 7>2 turns up the A♥ under the 6♥
  await waitVersion(page, "2");
  await zonePile(page, "tableau", 7).dblclick();
  await waitVersion(page, "3");
  assert.equal(await page.locator('#board .pile[data-zone="foundation"] [data-card]').count(), 1, "the ace went home");
  assert.match(await page.textContent("#status"), /^19 cards face down · (.* · )?score 51 /);

  await newGame(page, { variant: "wish", seed: "2" });
  assert.equal(await page.locator('#board .pile[data-zone="tableau"] .card-back').count(), 24);
  const [pair] = await page.$$eval("#moves button", (bs) => bs.map((b) => b.dataset.notation));
  const [a, b] = pair.slice(1).split(",").map(Number);
  await zonePile(page, "tableau", b).click();
  assert.ok(await zonePile(page, "tableau", a).evaluate((g) => g.classList.contains("target")));
  await zonePile(page, "tableau", a).click();
  await waitVersion(page, "2");
  assert.match(await page.textContent("#status"), /^22 cards face down · (.* · )?score 30 /);
  await page.close();
});

test("Spider: backs under every pile, a click on the stock deals one card onto each", async () => {
  const page = await browser.context.newPage();
  await newGame(page, { variant: "spider", seed: "5" });
  assert.equal(await page.textContent("#status"), "40 cards face down · 54 in the stock · score 104 (lower is better)");
  assert.equal(await page.locator('#board .pile[data-zone="tableau"]').count(), 10);
  assert.equal(await page.locator('#board .pile[data-zone="tableau"] .card-back').count(), 40);
  assert.equal(await page.locator("#board [data-card]").count(), 10, "only the ten face-up cards are named");
  await page.locator("#board .stock").click();
  await waitVersion(page, "2");
  assert.match(await page.textContent("#status"), /^40 cards face down · 44 in the stock · /);
  assert.equal(await page.locator('#board .pile[data-zone="tableau"] [data-card]').count(), 20);
  await page.screenshot({ path: join(SHOTS, "10-spider.png") });
  await page.close();
});

test("an open Klondike shows its face-down cards, marked, and no backs on the tableau", async () => {
  const page = await browser.context.newPage();
  await page.goto(`${BASE}/`);
  await page.waitForSelector("#variant option[value='klondike']", { state: "attached" });
  await page.selectOption("#variant", "klondike");
  await page.selectOption("#option-open", "true");
  await page.fill("#seed", "11");
  await page.click("#new-game");
  await waitVersion(page, "1");
  assert.equal(await page.locator('#board .pile[data-zone="tableau"] .card-back').count(), 0);
  assert.equal(await page.locator('#board .pile[data-zone="tableau"] .open-down').count(), 21);
  await page.close();
  // (Last, so every page of this file's tests has been seen.)
  assert.deepEqual(browser.refusedByPolicy, [], "the Content-Security-Policy refused nothing the pages use");
});
