// Sharing (issue 29) in a real headless Chromium (test-support/browser.mjs): the page's own link
// holds no token, the spectator link from the Share dialog cannot play (nor as #game= with its
// token), a deal link deals the same cards, and a second tab of the player follows the first.
// Needs BASE_URL, as test/browser.test.mjs.
import assert from "node:assert/strict";
import { test } from "node:test";
import { BASE, newGame, browserForThisFile, version, waitVersion } from "../test-support/browser.mjs";

const browser = browserForThisFile();

const DEAL_CODE = /^[0-9A-HJKMNP-TV-Z]{4}(?:-[0-9A-HJKMNP-TV-Z]{4}){3}$/;
const gameIdOf = (page) => /#game=([A-Za-z0-9_-]{22})$/.exec(page.url())?.[1];
const storedToken = (page, id) => page.evaluate((gameId) => localStorage.getItem(`accordion:token:${gameId}`), id);
const cardsShown = (page) => page.$$eval("#board [data-card]", (cs) => cs.map((c) => c.dataset.card));

test("the page's own link holds no token; another tab reopens the game; the play link only when asked", async () => {
  const page = await browser.context.newPage();
  await newGame(page, { seed: "5" });
  await page.click("#moves button >> nth=0");
  await waitVersion(page, "2");
  const id = gameIdOf(page);
  assert.ok(id, `the page's URL names the game only: ${page.url()}`);
  const token = await storedToken(page, id);
  assert.ok(token, "the token is kept in this browser");
  const again = await browser.context.newPage();
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
  const third = await browser.context.newPage();
  await third.goto(playLink);
  await waitVersion(third, "2");
  assert.equal(gameIdOf(third), id, "the token leaves the address bar once read");
  await third.close();
  await again.close();
  await page.close();
});

test("a spectator page opened from the Share dialog cannot play, nor as #game= with its token", async () => {
  const player = await browser.context.newPage();
  await newGame(player, { variant: "klondike", seed: "11" });
  const id = gameIdOf(player);
  const token = await storedToken(player, id);
  await player.click("#share");
  await player.waitForSelector("#share-dialog[open]");
  assert.match((await player.textContent("#deal-code")).trim(), DEAL_CODE);
  const link = await player.getAttribute("#spectator-link", "href");
  assert.match(link, new RegExp(`#watch=${id}\\.[^&]+$`));
  assert.ok(!link.includes(token), "the spectator link does not carry the play token");
  const [watcher] = await Promise.all([browser.context.waitForEvent("page"), player.click("#spectator-link")]);
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
  const attacker = await browser.context.newPage();
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
  const player = await browser.context.newPage();
  await newGame(player, { variant: "klondike", seed: "11" });
  await player.click("#share");
  await player.waitForSelector("#share-dialog[open]");
  const code = (await player.textContent("#deal-code")).trim();
  assert.match(code, DEAL_CODE);
  const dealLink = await player.getAttribute("#deal-link", "href");
  assert.ok(dealLink.endsWith(`#deal=${code}`), dealLink);
  const friend = await browser.context.newPage();
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
  const first = await browser.context.newPage();
  await newGame(first, { seed: "7" });
  const second = await browser.context.newPage();
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
  // (Last, so every page of this file's tests has been seen.)
  assert.deepEqual(browser.refusedByPolicy, [], "the Content-Security-Policy refused nothing the pages use");
});
