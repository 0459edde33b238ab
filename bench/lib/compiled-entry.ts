/**
 * Builds a bench entry (and the src/ it imports) into one plain JavaScript module, as an installed package
 * runs it. Memory figures need this: under tsx every function is wrapped to keep its name (esbuild's
 * keepNames), which gives each closure a dictionary of properties: about 5 KB per allocation in P4 that a
 * tsc build does not have. Packages stay external, so the module sits under node_modules/.cache to find them.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Bundles `entry` (a path from the repo root) and returns the path of the .mjs to run with plain node. */
export async function compiledEntry(entry: string): Promise<string> {
  const outdir = `${ROOT}node_modules/.cache/allocrun-bench`;
  mkdirSync(outdir, { recursive: true });
  const outfile = `${outdir}/${entry.replace(/[/\\]/g, '_').replace(/\.ts$/, '.mjs')}`;
  await build({
    entryPoints: [`${ROOT}${entry}`],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    keepNames: false,
    logLevel: 'error',
  });
  return outfile;
}
