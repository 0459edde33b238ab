/**
 * The node's CPU, cores and memory as Nomad's scheduler fits allocations into them (`AllocsFit`): what the
 * live allocations ask for plus the new one must not pass what the node has, checked dimension by dimension
 * in Nomad's order (cpu, cores, memory). A placement that does not fit is not made; the evaluation records
 * the exhausted dimension, as Nomad's AllocMetric does, and waits for capacity.
 *
 * Only what tasks ask for is counted. Nomad fills 100 MHz and 300 MB into a task that gives no `resources`;
 * counted here, those would cap a one-node agent at a few dozen tasks that ask for nothing, so a task without
 * a resources block asks for nothing. Like the port allocator, this keeps no state: what is used is read from
 * the allocations each time.
 */
import { cpus, totalmem } from 'node:os';
import type { AllocSpec, AllocState } from '../jobspec/types.ts';

/** What the node has: CPU in MHz (0 when the host does not say its clock: not checked then), cores, memory in MB. */
export interface Capacity {
  cpu: number;
  cores: number;
  memoryMB: number;
}

/** What an allocation asks for, in the same units. */
export type Ask = Capacity;

/** An allocation as far as its resources go. */
export interface ResourceHolder {
  id: string;
  desired: 'run' | 'stop' | 'evict';
  spec: Pick<AllocSpec, 'tasks'>;
  lastState: Pick<AllocState, 'clientStatus'>;
}

/** Why a placement does not fit: Nomad's exhausted dimension and a sentence for people. */
export type Fit = { ok: true } | { ok: false; dimension: 'cpu' | 'cores' | 'memory'; reason: string };

/** The host as Nomad's fingerprint reports it: every core's clock added up, the core count, all memory. */
export function hostCapacity(): Capacity {
  const all = cpus();
  return { cpu: Math.round(all[0]?.speed ?? 0) * all.length, cores: all.length, memoryMB: Math.floor(totalmem() / 1024 / 1024) };
}

const amount = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);

/** The sum of the tasks' `cpu`, `cores` and `memory` (the job loader's `memoryMB`). */
export function askOf(spec: Pick<AllocSpec, 'tasks'>): Ask {
  const ask: Ask = { cpu: 0, cores: 0, memoryMB: 0 };
  for (const t of spec.tasks) {
    ask.cpu += amount(t.resources?.['cpu']);
    ask.cores += amount(t.resources?.['cores']);
    ask.memoryMB += amount(t.resources?.['memoryMB']);
  }
  return ask;
}

/** True while an allocation holds what it asked for: wanted running and not finished (Nomad's non-terminal). */
export function holdsResources(a: ResourceHolder): boolean {
  return a.desired === 'run' && a.lastState.clientStatus !== 'complete' && a.lastState.clientStatus !== 'failed';
}

/** What the live allocations among `allocs` ask for together (the last one listed for an id wins). */
export function resourcesUsed(allocs: Iterable<ResourceHolder>): Ask {
  const latest = new Map<string, ResourceHolder>();
  for (const a of allocs) latest.set(a.id, a);
  const used: Ask = { cpu: 0, cores: 0, memoryMB: 0 };
  for (const a of latest.values()) {
    if (!holdsResources(a)) continue;
    const ask = askOf(a.spec);
    used.cpu += ask.cpu;
    used.cores += ask.cores;
    used.memoryMB += ask.memoryMB;
  }
  return used;
}

/** Whether `ask` fits beside `used` on a node of `capacity`; the first dimension that does not, in Nomad's order. */
export function fitResources(ask: Ask, used: Ask, capacity: Capacity): Fit {
  const rows: { dimension: 'cpu' | 'cores' | 'memory'; unit: string; key: keyof Capacity }[] = [
    { dimension: 'cpu', unit: 'MHz', key: 'cpu' },
    { dimension: 'cores', unit: 'cores', key: 'cores' },
    { dimension: 'memory', unit: 'MB', key: 'memoryMB' },
  ];
  for (const { dimension, unit, key } of rows) {
    // A host that does not report its clock (some VMs and containers) has no CPU figure to hold asks to.
    if (ask[key] === 0 || (key === 'cpu' && capacity.cpu === 0)) continue;
    if (used[key] + ask[key] > capacity[key]) {
      const free = Math.max(0, capacity[key] - used[key]);
      return { ok: false, dimension, reason: `${dimension} exhausted: the group asks for ${ask[key]} ${unit}; ${free} ${unit} of the node's ${capacity[key]} ${unit} are free` };
    }
  }
  return { ok: true };
}
