/**
 * Who a user name is where there is no getent, and whether this process can switch users (task-user.ts),
 * rule by rule: a passwd(5) line is an account only with a name and numeric uid and gid; without getent the
 * agent reads /etc/passwd and answers as getent does (a name, or digits as a uid); and an agent that is not
 * root, runs where there are no user ids, or lacks setpriv says so.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parsePasswd, systemUserSwitching } from '../../src/drivers/raw-exec/task-user.ts';

describe('a passwd line is an account only with a name and a numeric uid and gid', () => {
  it.each([
    ['root:x:0:0:root:/root:/bin/bash', { name: 'root', uid: 0, gid: 0 }],
    ['nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin', { name: 'nobody', uid: 65534, gid: 65534 }],
    // Four fields are enough to name an account.
    ['svc:x:12:34', { name: 'svc', uid: 12, gid: 34 }],
    ['svc:x:12', undefined],
    ['', undefined],
    // NIS compat entries (`+`, `+name`, `-name`) carry no ids.
    ['+::::::', undefined],
    ['+svc::::::', undefined],
    [':x:1:1:::', undefined],
    ['svc:x:one:1:::', undefined],
    ['svc:x:1:one:::', undefined],
    ['svc:x:-1:1:::', undefined],
    ['svc:x:1:1.5:::', undefined],
    ['svc:x:1a:1:::', undefined],
    ['svc:x:1:a1:::', undefined],
    ['svc:x::1:::', undefined],
    ['svc:x:1::::', undefined],
  ])('%j', (line, account) => {
    expect(parsePasswd(line)).toEqual(account);
  });
});

describe('without getent, a name is looked up in /etc/passwd as getent would', () => {
  const names = ['root', '0', '00', 'nobody', '65534', '065534', '.0', '0.0', '0x0', '1e3', 'no-such-user-allocrun'];
  // Asked of getent first, with the agent's PATH.
  const byGetent = new Map(names.map((n) => [n, systemUserSwitching.lookup(n)]));
  const agentPath = process.env.PATH;
  afterEach(() => {
    process.env.PATH = agentPath;
  });

  it('getent knows root by name and by uid, and the rest as this machine has them', () => {
    expect([byGetent.get('root'), byGetent.get('00'), byGetent.get('0.0'), byGetent.get('1e3')]).toEqual([
      { name: 'root', uid: 0, gid: 0 },
      { name: 'root', uid: 0, gid: 0 },
      undefined,
      undefined,
    ]);
  });

  it.each(names)('%j', (name) => {
    // No getent on the PATH: the lookup falls back to reading /etc/passwd.
    process.env.PATH = '/nonexistent-allocrun';
    expect(systemUserSwitching.lookup(name)).toEqual(byGetent.get(name));
  });
});

describe('whether this process can switch users', () => {
  const geteuid = process.geteuid;
  afterEach(() => {
    process.geteuid = geteuid;
  });

  it('not as a user other than root', () => {
    process.geteuid = () => 1000;
    expect(systemUserSwitching.cannotSwitch()).toBe('allocrun runs as uid 1000, not root, so it cannot run a task as another user');
  });

  it('not on a platform without user ids', () => {
    process.geteuid = undefined;
    expect(systemUserSwitching.cannotSwitch()).toBe('this platform has no user ids to switch between');
  });

  it('not as root without setpriv, which does the switch', () => {
    process.geteuid = () => 0;
    const withoutSetpriv = { ...systemUserSwitching, setpriv: () => undefined };
    expect(systemUserSwitching.cannotSwitch.call(withoutSetpriv)).toBe('setpriv (util-linux) is not installed, and the agent switches users with it');
    expect(systemUserSwitching.cannotSwitch.call({ ...systemUserSwitching, setpriv: () => '/usr/bin/setpriv' })).toBeUndefined();
  });
});
