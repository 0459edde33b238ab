/**
 * Command-line options every benchmark takes: `--quick` for a smoke-sized run (seconds, not minutes),
 * `--rounds N`, and `--n N` for the size of the fleet.
 */

/** Parsed benchmark options. */
export interface BenchArgs {
  quick: boolean;
  rounds: number;
  n: number;
}

/** Reads `argv` (default: this process's) with the full and the quick sizes of one benchmark. */
export function benchArgs(defaults: { n: number; quickN: number; rounds?: number }, argv = process.argv.slice(2)): BenchArgs {
  const quick = argv.includes('--quick');
  const value = (flag: string): number | undefined => {
    const i = argv.indexOf(flag);
    if (i < 0) return undefined;
    const v = Number(argv[i + 1]);
    if (!Number.isInteger(v) || v < 1) throw new Error(`${flag} needs a positive whole number, got ${JSON.stringify(argv[i + 1])}`);
    return v;
  };
  return {
    quick,
    rounds: value('--rounds') ?? (quick ? 1 : defaults.rounds ?? 3),
    n: value('--n') ?? (quick ? defaults.quickN : defaults.n),
  };
}

/** True when the module at `url` is the script node was started with (not imported by another). */
export function isMain(url: string): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  return new URL(url).pathname === entry || new URL(url).pathname.replace(/\.ts$/, '') === entry.replace(/\.ts$/, '');
}
