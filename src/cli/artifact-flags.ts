/**
 * The agent's artifact limits on its command line, named after Nomad's client `artifact` block
 * (http_read_timeout, http_max_size, decompression_size_limit, decompression_file_count_limit): durations as
 * Go writes them ("30m"), sizes as Nomad's humanize reads them ("100GB", "512MiB", a plain byte count).
 */
import type { ArtifactConfig } from '../artifacts/config.ts';
import { DurationError, parseDuration } from '../jobspec/duration.ts';
import { UsageError } from './errors.ts';

/** parseArgs options for the flags. */
export const ARTIFACT_FLAG_OPTIONS = {
  'artifact-http-read-timeout': { type: 'string' },
  'artifact-http-max-size': { type: 'string' },
  'artifact-decompression-size-limit': { type: 'string' },
  'artifact-decompression-file-count-limit': { type: 'string' },
} as const;

/** The flags' lines of the agent's help. */
export const ARTIFACT_FLAGS_HELP = `  --artifact-http-read-timeout D           an artifact download must finish within D (default 30m)
  --artifact-http-max-size SIZE            the largest artifact download (default 100GB)
  --artifact-decompression-size-limit SIZE the most an archive may unpack to (default 100GB; 0: none)
  --artifact-decompression-file-count-limit N  the most files an archive may hold (default 4096; 0: none)`;

const UNITS: Record<string, number> = {
  '': 1, b: 1, k: 1e3, kb: 1e3, m: 1e6, mb: 1e6, g: 1e9, gb: 1e9, t: 1e12, tb: 1e12,
  ki: 1024, kib: 1024, mi: 1024 ** 2, mib: 1024 ** 2, gi: 1024 ** 3, gib: 1024 ** 3, ti: 1024 ** 4, tib: 1024 ** 4,
};

/** A size as go-humanize's ParseBytes reads it (`100GB` = 100·10⁹, `512MiB` = 512·2²⁰), in bytes; undefined when it is none. */
export function parseSize(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) return undefined;
  return Math.round(Number(m[1]) * unit);
}

type Values = Partial<Record<keyof typeof ARTIFACT_FLAG_OPTIONS, string>>;

/** The limits the flags set (none given: an empty object, Nomad's defaults apply); a bad value is a UsageError naming its flag. */
export function artifactConfigFromFlags(values: Values): Partial<ArtifactConfig> {
  const out: Partial<ArtifactConfig> = {};
  const bad = (flag: string, value: string, want: string) => new UsageError(`agent: --${flag} ${JSON.stringify(value)}: ${want}`, 'agent');
  const timeout = values['artifact-http-read-timeout'];
  if (timeout !== undefined) {
    try {
      out.httpReadTimeout = parseDuration(timeout);
    } catch (err) {
      if (!(err instanceof DurationError)) throw err;
      throw bad('artifact-http-read-timeout', timeout, 'expected a duration such as "30m" or "90s"');
    }
    if (!(out.httpReadTimeout > 0)) throw bad('artifact-http-read-timeout', timeout, 'must be more than 0s');
  }
  for (const [flag, key] of [['artifact-http-max-size', 'httpMaxSize'], ['artifact-decompression-size-limit', 'decompressionSizeLimit']] as const) {
    const value = values[flag];
    if (value === undefined) continue;
    const bytes = parseSize(value);
    if (bytes === undefined) throw bad(flag, value, 'expected a size such as "100GB", "512MiB" or a number of bytes');
    if (key === 'httpMaxSize' && bytes === 0) throw bad(flag, value, 'must be more than 0 bytes');
    out[key] = bytes;
  }
  const count = values['artifact-decompression-file-count-limit'];
  if (count !== undefined) {
    if (!/^\d+$/.test(count.trim())) throw bad('artifact-decompression-file-count-limit', count, 'expected a whole number of files (0: no limit)');
    out.decompressionFileCountLimit = Number(count);
  }
  return out;
}
