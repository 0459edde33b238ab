/** The node's host ports: the allocator's rules alone, then through a served agent's registry (in process). */
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { groupUpdate } from '../../src/api/job-diff.ts';
import { PortAllocator, portsHeld, probeHost, type PortHolder } from '../../src/api/port-allocator.ts';
import type { AllocSpec, NetworkAsk } from '../../src/jobspec/types.ts';
import { call, freePort, waitForAllocs } from './agent-process.ts';
import { cleanUp, serve, type Served } from './in-process-agent.ts';

afterEach(cleanUp);

const ask = (...ports: NetworkAsk['ports']): NetworkAsk => ({ mode: 'host', ports });
const holder = (id: string, values: number[], over: Partial<PortHolder> = {}): PortHolder => ({
  id, desired: 'run', lastState: { clientStatus: 'running' }, spec: { ports: values.map((value) => ({ label: 'p', value, to: 0, hostIP: '127.0.0.1' })) }, ...over,
});


describe('the port allocator', () => {
  it('reserves a static port as asked and picks dynamic ones in the range, all different', () => {
    const allocator = new PortAllocator({ minDynamicPort: 20000, maxDynamicPort: 20002, random: () => 0 });
    const placed = allocator.assign(ask({ label: 'admin', static: 9901 }, { label: 'http' }, { label: 'grpc', to: 8080 }), new Map([[20000, 'other']]));
    expect(placed).toEqual({ ok: true, ports: [
      { label: 'admin', value: 9901, to: 0, hostIP: '127.0.0.1' },
      { label: 'http', value: 20001, to: 0, hostIP: '127.0.0.1' },
      { label: 'grpc', value: 20002, to: 8080, hostIP: '127.0.0.1' },
    ] });
  });

  it('uses Nomad\'s default dynamic range, 20000 to 32000', () => {
    const allocator = new PortAllocator();
    for (const r of [0, 0.5, 0.999999]) {
      const placed = new PortAllocator({ random: () => r }).assign(ask({ label: 'http' }), new Map());
      expect(placed.ok && placed.ports[0]!.value).toBeGreaterThanOrEqual(20000);
      expect(placed.ok && placed.ports[0]!.value).toBeLessThanOrEqual(32000);
    }
    expect([allocator.minDynamicPort, allocator.maxDynamicPort]).toEqual([20000, 32000]);
  });

  it('refuses a static port another live allocation holds, naming it', () => {
    const placed = new PortAllocator().assign(ask({ label: 'admin', static: 9901 }), portsHeld([holder('a1', [9901])]));
    expect(placed).toEqual({ ok: false, dimension: 'network: reserved port collision admin=9901', reason: 'static port 9901 (port "admin") is already reserved by allocation a1' });
  });

  it('refuses a static port the host would not bind, saying why', () => {
    const placed = new PortAllocator().assign(ask({ label: 'admin', static: 9901 }), new Map(), new Map([[9901, 'another process is listening on it']]));
    expect(placed).toMatchObject({ ok: false, reason: 'static port 9901 (port "admin") cannot be bound on the host: another process is listening on it' });
  });

  it('fails when every dynamic port is held', () => {
    const placed = new PortAllocator({ minDynamicPort: 20000, maxDynamicPort: 20001 }).assign(ask({ label: 'http' }), portsHeld([holder('a', [20000]), holder('b', [20001])]));
    expect(placed).toEqual({ ok: false, dimension: 'network: dynamic port selection failed', reason: 'no free dynamic port for port "http": all of 20000-20001 are held' });
  });

  it('frees the ports of an allocation once it is terminal or desired stopped', () => {
    const held = portsHeld([
      holder('runs', [1]),
      holder('pending', [2], { lastState: { clientStatus: 'pending' } }),
      holder('complete', [3], { lastState: { clientStatus: 'complete' } }),
      holder('failed', [4], { lastState: { clientStatus: 'failed' } }),
      holder('stopping', [5], { desired: 'stop' }),
    ]);
    expect([...held]).toEqual([[1, 'runs'], [2, 'pending']]);
  });

  it('reads the newest draft of an allocation over its live entry', () => {
    expect([...portsHeld([holder('a', [1]), holder('a', [1], { desired: 'stop' })])]).toEqual([]);
  });

  it('refuses a bad dynamic range', () => {
    expect(() => new PortAllocator({ minDynamicPort: 30000, maxDynamicPort: 20000 })).toThrow(/dynamic port range 30000-20000 is not valid/);
  });

  it('finds a port another process listens on by binding it', async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const taken = (busy.address() as { port: number }).port;
    const free = await freePort();
    try {
      expect([...(await probeHost([taken, free]))]).toEqual([[taken, 'another process is listening on it']]);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });
});

const job = (id: string, ports: { Label: string; Value?: number }[], count = 1, args = ['300']) => ({
  Job: {
    ID: id, Type: 'service',
    TaskGroups: [{
      Name: 'g', Count: count,
      Networks: [{ Mode: 'host', ReservedPorts: ports.filter((p) => p.Value), DynamicPorts: ports.filter((p) => !p.Value) }],
      Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sleep', args }, KillTimeout: 1e9 }],
    }],
  },
});

interface PortMapping { Label: string; Value: number; To: number; HostIP: string }
const portsOf = async (s: Served, allocId: string): Promise<PortMapping[]> =>
  (await call(s.socket, 'GET', `/v1/allocation/${allocId}`)).json().AllocatedResources?.Shared?.Ports ?? [];
const running = (n: number) => (l: { ClientStatus: string; DesiredStatus: string }[]) => l.filter((a) => a.DesiredStatus === 'run' && a.ClientStatus === 'running').length === n;

describe('ports through the agent', { timeout: 60_000 }, () => {
  it('gives every allocation of a group its own dynamic port, shown in AllocatedResources', async () => {
    const s = await serve();
    expect((await call(s.socket, 'PUT', '/v1/jobs', job('web', [{ Label: 'http' }], 3))).status).toBe(200);
    const allocs = await waitForAllocs(s.socket, '/v1/job/web/allocations', running(3));
    const ports = await Promise.all(allocs.map((a) => portsOf(s, a.ID)));
    const values = ports.map((p) => p[0]!.Value);
    expect(new Set(values).size).toBe(3);
    for (const p of ports) expect(p).toEqual([{ Label: 'http', Value: expect.any(Number), To: 0, HostIP: '127.0.0.1' }]);
    for (const v of values) expect(v >= 20000 && v <= 32000).toBe(true);
  });

  it('blocks a placement whose static port another allocation holds, and places it once that one is stopped', async () => {
    const s = await serve();
    const port = await freePort();
    await call(s.socket, 'PUT', '/v1/jobs', job('first', [{ Label: 'admin', Value: port }]));
    const [first] = await waitForAllocs(s.socket, '/v1/job/first/allocations', running(1));
    expect(await portsOf(s, first!.ID)).toEqual([{ Label: 'admin', Value: port, To: 0, HostIP: '127.0.0.1' }]);

    const res = await call(s.socket, 'PUT', '/v1/jobs', job('second', [{ Label: 'admin', Value: port }]));
    expect(res.status).toBe(200);
    const evaluation = (await call(s.socket, 'GET', `/v1/evaluation/${res.json().EvalID}`)).json();
    // As Nomad's scheduler: the registration's evaluation completes with the failure, and a blocked one waits.
    expect(evaluation).toMatchObject({ Status: 'complete', StatusDescription: '', BlockedEval: expect.any(String) });
    expect(evaluation.FailedTGAllocs.g.DimensionExhausted).toEqual({ [`network: reserved port collision admin=${port}`]: 1 });
    expect(evaluation.QueuedAllocations).toEqual({ g: 1 });
    const blocked = (await call(s.socket, 'GET', `/v1/evaluation/${evaluation.BlockedEval}`)).json();
    expect(blocked).toMatchObject({ Status: 'blocked', TriggeredBy: 'queued-allocs', StatusDescription: 'created to place remaining allocations', PreviousEval: evaluation.ID });
    expect((await call(s.socket, 'GET', '/v1/job/second/allocations')).json()).toEqual([]);
    expect((await call(s.socket, 'GET', '/v1/job/second/summary')).json().Summary.g).toMatchObject({ Queued: 1, Running: 0, Starting: 0 });

    // Once the first job's allocation has ended, the blocked job is evaluated again by itself and placed.
    await call(s.socket, 'DELETE', '/v1/job/first');
    const [second] = await waitForAllocs(s.socket, '/v1/job/second/allocations', running(1));
    const evals = (await call(s.socket, 'GET', '/v1/job/second/evaluations')).json() as { TriggeredBy: string; Status: string }[];
    // The blocked evaluation itself was processed again and completed, placing the allocation.
    expect(evals.map((e) => [e.TriggeredBy, e.Status])).toEqual([['queued-allocs', 'complete'], ['job-register', 'complete']]);
    expect((await call(s.socket, 'GET', `/v1/evaluation/${blocked.ID}/allocations`)).json()).toMatchObject([{ ID: second!.ID }]);
    expect((await call(s.socket, 'GET', '/v1/job/first/allocations')).json()).toMatchObject([{ ClientStatus: expect.stringMatching(/^(complete|failed)$/) }]);
    expect(await portsOf(s, second!.ID)).toEqual([{ Label: 'admin', Value: port, To: 0, HostIP: '127.0.0.1' }]);
    expect((await call(s.socket, 'GET', '/v1/job/second/summary')).json().Summary.g).toMatchObject({ Queued: 0, Running: 1 });
  });

  it('keeps an allocation\'s ports through an in-place update, and gives a replacement new ones when the network changes', async () => {
    const s = await serve();
    await call(s.socket, 'PUT', '/v1/jobs', job('web', [{ Label: 'http' }]));
    const [first] = await waitForAllocs(s.socket, '/v1/job/web/allocations', running(1));
    const ports = await portsOf(s, first!.ID);

    const inPlace = job('web', [{ Label: 'http' }]);
    Object.assign(inPlace.Job.TaskGroups[0]!, { RestartPolicy: { Attempts: 5, Interval: 600e9, Delay: 1e9, Mode: 'fail' } });
    await call(s.socket, 'PUT', '/v1/jobs', inPlace);
    const [updated] = await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l.length === 1 && l[0]!.JobVersion === 1);
    expect(updated!.ID).toBe(first!.ID);
    expect(await portsOf(s, first!.ID)).toEqual(ports);

    await call(s.socket, 'PUT', '/v1/jobs', job('web', [{ Label: 'http' }, { Label: 'admin', Value: await freePort() }]));
    const list = await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l.length === 2 && running(1)(l));
    const replacement = list.find((a) => a.DesiredStatus === 'run')!;
    expect(replacement.PreviousAllocation).toBe(first!.ID);
    expect((await portsOf(s, replacement.ID)).map((p) => p.Label).sort()).toEqual(['admin', 'http']);
  });

  it('plans a placement that would find its static port taken as a place, with the failure in FailedTGAllocs', async () => {
    const s = await serve();
    const port = await freePort();
    await call(s.socket, 'PUT', '/v1/jobs', job('first', [{ Label: 'admin', Value: port }]));
    await waitForAllocs(s.socket, '/v1/job/first/allocations', running(1));
    const body = job('second', [{ Label: 'admin', Value: port }]);
    const plan = (await call(s.socket, 'PUT', '/v1/job/second/plan', body)).json();
    expect(plan.Annotations.DesiredTGUpdates.g).toMatchObject({ Place: 1 });
    expect(plan.FailedTGAllocs).toMatchObject({ g: { DimensionExhausted: { [`network: reserved port collision admin=${port}`]: 1 }, CoalescedFailures: 0 } });
    expect((await call(s.socket, 'PUT', '/v1/job/first/plan', job('first', [{ Label: 'admin', Value: port }]))).json().FailedTGAllocs).toBeNull();
  });

  it('blocks a static port some other process on the host listens on', async () => {
    const s = await serve();
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '0.0.0.0', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const res = await call(s.socket, 'PUT', '/v1/jobs', job('web', [{ Label: 'admin', Value: port }]));
      expect(res.status).toBe(200);
      const evaluation = (await call(s.socket, 'GET', `/v1/evaluation/${res.json().EvalID}`)).json();
      expect(evaluation).toMatchObject({ Status: 'complete', FailedTGAllocs: { g: { DimensionExhausted: { [`network: reserved port collision admin=${port}`]: 1 } } } });
      expect((await call(s.socket, 'GET', `/v1/evaluation/${evaluation.BlockedEval}`)).json()).toMatchObject({ Status: 'blocked' });
      expect((await call(s.socket, 'GET', '/v1/job/web/allocations')).json()).toEqual([]);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });
});

describe('a job update and the ports', () => {
  const spec = (network?: NetworkAsk, ports?: AllocSpec['ports']): AllocSpec => ({
    id: 'a', job: 'j', group: 'g', type: 'service', tasks: [{ name: 't', driver: 'mock', config: {} }], ...(network && { network }), ...(ports && { ports }),
  });

  it('leaves an allocation alone when only its placed ports differ from the job\'s template', () => {
    const network = ask({ label: 'http' });
    expect(groupUpdate(spec(network, [{ label: 'http', value: 20001, to: 0, hostIP: '127.0.0.1' }]), spec(network))).toBe('ignore');
  });

  it('replaces an allocation whose network block changed', () => {
    expect(groupUpdate(spec(ask({ label: 'http' })), spec(ask({ label: 'http', static: 8080 })))).toBe('destructive');
    expect(groupUpdate(spec(), spec(ask({ label: 'http' })))).toBe('destructive');
  });
});
