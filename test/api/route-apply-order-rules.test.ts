/**
 * The agent's writes apply in index order (src/api/apply-order.ts), as Nomad's FSM applies Raft entries: a write
 * that took a later index and whose commit ends first waits for every lower index to apply or fail, so reads
 * never see a table's index or an allocation's ModifyIndex go back, and a blocking query holding an index misses
 * no write below it. One served agent in process (mock tasks); the interleavings are forced with a seam on the
 * store's commit that holds a write once its commit is durable, or fails it, until the test lets it go on.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { StoreCommitError, type WriteTx } from '../../src/state/agent-store.ts';
import { call, type Answer } from './agent-process.ts';
import { cleanUp, mockJob, runJob, type Served, SUITE_TIMEOUT, serveWithRoom, until } from './in-process-agent.ts';

type Json = Record<string, any>;
/** The writes of one commit, as the seam reads them. */
type Op = { table: string; key: string; removed: boolean };

/** Every gate made, opened after each test whatever it found: a failed test leaves no write held. */
const gates: (() => void)[] = [];

/** A promise and its resolve. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  gates.push(open);
  return { opened, open };
}

describe('writes apply in index order', { timeout: SUITE_TIMEOUT }, () => {
  let s: Served;
  beforeAll(async () => {
    s = await serveWithRoom();
  });
  afterEach(() => {
    vi.restoreAllMocks();
    for (const open of gates.splice(0)) open();
  });
  afterAll(cleanUp);

  /**
   * A seam on the store's commit, each rule used by the first commit whose writes match it: `held` commits, tells
   * `reached`, then waits for `until` before the writer goes on; `failed` tells `reached`, waits, and fails
   * without writing; `durable` only tells once committed. Other commits pass through.
   */
  function seam(): {
    held(match: (ops: Op[]) => boolean, until: Promise<void>): Promise<void>;
    failed(match: (ops: Op[]) => boolean, until: Promise<void>): Promise<void>;
    durable(match: (ops: Op[]) => boolean): Promise<void>;
    /** Runs at the start of the first commit matching, before it writes. */
    before(match: (ops: Op[]) => boolean, see: () => void): void;
  } {
    const commit = s.store.commit.bind(s.store);
    type Rule = { match: (ops: Op[]) => boolean; run: (write: (tx: WriteTx) => void) => Promise<void> };
    const rules: Rule[] = [];
    vi.spyOn(s.store, 'commit').mockImplementation(async (write) => {
      const ops: Op[] = [];
      write({ put: (table, key) => void ops.push({ table, key, removed: false }), remove: (table, key) => void ops.push({ table, key, removed: true }), index: () => undefined });
      const at = rules.findIndex((r) => r.match(ops));
      if (at < 0) return commit(write);
      const [rule] = rules.splice(at, 1);
      return rule!.run(write);
    });
    const rule = (match: Rule['match'], run: (write: (tx: WriteTx) => void, reached: () => void) => Promise<void>) => {
      const reached = gate();
      rules.push({ match, run: (write) => run(write, reached.open) });
      return reached.opened;
    };
    return {
      held: (match, until) => rule(match, async (write, reached) => {
        await commit(write);
        reached();
        await until;
      }),
      failed: (match, until) => rule(match, async (_write, reached) => {
        reached();
        await until;
        throw new StoreCommitError(`${s.store.path}: the disk is full (the test's seam)`, s.store.path);
      }),
      durable: (match) => rule(match, async (write, reached) => {
        await commit(write);
        reached();
      }),
      before: (match, see) => void rule(match, async (write) => {
        see();
        await commit(write);
      }),
    };
  }

  const putsJob = (id: string) => (ops: Op[]) => ops.some((o) => o.table === 'jobs' && o.key === id);
  const putsVar = (path: string) => (ops: Op[]) => ops.some((o) => o.table === 'vars' && o.key === `default/${path}`);
  const indexOf = (res: Answer) => Number(res.headers['x-nomad-index']);
  const ok = (res: Answer) => {
    expect(res.status, res.text).toBe(200);
    return res;
  };

  /** A read of the jobs list and of the allocations list: each one's index and the jobs it shows. */
  type Read = { jobs: { index: number; ids: string[] }; allocs: { index: number; ids: string[] } };
  async function read(): Promise<Read> {
    const jobs = ok(await call(s.socket, 'GET', '/v1/jobs'));
    const allocs = ok(await call(s.socket, 'GET', '/v1/allocations'));
    return {
      jobs: { index: indexOf(jobs), ids: jobs.json<Json[]>().map((j) => j['ID']) },
      allocs: { index: indexOf(allocs), ids: allocs.json<Json[]>().map((a) => a['JobID']) },
    };
  }

  /** No index goes back from one read to the next, and a read at a write's index or past it shows that write. */
  function consistent(reads: Read[], written: { id: string; index: number }[]): void {
    for (const list of ['jobs', 'allocs'] as const) {
      const indexes = reads.map((r) => r[list].index);
      expect(indexes, `${list}' indexes`).toEqual([...indexes].sort((a, b) => a - b));
      for (const r of reads) for (const w of written) if (r[list].index >= w.index) expect(r[list].ids, `${list} at ${r[list].index}`).toContain(w.id);
    }
  }

  it('two registrations whose commits end in reverse order: no list index goes back, and a blocking read wakes with both', async () => {
    const sm = seam();
    const go = gate();
    const firstHeld = sm.held(putsJob('order-a'), go.opened);
    const secondDurable = sm.durable(putsJob('order-b'));
    const reads = [await read()];
    const first = call(s.socket, 'PUT', '/v1/jobs', mockJob('order-a'));
    await firstHeld;
    reads.push(await read());
    const second = call(s.socket, 'PUT', '/v1/jobs', mockJob('order-b'));
    await secondDurable;
    // The later registration is durable, the earlier one not applied yet: neither is seen, and no index moves.
    reads.push(await read());
    const since = reads.at(-1)!.jobs.index;
    const blocking = call(s.socket, 'GET', `/v1/jobs?index=${since}&wait=5s`);
    go.open();
    const [a, b] = (await Promise.all([first, second])).map((r) => ok(r).json<Json>());
    expect(a!['Index']).toBeLessThan(b!['Index']);
    const woken = ok(await blocking);
    expect(indexOf(woken)).toBeGreaterThan(since);
    expect(woken.json<Json[]>().map((j) => j['ID'])).toEqual(expect.arrayContaining(['order-a', 'order-b']));
    reads.push(await read());
    consistent(reads, [{ id: 'order-a', index: a!['Index'] }, { id: 'order-b', index: b!['Index'] }]);
    expect(reads.at(-1)!.jobs.index).toBeGreaterThanOrEqual(b!['Index']);
  });

  it('a task\'s state change during a stop\'s commit: the allocation\'s ModifyIndex never goes back and ends at the newest', async () => {
    const alloc = await runJob(s, mockJob('order-stop'));
    const modifyIndex = async () => ok(await call(s.socket, 'GET', `/v1/allocation/${alloc.ID}`)).json<Json>()['ModifyIndex'] as number;
    const seen = [await modifyIndex()];
    const sm = seam();
    const go = gate();
    const stopHeld = sm.held((ops) => ops.some((o) => o.table === 'allocs' && o.key === alloc.ID), go.opened);
    const stop = call(s.socket, 'PUT', `/v1/allocation/${alloc.ID}/stop`);
    await stopHeld;
    // The allocation's tasks end on their own while the stop's commit is durable and not yet applied: each of its
    // state changes takes a later index than the stop's.
    const runner = s.api.registry.findAlloc(alloc.ID)!.runner!;
    runner.send({ type: 'KILL' });
    await until(async () => runner.getState().clientStatus, (status) => status === 'complete', 'the allocation ended');
    seen.push(await modifyIndex());
    go.open();
    const stopIndex = ok(await stop).json<Json>()['Index'] as number;
    // The runner's end is shown once its save (queued behind the held commit) has landed.
    const final = await until(async () => ok(await call(s.socket, 'GET', `/v1/allocation/${alloc.ID}`)).json<Json>(), (a) => a['ClientStatus'] === 'complete', 'the saved end shown');
    seen.push(final['ModifyIndex']);
    expect(seen).toEqual([...seen].sort((x, y) => x - y));
    // The stop's apply came before the state changes': the allocation's index is past the stop's.
    expect(seen[2]).toBeGreaterThan(stopIndex);
    // It ends at the newest change of the allocation: the allocations list's index, as nothing else changed since.
    const list = ok(await call(s.socket, 'GET', '/v1/job/order-stop/allocations'));
    expect(final['ModifyIndex']).toBe(Math.max(...list.json<Json[]>().filter((a) => a['ID'] === alloc.ID).map((a) => a['ModifyIndex'])));
    expect(final['ModifyIndex']).toBeGreaterThanOrEqual(stopIndex);
  });

  it('a failed commit in the middle does not stall later writes: they apply once it has failed, in index order', async () => {
    const sm = seam();
    const go = gate();
    const failing = sm.failed(putsJob('order-refused'), go.opened);
    const laterDurable = sm.durable(putsJob('order-after'));
    const before = await read();
    const refused = call(s.socket, 'PUT', '/v1/jobs', mockJob('order-refused'));
    await failing;
    const later = call(s.socket, 'PUT', '/v1/jobs', mockJob('order-after'));
    await laterDurable;
    // Durable, but behind a lower index whose commit has not ended: not applied yet.
    const between = await read();
    expect(between.jobs.ids).not.toContain('order-after');
    go.open();
    expect((await refused).status).toBe(500);
    const after = ok(await later).json<Json>();
    const last = await read();
    expect(last.jobs.ids).toContain('order-after');
    expect(last.jobs.ids).not.toContain('order-refused');
    consistent([before, between, last], [{ id: 'order-after', index: after['Index'] }]);
  });

  it('a registration after a variable write whose commit ends last applies after it', async () => {
    const sm = seam();
    const go = gate();
    const varHeld = sm.held(putsVar('order/first'), go.opened);
    const jobDurable = sm.durable(putsJob('order-after-var'));
    const written = call(s.socket, 'PUT', '/v1/var/order/first', { Items: { a: '1' } });
    await varHeld;
    const before = await read();
    const registered = call(s.socket, 'PUT', '/v1/jobs', mockJob('order-after-var'));
    await jobDurable;
    const between = await read();
    expect(between.jobs.ids).not.toContain('order-after-var');
    go.open();
    const v = ok(await written).json<Json>();
    const r = ok(await registered).json<Json>();
    expect(v['ModifyIndex']).toBeLessThan(r['Index']);
    consistent([before, between, await read()], [{ id: 'order-after-var', index: r['Index'] }]);
  });

  it.each<[string, string, (ops: Op[]) => boolean, () => Promise<Answer>, (res: Answer) => number]>([
    ['a variable write', 'order-before-var', putsVar('order/second'), () => call(s.socket, 'PUT', '/v1/var/order/second', { Items: { a: '1' } }), (res) => res.json<Json>()['ModifyIndex']],
    ['an ACL token\'s creation', 'order-before-token', (ops) => ops.some((o) => o.table === 'acl'), () => call(s.socket, 'PUT', '/v1/acl/token', { Name: 'order', Policies: ['read'] }), (res) => res.json<Json>()['CreateIndex']],
  ])('%s after a registration still committing commits only once the registration is visible', async (_name, job, mine, write, indexOfWrite) => {
    const sm = seam();
    const go = gate();
    const jobHeld = sm.held(putsJob(job), go.opened);
    let visibleWhenCommitted: boolean | undefined;
    // Read straight from the store: committing it is what makes it visible.
    sm.before(mine, () => (visibleWhenCommitted = s.api.registry.getJob(job) !== undefined));
    const registered = call(s.socket, 'PUT', '/v1/jobs', mockJob(job));
    await jobHeld;
    // The registration goes on once the write has taken its index (a later one) from the agent's order.
    const order = s.api.index.order;
    const take = order.take.bind(order);
    vi.spyOn(order, 'take').mockImplementation(() => {
      const i = take();
      queueMicrotask(() => setImmediate(go.open));
      return i;
    });
    const written = write();
    const r = ok(await registered).json<Json>();
    const w = ok(await written);
    expect(r['Index']).toBeLessThan(indexOfWrite(w));
    expect(visibleWhenCommitted).toBe(true);
  });

  it('leaves no index open once every write has answered, refused ones included', async () => {
    // Every write takes its index from the agent's one order, the variables' and the tokens' as the registry's.
    const order = s.api.index.order;
    await until(async () => order.pending, (open) => open.length === 0, 'every index settled');
  });
});
