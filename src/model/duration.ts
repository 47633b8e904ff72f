// Go time.Duration strings ("1h", "90m", "1h30m", "2.5h") as the original operator accepted them.

const UNIT_SECONDS: Readonly<Record<string, number>> = { h: 3600, m: 60, s: 1, ms: 0.001 };
const PART = /([0-9]+(?:\.[0-9]+)?)(ms|h|m|s)/gy;

/** Whole seconds in a Go duration string; undefined when it is not one. */
export function parseDurationSeconds(text: string): number | undefined {
  if (text === "") return undefined;
  PART.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  for (let m = PART.exec(text); m !== null; m = PART.exec(text)) {
    total += Number(m[1]) * (UNIT_SECONDS[m[2] ?? ""] ?? 0);
    consumed = PART.lastIndex;
  }
  if (consumed !== text.length) return undefined;
  return Math.floor(total);
}
