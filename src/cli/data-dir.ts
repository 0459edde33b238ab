/**
 * Which data dir a command uses: `--data-dir`, else `$ALLOCRUN_DATA_DIR`, else (for `status`) the temp
 * dir the last `allocrun run` without `--data-dir` made, which `run` notes in a file under the OS temp dir.
 */
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CliError } from './errors.ts';

const LAST_RUN_FILE = join(tmpdir(), 'allocrun-last-data-dir');

/** A fresh data dir for a run with no `--data-dir`: nothing to clean up or collide with. */
export async function freshDataDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'allocrun-'));
}

/** Notes `dir` as the last run's, so a bare `allocrun status` finds it. Best effort: never fails a run. */
export async function rememberDataDir(dir: string): Promise<void> {
  await writeFile(LAST_RUN_FILE, `${resolve(dir)}\n`).catch(() => {});
}

/** The data dir a reading command should look in; throws a CliError saying how to name one. */
export async function dataDirFor(command: string, flag: string | undefined): Promise<string> {
  const dir = flag || process.env.ALLOCRUN_DATA_DIR;
  const source = flag ? '' : process.env.ALLOCRUN_DATA_DIR ? ' (from $ALLOCRUN_DATA_DIR)' : " (the last 'allocrun run')";
  const chosen = dir ? resolve(dir) : (await readFile(LAST_RUN_FILE, 'utf8').catch(() => '')).trim();
  if (!chosen) throw new CliError(`${command}: no data dir: pass --data-dir D (the one 'allocrun run' printed) or set ALLOCRUN_DATA_DIR`, 'ErrNoDataDir');
  const isDir = await stat(chosen).then((s) => s.isDirectory(), () => false);
  if (!isDir) throw new CliError(`${command}: data dir ${chosen}${source} does not exist; pass --data-dir D`, 'ErrNoDataDir');
  return chosen;
}
