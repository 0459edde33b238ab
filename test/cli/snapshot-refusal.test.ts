/**
 * What `operator snapshot restore` says of a file the store refuses (rows): built from the store's structured
 * problem, about the user's file, never naming the temporary copy the restore checked or how to recover a data dir.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { snapshotRefusal } from '../../src/cli/snapshot-refusal.ts';
import { AgentStore, StoreDamagedError } from '../../src/state/agent-store.ts';
import { tempDir } from '../temp-dirs.ts';

const dir = tempDir('allocrun-refusal-');
const USER_FILE = '/home/me/backup.snap';
let n = 0;

/** The copy a restore would check, made by `make` at a fresh path; what opening it threw. */
async function refusedCopy(make: (copy: string) => Promise<void> | void): Promise<{ copy: string; err: unknown }> {
  const copy = join(dir, `state.mdb.partial-${n++}`);
  await make(copy);
  try {
    void AgentStore.openFile(copy, { readOnly: true, create: false }).close();
  } catch (err) {
    return { copy, err };
  }
  throw new Error(`${copy} opened`);
}

/** A real store file at `copy` holding what `write` puts there. */
async function storeAt(copy: string, write: (s: AgentStore) => Promise<void>): Promise<void> {
  const s = AgentStore.openFile(copy);
  await write(s);
  await s.close();
}

describe('snapshotRefusal', () => {
  it.each<[string, (copy: string) => Promise<void> | void, object, string]>([
    ['text that is no store (as pinned by the restore\'s own test)', (copy) => writeFileSync(copy, 'not a store at all\n'.repeat(1000)),
      { kind: 'damaged', why: 'it is not an LMDB store (no valid page size in its first meta page)' },
      `${USER_FILE} is not an allocrun snapshot: the file is damaged: it is not an LMDB store (no valid page size in its first meta page)`],
    ['an empty file', (copy) => writeFileSync(copy, ''),
      { kind: 'damaged', why: 'its size (0 bytes) is too small for an LMDB store' },
      `${USER_FILE} is not an allocrun snapshot: the file is damaged: its size (0 bytes) is too small for an LMDB store`],
    ['a store a newer allocrun wrote: said once, without the store\'s "left as it is" about the copy',
      (copy) => storeAt(copy, (s) => s.commit((tx) => tx.put('meta', 'schema', 99))),
      { kind: 'newer-layout', layout: 99, reads: 1 },
      `${USER_FILE} is not an allocrun snapshot: the file was written by a newer allocrun (store layout 99, this one reads 1)`],
    ['a layout mark that does not parse', (copy) => storeAt(copy, async (s) => {
      await (s as unknown as { tables: Record<string, { put(k: string, v: Buffer): Promise<boolean> }> }).tables['meta']!.put('schema', Buffer.from('{'));
    }),
      { kind: 'value', table: 'meta', key: 'schema', why: expect.stringMatching(/^not valid JSON: /) },
      `${USER_FILE} is damaged: meta/schema is not valid JSON: `],
  ])('%s', async (_name, make, problem, message) => {
    const { copy, err } = await refusedCopy(make);
    // The store's error carries the cause as data, beside its own message about the copy.
    expect(err).toBeInstanceOf(StoreDamagedError);
    expect((err as StoreDamagedError).problem).toEqual(problem);
    expect((err as StoreDamagedError).message.startsWith(copy)).toBe(true);
    const refusal = snapshotRefusal(USER_FILE, copy, err);
    expect(refusal).toMatchObject({ code: 'ErrBadSnapshot' });
    expect(refusal.message.startsWith(message)).toBe(true);
    expect(refusal.message).not.toContain(copy);
    expect(refusal.message).not.toMatch(/left as it is|move it aside/i);
  });

  it('names the file for the library\'s words about the copy when LMDB refuses it', () => {
    const copy = join(dir, 'state.mdb.partial-9');
    const err = new StoreDamagedError('(the store\'s message)', copy, { problem: { kind: 'unopenable', detail: `${copy}: MDB_INVALID: File is not an LMDB file` } });
    expect(snapshotRefusal(USER_FILE, copy, err).message).toBe(`${USER_FILE} is not an allocrun snapshot: the file cannot be opened as the agent's store: the file: MDB_INVALID: File is not an LMDB file`);
  });

  it('says a missing file does not exist', () => {
    const err = new StoreDamagedError('(the store\'s message)', '/x', { problem: { kind: 'missing' } });
    expect(snapshotRefusal(USER_FILE, '/x', err)).toMatchObject({ code: 'ErrNoSnapshot', message: `${USER_FILE} does not exist` });
  });

  it('gives an error that is not the store\'s verdict in the system\'s words, about the user\'s file', () => {
    const copy = join(dir, 'state.mdb.partial-10');
    const refusal = snapshotRefusal(USER_FILE, copy, new Error(`EACCES: permission denied, open '${copy}'`));
    expect(refusal.message).toBe(`${USER_FILE} is not an allocrun snapshot: EACCES: permission denied, open 'the file'`);
  });
});
