/**
 * The local node's fingerprint (localNodeInfo): its id is a v4-shaped UUID derived from the hostname, so
 * it is stable across restarts and differs between hosts; the machine is fingerprinted once per process;
 * the attributes carry Nomad's names and values (`os.name` lower-case, `driver.raw_exec` = "1").
 * node:os is stood in for, so each test fingerprints a fresh module against a hostname it chooses.
 */
import * as realOs from 'node:os';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const host = vi.hoisted(() => ({ name: 'host-a' }));
vi.mock('node:os', async (importOriginal) => {
  const os = await importOriginal<typeof import('node:os')>();
  return { ...os, hostname: () => host.name };
});

async function freshNodeInfo(hostname: string) {
  host.name = hostname;
  vi.resetModules();
  return (await import('../../src/env/node-info.ts')).localNodeInfo;
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('the local node', () => {
  beforeEach(() => {
    host.name = 'host-a';
  });

  it('has a v4-shaped id that is the same for one hostname and differs between hostnames', async () => {
    const a1 = (await freshNodeInfo('host-a'))().id;
    const a2 = (await freshNodeInfo('host-a'))().id;
    const b = (await freshNodeInfo('host-b'))().id;
    expect(a1).toMatch(UUID_V4);
    expect(a2).toBe(a1);
    expect(b).not.toBe(a1);
    expect(b).toMatch(UUID_V4);
  });

  it('is named after its hostname', async () => {
    const n = (await freshNodeInfo('worker-7'))();
    expect(n.name).toBe('worker-7');
    expect(n.attributes['unique.hostname']).toBe('worker-7');
  });

  it('is fingerprinted once per process: a later hostname change is not seen', async () => {
    const localNodeInfo = await freshNodeInfo('host-a');
    const first = localNodeInfo({ region: 'eu' });
    host.name = 'renamed';
    const later = localNodeInfo({ region: 'us' });
    expect([later.id, later.name]).toEqual([first.id, first.name]);
  });

  it("carries Nomad's attributes: os.name lower-case, driver.raw_exec \"1\", the machine's kernel and cpu", async () => {
    const a = (await freshNodeInfo('host-a'))().attributes;
    expect(a).toMatchObject({
      'kernel.name': realOs.platform(),
      'kernel.version': realOs.release(),
      'kernel.arch': realOs.arch(),
      'os.name': realOs.type().toLowerCase(),
      'cpu.arch': realOs.arch(),
      'cpu.numcores': String(realOs.cpus().length),
      'memory.totalbytes': String(realOs.totalmem()),
      'driver.raw_exec': '1',
    });
    expect(a['os.name']).toBe(a['os.name']!.toLowerCase());
  });
});
