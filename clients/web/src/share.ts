// Tokens and links (issue 29). The player's token stays in this browser: localStorage, keyed by
// game id; the page's own URL is "#game=<id>" and reopens the game in any tab of this browser.
// The Share dialog gives what others may have: the deal code and "#deal=<code>" (the same cards
// as a new game for whoever opens it, hidden cards still hidden), and the spectator link
// "#watch=<id>.<watch token>", which carries only the read-only watch token: the page opened from
// it has no controls, and the server refuses any change made with that token (WATCH_ONLY). The
// link with the play token ("#game=<id>&token=<token>", to play on another device) is shown only
// when the player asks for it. Every link lives in the URL fragment, which browsers never send
// to a server, so no token reaches an access log.
import { el, state } from "./state";

const TOKEN_KEY = (gameId: string): string => `accordion:token:${gameId}`;

export function savedToken(gameId: string): string {
  try {
    return window.localStorage.getItem(TOKEN_KEY(gameId)) ?? "";
  } catch {
    return ""; // storage refused (a private window's policy): the token lives in this page only
  }
}

export function saveToken(gameId: string, value: string): void {
  try {
    window.localStorage.setItem(TOKEN_KEY(gameId), value);
  } catch {
    // as above
  }
}

export const pageBase = (): string => `${window.location.origin}${window.location.pathname}`;

/** The Share dialog's links: the deal (for anyone) and the spectator's (read-only); no play token. */
export function showLinks(gameId: string, watch: string, code: string): void {
  state.dealCode = code;
  el("deal-code").textContent = code || "(none)";
  const deal = el<HTMLAnchorElement>("deal-link");
  deal.href = `${pageBase()}#deal=${code}`;
  deal.textContent = deal.href;
  const spectator = el<HTMLAnchorElement>("spectator-link");
  spectator.href = `${pageBase()}#watch=${gameId}.${watch}`;
  spectator.textContent = spectator.href;
  el("play-link-box").hidden = true;
  el<HTMLAnchorElement>("play-link").removeAttribute("href");
  el("play-link").textContent = "";
}

export function copyLink(id: string): void {
  const link = document.getElementById(id) as HTMLAnchorElement | null;
  if (!link) return;
  void navigator.clipboard?.writeText(link.href).catch(() => undefined);
  el("status").textContent = `Link copied: ${link.href}`;
}

export function wireShare(): void {
  el("share").addEventListener("click", () => el<HTMLDialogElement>("share-dialog").showModal());
  el("share-close").addEventListener("click", () => el<HTMLDialogElement>("share-dialog").close());
  el("spectate").addEventListener("click", () => copyLink("spectator-link"));
  el("copy-deal").addEventListener("click", () => copyLink("deal-link"));
  el("copy-spectator").addEventListener("click", () => copyLink("spectator-link"));
  el("reveal-play-link").addEventListener("click", () => {
    // Only when the player asks: this link is the game itself (whoever has it can play).
    if (!state.game) return;
    const a = el<HTMLAnchorElement>("play-link");
    a.href = `${pageBase()}#game=${state.game.id}&token=${state.token}`;
    a.textContent = a.href;
    el("play-link-box").hidden = false;
  });
}
