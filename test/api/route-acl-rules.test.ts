/**
 * The ACL token routes (src/api/routes/acl.ts), rule by rule, over the agent's socket (the management
 * identity): the index each write moves and each read answers at, the list's prefix, and the damaged-entry
 * and unknown-token answers. Who may call them is acl.test.ts's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call } from './agent-process.ts';
import { cleanUp, serve, type Served } from './in-process-agent.ts';

afterEach(cleanUp);

type Token = { AccessorID: string; Name: string; CreateIndex: number; ModifyIndex: number };

async function create(s: Served, Name: string, method = 'POST'): Promise<{ token: Token; index: number }> {
  const res = await call(s.socket, method, '/v1/acl/token', { Name, Type: 'client', Policies: ['read'] });
  expect(res.status, res.text).toBe(200);
  return { token: res.json<Token>(), index: Number(res.headers['x-nomad-index']) };
}

describe('ACL token routes', { timeout: 60_000 }, () => {
  it.each(['PUT', 'POST'])('%s /v1/acl/token writes the token at a new index of the agent, answered as X-Nomad-Index', async (method) => {
    const s = await serve();
    const before = Number((await call(s.socket, 'GET', '/v1/jobs')).headers['x-nomad-index']);
    const { token, index } = await create(s, 'one', method);
    expect(index).toBeGreaterThan(before);
    expect([token.CreateIndex, token.ModifyIndex]).toEqual([index, index]);
    // The index is the agent's: the next write anywhere comes after it.
    const next = await create(s, 'two');
    expect(next.index).toBeGreaterThan(index);
  });

  it('lists tokens at the newest token\'s index, or 1 when there are none', async () => {
    const s = await serve();
    const empty = await call(s.socket, 'GET', '/v1/acl/tokens');
    expect([empty.json(), empty.headers['x-nomad-index']]).toEqual([[], '1']);
    const a = await create(s, 'a');
    const b = await create(s, 'b');
    const list = await call(s.socket, 'GET', '/v1/acl/tokens');
    expect(list.headers['x-nomad-index']).toBe(String(Math.max(a.index, b.index)));
    expect(list.json<Token[]>().map((t) => t.Name).sort()).toEqual(['a', 'b']);
  });

  it('lists only the tokens whose accessor starts with ?prefix', async () => {
    const s = await serve();
    const a = await create(s, 'a');
    await create(s, 'b');
    const res = await call(s.socket, 'GET', `/v1/acl/tokens?prefix=${a.token.AccessorID.slice(0, 12)}`);
    expect(res.json<Token[]>().map((t) => t.AccessorID)).toEqual([a.token.AccessorID]);
    expect((await call(s.socket, 'GET', '/v1/acl/tokens?prefix=zzzz')).json()).toEqual([]);
  });

  it('reads a token at its own index, and answers 404 "ACL token not found" for an unknown accessor', async () => {
    const s = await serve();
    const a = await create(s, 'a');
    await create(s, 'b');
    const one = await call(s.socket, 'GET', `/v1/acl/token/${a.token.AccessorID}`);
    expect([one.status, one.headers['x-nomad-index']]).toEqual([200, String(a.index)]);
    expect(one.json()).toMatchObject({ AccessorID: a.token.AccessorID, Name: 'a' });
    const miss = await call(s.socket, 'GET', '/v1/acl/token/00000000-0000-4000-8000-000000000000');
    expect([miss.status, miss.text]).toEqual([404, 'ACL token not found']);
    const delMiss = await call(s.socket, 'DELETE', '/v1/acl/token/00000000-0000-4000-8000-000000000000');
    expect([delMiss.status, delMiss.text]).toEqual([404, 'ACL token not found']);
  });

  it('answers a damaged entry read by its key with a 500 saying how to delete it', async () => {
    const s = await serve();
    await s.store.commit((tx) => tx.put('acl', 'broken', { AccessorID: 'broken' }));
    const res = await call(s.socket, 'GET', '/v1/acl/token/broken');
    expect([res.status, res.text]).toEqual([500, "the agent's store has a damaged ACL token entry acl/broken; delete it with DELETE /v1/acl/token/broken"]);
  });

  it('lists every damaged entry by key and why, in one 500', async () => {
    const s = await serve();
    await s.store.commit((tx) => {
      tx.put('acl', 'b1', { AccessorID: 'b1' });
      tx.put('acl', 'b2', 'text');
    });
    const res = await call(s.socket, 'GET', '/v1/acl/tokens');
    expect(res.status).toBe(500);
    expect(res.text).toMatch(/^the agent's store has damaged ACL token entries: acl\/b1: [^;]+; acl\/b2: [^;]+; delete them with DELETE \/v1\/acl\/token\/<key>$/);
  });

  it('deletes at a new index, answered as X-Nomad-Index with an empty body, and the token is gone', async () => {
    const s = await serve();
    const a = await create(s, 'a');
    const del = await call(s.socket, 'DELETE', `/v1/acl/token/${a.token.AccessorID}`);
    expect([del.status, del.text]).toEqual([200, '']);
    expect(Number(del.headers['x-nomad-index'])).toBeGreaterThan(a.index);
    expect((await call(s.socket, 'GET', `/v1/acl/token/${a.token.AccessorID}`)).status).toBe(404);
    const next = await create(s, 'b');
    expect(next.index).toBeGreaterThan(Number(del.headers['x-nomad-index']));
  });

});
