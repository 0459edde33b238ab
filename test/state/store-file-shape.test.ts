/**
 * An agent store file is checked before LMDB maps it (checkFileShape in src/state/agent-store.ts), since
 * LMDB trusts the file and faults the process on a bad one: too small, no valid page size, a size that is
 * not whole pages, a meta page without LMDB's mark, or fewer pages than the newest transaction uses, each
 * refused by name as a StoreDamagedError that says what to do, and the file left as it is.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentStore, STORE_FILE } from '../../src/state/agent-store.ts';

const FIX = "It was left as it is; move it aside to start empty, or restore a snapshot ('allocrun operator snapshot restore')";
/** Where LMDB keeps the meta fields in a meta page (as the store reads them). */
const META = { flags: 18, magic: 24, pageSize: 48, lastPage: 144, txnId: 152 };

let dir: string;
let good: Buffer;
let page: number;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'allocrun-shape-'));
  const store = AgentStore.open(dir);
  await store.commit((tx) => tx.put('jobs', 'web', { id: 'web' }));
  await store.close();
  good = readFileSync(join(dir, STORE_FILE));
  page = good.readUInt32LE(META.pageSize);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** Writes `bytes` as a store file of its own and opens it; the error it is refused with, if any. */
function openBytes(bytes: Buffer): { path: string; err: unknown } {
  const path = join(dir, `copy-${n++}.mdb`);
  writeFileSync(path, bytes);
  try {
    const s = AgentStore.openFile(path, { readOnly: true });
    void s.close();
    return { path, err: undefined };
  } catch (err) {
    return { path, err };
  }
}

function edited(edit: (b: Buffer) => Buffer | void): Buffer {
  const b = Buffer.from(good);
  return edit(b) ?? b;
}

describe('a store file that is not whole', () => {
  it('an intact copy opens', () => {
    expect(openBytes(good).err).toBeUndefined();
  });

  it.each<[string, () => Buffer, (page: number, size: number) => string]>([
    ['shorter than a meta page header', () => good.subarray(0, 159), () => 'its size (159 bytes) is too small for an LMDB store'],
    ['just a meta page header: no room for two pages', () => good.subarray(0, 160), () => 'it is not an LMDB store (no valid page size in its first meta page)'],
    ['a page size below 512', () => edited((b) => void b.writeUInt32LE(256, META.pageSize)), () => 'it is not an LMDB store (no valid page size in its first meta page)'],
    ['a page size above 65536', () => edited((b) => void b.writeUInt32LE(131072, META.pageSize)), () => 'it is not an LMDB store (no valid page size in its first meta page)'],
    ['a page size that is not a power of two', () => edited((b) => void b.writeUInt32LE(3000, META.pageSize)), () => 'it is not an LMDB store (no valid page size in its first meta page)'],
    ['one page only', () => good.subarray(0, page), () => 'it is not an LMDB store (no valid page size in its first meta page)'],
    ['a size that is not whole pages', () => Buffer.concat([good, Buffer.alloc(100)]), (p, size) => `its size (${size} bytes) is not a whole number of ${p}-byte pages: it was cut short`],
    ['no LMDB mark in meta page 0', () => edited((b) => void b.writeUInt32LE(0, META.magic)), () => 'it is not an LMDB store (meta page 0 has no LMDB mark)'],
    ['no LMDB mark in meta page 1', () => edited((b) => void b.writeUInt32LE(0, page + META.magic)), () => 'it is not an LMDB store (meta page 1 has no LMDB mark)'],
    ['meta page 0 not flagged as a meta page', () => edited((b) => void b.writeUInt16LE(b.readUInt16LE(META.flags) & ~0x08, META.flags)), () => 'it is not an LMDB store (meta page 0 has no LMDB mark)'],
  ])('refuses a file %s, by name', (_what, bytes, why) => {
    const b = bytes();
    const { path, err } = openBytes(b);
    expect(err).toMatchObject({ name: 'StoreDamagedError', code: 'ErrStoreDamaged', path, message: `${path} is damaged: ${why(page, b.length)}. ${FIX}` });
    expect(readFileSync(path).equals(b), 'left as it is').toBe(true);
  });

  it('the page size may be 512 or 65536: the checks after it decide', () => {
    // 512: the second meta page is then looked for 512 bytes in, where there is none.
    expect(openBytes(edited((b) => void b.writeUInt32LE(512, META.pageSize))).err).toMatchObject({ message: expect.stringContaining('meta page 1 has no LMDB mark') });
    const big = edited((b) => Buffer.concat([b, Buffer.alloc(2 * 65536 - b.length)]));
    big.writeUInt32LE(65536, META.pageSize);
    expect(openBytes(big).err).toMatchObject({ message: expect.stringContaining('meta page 1 has no LMDB mark') });
  });

  it('a page size above 65536 is refused even in a file big enough for two such pages', () => {
    const huge = edited((b) => Buffer.concat([b, Buffer.alloc(2 * 131072 - b.length)]));
    huge.writeUInt32LE(131072, META.pageSize);
    expect(openBytes(huge).err).toMatchObject({ message: expect.stringContaining('it is not an LMDB store (no valid page size in its first meta page)') });
  });

  it('exactly two pages are enough room for the meta pages: the page count decides', () => {
    const b = edited((x) => x.subarray(0, 2 * page));
    b.writeBigUInt64LE(5n, META.lastPage);
    b.writeBigUInt64LE(5n, page + META.lastPage);
    expect(openBytes(b).err).toMatchObject({ message: expect.stringContaining(`it holds 2 pages but its newest transaction uses 6: it was cut short`) });
  });

  /** Meta pages with these transaction ids and last pages (the rest of the file as it was). */
  function metas(txn0: bigint, last0: bigint, txn1: bigint, last1: bigint): Buffer {
    return edited((b) => {
      b.writeBigUInt64LE(txn0, META.txnId);
      b.writeBigUInt64LE(last0, META.lastPage);
      b.writeBigUInt64LE(txn1, page + META.txnId);
      b.writeBigUInt64LE(last1, page + META.lastPage);
    });
  }

  it.each<[string, [bigint, bigint, bigint, bigint], number]>([
    ['meta page 0 is newer', [10n, 99n, 9n, 1n], 100],
    ['meta page 1 is newer', [9n, 1n, 10n, 199n], 200],
    ['both are as new: meta page 0 counts', [10n, 299n, 10n, 1n], 300],
  ])('counts the pages of the newest transaction: %s', (_which, [t0, l0, t1, l1], uses) => {
    const b = metas(t0, l0, t1, l1);
    const { path, err } = openBytes(b);
    expect(err).toMatchObject({ message: `${path} is damaged: it holds ${b.length / page} pages but its newest transaction uses ${uses}: it was cut short. ${FIX}` });
  });
});
