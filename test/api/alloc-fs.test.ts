/**
 * Issue 26, point 5: the allocation filesystem as `nomad alloc fs` reads it (ls, stat, cat, readat, stream),
 * confined to the allocation directory: `..`, symlinks out of it and host paths never reach outside.
 * A real raw_exec task writes the files; the agent runs in process over its socket.
 */
import { appendFile, symlink, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, stream, waitForAllocs, type Alloc } from './agent-process.ts';
import { cleanUp, running, serve, until, type Served } from './in-process-agent.ts';

let s: Served;
let alloc: Alloc;
let taskLocal: string;

beforeAll(async () => {
  s = await serve();
  const script = 'printf hello > "$NOMAD_TASK_DIR/greeting.txt"; echo started; exec sleep 3600';
  const body = { Job: { ID: 'fs', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'raw_exec', KillTimeout: 1e9, Config: { command: '/bin/sh', args: ['-c', script] } }] }] } };
  expect((await call(s.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
  [alloc] = (await waitForAllocs(s.socket, '/v1/job/fs/allocations', running)) as [Alloc];
  taskLocal = join(s.dataDir, 'allocs', alloc.ID, 't', 'local');
  await until(async () => (await call(s.socket, 'GET', `/v1/client/fs/cat/${alloc.ID}?path=/t/local/greeting.txt`)).text, (t) => t === 'hello', 'the task to write its file');
}, 60_000);
afterAll(cleanUp);

const get = (path: string) => call(s.socket, 'GET', path);

describe('alloc fs', { timeout: 60_000 }, () => {
  it('ls lists a directory with Nomad\'s file info, the root by default', async () => {
    const root = (await get(`/v1/client/fs/ls/${alloc.ID}`)).json<{ Name: string; IsDir: boolean; FileMode: string }[]>();
    expect(root.map((f) => f.Name)).toEqual(expect.arrayContaining(['alloc', 't']));
    expect(root.find((f) => f.Name === 'alloc')).toMatchObject({ IsDir: true, FileMode: expect.stringMatching(/^drwx/) });
    const local = (await get(`/v1/client/fs/ls/${alloc.ID}?path=/t/local`)).json();
    expect(local).toEqual([expect.objectContaining({ Name: 'greeting.txt', IsDir: false, Size: 5, FileMode: expect.stringMatching(/^-rw/), ModTime: expect.any(String) })]);
  });

  it('stat describes one file; cat reads it; readat reads offset and limit', async () => {
    expect((await get(`/v1/client/fs/stat/${alloc.ID}?path=t/local/greeting.txt`)).json()).toMatchObject({ Name: 'greeting.txt', IsDir: false, Size: 5 });
    expect((await get(`/v1/client/fs/cat/${alloc.ID}?path=/t/local/greeting.txt`)).text).toBe('hello');
    expect((await get(`/v1/client/fs/readat/${alloc.ID}?path=/t/local/greeting.txt&offset=1&limit=3`)).text).toBe('ell');
    expect((await get(`/v1/client/fs/readat/${alloc.ID}?path=/t/local/greeting.txt&offset=4`)).text).toBe('o');
    expect((await get(`/v1/client/fs/readat/${alloc.ID}?path=/t/local/greeting.txt&offset=9&limit=3`)).text).toBe('');
  });

  it('streams a file as Nomad frames and follows what is appended', async () => {
    const path = join(taskLocal, 'grow.txt');
    await appendFile(path, 'one\n');
    const st = await stream(s.socket, `/v1/client/fs/stream/${alloc.ID}?path=/t/local/grow.txt&follow=true`);
    expect(st.status).toBe(200);
    const decoded = () => st.text().split('\n').filter((l) => l.startsWith('{"Offset"')).map((l) => JSON.parse(l) as { Offset: number; Data: string; File: string });
    await st.until(() => decoded().some((f) => f.Data !== ''));
    await appendFile(path, 'two\n');
    await st.until(() => decoded().map((f) => Buffer.from(f.Data, 'base64').toString()).join('') === 'one\ntwo\n');
    expect(decoded().at(-1)).toMatchObject({ Offset: 8, File: 't/local/grow.txt' });
    await truncate(path, 0);
    await st.until((t) => t.includes('"FileEvent":"file truncated"'));
    st.close();
  });

  it('streams plain bytes from the end without following', async () => {
    const res = await get(`/v1/client/fs/stream/${alloc.ID}?path=/t/local/greeting.txt&plain=true&follow=false&origin=end&offset=2`);
    expect(res.text).toBe('lo');
  });

  it('never reads outside the allocation directory', async () => {
    const dotdot = await get(`/v1/client/fs/cat/${alloc.ID}?path=/t/../../../../etc/passwd`);
    expect([dotdot.status, dotdot.text]).toEqual([400, 'path "/t/../../../../etc/passwd" leaves the allocation directory: ".." is not allowed']);
    // A host path is a path in the allocation directory, as in Nomad: there is no /etc there.
    expect((await get(`/v1/client/fs/cat/${alloc.ID}?path=/etc/passwd`)).status).toBe(404);
    await symlink('/etc', join(taskLocal, 'out'));
    for (const verb of ['cat', 'stat', 'ls', 'readat', 'stream']) {
      const res = await get(`/v1/client/fs/${verb}/${alloc.ID}?path=/t/local/out/passwd${verb === 'readat' ? '&offset=0' : ''}${verb === 'stream' ? '&follow=false' : ''}`);
      expect([verb, res.status, res.text]).toEqual([verb, 400, 'path "/t/local/out/passwd" leads out of the allocation directory (through a symlink)']);
    }
    // Listed as the link it is, never followed.
    expect((await get(`/v1/client/fs/ls/${alloc.ID}?path=/t/local`)).json()).toContainEqual(expect.objectContaining({ Name: 'out', FileMode: expect.stringMatching(/^L/) }));
  });

  it('answers 400 for cat of a directory, 404 for a missing file or allocation, 400 without a path', async () => {
    expect((await get(`/v1/client/fs/cat/${alloc.ID}?path=/t`)).status).toBe(400);
    expect((await get(`/v1/client/fs/cat/${alloc.ID}?path=/t/nope`)).status).toBe(404);
    expect((await get('/v1/client/fs/ls/00000000-0000-4000-8000-00000000dead')).status).toBe(404);
    const noPath = await get(`/v1/client/fs/cat/${alloc.ID}`);
    expect(noPath.status).toBe(400);
    expect(noPath.text).toContain('path');
  });
});
