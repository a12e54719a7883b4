// The "New game" panel: the variant, its options (in words, each with its help shown, not only
// on hover, which phones do not have), a seed checked here before anything is sent, an explicit
// deal or a deal code.
import type { NewGameInit, Variant } from "@accordion/client/browser";
import { el, state } from "./state";

/** A mistake the page finds itself (a seed that is not a number): shown like the server's refusals. */
export class PageError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

const LABEL: Record<string, string> = {
  dealing: "How the row is dealt",
  compel: "Must play when able",
  leap: "Leap reaches",
  win_piles: "Piles left to win",
  draw: "Cards turned per draw",
  passes: "Passes through the stock (0 = no limit)",
  partial_runs: "Move part of a run",
  foundation_return: "Take cards back from the foundations",
  suit: "Suit",
  suits: "Suits",
  layout: "Layout",
  open: "Deal face up (open game)",
  undo: "Undo allowed",
};
const VALUE: Record<string, string> = { true: "yes", false: "no" };

export const optionLabel = (name: string): string => LABEL[name] ?? name.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());

export function selectedVariant(): Variant | undefined {
  return state.variants.find((v) => v.id === el<HTMLSelectElement>("variant").value);
}

export function renderOptions(): void {
  const variant = selectedVariant();
  const box = el("options");
  box.replaceChildren();
  if (!variant) return;
  for (const option of variant.options) {
    const row = document.createElement("div");
    row.className = "option";
    const label = document.createElement("label");
    label.htmlFor = `option-${option.name}`;
    label.textContent = optionLabel(option.name);
    const range = option.allowedValues.length === 1 ? /^(\d+)\.\.(\d+)$/.exec(option.allowedValues[0] ?? "") : null;
    let input: HTMLInputElement | HTMLSelectElement;
    if (range) {
      input = document.createElement("input");
      input.type = "number";
      input.inputMode = "numeric";
      input.min = range[1] ?? "";
      input.max = range[2] ?? "";
      input.value = option.defaultValue;
    } else {
      input = document.createElement("select");
      for (const value of option.allowedValues) input.add(new Option(VALUE[value] ?? value, value, false, value === option.defaultValue));
    }
    input.dataset["option"] = option.name;
    input.id = `option-${option.name}`;
    const help = document.createElement("small");
    help.id = `option-${option.name}-help`;
    help.textContent = option.description;
    input.setAttribute("aria-describedby", help.id);
    row.append(label, input, help);
    box.append(row);
  }
  el("variant-help").textContent = `${variant.description} Win: ${variant.winThreshold}.`;
}

const MAX_SEED = 18446744073709551615n; // a seed is a uint64

/** The seed typed, checked: empty (a random deal) or a whole number 0 … 2^64−1. */
export function seedOf(text: string): bigint | undefined {
  const seed = text.trim();
  if (!seed) return undefined;
  if (!/^\d+$/.test(seed) || BigInt(seed) > MAX_SEED) {
    throw new PageError("BAD_SEED", `The seed must be a whole number from 0 to ${MAX_SEED} (or empty for a random deal), not “${seed}”.`);
  }
  return BigInt(seed);
}

export function newGameRequest(): NewGameInit {
  const options: Record<string, string> = {};
  for (const input of el("options").querySelectorAll<HTMLInputElement | HTMLSelectElement>("[data-option]")) {
    options[input.dataset["option"] ?? ""] = input.value;
  }
  const deal = el<HTMLInputElement>("deal").value.trim();
  const seed = seedOf(el<HTMLInputElement>("seed").value);
  const request: NewGameInit = { variant: el<HTMLSelectElement>("variant").value, options };
  if (deal) request.start = { case: "deal", value: { cards: deal.split(/[\s,]+/) } };
  else if (seed !== undefined) request.start = { case: "seed", value: seed };
  return request;
}
