// Following a game live through WatchGame: the player's own page (so a move made in another tab
// or on another device updates this one's version before its next move is sent) and a
// spectator's page (read-only, with the watch token).
import { AccordionError, type Game } from "@accordion/client/browser";
import { client, state } from "./state";

let following: AbortController | undefined; // the WatchGame stream the player's page follows

const pause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1000));

/** Follows the player's own game while this page shows it. */
export function follow(gameId: string, show: (game: Game) => void): void {
  following?.abort();
  const abort = new AbortController();
  following = abort;
  void (async () => {
    while (!abort.signal.aborted && state.game?.id === gameId) {
      try {
        for await (const event of client.watch(gameId, state.game?.version ?? 0n, abort.signal)) {
          if (event.game && state.game?.id === gameId) show(event.game);
        }
      } catch (err) {
        if (abort.signal.aborted) return;
        const reason = AccordionError.from(err).reason;
        if (reason === "GAME_NOT_FOUND" || reason === "MISSING_TOKEN") return; // nothing to follow
      }
      await pause(); // the stream ended: reconnect
    }
  })();
}

/** A spectator's page: the game live, read-only, with the watch token only. */
export async function spectate(gameId: string, watch: string, show: (game: Game) => void, showError: (err: unknown) => void): Promise<void> {
  state.readonly = true;
  state.token = watch; // it can read, never play
  const watcher = client.watcher(gameId, watch);
  for (;;) {
    try {
      const current = await watcher.getGame();
      show(current);
      for await (const event of watcher.watch(current.version)) {
        if (event.game) show(event.game);
      }
    } catch (err) {
      showError(err);
      // A rotated watch token (or an expired game) opens nothing: asking again would not help.
      if (AccordionError.from(err).reason === "GAME_NOT_FOUND") return;
    }
    await pause(); // the stream ended: reconnect
  }
}
