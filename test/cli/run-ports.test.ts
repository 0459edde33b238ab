/**
 * `allocrun run` gives a group's network block its ports as the agent's scheduler does (src/cli/run-ports.ts),
 * so `${NOMAD_PORT_http}` is a port in a foreground run too: rules as rows, one real bound port for the host.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PortAllocator } from '../../src/api/port-allocator.ts';
import type { AllocSpec, PortAsk } from '../../src/jobspec/types.ts';
import { placeRunPorts } from '../../src/cli/run-ports.ts';

const alloc = (id: string, ports?: PortAsk[]): AllocSpec => ({
  id, job: 'web', group: 'app', type: 'service', tasks: [{ name: 't', driver: 'mock', config: {} }],
  ...(ports && { network: { mode: 'host', ports } }),
});
// The dynamic search starts at the bottom of the range: the rows can name the ports.
const allocator = () => new PortAllocator({ random: () => 0 });

let busy: Server;
let busyPort: number;
beforeAll(async () => {
  busy = createServer();
  await new Promise<void>((r) => busy.listen({ port: 0, host: '0.0.0.0' }, () => r()));
  busyPort = (busy.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((r) => busy.close(() => r())));

describe('placeRunPorts', () => {
  it.each([
    ['no network block: unchanged, no ports', [alloc('a')], [undefined]],
    ['one dynamic port per allocation, none shared', [alloc('a', [{ label: 'http' }]), alloc('b', [{ label: 'http' }])], [[['http', 20000]], [['http', 20001]]]],
    ['a static port as asked, dynamic ones around it', [alloc('a', [{ label: 'admin', static: 20000 }, { label: 'http' }])], [[['admin', 20000], ['http', 20001]]]],
  ] as const)('%s', async (_name, allocs, want) => {
    const placed = await placeRunPorts([...allocs], 'job.nomad', allocator());
    expect(placed.map((a) => a.ports?.map((p) => [p.label, p.value]))).toEqual(want);
    for (const a of placed) for (const p of a.ports ?? []) expect(p.hostIP).toBe('127.0.0.1');
  });

  it('refuses one static port asked by two allocations, naming the second, its group and the holder', async () => {
    const run = placeRunPorts([alloc('web-app-0', [{ label: 'admin', static: 29901 }]), alloc('web-app-1', [{ label: 'admin', static: 29901 }])], 'web.nomad', allocator());
    await expect(run).rejects.toMatchObject({ code: 'ErrPortsUnavailable', message: 'cannot run web.nomad: allocation web-app-1 (group "app"): static port 29901 (port "admin") is already reserved by allocation web-app-0' });
  });

  it('refuses a static port another program holds on the host, before anything starts', async () => {
    const run = placeRunPorts([alloc('web-app-0', [{ label: 'admin', static: busyPort }])], 'web.nomad', allocator());
    await expect(run).rejects.toMatchObject({ message: `cannot run web.nomad: allocation web-app-0 (group "app"): static port ${busyPort} (port "admin") cannot be bound on the host: another process is listening on it` });
  });
});
