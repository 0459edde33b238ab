/**
 * Who a user name is, asked of getent (task-user.ts, `systemUserSwitching.lookup`), against a getent of the
 * test's on the agent's PATH that answers for `alice` (uid 4001) and says "no such key" (exit 2) for anyone
 * else: getent's answer is the answer, its "no such key" included (/etc/passwd is read only where there is no
 * getent), and a name that getent could take for an option, or that no passwd line can hold, is never handed
 * to it.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemUserSwitching } from '../../src/drivers/raw-exec/task-user.ts';
import { leftoversRemovedAfterEach } from './raw-exec-leftovers.ts';

const { dirs } = leftoversRemovedAfterEach();
const agentPath = process.env.PATH;
/** Each test's getent dir; `calls` there holds the arguments of every call, one line each. */
let getentDir = '';

beforeEach(() => {
  getentDir = mkdtempSync(join(tmpdir(), 'allocrun-getent-'));
  dirs.push(getentDir);
  const getent = join(getentDir, 'getent');
  writeFileSync(
    getent,
    [
      '#!/bin/sh',
      `printf '%s\\n' "$*" >> ${join(getentDir, 'calls')}`,
      '[ "$1" = passwd ] || exit 1',
      'case "$2" in',
      '  alice|4001) echo "alice:x:4001:4002:Alice:/home/alice:/bin/sh" ;;',
      '  *) exit 2 ;;',
      'esac',
      '',
    ].join('\n'),
  );
  chmodSync(getent, 0o755);
  process.env.PATH = `${getentDir}:/usr/bin:/bin`;
});
afterEach(() => {
  process.env.PATH = agentPath;
});

const calls = (): string[] => (existsSync(join(getentDir, 'calls')) ? readFileSync(join(getentDir, 'calls'), 'utf8').split('\n').filter(Boolean) : []);

describe('getent\'s answer is the answer', () => {
  it.each([
    ['alice', 'alice'],
    ['4001', 'alice'],
  ])('%j is who getent says', (name, who) => {
    expect(systemUserSwitching.lookup(name)).toEqual({ name: who, uid: 4001, gid: 4002 });
    expect(calls()).toEqual([`passwd ${name}`]);
  });

  it('"no such key" too: root, whom /etc/passwd holds but this getent does not know, is no one', () => {
    expect(systemUserSwitching.lookup('root')).toBeUndefined();
    expect(calls()).toEqual(['passwd root']);
  });
});

describe('a name getent could take for an option, or no passwd line can hold, never reaches it', () => {
  it.each(['', '-', '-alice', '--help', 'al:ice', 'al ice', 'al\tice', 'al\nice', 'al/ice', 'alice '])('%j is no one, getent unasked', (name) => {
    expect(systemUserSwitching.lookup(name)).toBeUndefined();
    expect(calls()).toEqual([]);
  });
});
