/**
 * The blocking query every indexed read runs (src/api/context.ts), rule by rule, through a served agent in
 * process: Nomad's wait (5 minutes by default, at most 10, plus a jitter of up to wait/16), the answer at
 * once when the index has passed, the headers, and a wait given up when its client goes.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { request } from 'node:http';
import { call } from './agent-process.ts';
import { cleanUp, mockJob, serve, until, type Served } from './in-process-agent.ts';

afterEach(async () => {
  vi.restoreAllMocks();
  await cleanUp();
});

/** Every timer of at least a second the agent sets while `act` runs (the blocking waits), and those cleared. */
function watchWaits() {
  const set: { ms: number; t: unknown }[] = [];
  const cleared: unknown[] = [];
  const realSet = globalThis.setTimeout;
  const realClear = globalThis.clearTimeout;
  vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number, ...args: unknown[]) => {
    const t = realSet(fn, ms, ...args);
    if ((ms ?? 0) >= 1000) set.push({ ms: ms!, t });
    return t;
  }) as typeof setTimeout);
  vi.spyOn(globalThis, 'clearTimeout').mockImplementation(((t: Parameters<typeof clearTimeout>[0]) => (cleared.push(t), realClear(t))) as typeof clearTimeout);
  return { set, cleared };
}

/** Opens a blocking read and leaves it waiting; resolves with the agent's timer of `ms` for it, once set. */
async function openWait(s: Served, path: string, waits: ReturnType<typeof watchWaits>, ms: number): Promise<{ close: () => void; timer: unknown }> {
  const req = request({ socketPath: s.socket.socketPath, path, method: 'GET' });
  req.on('error', () => undefined);
  req.end();
  const found = await until(async () => waits.set.find((w) => w.ms === ms), (w) => w !== undefined, `a wait of ${ms} ms; set: ${JSON.stringify(waits.set.map((w) => w.ms))}`, 5_000);
  return { close: () => req.destroy(), timer: found!.t };
}

const indexOf = async (s: Served, path: string) => Number((await call(s.socket, 'GET', path)).headers['x-nomad-index']);

describe('blocking queries', { timeout: 60_000 }, () => {
  it.each([
    ['no wait: Nomad\'s 5 minutes', '', 300_000],
    ['wait=2s', '&wait=2s', 2_000],
    ['wait=10m, the longest', '&wait=10m', 600_000],
    ['wait=1h, cut to 10 minutes', '&wait=1h', 600_000],
  ])('waits %s, plus a jitter below wait/16', async (_what, query, wait) => {
    const s = await serve();
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('web'));
    const index = await indexOf(s, '/v1/job/web');
    const waits = watchWaits();
    // The jitter's random draw at its top: the wait is then just below wait + wait/16.
    vi.spyOn(Math, 'random').mockReturnValue(0.999);
    const { close } = await openWait(s, `/v1/job/web?index=${index}${query}`, waits, wait + Math.floor(0.999 * (wait / 16)));
    close();
  });

  it('answers at once, at the current index, when the index asked for has passed or is 0', async () => {
    const s = await serve();
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('web'));
    const index = await indexOf(s, '/v1/job/web');
    const waits = watchWaits();
    for (const asked of [0, index - 1]) {
      const res = await call(s.socket, 'GET', `/v1/job/web?index=${asked}&wait=10m`);
      expect([asked, res.status, res.headers['x-nomad-index']]).toEqual([asked, 200, String(index)]);
    }
    expect(waits.set.filter((w) => w.ms >= 600_000 && w.ms < 640_000)).toEqual([]);
  });

  it('answers a waiting read when what it reads changes, with the new index', async () => {
    const s = await serve();
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('web'));
    const index = await indexOf(s, '/v1/job/web');
    const waiting = call(s.socket, 'GET', `/v1/job/web?index=${index}&wait=5m`);
    const update = (await call(s.socket, 'PUT', '/v1/jobs', mockJob('web', { t: { run_for: '2h' } }))).json<{ JobModifyIndex: number }>();
    const res = await waiting;
    expect(res.headers).toMatchObject({ 'x-nomad-index': String(update.JobModifyIndex), 'x-nomad-knownleader': 'true', 'x-nomad-lastcontact': '0' });
    expect(res.json().Version).toBe(1);
  });

  it('answers after the wait with the same index when nothing changed', async () => {
    const s = await serve();
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('web'));
    const index = await indexOf(s, '/v1/job/web');
    const res = await call(s.socket, 'GET', `/v1/job/web?index=${index}&wait=50ms`);
    expect([res.status, res.headers['x-nomad-index']]).toEqual([200, String(index)]);
  });

  it('answers index 1, never 0, for what has no index yet', async () => {
    const s = await serve();
    const res = await call(s.socket, 'GET', '/v1/namespaces');
    expect([res.status, res.headers['x-nomad-index']]).toEqual([200, '1']);
  });

  it('gives the wait up when its client goes: the timer is cleared, not left to run its minutes', async () => {
    const s = await serve();
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('web'));
    const index = await indexOf(s, '/v1/job/web');
    const waits = watchWaits();
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const { close, timer } = await openWait(s, `/v1/job/web?index=${index}&wait=5m`, waits, 300_000);
    expect(waits.cleared).not.toContain(timer);
    close();
    await until(async () => waits.cleared.includes(timer), (ok) => ok, 'the wait to be given up', 5_000);
  });
});
