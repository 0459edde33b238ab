/**
 * The node's host ports, handed out the way Nomad's scheduler does for a group's `network` block in host
 * mode: a static port is reserved as asked, a dynamic one is picked from the node's range (Nomad's default
 * 20000–32000). No two live allocations hold the same port; an allocation's ports are freed once it is
 * terminal (desired stop, or complete/failed). What an allocation holds is part of its spec
 * (`AllocSpec.ports`), chosen when it is placed and committed with it, so a restarted agent knows it.
 *
 * The allocator keeps no state of its own: what is taken is read from the allocations each time, so it
 * can never disagree with the store.
 */
import { createServer } from 'node:net';
import type { AllocatedPort, AllocSpec, AllocState, NetworkAsk } from '../jobspec/types.ts';

/** Nomad's default dynamic port range (client `min_dynamic_port` / `max_dynamic_port`). */
export const DEFAULT_MIN_DYNAMIC_PORT = 20000;
export const DEFAULT_MAX_DYNAMIC_PORT = 32000;

/** How the allocator is set up: the dynamic range, the address tasks are told, how ports are picked. */
export interface PortAllocatorOptions {
  minDynamicPort?: number;
  maxDynamicPort?: number;
  /** The host address of every port (NOMAD_IP_<label>); default 127.0.0.1, as a `nomad agent -dev` node. */
  hostIP?: string;
  /** A number in [0, 1) to start the search for a dynamic port at (default Math.random, as Nomad picks at random). */
  random?: () => number;
}

/** An allocation as far as its ports go. */
export interface PortHolder {
  id: string;
  desired: 'run' | 'stop' | 'evict';
  spec: Pick<AllocSpec, 'ports'>;
  lastState: Pick<AllocState, 'clientStatus'>;
}

/** Which allocation holds each host port. */
export type HeldPorts = ReadonlyMap<number, string>;

/** Why a static port cannot be bound on the host (another process has it, or it needs privileges). */
export type HostBusy = ReadonlyMap<number, string>;

/** The ports placed, or why they could not be (Nomad's exhausted dimension and a sentence for people). */
export type PortPlacement =
  | { ok: true; ports: AllocatedPort[] }
  | { ok: false; dimension: string; reason: string };

/** True while an allocation holds its ports: wanted running and not finished. */
export function holdsPorts(a: PortHolder): boolean {
  return a.desired === 'run' && a.lastState.clientStatus !== 'complete' && a.lastState.clientStatus !== 'failed';
}

/** The ports held by the live allocations among `allocs` (the last one listed for an id wins). */
export function portsHeld(allocs: Iterable<PortHolder>): Map<number, string> {
  const latest = new Map<string, PortHolder>();
  for (const a of allocs) latest.set(a.id, a);
  const held = new Map<number, string>();
  for (const a of latest.values()) if (holdsPorts(a)) for (const p of a.spec.ports ?? []) held.set(p.value, a.id);
  return held;
}

/** Picks host ports for allocations; see the module comment. */
export class PortAllocator {
  readonly minDynamicPort: number;
  readonly maxDynamicPort: number;
  readonly hostIP: string;
  private readonly random: () => number;

  constructor(opts: PortAllocatorOptions = {}) {
    this.minDynamicPort = opts.minDynamicPort ?? DEFAULT_MIN_DYNAMIC_PORT;
    this.maxDynamicPort = opts.maxDynamicPort ?? DEFAULT_MAX_DYNAMIC_PORT;
    if (!(Number.isInteger(this.minDynamicPort) && Number.isInteger(this.maxDynamicPort) && this.minDynamicPort >= 1 && this.maxDynamicPort <= 65535 && this.minDynamicPort <= this.maxDynamicPort)) {
      throw new RangeError(`dynamic port range ${this.minDynamicPort}-${this.maxDynamicPort} is not valid: give whole numbers with 1 <= min <= max <= 65535`);
    }
    this.hostIP = opts.hostIP ?? '127.0.0.1';
    this.random = opts.random ?? Math.random;
  }

  /**
   * The ports for one allocation's `ask`, given the ports live allocations hold and the static ports the
   * host refused (`probeHost`). Static ports first, as Nomad reserves them before picking dynamic ones.
   */
  assign(ask: NetworkAsk, held: HeldPorts, hostBusy: HostBusy = new Map()): PortPlacement {
    const taken = new Set(held.keys());
    const ports: AllocatedPort[] = [];
    const port = (label: string, value: number, to: number | undefined): AllocatedPort => ({ label, value, to: to !== undefined && to > 0 ? to : 0, hostIP: this.hostIP });
    for (const p of ask.ports) {
      if (p.static === undefined) continue;
      const holder = held.get(p.static);
      if (holder !== undefined) {
        return { ok: false, dimension: `network: reserved port collision ${p.label}=${p.static}`, reason: `static port ${p.static} (port "${p.label}") is already reserved by allocation ${holder}` };
      }
      if (taken.has(p.static)) {
        return { ok: false, dimension: `network: reserved port collision ${p.label}=${p.static}`, reason: `static port ${p.static} (port "${p.label}") is asked for twice` };
      }
      const busy = hostBusy.get(p.static);
      if (busy !== undefined) {
        return { ok: false, dimension: `network: reserved port collision ${p.label}=${p.static}`, reason: `static port ${p.static} (port "${p.label}") cannot be bound on the host: ${busy}` };
      }
      taken.add(p.static);
      ports.push(port(p.label, p.static, p.to));
    }
    const span = this.maxDynamicPort - this.minDynamicPort + 1;
    for (const p of ask.ports) {
      if (p.static !== undefined) continue;
      // From a random start, the first free port: random like Nomad's pick, yet never fails while one is free.
      const start = Math.floor(this.random() * span);
      let value: number | undefined;
      for (let k = 0; k < span; k++) {
        const candidate = this.minDynamicPort + ((start + k) % span);
        if (!taken.has(candidate) && !hostBusy.has(candidate)) {
          value = candidate;
          break;
        }
      }
      if (value === undefined) {
        return { ok: false, dimension: 'network: dynamic port selection failed', reason: `no free dynamic port for port "${p.label}": all of ${this.minDynamicPort}-${this.maxDynamicPort} are held` };
      }
      taken.add(value);
      ports.push(port(p.label, value, p.to));
    }
    return { ok: true, ports: ports.sort((a, b) => ask.ports.findIndex((p) => p.label === a.label) - ask.ports.findIndex((p) => p.label === b.label)) };
  }
}

/**
 * Tries to bind each of `ports` on the host (all addresses) and says why those that cannot be bound are
 * refused (another process listens there, or the port needs privileges). Ports a live allocation of this
 * agent holds are bound by its own tasks: callers leave them out.
 */
export async function probeHost(ports: Iterable<number>): Promise<Map<number, string>> {
  const busy = new Map<number, string>();
  await Promise.all(
    [...new Set(ports)].map(
      (port) =>
        new Promise<void>((resolve) => {
          const server = createServer();
          server.once('error', (err: NodeJS.ErrnoException) => {
            busy.set(port, err.code === 'EADDRINUSE' ? 'another process is listening on it' : err.code === 'EACCES' ? 'binding it needs privileges this agent does not have' : `${err.code ?? 'error'}: ${err.message}`);
            resolve();
          });
          server.listen({ port, host: '0.0.0.0', exclusive: true }, () => server.close(() => resolve()));
        }),
    ),
  );
  return busy;
}

/** The static ports `specs` ask for that no live allocation among `holders` holds: the ones to probe. */
export function staticPortsToProbe(specs: Iterable<Pick<AllocSpec, 'network'>>, holders: Iterable<PortHolder>): number[] {
  const held = portsHeld(holders);
  const out = new Set<number>();
  for (const s of specs) for (const p of s.network?.ports ?? []) if (p.static !== undefined && !held.has(p.static)) out.add(p.static);
  return [...out];
}
