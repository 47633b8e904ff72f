// When a certificate is replaced: at two thirds of its lifetime (cert-manager's default
// renewBefore), so a holder that misses one rotation still has a third of the lifetime to pick up
// the next. Pure.

/** Fraction of the lifetime after which a certificate is replaced. */
export const ROTATE_AT_FRACTION = 2 / 3;

/** Validity of a certificate, milliseconds since the epoch. */
export interface ValidityWindow {
  readonly notBefore: number;
  readonly notAfter: number;
}

/** The instant a certificate with this validity is due for replacement. */
export function rotationDueAt(cert: ValidityWindow): number {
  return cert.notBefore + Math.floor((cert.notAfter - cert.notBefore) * ROTATE_AT_FRACTION);
}

/** Whether a certificate must be (re-)issued at `now`: none yet, not valid yet, or past two thirds. */
export function needsRotation(cert: ValidityWindow | undefined, now: number): boolean {
  if (cert === undefined) return true;
  if (now < cert.notBefore) return true; // issued by a clock ahead of ours: do not rely on it
  return now >= rotationDueAt(cert);
}
