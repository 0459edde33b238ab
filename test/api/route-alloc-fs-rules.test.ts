/**
 * The allocation filesystem routes (src/api/routes/alloc-fs.ts), rule by rule, over one served agent in process
 * running a mock task, whose allocation directory the test writes into as a task would: Go's FileMode strings,
 * each route's answer and refusal in its words, readat's offset and limit, the stream's frames, origins and
 * file events. alloc-fs.test.ts has the confinement with a real raw_exec task.
 */
import { readdirSync } from 'node:fs';
import { appendFile, chmod, mkdir, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, stream, type Alloc } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, type Served, SUITE_TIMEOUT } from './in-process-agent.ts';

type Json = Record<string, any>;

let s: Served;
let alloc: Alloc;
let dir: string;
beforeAll(async () => {
  s = await serve(undefined, undefined, { api: { heartbeatMs: 100 } });
  alloc = await runJob(s, mockJob('fs'));
  dir = join(s.dataDir, 'allocs', alloc.ID, 'files');
  await mkdir(join(dir, 'sub'), { recursive: true });
  await writeFile(join(dir, 'ten.txt'), '0123456789');
  await writeFile(join(dir, 'b.txt'), 'b');
  await writeFile(join(dir, 'a.txt'), 'a');
});
afterAll(cleanUp);

const get = (path: string) => call(s.socket, 'GET', path);
const fs = (verb: string, query: string) => get(`/v1/client/fs/${verb}/${alloc.ID}?${query}`);
const frames = (text: string) => text.split('\n').filter((l) => l.startsWith('{"')).map((l) => JSON.parse(l) as Json);

describe('ls and stat', { timeout: SUITE_TIMEOUT }, () => {
  it.each([
    [0o644, '-rw-r--r--'],
    [0o755, '-rwxr-xr-x'],
    [0o600, '-rw-------'],
    [0o007, '-------rwx'],
    [0o421, '-r---w---x'],
  ])('shows mode %o as Go does: %s', async (mode, shown) => {
    const name = `mode-${mode.toString(8)}`;
    await writeFile(join(dir, name), 'x');
    await chmod(join(dir, name), mode);
    const info = (await fs('stat', `path=/files/${name}`)).json<Json>();
    expect(info['FileMode']).toBe(shown);
  });

  it('lists a directory by name with Nomad\'s AllocFileInfo, a directory with d and no content type', async () => {
    const list = (await fs('ls', 'path=/files')).json<Json[]>();
    expect(list.map((f) => f['Name'])).toEqual([...list.map((f) => f['Name'] as string)].sort());
    expect(list.find((f) => f['Name'] === 'ten.txt')).toEqual({ Name: 'ten.txt', IsDir: false, Size: 10, FileMode: expect.stringMatching(/^-/), ModTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), ContentType: 'application/octet-stream' });
    expect(list.find((f) => f['Name'] === 'sub')).toMatchObject({ IsDir: true, FileMode: expect.stringMatching(/^drwx/), ContentType: '' });
  });

  it('stats the root as / and anything else by its base name; a missing path is 404 in its words', async () => {
    expect((await fs('stat', 'path=/')).json<Json>()).toMatchObject({ Name: '/', IsDir: true });
    expect((await fs('stat', 'path=./files/./sub')).json<Json>()).toMatchObject({ Name: 'sub', IsDir: true });
    const missing = await fs('stat', 'path=/files/none');
    expect([missing.status, missing.text]).toEqual([404, '/files/none: no such file or directory in the allocation directory']);
  });

  it('refuses ls of a file, naming it', async () => {
    const res = await fs('ls', 'path=/files/ten.txt');
    expect([res.status, res.text]).toEqual([400, '/files/ten.txt is not a directory']);
  });

  it('follows a symlink that stays inside, and shows it as L', async () => {
    await symlink(join(dir, 'ten.txt'), join(dir, 'link'));
    expect((await fs('cat', 'path=/files/link')).text).toBe('0123456789');
    expect((await fs('ls', 'path=/files')).json<Json[]>().find((f) => f['Name'] === 'link')!['FileMode']).toMatch(/^Lrwx/);
    // A link to the allocation directory itself is inside it.
    await symlink(join(s.dataDir, 'allocs', alloc.ID), join(dir, 'up'));
    expect((await fs('stat', 'path=/files/up')).json<Json>()['Name']).toBe('/');
    await rm(join(dir, 'up'));
  });

  it('takes a path relative to the allocation directory however it is written, and shows it cleaned', async () => {
    for (const path of ['files//none', 'files/./none', '//files\\none', '/files/none/']) {
      const res = await fs('stat', `path=${encodeURIComponent(path)}`);
      expect([path, res.status, res.text]).toEqual([path, 404, '/files/none: no such file or directory in the allocation directory']);
    }
    expect((await fs('stat', `path=${encodeURIComponent('files\\ten.txt')}`)).json<Json>()).toMatchObject({ Name: 'ten.txt', Size: 10 });
  });

  it('refuses a path through a symlink loop with 400 in its words', async () => {
    await symlink(join(dir, 'loop-b'), join(dir, 'loop-a'));
    await symlink(join(dir, 'loop-a'), join(dir, 'loop-b'));
    try {
      const res = await fs('stat', 'path=/files/loop-a');
      expect([res.status, res.text]).toEqual([400, '/files/loop-a: too many levels of symbolic links']);
    } finally {
      await rm(join(dir, 'loop-a'));
      await rm(join(dir, 'loop-b'));
    }
  });

  it('lists names sorted whatever order the file system keeps them in', async () => {
    await mkdir(join(dir, 'unsorted'));
    for (const name of ['m', 'z', 'c', 'x', 'a']) await writeFile(join(dir, 'unsorted', name), name);
    expect((await fs('ls', 'path=/files/unsorted')).json<Json[]>().map((f) => f['Name'])).toEqual(['a', 'c', 'm', 'x', 'z']);
  });

  it('answers 404 for a path through a file, as for any path that does not exist', async () => {
    const res = await fs('stat', 'path=/files/ten.txt/x');
    expect([res.status, res.text]).toEqual([404, '/files/ten.txt/x: no such file or directory in the allocation directory']);
  });

  it.each(['..', '/files/../../other', 'files/..', '../' + 'x'])('refuses %j with 400: .. is never allowed, even when it would stay inside', async (path) => {
    for (const verb of ['ls', 'stat', 'cat']) {
      const res = await fs(verb, `path=${encodeURIComponent(path)}`);
      expect([verb, res.status, res.text]).toEqual([verb, 400, `path ${JSON.stringify(path)} leaves the allocation directory: ".." is not allowed`]);
    }
  });

  it('refuses a symlink that leads out of the allocation directory, even to a sibling whose name starts with it', async () => {
    const root = join(s.dataDir, 'allocs', alloc.ID);
    await mkdir(`${root}-twin`, { recursive: true });
    await writeFile(join(`${root}-twin`, 'secret'), 's');
    await symlink(join(`${root}-twin`, 'secret'), join(dir, 'twin'));
    await symlink(s.dataDir, join(dir, 'out'));
    try {
      for (const [verb, path] of [['cat', '/files/twin'], ['stat', '/files/twin'], ['ls', '/files/out'], ['stream', '/files/twin']] as const) {
        const res = await fs(verb, `path=${path}&follow=false`);
        expect([verb, res.status, res.text]).toEqual([verb, 400, `path ${JSON.stringify(path)} leads out of the allocation directory (through a symlink)`]);
      }
    } finally {
      await rm(join(dir, 'twin'));
      await rm(join(dir, 'out'));
      await rm(`${root}-twin`, { recursive: true });
    }
  });

  it('answers 404 naming an allocation without a directory here', async () => {
    const other = await runJob(s, mockJob('fs-gone'));
    await rm(join(s.dataDir, 'allocs', other.ID), { recursive: true, force: true });
    const res = await get(`/v1/client/fs/ls/${other.ID}`);
    expect([res.status, res.text]).toEqual([404, `allocation ${other.ID} has no directory on this node (it was never started here, or was removed)`]);
  });
});

describe('cat and readat', { timeout: SUITE_TIMEOUT }, () => {
  it.each([
    ['offset=0', '0123456789'],
    ['offset=0&limit=0', ''],
    ['offset=3&limit=4', '3456'],
    ['offset=8&limit=5', '89'],
    ['offset=9', '9'],
    ['offset=10', ''],
    ['offset=12&limit=1', ''],
  ])('readat %s reads %j', async (query, text) => {
    const res = await fs('readat', `path=/files/ten.txt&${query}`);
    expect([res.status, res.text]).toEqual([200, text]);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
  });

  it.each([
    ['offset=-1', /offset: must be 0 or more/],
    ['offset=0&limit=-1', /limit: must be 0 or more/],
    ['offset=1.5', /offset/],
    ['', /offset/],
  ])('readat refuses %s with 400 naming the field', async (query, message) => {
    const res = await fs('readat', `path=/files/ten.txt&${query}`);
    expect(res.status).toBe(400);
    expect(res.text).toMatch(message);
  });

  it('leaves no file open after a read that reads nothing', async () => {
    const open = () => readdirSync('/proc/self/fd').length;
    const before = open();
    for (let i = 0; i < 20; i++) expect((await fs('readat', 'path=/files/ten.txt&offset=10')).text).toBe('');
    expect(open()).toBeLessThan(before + 10);
  });

  it('cat answers the file as text; a directory is 400 in its words; an empty path names the field', async () => {
    const cat = await fs('cat', 'path=files/ten.txt');
    expect([cat.status, cat.text, cat.headers['content-type']]).toEqual([200, '0123456789', 'text/plain; charset=utf-8']);
    const dirRes = await fs('cat', 'path=/files/sub');
    expect([dirRes.status, dirRes.text]).toEqual([400, '/files/sub is a directory']);
    const empty = await fs('cat', 'path=');
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('must name a file in the allocation directory');
  });
});

describe('stream', { timeout: SUITE_TIMEOUT }, () => {
  it.each([
    ['origin=start&offset=0', '0123456789', 10],
    ['origin=start&offset=4', '456789', 10],
    ['origin=start&offset=40', '', 10],
    ['origin=end&offset=3', '789', 10],
    ['origin=end&offset=40', '0123456789', 10],
  ])('without following, %s sends %j in frames ending at offset %i', async (query, text, end) => {
    const res = await fs('stream', `path=/files/ten.txt&follow=false&${query}`);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const data = frames(res.text).filter((f) => f['Data'] !== undefined);
    expect(Buffer.concat(data.map((f) => Buffer.from(f['Data'], 'base64'))).toString()).toBe(text);
    for (const f of data) expect(f).toMatchObject({ File: 'files/ten.txt', FileEvent: '' });
    if (text !== '') expect(data.at(-1)!['Offset']).toBe(end);
  });

  it('sends a large file in frames of at most 64 KiB, each at its end offset', async () => {
    await writeFile(join(dir, 'large.bin'), Buffer.alloc(100 * 1024, 'x'));
    const data = frames((await fs('stream', 'path=/files/large.bin&follow=false')).text).filter((f) => f['Data'] !== undefined);
    expect(data.map((f) => [Buffer.from(f['Data'], 'base64').length, f['Offset']])).toEqual([[65536, 65536], [36 * 1024, 100 * 1024]]);
  });

  it('with plain sends the bytes themselves as text', async () => {
    const res = await fs('stream', 'path=/files/ten.txt&follow=false&plain=true&offset=5');
    expect([res.text, res.headers['content-type']]).toEqual(['56789', 'text/plain; charset=utf-8']);
  });

  it.each(['', 'follow=', 'follow=true&follow=false'])('follows by default (%s), with heartbeats, until the file is deleted', async (follow) => {
    const path = join(dir, `followed-${follow.length}.txt`);
    await writeFile(path, 'ab');
    const st = await stream(s.socket, `/v1/client/fs/stream/${alloc.ID}?path=/files/followed-${follow.length}.txt&${follow}`);
    await st.until((t) => frames(t).some((f) => f['Data'] === Buffer.from('ab').toString('base64')));
    await st.until((t) => t.includes('{}\n'));
    await truncate(path, 1);
    await st.until((t) => frames(t).some((f) => f['FileEvent'] === 'file truncated'));
    expect(frames(st.text()).find((f) => f['FileEvent'] === 'file truncated')).toEqual({ Offset: 0, Data: '', File: `files/followed-${follow.length}.txt`, FileEvent: 'file truncated' });
    await rm(path);
    const text = await st.ended;
    expect(frames(text).at(-1)).toMatchObject({ Data: '', FileEvent: 'file deleted' });
  });

  it('follows a file from where it is read: only what is appended, no truncation while it grows, then from 0 after one', async () => {
    const path = join(dir, 'grown.txt');
    await writeFile(path, 'ab');
    const st = await stream(s.socket, `/v1/client/fs/stream/${alloc.ID}?path=/files/grown.txt`);
    const data = () => frames(st.text()).filter((f) => f['Data']);
    await st.until(() => data().length === 1);
    await appendFile(path, 'cd');
    await st.until(() => data().length === 2);
    // Several polls (every 250 ms) of a file that did not shrink, heartbeats every 100 ms.
    const beats = () => st.text().split('\n').filter((l) => l === '{}').length;
    const seen = beats();
    await st.until(() => beats() >= seen + 8);
    expect(frames(st.text()).filter((f) => f['FileEvent'] !== undefined && f['FileEvent'] !== '')).toEqual([]);
    expect(data().map((f) => [Buffer.from(f['Data'], 'base64').toString(), f['Offset']])).toEqual([['ab', 2], ['cd', 4]]);
    await truncate(path, 1);
    await st.until(() => data().length === 3);
    expect(data()[2]).toMatchObject({ Data: Buffer.from('a').toString('base64'), Offset: 1 });
    await rm(path);
    expect(frames(await st.ended).at(-1)).toEqual({ Offset: 1, Data: '', File: 'files/grown.txt', FileEvent: 'file deleted' });
  });

  it('follows with plain: the bytes only, its headers sent before the first byte, no heartbeats, no file events', async () => {
    const path = join(dir, 'plain.txt');
    await writeFile(path, '');
    // stream() resolves on the answer's headers: an empty file sends them with no byte to send.
    const st = await stream(s.socket, `/v1/client/fs/stream/${alloc.ID}?path=/files/plain.txt&plain=true`);
    expect(st.status).toBe(200);
    await appendFile(path, 'one');
    // (A poll every 250 ms, a heartbeat every 100 ms in JSON: the bytes come after a poll or more.)
    await st.until((t) => t.endsWith('one'));
    // Shorter than what was read: seen as truncated whenever the poll comes, and read again from 0.
    await writeFile(path, 'xy');
    await st.until((t) => t.endsWith('xy'));
    await rm(path);
    expect(await st.ended).toBe('onexy');
  });

  it('ends a followed file that turns into a directory with an Error frame', async () => {
    const path = join(dir, 'turned.txt');
    await writeFile(path, 'ab');
    const st = await stream(s.socket, `/v1/client/fs/stream/${alloc.ID}?path=/files/turned.txt`);
    await st.until((t) => frames(t).some((f) => f['Data']));
    await rm(path);
    await mkdir(path);
    await writeFile(join(path, 'pad'), 'x'.repeat(100));
    const last = frames(await st.ended).at(-1)!;
    // Seen as deleted if a poll fell between the rm and the mkdir; otherwise the read of a directory fails.
    expect([{ Error: 'EISDIR: illegal operation on a directory, read' }, { Offset: 2, Data: '', File: 'files/turned.txt', FileEvent: 'file deleted' }]).toContainEqual(last);
  });

  it('ends a plain followed file that turns into a directory with nothing but its bytes', async () => {
    const path = join(dir, 'turned-plain.txt');
    await writeFile(path, 'ab');
    const st = await stream(s.socket, `/v1/client/fs/stream/${alloc.ID}?path=/files/turned-plain.txt&plain=true`);
    await st.until((t) => t === 'ab');
    await rm(path);
    await mkdir(path);
    await writeFile(join(path, 'pad'), 'x'.repeat(100));
    expect(await st.ended).toBe('ab');
  });

  it('refuses a follow flag that is not a boolean in the words of every other flag', async () => {
    const res = await fs('stream', 'path=/files/ten.txt&follow=maybe');
    expect([res.status, res.text]).toEqual([400, 'follow: "maybe" is not a boolean: use one of 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False']);
  });

  it('refuses a follow flag that is not a boolean, an unknown origin and a negative offset', async () => {
    for (const query of ['follow=maybe', 'origin=middle', 'offset=-2']) {
      const res = await fs('stream', `path=/files/ten.txt&${query}`);
      expect([query, res.status]).toEqual([query, 400]);
    }
  });
});
