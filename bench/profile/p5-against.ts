/**
 * The shared part of the A/Bs against another revision of src/inspect (p5-stream-ab.ts, p5-whole-ab.ts): puts
 * that revision's src/inspect beside a generated entry, bundles the entry as plain JavaScript (as the benches
 * measure) and runs it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compiledEntry } from '../lib/compiled-entry.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Runs `body` (TypeScript; `base` is the other revision's `createInspectionStream`, and `bench/profile/` is
 * `../../../../bench/profile/` from there) in its own process; returns its exit code. The files live under
 * node_modules/.cache/allocrun-bench/`name`, so the bundle finds xstate as this tree's modules do.
 */
export async function runAgainst(rev: string, name: string, body: string): Promise<number> {
  const dir = `node_modules/.cache/allocrun-bench/${name}`;
  rmSync(`${ROOT}${dir}`, { recursive: true, force: true });
  mkdirSync(`${ROOT}${dir}/base`, { recursive: true });
  const archive = execFileSync('git', ['archive', rev, 'src/inspect'], { cwd: ROOT });
  execFileSync('tar', ['-x', '--strip-components=2', '-C', `${ROOT}${dir}/base`], { input: archive });
  writeFileSync(`${ROOT}${dir}/entry.ts`, `import { createInspectionStream as base } from './base/inspection-stream.ts';\n${body}`);
  const out = await compiledEntry(`${dir}/entry.ts`);
  return spawnSync(process.execPath, [out], { stdio: 'inherit' }).status ?? 1;
}
