/**
 * How the task dir's subdirectories change hands (task-user.ts, `shareTaskDir`), row by row: `local/`,
 * `secrets/` and `tmp/` end up the task user's, uid and gid both, whichever of the two they had already.
 * Needs root (chown); skipped otherwise.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, chownSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { shareTaskDir, type TaskUser } from '../../src/drivers/raw-exec/task-user.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const ALICE: TaskUser = { name: 'alice', uid: 4001, gid: 4002 };
const root = process.geteuid?.() === 0;

describe.runIf(root)('a subdirectory the task writes becomes the user\'s, uid and gid', () => {
  it.each([
    ['the agent\'s', 0, 0],
    ['the user\'s uid with another gid', ALICE.uid, 0],
    ['another uid with the user\'s gid', 0, ALICE.gid],
    ['the user\'s already', ALICE.uid, ALICE.gid],
  ])('from %s', (_what, uid, gid) => {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-share-'));
    dirs.push(dir);
    for (const sub of ['local', 'secrets', 'tmp']) {
      mkdirSync(join(dir, sub));
      chownSync(join(dir, sub), uid, gid);
    }
    shareTaskDir(dir, ALICE);
    for (const sub of ['local', 'secrets', 'tmp']) {
      const st = statSync(join(dir, sub));
      expect([sub, st.uid, st.gid]).toEqual([sub, ALICE.uid, ALICE.gid]);
    }
  });
});
