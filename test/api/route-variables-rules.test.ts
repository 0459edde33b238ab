/**
 * The variables routes (src/api/routes/variables.ts), rule by rule, through one served agent in process (each
 * test its own paths): `?cas=` as Nomad's parseCAS reads it, row by row; what a write's body must hold, by its
 * refusal; both write methods; a delete's answer with and without a variable; which namespace each request
 * takes; and the Variables topic's events, metadata only. variables.test.ts has the shapes and the durability.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EventBatch } from '../../src/api/event-broker.ts';
import { recordPublishedBatches } from './published-batches.ts';
import { call } from './agent-process.ts';
import { cleanUp, serve, type Served, SUITE_TIMEOUT } from './in-process-agent.ts';

type Json = Record<string, any>;

let s: Served;
const batches: EventBatch[] = [];
beforeAll(async () => {
  s = await serve();
  recordPublishedBatches(batches);
});
afterAll(async () => {
  vi.restoreAllMocks();
  await cleanUp();
});

const put = (path: string, body: unknown, method = 'PUT') => call(s.socket, method, `/v1/var/${path}`, body);
const items = { k: 'v' };

describe('?cas=', { timeout: SUITE_TIMEOUT }, () => {
  it.each([
    ['', 200],
    ['?cas=', 200],
    ['?cas=0', 200],
    ['?cas=0&cas=7', 200],
    ['?cas=7&cas=0', 409],
  ])('%s on a new variable answers %i (absent or empty: no check; the first of repeated values)', async (query, status) => {
    const path = `cas/new${batches.length}${query.length}${status}`;
    const res = await put(`${path}${query}`, { Items: items });
    expect(res.status, res.text).toBe(status);
  });

  it.each([
    ['-1'],
    ['1.5'],
    ['0x10'],
    ['abc'],
    [' 1'],
    ['9007199254740993'],
  ])('refuses cas=%s with 400: not an unsigned integer', async (value) => {
    const res = await put(`cas/bad?cas=${encodeURIComponent(value)}`, { Items: items });
    expect(res.status).toBe(400);
    expect(res.text).toContain(`can not parse ${JSON.stringify(value)}: not an unsigned integer`);
    const del = await call(s.socket, 'DELETE', `/v1/var/cas/bad?cas=${encodeURIComponent(value)}`);
    expect(del.status).toBe(400);
  });

  it('accepts the largest safe integer as a check that fails on a new variable, with 409', async () => {
    const res = await put('cas/big?cas=9007199254740991', { Items: items });
    expect(res.status).toBe(409);
  });
});

describe('a write', { timeout: SUITE_TIMEOUT }, () => {
  it.each(['PUT', 'POST'])('by %s answers the variable at its index, with the header', async (method) => {
    const res = await put(`write/${method}`, { Items: items }, method);
    expect(res.status, res.text).toBe(200);
    const v = res.json<Json>();
    expect(v).toMatchObject({ Path: `write/${method}`, Namespace: 'default', Items: items });
    expect(res.headers['x-nomad-index']).toBe(String(v['ModifyIndex']));
  });

  it.each([
    ['no Items', {}, 'variable missing required Items object'],
    ['empty Items', { Items: {} }, 'variable missing required Items object'],
    ['a Lock', { Items: items, Lock: { TTL: '15s' } }, 'variable locks are not supported by this agent: leave Lock out'],
  ])('refuses a body with %s, in its words', async (_what, body, message) => {
    const res = await put('write/refused', body);
    expect([res.status, res.text]).toEqual([400, message]);
    expect((await call(s.socket, 'GET', '/v1/var/write/refused')).status).toBe(404);
  });

  it.each([
    ['a text', 'secret', /^Items: must be an object of string keys to string values/],
    ['a value that is not a string', { k: 1 }, /^Items\.k: expected string, received number$/],
  ])('refuses Items that are %s, naming the field', async (_what, Items, message) => {
    const res = await put('write/typed', { Items });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(message);
  });

  it('refuses a missing path on every method', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await call(s.socket, method, '/v1/var/', method === 'PUT' ? { Items: items } : undefined);
      expect([method, res.status, res.text]).toEqual([method, 400, 'missing variable path']);
    }
  });

  it('takes the body\'s namespace over the query\'s, and the query\'s over default', async () => {
    expect((await put('ns/body?namespace=q', { Namespace: 'b', Items: items })).json<Json>()['Namespace']).toBe('b');
    expect((await put('ns/query?namespace=q', { Items: items })).json<Json>()['Namespace']).toBe('q');
    expect((await put('ns/query?namespace=', { Items: items })).json<Json>()['Namespace']).toBe('default');
    expect((await call(s.socket, 'GET', '/v1/var/ns/query?namespace=q')).status).toBe(200);
    expect((await call(s.socket, 'GET', '/v1/var/ns/query')).status).toBe(200);
  });

  it('publishes VariableUpserted with the metadata only, at the write\'s index', async () => {
    const res = await put('evented/up', { Items: { secret: 'hunter2' } });
    const index = Number(res.headers['x-nomad-index']);
    const batch = batches.find((b) => b.Index === index)!;
    expect(batch.Events.map((e) => [e.Topic, e.Type, e.Key, e.Namespace, e.FilterKeys, e.Index])).toEqual([['Variables', 'VariableUpserted', 'evented/up', 'default', [], index]]);
    expect(JSON.stringify(batch)).not.toContain('hunter2');
  });
});

describe('a delete', { timeout: SUITE_TIMEOUT }, () => {
  it('answers 204 at the delete\'s index and publishes VariableDeleted', async () => {
    await put('del/one', { Items: items });
    const res = await call(s.socket, 'DELETE', '/v1/var/del/one');
    expect(res.status).toBe(204);
    const index = Number(res.headers['x-nomad-index']);
    expect(batches.find((b) => b.Index === index)!.Events.map((e) => [e.Type, e.Key])).toEqual([['VariableDeleted', 'del/one']]);
    expect((await call(s.socket, 'GET', '/v1/var/del/one')).status).toBe(404);
  });

  it('of nothing answers 204 at an index of at least 1 and publishes nothing', async () => {
    const published = batches.length;
    const res = await call(s.socket, 'DELETE', '/v1/var/del/never');
    expect(res.status).toBe(204);
    expect(Number(res.headers['x-nomad-index'])).toBeGreaterThanOrEqual(1);
    expect(batches.length).toBe(published);
  });

  it('at a stale index answers 409 with the variable and its index, and deletes nothing', async () => {
    const v = (await put('del/kept', { Items: items })).json<Json>();
    const res = await call(s.socket, 'DELETE', `/v1/var/del/kept?cas=${v['ModifyIndex'] - 1}`);
    expect(res.status).toBe(409);
    expect(res.json<Json>()).toMatchObject({ Path: 'del/kept', ModifyIndex: v['ModifyIndex'] });
    expect(res.headers['x-nomad-index']).toBe(String(v['ModifyIndex']));
    expect((await call(s.socket, 'GET', '/v1/var/del/kept')).status).toBe(200);
  });

  it('takes the query\'s namespace', async () => {
    await put('del/spaced?namespace=q', { Items: items });
    expect((await call(s.socket, 'DELETE', '/v1/var/del/spaced')).status).toBe(204);
    expect((await call(s.socket, 'GET', '/v1/var/del/spaced?namespace=q')).status).toBe(200);
    expect((await call(s.socket, 'DELETE', '/v1/var/del/spaced?namespace=q')).status).toBe(204);
    expect((await call(s.socket, 'GET', '/v1/var/del/spaced?namespace=q')).status).toBe(404);
  });
});

describe('a read', { timeout: SUITE_TIMEOUT }, () => {
  it('answers an absent variable 404 at the table\'s index, and a present one at its own', async () => {
    const v = (await put('read/here', { Items: items })).json<Json>();
    await put('read/later', { Items: items });
    const here = await call(s.socket, 'GET', '/v1/var/read/here');
    expect(here.headers['x-nomad-index']).toBe(String(v['ModifyIndex']));
    const absent = await call(s.socket, 'GET', '/v1/var/read/absent');
    expect([absent.status, absent.text]).toEqual([404, 'variable not found']);
  });

  it('lists the default namespace unless the query names one', async () => {
    await put('list/a?namespace=lq', { Items: items });
    const paths = async (q: string) => (await call(s.socket, 'GET', `/v1/vars?prefix=list/${q}`)).json<Json[]>().map((m) => m['Path']);
    expect(await paths('')).toEqual([]);
    expect(await paths('&namespace=lq')).toEqual(['list/a']);
    expect(await paths('&namespace=')).toEqual([]);
  });
});

describe('what the variable store refuses', { timeout: SUITE_TIMEOUT }, () => {
  it.each([
    ['*', 'can not target wildcard ("*") namespace'],
    ['no.dots', 'invalid namespace "no.dots": a namespace name is 1 to 128 letters, digits and "-"'],
  ])('a delete in the namespace %s is a 400 in its words', async (namespace, message) => {
    const res = await call(s.socket, 'DELETE', `/v1/var/refused/del?namespace=${encodeURIComponent(namespace)}`);
    expect([res.status, res.text]).toEqual([400, message]);
  });

  it('a damaged entry is a 500 naming its key on a read, a list and a checked delete; a plain delete removes it', async () => {
    await s.store.commit((tx) => tx.put('vars', 'default/refused/bad', { not: 'a variable' }));
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const named = expect.stringMatching(/vars\/default\/refused\/bad is damaged/);
    for (const [method, path] of [['GET', '/v1/var/refused/bad'], ['GET', '/v1/vars?prefix=refused/'], ['DELETE', '/v1/var/refused/bad?cas=3']]) {
      const res = await call(s.socket, method!, path!);
      expect([method, path, res.status, res.text]).toEqual([method, path, 500, named]);
    }
    // The operator sees each too (a 500 is logged).
    expect(stderr.mock.calls.filter(([line]) => /vars\/default\/refused\/bad is damaged/.test(String(line)))).toHaveLength(3);
    stderr.mockRestore();
    expect((await call(s.socket, 'DELETE', '/v1/var/refused/bad')).status).toBe(204);
    expect((await call(s.socket, 'GET', '/v1/vars?prefix=refused/')).json()).toEqual([]);
  });
});
