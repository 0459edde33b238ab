/** Text width in the chart's font, measured on a canvas so ELK reserves the right space for labels. */
import type { MeasureText } from './chart-layout.ts';

/** A measurer for `font` (must match the chart's CSS). */
export function canvasMeasure(font: string): MeasureText {
  const ctx = document.createElement('canvas').getContext('2d');
  if (!ctx) return (s) => s.length * 6.5;
  ctx.font = font;
  const cache = new Map<string, number>();
  return (s) => {
    let w = cache.get(s);
    if (w === undefined) {
      w = ctx.measureText(s).width;
      cache.set(s, w);
    }
    return w;
  };
}
