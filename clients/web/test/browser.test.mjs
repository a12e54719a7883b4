// The page in a real headless Chromium (Debian's package, driven by playwright-core; nothing is
// downloaded): a seeded game played by clicking and dragging, undo, an illegal move refused in
// words, a spectator page that sees a move within a second, a short known deal won, Klondike
// (face-down cards as backs, moves by clicking and typing; open play), sharing (issue 29: the
// spectator link from the Share dialog cannot play, a deal link deals the same cards, a second
// tab of the player follows the first), and /docs calling the live service. Needs BASE_URL (the one origin: page, gRPC-Web, REST, docs), e.g.
// from tests/web/test_browser.py, which starts the server, Envoy and the static server.
// Screenshots go to SCREENSHOTS (default: test-results/).
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { chromium } from "playwright-core";

const BASE = process.env.BASE_URL;
const SHOTS = process.env.SCREENSHOTS ?? "test-results";
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
// A deal of Accordion that is won (win_piles 50) in two moves: 6C>9C, then 6C>6H.
const SHORT_WIN =
  "QH 7C 8S 4C 8H 2D 3H 2S QC 9D 4H 6D 3S AD 10C KH JC 7D 8C 6S AC KD 2C 4D 5H AS 2H 8D KC 4S " +
  "3C QD 7H 10D JS 5D QS AH 10S 9H 5C 3D 7S 10H 9S JH 5S 6H KS JD 9C 6C";

assert.ok(BASE, "set BASE_URL to the page's origin");
mkdirSync(SHOTS, { recursive: true });
let context;
let profile;
// What Chromium reports of the static server's Content-Security-Policy (tools/serve_web.py): a
// script, style, image or call it refused. The last test asserts there was none on any page.
const refusedByPolicy = [];

before(async () => {
  profile = mkdtempSync(join(tmpdir(), "accordion-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1100, height: 900 },
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
  });
  context.on("console", (msg) => {
    if (/Content Security Policy/i.test(msg.text())) refusedByPolicy.push(`${msg.location().url}: ${msg.text()}`);
  });
});

after(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

const version = (page) => page.locator("#status").getAttribute("data-version");

async function waitVersion(page, v) {
  await page.waitForSelector(`#status[data-version="${v}"]`, { timeout: 10_000 });
  await page.waitForSelector(`#board .table[data-version="${v}"]`, { timeout: 10_000 });
}

async function newGame(page, { variant = "accordion", seed = "", deal = "", options = {} } = {}) {
  await page.goto(`${BASE}/`);
  await page.waitForSelector("#variant option[value='accordion']", { state: "attached" });
  await page.selectOption("#variant", variant);
  for (const [name, value] of Object.entries(options)) await page.fill(`#option-${name}`, value);
  await page.fill("#seed", seed);
  await page.fill("#deal", deal);
  await page.click("#new-game");
  await waitVersion(page, "1");
}

/** The legal moves the page lists: [notation, from, to]. */
async function legalMoves(page) {
  return page.$$eval("#moves button", (bs) => bs.map((b) => [b.dataset.notation, Number(b.dataset.from), Number(b.dataset.to)]));
}

const pile = (page, n) => page.locator(`#board .pile[data-pile="${n}"]`);

test("a seeded game: click and drag moves, undo, an illegal move refused in words", async () => {
  const page = await context.newPage();
  await newGame(page, { seed: "7" });
  // The status line in a player's words (the numbers also in data attributes, no engine words).
  assert.equal(await page.textContent("#status"), "52 piles · score 51 (lower is better)");
  assert.equal(await page.getAttribute("#status", "data-variant"), "accordion");
  assert.equal(await page.getAttribute("#status", "data-penalty"), "51");
  // The legal moves are highlighted on the picture.
  const moves = await legalMoves(page);
  assert.equal(moves[0][0], "10D>4D");
  const movable = await page.$$eval("#board .pile.movable", (gs) => gs.map((g) => Number(g.dataset.pile)));
  assert.deepEqual(movable.sort((a, b) => a - b), [...new Set(moves.map((m) => m[1]))].sort((a, b) => a - b));
  await page.screenshot({ path: join(SHOTS, "1-new-game.png") });

  // A move by clicking the pile, then its target (which the page highlights once picked up).
  const [, from, to] = moves[0];
  await pile(page, from).click();
  assert.ok(await pile(page, to).evaluate((g) => g.classList.contains("target")));
  await pile(page, to).click();
  await waitVersion(page, "2");
  assert.match(await page.textContent("#status"), /^51 piles · /);

  // A move by dragging a pile onto its target.
  const [note2, from2, to2] = (await legalMoves(page))[0];
  const a = await pile(page, from2).boundingBox();
  const b = await pile(page, to2).boundingBox();
  await page.mouse.move(a.x + 20, a.y + 30);
  await page.mouse.down();
  await page.mouse.move(b.x + 20, b.y + 30, { steps: 5 });
  await page.mouse.up();
  await waitVersion(page, "3");
  assert.match(await page.textContent("#status"), /^50 piles · /, `after dragging ${note2}`);

  // Undo takes the drag back.
  await page.click("#undo");
  await waitVersion(page, "4");
  assert.match(await page.textContent("#status"), /51 piles/);

  // An illegal move is refused, in words, and changes nothing.
  const legal = new Set((await legalMoves(page)).map(([, f, t]) => `${f}>${t}`));
  let pair;
  for (let f = 2; f <= 20 && !pair; f++) if (!legal.has(`${f}>${f - 1}`)) pair = [f, f - 1];
  await pile(page, pair[0]).click();
  await pile(page, pair[1]).click();
  await page.waitForSelector("#error:not([hidden])");
  assert.equal(await page.getAttribute("#error", "data-reason"), "ILLEGAL_MOVE");
  // The server's words only: no reason code, and no engine notation such as MOVE(count=1, …).
  assert.match(await page.textContent("#error"), /^(?!ILLEGAL_MOVE)(?!MOVE\().+/);
  assert.equal(await version(page), "4");
  await page.screenshot({ path: join(SHOTS, "2-illegal-move.png") });

  // Hint shows a move from the server.
  await page.click("#hint");
  await page.waitForFunction(() => document.querySelector("#status").textContent.startsWith("Hint: "));
  await page.close();
});

test("a spectator link sees a move made in the first page, live", async () => {
  const player = await context.newPage();
  await newGame(player, { seed: "11" });
  const link = await player.getAttribute("#spectator-link", "href");
  assert.match(link, /#watch=[A-Za-z0-9_-]{22}\.[^&]+$/);
  const watcher = await context.newPage();
  await watcher.goto(link);
  await waitVersion(watcher, "1");
  assert.equal(await watcher.isVisible("#play"), false, "the spectator has no controls");
  assert.equal(await watcher.isVisible("#spectating"), true);
  assert.equal(await watcher.locator("#board .pile.movable").count(), 0);
  await new Promise((r) => setTimeout(r, 300)); // let the WatchGame stream open

  const started = Date.now();
  await player.click("#moves button >> nth=0");
  await waitVersion(watcher, "2");
  const seen = Date.now() - started;
  // The figure is printed, not held to a tight bound: the machine running the tests is shared
  // (timings belong in bench/); the bound only says the stream carried the move, not a reload.
  console.log(`the spectator saw the move after ${seen} ms`);
  assert.ok(seen < 10_000, `the spectator saw the move after ${seen} ms`);
  console.log(`spectator saw the move after ${seen} ms`);
  await watcher.screenshot({ path: join(SHOTS, "3-spectator.png") });
  await watcher.close();
  await player.close();
});

test("a short known deal is won by clicking", async () => {
  const page = await context.newPage();
  await newGame(page, { deal: SHORT_WIN, options: { win_piles: "50" } });
  for (const [n, expected] of [[2, "6C>9C"], [3, "6C>6H"]]) {
    const moves = await legalMoves(page);
    assert.equal(moves.length, 1);
    const [notation, from, to] = moves[0];
    assert.equal(notation, expected);
    await pile(page, from).click();
    await pile(page, to).click();
    await waitVersion(page, String(n));
  }
  assert.equal(await page.getAttribute("#status", "data-status"), "won");
  assert.match(await page.textContent("#end-panel"), /You won!.*2 moves/s, "the win panel");
  await page.screenshot({ path: join(SHOTS, "4-won.png") });
  await page.close();
});

test("a game with a stock: backs with its size, a click on the stock deals", async () => {
  const page = await context.newPage();
  await newGame(page, { variant: "accordion-stock", seed: "3" });
  const stock = page.locator("#board .stock");
  const before = Number((await page.textContent("#status")).match(/(\d+) in the stock/)[1]);
  assert.equal(await page.getAttribute("#status", "data-stock"), String(before));
  assert.ok(before > 0);
  assert.ok((await stock.locator(".card-back").count()) > 0, "the stock is drawn as backs");
  assert.equal(await stock.locator("[data-card]").count(), 0, "no stock card is named");
  await stock.click();
  await waitVersion(page, "2");
  assert.equal(await page.getAttribute("#status", "data-stock"), String(before - 1));
  if (before > 1) assert.match(await page.textContent("#status"), new RegExp(` ${before - 1} in the stock · `));
  await page.screenshot({ path: join(SHOTS, "6-stock.png") });
  await page.close();
});

test("Resign, after a confirm, ends the game lost; the spectator sees it; undo takes it back", async () => {
  const player = await context.newPage();
  await newGame(player, { variant: "accordion-stock", seed: "4" });
  const watcher = await context.newPage();
  await watcher.goto(await player.getAttribute("#spectator-link", "href"));
  await waitVersion(watcher, "1");
  await new Promise((r) => setTimeout(r, 300)); // let the WatchGame stream open

  // Dismissing the confirm changes nothing.
  player.once("dialog", (dialog) => dialog.dismiss());
  await player.click("#resign");
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(await version(player), "1");

  const confirmed = new Promise((resolve) =>
    player.once("dialog", async (dialog) => {
      resolve(dialog.message());
      await dialog.accept();
    }),
  );
  await player.click("#resign");
  assert.match(await confirmed, /Resign this game\?/);
  await waitVersion(player, "2");
  assert.equal(await player.getAttribute("#status", "data-status"), "lost");
  assert.match(await player.textContent("#status"), /^Resigned · /);
  assert.equal(await player.isDisabled("#resign"), true, "a game that is over cannot be resigned again");
  assert.equal(await player.locator("#moves button").count(), 0);
  assert.match(await player.textContent("#end-title"), /Resigned/);
  await waitVersion(watcher, "2");
  assert.match(await watcher.textContent("#status"), /^Resigned · /);
  await player.screenshot({ path: join(SHOTS, "7-resigned.png") });

  await player.click("#undo");
  await waitVersion(player, "3");
  assert.equal(await player.getAttribute("#status", "data-status"), "in progress");
  assert.equal(await player.isDisabled("#resign"), false);
  await watcher.close();
  await player.close();
});

const DEAL_CODE = /^[0-9A-HJKMNP-TV-Z]{4}(?:-[0-9A-HJKMNP-TV-Z]{4}){3}$/;
const gameIdOf = (page) => /#game=([A-Za-z0-9_-]{22})$/.exec(page.url())?.[1];
const storedToken = (page, id) => page.evaluate((gameId) => localStorage.getItem(`accordion:token:${gameId}`), id);
const cardsShown = (page) => page.$$eval("#board [data-card]", (cs) => cs.map((c) => c.dataset.card));

test("the page's own link holds no token; another tab reopens the game; the play link only when asked", async () => {
  const page = await context.newPage();
  await newGame(page, { seed: "5" });
  await page.click("#moves button >> nth=0");
  await waitVersion(page, "2");
  const id = gameIdOf(page);
  assert.ok(id, `the page's URL names the game only: ${page.url()}`);
  const token = await storedToken(page, id);
  assert.ok(token, "the token is kept in this browser");
  const again = await context.newPage();
  await again.goto(page.url());
  await waitVersion(again, "2");
  assert.equal(await again.isVisible("#play"), true);

  await page.click("#share");
  await page.waitForSelector("#share-dialog[open]");
  assert.ok(!(await page.innerHTML("#share-dialog")).includes(token), "the Share dialog holds no play token");
  assert.equal(await page.isVisible("#play-link-box"), false);
  await page.click("#reveal-play-link");
  const playLink = await page.getAttribute("#play-link", "href");
  assert.ok(playLink.endsWith(`#game=${id}&token=${token}`), "asked for, the play link carries the token");
  const third = await context.newPage();
  await third.goto(playLink);
  await waitVersion(third, "2");
  assert.equal(gameIdOf(third), id, "the token leaves the address bar once read");
  await third.close();
  await again.close();
  await page.close();
});

test("a spectator page opened from the Share dialog cannot play, nor as #game= with its token", async () => {
  const player = await context.newPage();
  await newGame(player, { variant: "klondike", seed: "11" });
  const id = gameIdOf(player);
  const token = await storedToken(player, id);
  await player.click("#share");
  await player.waitForSelector("#share-dialog[open]");
  assert.match((await player.textContent("#deal-code")).trim(), DEAL_CODE);
  const link = await player.getAttribute("#spectator-link", "href");
  assert.match(link, new RegExp(`#watch=${id}\\.[^&]+$`));
  assert.ok(!link.includes(token), "the spectator link does not carry the play token");
  const [watcher] = await Promise.all([context.waitForEvent("page"), player.click("#spectator-link")]);
  const sent = [];
  watcher.on("request", (r) => sent.push(new URL(r.url()).pathname));
  await waitVersion(watcher, "1");
  assert.equal(await watcher.isVisible("#play"), false, "no controls");
  assert.equal(await watcher.isVisible("#moves-box"), false, "no move buttons");
  assert.equal(await watcher.locator("#board .pile.movable").count(), 0);
  await watcher.locator("#board .stock").click();
  await watcher.locator('#board .pile[data-zone="tableau"][data-pile="7"]').click();
  await watcher.locator('#board .pile[data-zone="tableau"][data-pile="2"]').click();

  // The player moves; the spectator sees it: nothing the spectator clicked was sent as a move.
  await player.click("#share-close");
  await player.locator("#board .stock").click();
  await waitVersion(player, "2");
  await waitVersion(watcher, "2");
  assert.deepEqual(sent.filter((p) => /ApplyMove|Undo/.test(p)), [], "the spectator's page sent no move");

  // The attack: the link's #watch= turned into #game= with its token. The page opens the
  // game to play, but the server refuses the move made with a watch token, in words.
  const [, watchToken] = /#watch=[^.]+\.(.+)$/.exec(link);
  const attacker = await context.newPage();
  await attacker.goto(`${BASE}/#game=${id}&token=${watchToken}`);
  await waitVersion(attacker, "2");
  await attacker.click("#moves button >> nth=0");
  await attacker.waitForSelector('#error[data-reason="WATCH_ONLY"]');
  assert.equal(await version(attacker), "2");
  assert.equal(await storedToken(attacker, id), token, "a link cannot replace the token this browser plays with");
  // The player's next move is not stale: nothing changed.
  await player.locator("#board .stock").click();
  await waitVersion(player, "3");
  assert.equal(await player.isVisible("#error"), false);
  await waitVersion(watcher, "3");

  // "New spectator link" retires the old one: the open spectator page is told at the next move.
  await player.click("#share");
  await player.click("#rotate-watch");
  await player.waitForFunction((old) => document.querySelector("#spectator-link").href !== old, link);
  await player.click("#share-close");
  await player.locator("#board .stock").click();
  await waitVersion(player, "4");
  await watcher.waitForSelector('#error[data-reason="GAME_NOT_FOUND"]');
  assert.equal(await version(watcher), "3");
  await attacker.close();
  await watcher.close();
  await player.close();
});

test("the Share dialog's deal link deals the same cards, hidden ones hidden, as a new game", async () => {
  const player = await context.newPage();
  await newGame(player, { variant: "klondike", seed: "11" });
  await player.click("#share");
  await player.waitForSelector("#share-dialog[open]");
  const code = (await player.textContent("#deal-code")).trim();
  assert.match(code, DEAL_CODE);
  const dealLink = await player.getAttribute("#deal-link", "href");
  assert.ok(dealLink.endsWith(`#deal=${code}`), dealLink);
  const friend = await context.newPage();
  await friend.goto(dealLink);
  await waitVersion(friend, "1");
  assert.ok(gameIdOf(friend), friend.url());
  assert.notEqual(gameIdOf(friend), gameIdOf(player), "a new game of the friend's own");
  assert.deepEqual(await cardsShown(friend), await cardsShown(player));
  assert.equal(await friend.textContent("#status"), await player.textContent("#status"));
  assert.equal(await friend.locator('#board .pile[data-zone="tableau"] .card-back').count(), 21);
  await friend.locator("#board .stock").click();
  await waitVersion(friend, "2");
  assert.equal(await version(player), "1", "the friend's moves are in the friend's game");
  // The code typed (as read in a chat, lower case) deals the same cards too.
  await friend.goto(`${BASE}/`);
  await friend.waitForSelector("#variant option[value='accordion']", { state: "attached" });
  await friend.fill("#code", code.toLowerCase());
  await friend.click("#new-game");
  await waitVersion(friend, "1");
  assert.deepEqual(await cardsShown(friend), await cardsShown(player));
  await friend.close();
  await player.close();
});

test("a second tab of the player follows the first, and its next move succeeds", async () => {
  const first = await context.newPage();
  await newGame(first, { seed: "7" });
  const second = await context.newPage();
  await second.goto(first.url()); // "#game=<id>": the token comes from this browser's storage
  await waitVersion(second, "1");
  await first.click("#moves button >> nth=0");
  await waitVersion(first, "2");
  await waitVersion(second, "2"); // followed through WatchGame, not reloaded
  await second.click("#moves button >> nth=0");
  await waitVersion(second, "3");
  assert.equal(await second.isVisible("#error"), false, await second.textContent("#error"));
  await waitVersion(first, "3");
  await first.click("#undo");
  await waitVersion(first, "4");
  await waitVersion(second, "4");
  await second.close();
  await first.close();
});

/** The page's legal MOVE buttons: [notation, fromZone, from, toZone, to]. */
async function zoneMoves(page) {
  return page.$$eval("#moves button[data-from-zone]", (bs) =>
    bs.map((b) => [b.dataset.notation, b.dataset.fromZone, Number(b.dataset.from), b.dataset.toZone, Number(b.dataset.to)]));
}

const zonePile = (page, zone, n) => page.locator(`#board .pile[data-zone="${zone}"][data-pile="${n}"]`);
const faceDown = async (page) => Number(await page.getAttribute("#status", "data-face-down"));

test("Klondike: face-down cards are backs, moves by clicking and typing, the stock draws", async () => {
  const page = await context.newPage();
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
  const page = await context.newPage();
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
  const page = await context.newPage();
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
  const page = await context.newPage();
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
});

test("/docs: Swagger UI calls the live service", async () => {
  const page = await context.newPage();
  await page.goto(`${BASE}/docs/`);
  const op = page.locator("#operations-AccordionService-AccordionService_ListVariants");
  await op.locator(".opblock-summary").first().click();
  // The page turns "Try it out" on for every operation (tryItOutEnabled): Execute is there.
  await op.locator(".execute").click();
  const status = op.locator(".live-responses-table tbody td.response-col_status").first();
  await status.waitFor({ timeout: 10_000 });
  assert.equal((await status.textContent()).trim(), "200");
  assert.match(await op.locator(".live-responses-table tbody td.response-col_description").first().textContent(), /"accordion"/);
  await page.screenshot({ path: join(SHOTS, "5-docs.png"), fullPage: false });
  await page.close();
  // (Last, so every page of every test has been seen: the game pages, the spectator, the docs.)
  assert.deepEqual(refusedByPolicy, [], "the Content-Security-Policy refused nothing the pages use");
});
