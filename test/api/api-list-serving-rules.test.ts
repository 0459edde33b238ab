/**
 * How a cached list is served (blockingList in src/api/list-cache.ts), on a bare Fastify app with
 * app.inject: `X-Nomad-Index` at least 1, the next page's token, `Vary` and gzip from 1,400 bytes for a
 * client that accepts gzip, and the Accept-Encoding weights read as Nomad's gzip handler reads them.
 */
import * as zlib from 'node:zlib';
import { gunzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ApiContext } from '../../src/api/context.ts';
import { acceptsGzip, blockingList, GZIP_MIN_BYTES, ListCache } from '../../src/api/list-cache.ts';
import { StateIndex } from '../../src/api/state-index.ts';

// zlib as it is, its two gzip calls counted: the list cache must compress off the event loop (issue #31).
vi.mock('node:zlib', async (original) => {
  const z = await original<typeof import('node:zlib')>();
  return { ...z, gzip: vi.fn(z.gzip), gzipSync: vi.fn(z.gzipSync) };
});

let app: FastifyInstance;
let index = 0;
let items: { ID: string }[] = [];

beforeAll(async () => {
  app = Fastify();
  const ctx = { index: new StateIndex() } as unknown as ApiContext;
  const cache = new ListCache();
  app.get('/list', async (req, reply) => blockingList(ctx, cache, req, reply, 'list', () => index, () => items));
  await app.ready();
});
afterAll(async () => app.close());

/** Items whose JSON is exactly `bytes` long. */
function listOf(bytes: number): { ID: string }[] {
  const overhead = JSON.stringify([{ ID: '' }]).length;
  return [{ ID: 'x'.repeat(bytes - overhead) }];
}

describe('serving a cached list', () => {
  it('answers X-Nomad-Index of at least 1, its scope\'s index otherwise, as JSON', async () => {
    items = [{ ID: 'a' }];
    index = 0;
    const none = await app.inject({ url: '/list' });
    expect(none.headers['x-nomad-index']).toBe('1');
    expect(none.headers['content-type']).toBe('application/json; charset=utf-8');
    index = 7;
    expect((await app.inject({ url: '/list' })).headers['x-nomad-index']).toBe('7');
  });

  it('names the next page in X-Nomad-NextToken, and sends none on the last page', async () => {
    items = [{ ID: 'a' }, { ID: 'b' }];
    index = 8;
    expect((await app.inject({ url: '/list?per_page=1' })).headers['x-nomad-nexttoken']).toBe('b');
    expect((await app.inject({ url: '/list?per_page=2' })).headers['x-nomad-nexttoken']).toBeUndefined();
  });

  it('sends a list shorter than 1,400 bytes as it is, without Vary, to any client', async () => {
    expect(GZIP_MIN_BYTES).toBe(1400);
    items = listOf(GZIP_MIN_BYTES - 1);
    index = 9;
    const res = await app.inject({ url: '/list', headers: { 'accept-encoding': 'gzip' } });
    expect(res.body.length).toBe(GZIP_MIN_BYTES - 1);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['vary']).toBeUndefined();
  });

  it('gzips a list of 1,400 bytes for a client that accepts gzip, with Vary; sends it plain, with Vary, to one that does not', async () => {
    items = listOf(GZIP_MIN_BYTES);
    index = 10;
    const zipped = await app.inject({ url: '/list', headers: { 'accept-encoding': 'gzip' } });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers['vary']).toBe('Accept-Encoding');
    expect(gunzipSync(zipped.rawPayload).toString('utf8')).toBe(JSON.stringify(items));
    // The second client gets the same gzipped bytes, made once.
    expect((await app.inject({ url: '/list', headers: { 'accept-encoding': 'gzip' } })).rawPayload.equals(zipped.rawPayload)).toBe(true);
    const plain = await app.inject({ url: '/list', headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['vary']).toBe('Accept-Encoding');
    expect(plain.body).toBe(JSON.stringify(items));
  });

  it('compresses a list once, in zlib\'s thread pool (not gzipSync on the event loop), for clients asking together', async () => {
    items = listOf(5 * GZIP_MIN_BYTES);
    index = 11;
    vi.mocked(zlib.gzip).mockClear();
    vi.mocked(zlib.gzipSync).mockClear();
    const answers = await Promise.all([1, 2, 3].map(() => app.inject({ url: '/list', headers: { 'accept-encoding': 'gzip' } })));
    for (const a of answers) expect(gunzipSync(a.rawPayload).toString('utf8')).toBe(JSON.stringify(items));
    expect(vi.mocked(zlib.gzip)).toHaveBeenCalledTimes(1);
    expect(vi.mocked(zlib.gzipSync)).not.toHaveBeenCalled();
  });
});

describe('acceptsGzip reads weights as Nomad\'s gzip handler does', () => {
  it.each<[string, boolean]>([
    ['gzip; q=0', false],
    ['gzip ;q=0', false],
    ['gzip;level=1', true],
    ['gzip;level=1;q=0', false],
    [' gzip', true],
    ['deflate, *;q=0.1', true],
    ['br;q=1', false],
    ['gzip;q=0.001', true],
  ])('%j → %s', (header, accepted) => {
    expect(acceptsGzip(header)).toBe(accepted);
  });
});
