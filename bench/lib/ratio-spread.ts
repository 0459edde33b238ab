/**
 * The spread of a figure taken as a ratio per round (P5: a no-op run's CPU over the stream's, the two run back
 * to back in one round). One run of a benchmark prints the median of its rounds' ratios with how far that
 * median could be off, so a reader can tell a change from the instrument's own spread.
 */
import { quantile } from './stats.ts';

/** The median of per-round ratios, the range it lies in with ~95% confidence, and the rounds' own spread. */
export interface RatioSpread {
  n: number;
  median: number;
  /** Order-statistic confidence interval of the median (no assumption about the rounds' distribution). */
  ciLow: number;
  ciHigh: number;
  /** The middle half of the rounds. */
  q1: number;
  q3: number;
  min: number;
  max: number;
}

/**
 * Summarises per-round ratios. The median's interval is the classic distribution-free one: between the j-th
 * and k-th smallest of n rounds, j and k about n/2 ∓ 0.98·√n, which holds the true median with ~95%
 * probability whatever the rounds' distribution (a few rounds with a collection in them do not drag it as
 * they drag a mean).
 */
export function ratioSpread(ratios: readonly number[]): RatioSpread {
  if (ratios.length === 0) throw new Error('ratioSpread: no rounds to summarise');
  if (ratios.some((r) => !Number.isFinite(r) || r <= 0)) throw new Error(`ratioSpread: every ratio must be a positive number, got ${JSON.stringify(ratios)}`);
  const sorted = [...ratios].sort((a, b) => a - b);
  const n = sorted.length;
  const half = 0.98 * Math.sqrt(n);
  // 1-based ranks, clamped: with few rounds the interval is simply the whole range.
  const j = Math.max(1, Math.floor(n / 2 - half));
  const k = Math.min(n, Math.ceil(n / 2 + 1 + half));
  const mid = n % 2 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
  return { n, median: mid, ciLow: sorted[j - 1]!, ciHigh: sorted[k - 1]!, q1: quantile(sorted, 0.25), q3: quantile(sorted, 0.75), min: sorted[0]!, max: sorted[n - 1]! };
}

/** `median% (95% CI lo-hi%; middle half q1-q3%, range min-max%; n rounds)` for ratios given as fractions. */
export function formatRatioSpread(s: RatioSpread): string {
  const pct = (x: number) => (x * 100).toFixed(0);
  return `${(s.median * 100).toFixed(1)}% (median of ${s.n} rounds; 95% CI ${pct(s.ciLow)}-${pct(s.ciHigh)}%, middle half ${pct(s.q1)}-${pct(s.q3)}%, range ${pct(s.min)}-${pct(s.max)}%)`;
}
