// The benchmarks' scratch dirs: removed at once when a benchmark runs alone, listed for the end under run-all.
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { DISCARD_LIST_ENV, discard, discardListed, probeFileSystem, scratchDir } from '../../bench/lib/scratch.ts';

describe('bench scratch dirs', () => {
  afterEach(() => {
    delete process.env[DISCARD_LIST_ENV];
  });

  it('a benchmark run alone removes its dir at once', async () => {
    const dir = await scratchDir('allocrun-scratch-test-');
    await discard(dir);
    expect(existsSync(dir)).toBe(false);
  });

  it('under run-all a dir is listed, kept, and removed with the others at the end', async () => {
    const listDir = await scratchDir('allocrun-scratch-list-');
    const list = `${listDir}/scratch-dirs`;
    process.env[DISCARD_LIST_ENV] = list;
    const a = await scratchDir('allocrun-scratch-test-');
    const b = await scratchDir('allocrun-scratch-test-');
    await discard(a);
    await discard(b);
    expect(existsSync(a) && existsSync(b)).toBe(true);
    expect(readFileSync(list, 'utf8')).toBe(`${a}\n${b}\n`);
    expect(await discardListed(list)).toBe(2);
    expect(existsSync(a) || existsSync(b)).toBe(false);
    delete process.env[DISCARD_LIST_ENV];
    await discard(listDir);
  });

  it('the file system probe makes its dirs and files and names the file system', async () => {
    const dir = await scratchDir('allocrun-scratch-probe-');
    const probe = probeFileSystem(dir);
    expect(existsSync(`${dir}/fs-probe/d99/f`)).toBe(true);
    expect(probe.perDirAndFileUs).toBeGreaterThan(0);
    // Linux names every mount in /proc/self/mountinfo; the temp dir is on one of them.
    if (existsSync('/proc/self/mountinfo')) expect(probe.kind).not.toBe('unknown');
    await discard(dir);
  });
});
