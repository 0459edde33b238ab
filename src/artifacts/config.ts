/**
 * The client's `artifact` block (Nomad's ArtifactConfig) as far as allocrun's getters use it, with Nomad's
 * defaults: how long one HTTP download may take, how large it may be, and how much an archive may unpack to.
 */

const GB = 1000 ** 3;

/** Limits on fetching and unpacking one artifact. */
export interface ArtifactConfig {
  /** Nomad's http_read_timeout: a download must complete within this (ms). */
  httpReadTimeout: number;
  /** Nomad's http_max_size: the largest download, in bytes. */
  httpMaxSize: number;
  /** Nomad's decompression_file_count_limit: the most entries one archive may unpack (0: no limit). */
  decompressionFileCountLimit: number;
  /** Nomad's decompression_size_limit: the most bytes one archive may unpack to (0: no limit). */
  decompressionSizeLimit: number;
}

/** Nomad's DefaultArtifactConfig: 30m, 100GB, 4096 files, 100GB. */
export const DEFAULT_ARTIFACT_CONFIG: Readonly<ArtifactConfig> = Object.freeze({
  httpReadTimeout: 30 * 60_000,
  httpMaxSize: 100 * GB,
  decompressionFileCountLimit: 4096,
  decompressionSizeLimit: 100 * GB,
});

/** The defaults with `given` on top; a value that is no non-negative number is refused with its name. */
export function artifactConfigOf(given: Partial<ArtifactConfig> = {}): ArtifactConfig {
  const config = { ...DEFAULT_ARTIFACT_CONFIG, ...given };
  for (const [key, value] of Object.entries(config)) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new TypeError(`artifact config: ${key} must be a non-negative number, got ${String(value)}`);
  }
  return config;
}

/** Bytes as Nomad's humanize prints them (`100 GB`, `1.5 MB`, `512 B`). */
export function formatBytes(n: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${i === 0 ? v : Number(v.toFixed(1))} ${units[i]}`;
}
