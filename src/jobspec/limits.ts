/**
 * The bounds a job file is parsed within, so a hostile or broken file costs a clear error instead of the
 * process: its size, its nesting, and how long the HCL parser may take. Real job files are a few KB,
 * nest a dozen levels and parse in milliseconds; the defaults are far above that.
 */

/** Limits for one parse; every field has a default (DEFAULT_PARSE_LIMITS). */
export interface ParseLimits {
  /** Bytes (UTF-8) a job file may have. Default 4 MiB. */
  maxBytes: number;
  /** Levels of blocks, lists and maps (and HCL brackets and templates) a file may nest. Default 100. */
  maxDepth: number;
  /** Milliseconds the HCL parser may run before it is stopped. Default 10 s. */
  parseTimeoutMs: number;
}

/** The defaults: far above any real job file, far below what would hurt the process. */
export const DEFAULT_PARSE_LIMITS: Readonly<ParseLimits> = Object.freeze({
  maxBytes: 4 * 1024 * 1024,
  maxDepth: 100,
  parseTimeoutMs: 10_000,
});

/** The defaults overlaid with the fields a caller set. */
export function parseLimits(overrides: Partial<ParseLimits> = {}): ParseLimits {
  const defined = Object.entries(overrides).filter(([, v]) => v !== undefined);
  return { ...DEFAULT_PARSE_LIMITS, ...Object.fromEntries(defined) };
}

/** A size for a message: `5.2 MiB`, `900 KiB`, `12 bytes`. */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${+(n / 1024 / 1024).toFixed(1)} MiB`;
  if (n >= 1024) return `${+(n / 1024).toFixed(1)} KiB`;
  return `${n} bytes`;
}
