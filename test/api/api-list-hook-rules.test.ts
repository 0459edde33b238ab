/**
 * The list query options as a Fastify hook (listQueryOptions in src/api/query-options.ts), on a bare app
 * with app.inject: applied to every GET that answers a list and to nothing else, the next page named in
 * X-Nomad-NextToken, and a region other than "global" refused on every request.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listQueryOptions } from '../../src/api/query-options.ts';

const LIST = [{ ID: 'a' }, { ID: 'b' }, { ID: 'c' }];
let app: FastifyInstance;

beforeAll(async () => {
  app = Fastify();
  listQueryOptions(app);
  app.get('/list', async () => LIST);
  app.post('/list', async () => LIST);
  app.get('/object', async () => ({ ID: 'a', Items: LIST }));
  await app.ready();
});
afterAll(async () => app.close());

describe('listQueryOptions', () => {
  it.each<[string, 'GET' | 'POST', string, unknown, string | undefined]>([
    ['a GET list is paged, with the next key in X-Nomad-NextToken', 'GET', '/list?per_page=2', [{ ID: 'a' }, { ID: 'b' }], 'c'],
    ['the last page has no X-Nomad-NextToken', 'GET', '/list?per_page=3', LIST, undefined],
    ['a GET list is filtered', 'GET', '/list?filter=ID%20%3D%3D%20b', [{ ID: 'b' }], undefined],
    ['a POST answer is left as it is', 'POST', '/list?per_page=1', LIST, undefined],
    ['an answer that is not a list is left as it is', 'GET', '/object?per_page=1', { ID: 'a', Items: LIST }, undefined],
  ])('%s', async (_what, method, url, body, nextToken) => {
    const res = await app.inject({ method, url });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(body);
    expect(res.headers['x-nomad-nexttoken']).toBe(nextToken);
  });

  it.each<[string, number]>([
    ['/list?region=global', 200],
    ['/list?region=', 200],
    ['/list?region=eu', 400],
    ['/list?region=eu&region=global', 400],
    ['/list?region=global&region=eu', 200],
  ])('%s answers %i', async (url, status) => {
    const res = await app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(status);
    if (status === 400) expect(res.json().message).toBe('No path to region "eu": this agent is the one server of region "global"');
  });
});
