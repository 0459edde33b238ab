// P5's figure is the median of per-round ratios with its spread (bench/lib/ratio-spread.ts).
import { describe, expect, it } from 'vitest';
import { formatRatioSpread, ratioSpread } from '../../bench/lib/ratio-spread.ts';

describe('ratioSpread', () => {
  it('takes the middle round of an odd count and the mean of the middle two of an even one', () => {
    expect(ratioSpread([0.9, 0.7, 0.8]).median).toBeCloseTo(0.8);
    expect(ratioSpread([0.9, 0.7, 0.8, 0.6]).median).toBeCloseTo(0.75);
  });

  it('is not dragged by a few wild rounds, as a ratio of means would be', () => {
    const rounds = [...Array.from({ length: 30 }, (_, i) => 0.8 + (i % 5) * 0.01), 0.3, 0.35, 1.6];
    const s = ratioSpread(rounds);
    expect(s.median).toBeCloseTo(0.82);
    expect(s.min).toBe(0.3);
    expect(s.max).toBe(1.6);
    expect(s.ciLow).toBeGreaterThanOrEqual(0.8);
    expect(s.ciHigh).toBeLessThanOrEqual(0.84);
  });

  it('brackets the median by order statistics that narrow as rounds are added', () => {
    const spreadOver = (n: number) => ratioSpread(Array.from({ length: n }, (_, i) => 0.6 + (0.4 * i) / (n - 1)));
    const few = spreadOver(9);
    const many = spreadOver(41);
    for (const s of [few, many]) {
      expect(s.ciLow).toBeLessThanOrEqual(s.median);
      expect(s.ciHigh).toBeGreaterThanOrEqual(s.median);
      expect(s.q1).toBeLessThanOrEqual(s.median);
      expect(s.q3).toBeGreaterThanOrEqual(s.median);
    }
    expect(many.ciHigh - many.ciLow).toBeLessThan(few.ciHigh - few.ciLow);
    // 41 rounds: the 14th and 28th smallest (41/2 ∓ 0.98·√41, rounded outwards), 0.6 + 0.4·13/40 and 0.6 + 0.4·27/40.
    expect(many.ciLow).toBeCloseTo(0.73);
    expect(many.ciHigh).toBeCloseTo(0.87);
  });

  it('with two rounds, says the median lies anywhere between them', () => {
    const s = ratioSpread([0.7, 0.9]);
    expect([s.ciLow, s.ciHigh]).toEqual([0.7, 0.9]);
  });

  it('refuses no rounds, and ratios that are not positive numbers', () => {
    expect(() => ratioSpread([])).toThrow(/no rounds/);
    expect(() => ratioSpread([0.8, Number.NaN])).toThrow(/positive number/);
    expect(() => ratioSpread([0.8, 0])).toThrow(/positive number/);
  });

  it('prints the median, its interval and the rounds spread as percentages', () => {
    expect(formatRatioSpread(ratioSpread([0.7, 0.8, 0.9]))).toBe('80.0% (median of 3 rounds; 95% CI 70-90%, middle half 70-90%, range 70-90%)');
  });
});
