/**
 * Builds the visualizer page into visualizer/dist (index.html + app.js, self-contained: elkjs's bundled
 * build is inlined into app.js, no CDN). `node visualizer/build.mjs [--outdir DIR]`; also importable as `buildVisualizer`.
 */
import { build } from 'esbuild';
import { copyFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

/** Bundles src/main.ts into `outdir`/app.js and copies index.html next to it. */
export async function buildVisualizer({ outdir = here('./dist/'), minify = true } = {}) {
  await mkdir(outdir, { recursive: true });
  await build({
    entryPoints: [here('./src/main.ts')],
    outfile: `${outdir}/app.js`,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: ['chrome100', 'firefox100', 'safari15'],
    minify,
    legalComments: 'eof',
    logLevel: 'warning',
  });
  await copyFile(here('./index.html'), `${outdir}/index.html`);
  return outdir;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // `--outdir DIR` builds elsewhere (tests build their own copy, so parallel runs never share files).
  const i = process.argv.indexOf('--outdir');
  const out = await buildVisualizer(i > 0 && process.argv[i + 1] ? { outdir: process.argv[i + 1] } : {});
  console.log(`visualizer built into ${out}`);
}
