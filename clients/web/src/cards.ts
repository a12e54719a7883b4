// Cards in words and print: the label drawn on a card (as the server's picture: "Q♥", "10♠"),
// its colour, and the words a screen reader says ("queen of hearts").
import { Suit, ZoneKind, type Card } from "@accordion/client/browser";

const SYMBOL: Record<number, string> = { [Suit.SPADES]: "♠", [Suit.HEARTS]: "♥", [Suit.DIAMONDS]: "♦", [Suit.CLUBS]: "♣" };
const SUIT_WORD: Record<number, string> = { [Suit.SPADES]: "spades", [Suit.HEARTS]: "hearts", [Suit.DIAMONDS]: "diamonds", [Suit.CLUBS]: "clubs" };
const RANK_TEXT: Record<number, string> = { 1: "A", 11: "J", 12: "Q", 13: "K" };
const RANK_WORD: Record<number, string> = { 1: "ace", 11: "jack", 12: "queen", 13: "king" };

export const rankText = (card: Card): string => RANK_TEXT[card.rank] ?? String(card.rank);
export const suitSymbol = (card: Card): string => SYMBOL[card.suit] ?? "?";
export const cardLabel = (card: Card): string => `${rankText(card)}${suitSymbol(card)}`;
export const isRed = (card: Card): boolean => card.suit === Suit.HEARTS || card.suit === Suit.DIAMONDS;
export const cardWords = (card: Card): string => `${RANK_WORD[card.rank] ?? String(card.rank)} of ${SUIT_WORD[card.suit] ?? "?"}`;

/** The zone names of the page's hooks (data-zone) and of the notation's words. */
export const ZONE_NAME: Record<number, string> = {
  [ZoneKind.TABLEAU]: "tableau",
  [ZoneKind.FOUNDATION]: "foundation",
  [ZoneKind.STOCK]: "stock",
  [ZoneKind.WASTE]: "waste",
};
export const ZONE_OF: Record<string, ZoneKind> = {
  tableau: ZoneKind.TABLEAU,
  foundation: ZoneKind.FOUNDATION,
  stock: ZoneKind.STOCK,
  waste: ZoneKind.WASTE,
};
