/**
 * Go's `time.Duration.String()` for millisecond values, so messages that Nomad formats with `%v` (restart
 * reasons, for one) read the same here: `15s`, `30m0s`, `24h0m0s`, `1.5s`, `250ms`, `0s`.
 */

const NS_PER_MS = 1_000_000n;

/**
 * Formats milliseconds the way Go prints a `time.Duration` (e.g. 1800000 → "30m0s", 1500 → "1.5s").
 * Sub-nanosecond parts are rounded away, as a Go duration cannot hold them; non-finite input is printed as is.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  // Whole nanoseconds as a bigint: Go works on an int64 of nanoseconds, and 2^53 ns is only ~104 days.
  const whole = Math.trunc(ms);
  const ns = BigInt(whole) * NS_PER_MS + BigInt(Math.round((ms - whole) * 1e6));
  if (ns === 0n) return '0s';
  const sign = ns < 0n ? '-' : '';
  const u = ns < 0n ? -ns : ns;

  // Under a second Go switches to the largest unit that keeps the integer part non-zero.
  if (u < 1_000n) return `${sign}${u}ns`;
  if (u < 1_000_000n) return `${sign}${fraction(u, 3)}µs`;
  if (u < 1_000_000_000n) return `${sign}${fraction(u, 6)}ms`;

  // From a second up, Go always prints seconds, then minutes and hours once they are non-zero.
  const seconds = fraction(u % 60_000_000_000n, 9);
  const totalMinutes = u / 60_000_000_000n;
  if (totalMinutes === 0n) return `${sign}${seconds}s`;
  const minutes = totalMinutes % 60n;
  const hours = totalMinutes / 60n;
  if (hours === 0n) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${hours}h${minutes}m${seconds}s`;
}

/** `v / 10^digits` with the fraction's trailing zeros (and a bare point) dropped, like Go's fmtFrac. */
function fraction(v: bigint, digits: number): string {
  const scale = 10n ** BigInt(digits);
  const int = v / scale;
  const frac = (v % scale).toString().padStart(digits, '0').replace(/0+$/, '');
  return frac === '' ? `${int}` : `${int}.${frac}`;
}
