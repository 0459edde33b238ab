/**
 * A save reuses the inode the save before it replaced (src/state/replace-file.ts), so a reader that opened
 * `state.json` just before two saves may read that inode while it is rewritten. The name itself always
 * holds a whole record: a load that reads a torn text reads the file again and returns what it holds now,
 * and only a record that is damaged on the second read too is reported.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { AllocRecord } from '../../src/state/store.ts';

/** Paths whose next read returns a torn text instead of what the file holds. */
const torn = vi.hoisted(() => new Map<string, string>());
vi.mock('node:fs/promises', async (original) => {
  const real = await original<typeof import('node:fs/promises')>();
  return {
    ...real,
    readFile: (async (path: string, opts: unknown) => {
      const text = torn.get(path);
      if (text !== undefined) {
        torn.delete(path);
        return text;
      }
      return real.readFile(path, opts as BufferEncoding);
    }) as typeof real.readFile,
  };
});
const { FileStateStore } = await import('../../src/state/file-store.ts');

const dir = mkdtempSync(join(tmpdir(), 'allocrun-torn-read-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const record = (id: string, at: number): AllocRecord => ({
  spec: { id, job: 'j', group: 'g', type: 'batch', tasks: [{ name: 't', driver: 'mock', config: {} }] },
  state: { clientStatus: 'running', taskStates: {} },
  updatedAt: at,
});

describe('a load that reads a record being rewritten', () => {
  it('reads the file again and returns the whole record it holds', async () => {
    const store = new FileStateStore(dir);
    await store.save('a1', record('a1', 1));
    await store.save('a1', record('a1', 2));
    torn.set(store.statePath('a1'), '{"spec":{"id":"a1","jo');
    expect((await store.load('a1'))?.updatedAt).toBe(2);
    expect(torn.size).toBe(0);
  });

  it('reports a record that is damaged on the second read too, naming the file', async () => {
    const store = new FileStateStore(dir);
    await store.save('a2', record('a2', 1));
    const { writeFileSync } = await import('node:fs');
    writeFileSync(store.statePath('a2'), '{"spec":');
    await expect(store.load('a2')).rejects.toMatchObject({ name: 'StateStoreError', path: store.statePath('a2') });
  });
});
