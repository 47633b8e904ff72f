// google.protobuf.Duration in its proto3 JSON form ("30s", "0.250s"), shared by the renderer and
// the proto codec so a rendered duration survives an encode/decode round trip unchanged.

/** Largest |seconds| a Duration may hold (10,000 years), per duration.proto. */
export const MAX_DURATION_SECONDS = 315_576_000_000;

/** Canonical proto3 JSON text of a Duration: fractional part with 0, 3, 6 or 9 digits. */
export function formatDuration(seconds: number, nanos: number): string {
  const negative = seconds < 0 || nanos < 0;
  const whole = Math.abs(seconds);
  const frac = Math.abs(nanos);
  let fraction = "";
  if (frac !== 0) {
    const digits = String(frac).padStart(9, "0");
    fraction = "." + (frac % 1_000_000 === 0 ? digits.slice(0, 3) : frac % 1000 === 0 ? digits.slice(0, 6) : digits);
  }
  return `${negative ? "-" : ""}${whole}${fraction}s`;
}

/** A positive, finite number of seconds as Duration JSON; undefined when Envoy would refuse it. */
export function durationFromSeconds(value: number): string | undefined {
  if (!Number.isFinite(value) || value <= 0 || value > MAX_DURATION_SECONDS) return undefined;
  let seconds = Math.trunc(value);
  let nanos = Math.round((value - seconds) * 1e9);
  if (nanos >= 1e9) {
    seconds += 1;
    nanos -= 1e9;
  }
  if (seconds === 0 && nanos === 0) return undefined;
  return formatDuration(seconds, nanos);
}

/** Parses Duration JSON into seconds and nanos (same sign); undefined when malformed. */
export function parseDuration(text: string): { seconds: number; nanos: number } | undefined {
  const m = /^(-?)([0-9]+)(?:\.([0-9]{1,9}))?s$/.exec(text);
  if (!m) return undefined;
  const sign = m[1] === "-" ? -1 : 1;
  const seconds = Number(m[2]);
  if (seconds > MAX_DURATION_SECONDS) return undefined;
  const nanos = Number((m[3] ?? "").padEnd(9, "0"));
  // Avoid -0: a zero part carries no sign.
  return { seconds: seconds === 0 ? 0 : sign * seconds, nanos: nanos === 0 ? 0 : sign * nanos };
}
