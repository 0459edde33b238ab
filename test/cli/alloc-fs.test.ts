/**
 * `allocrun alloc fs` (src/cli/alloc-fs.ts), Nomad's `nomad alloc fs`: sizes as go-humanize prints them, and the
 * command against an in-process agent: a listing, a file, -stat, -tail, and a path out of the directory refused.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { humanSize } from '../../src/cli/alloc-fs.ts';
import { cleanUp, mockJob, runJob, serve } from '../api/in-process-agent.ts';
import { runCli } from './spawn-cli.ts';

afterAll(cleanUp);

describe('sizes as Nomad prints them (go-humanize IBytes)', () => {
  it.each<[number, boolean, string]>([
    [0, false, '0 B'],
    [9, false, '9 B'],
    [12, false, '12 B'],
    [1023, false, '1023 B'],
    [1024, false, '1.0 KiB'],
    [4096, false, '4.0 KiB'],
    [10 * 1024, false, '10 KiB'],
    [1536 * 1024, false, '1.5 MiB'],
    [4096, true, '4096'],
  ])('%d bytes (machine %s) → %s', (bytes, machine, shown) => {
    expect(humanSize(bytes, machine)).toBe(shown);
  });
});

describe('alloc fs against an agent', () => {
  it('lists a directory, prints a file, describes a path with -stat, tails it, and refuses a path out', async () => {
    const s = await serve();
    const alloc = await runJob(s, mockJob('fsjob'));
    const local = join(s.dataDir, 'allocs', alloc.ID, 't', 'local');
    mkdirSync(local, { recursive: true });
    writeFileSync(join(local, 'notes.txt'), 'one\ntwo\nthree\n');
    const fs = (...args: string[]) => runCli(['alloc', 'fs', '--data-dir', s.dataDir, ...args], { timeoutMs: 60_000 });
    const [root, file, stat, tail, out] = await Promise.all([
      fs(alloc.ID.slice(0, 8)),
      fs(alloc.ID, 't/local/notes.txt'),
      fs('-stat', '-H', alloc.ID, 't/local/notes.txt'),
      fs('-tail', '-n', '2', alloc.ID, 't/local/notes.txt'),
      fs(alloc.ID, '../..'),
    ]);
    expect(root.code, root.stderr).toBe(0);
    const listing = root.stdout.trimEnd().split('\n');
    expect(listing[0]).toMatch(/^Mode +Size +Modified Time +Name$/);
    expect(listing.slice(1).map((l) => l.split(/\s+/).at(-1))).toEqual(expect.arrayContaining(['alloc/', 't/']));
    expect([file.code, file.stdout]).toEqual([0, 'one\ntwo\nthree\n']);
    expect(stat.code, stat.stderr).toBe(0);
    expect(stat.stdout.split('\n')[0]).toMatch(/^Mode +Size +Modified Time +Content Type +Name$/);
    expect(stat.stdout.split('\n')[1]).toMatch(/^-rw\S* +14 +\S+ +application\/octet-stream +notes\.txt$/);
    expect([tail.code, tail.stdout]).toEqual([0, 'two\nthree\n']);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain('".." is not allowed');
  });
});
