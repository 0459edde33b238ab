/**
 * The agent's Nomad-native service catalog: the ServiceRegistrations its allocations' services hooks
 * register, with Nomad's table index for blocking queries and a stream of changes for watchers (templates,
 * the event stream).
 *
 * Nomad keeps registrations in the servers' state; allocrun keeps them in memory. They are not lost by an
 * agent restart in any way that matters: every restored allocation registers its services again as its
 * hooks run on restore, as Nomad's client re-syncs its services after a restart.
 */
import { Subject, type Observable } from 'rxjs';
import { sameRegistration, type ServiceRegistration, type ServiceRegistrationInput } from './service-registration.ts';

/** Where indexes come from: the agent's one modify index (its StateIndex), or the catalog's own counter. */
export interface IndexSource {
  readonly current: number;
  next(): number;
  /** Announces that state up to `index` is visible (wakes the API's blocking queries). */
  changed(index: number): void;
}

/** One registration added, changed or removed. */
export interface ServiceChange {
  type: 'ServiceRegistration' | 'ServiceDeregistration';
  registration: ServiceRegistration;
}

/** The changes one write made, with the index it took. */
export interface ServiceChanges {
  index: number;
  changes: ServiceChange[];
}

/** One namespace's services as `GET /v1/services` lists them. */
export interface ServiceNamespaceList {
  Namespace: string;
  Services: { ServiceName: string; Tags: string[] }[];
}

/**
 * What readers of the catalog need (the API, templates' `nomadService`): lists, the table's index and the
 * changes. `namespace` `*` means every namespace; absent means `default`, as Nomad's API.
 */
export interface ServiceCatalog {
  /** The index of the newest change (Nomad's service_registrations table index); 0 before any. */
  readonly index: number;
  /** The instances of service `name`, ordered by ID. */
  list(name: string, namespace?: string): ServiceRegistration[];
  /** Every service name per namespace, with the union of its instances' tags. */
  names(namespace?: string): ServiceNamespaceList[];
  get(id: string, namespace?: string): ServiceRegistration | undefined;
  byAlloc(allocId: string): ServiceRegistration[];
  byJob(jobId: string, namespace?: string): ServiceRegistration[];
  /** Every write that changed something, after it is visible. */
  readonly changes$: Observable<ServiceChanges>;
}

/** A counter for a catalog that runs without an agent's index. */
class LocalIndex implements IndexSource {
  current = 0;
  next(): number {
    return ++this.current;
  }
  changed(): void {}
}

const inNamespace = (r: ServiceRegistration, namespace: string | undefined) => namespace === '*' || r.Namespace === (namespace || 'default');
const byId = (a: ServiceRegistration, b: ServiceRegistration) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0);

/** The catalog a node's services hooks write to. */
export class ServiceRegistry implements ServiceCatalog {
  private readonly regs = new Map<string, ServiceRegistration>();
  /** What each workload (`alloc\0task|group-g`) registered, so a sync removes what it no longer has. */
  private readonly owned = new Map<string, Set<string>>();
  private readonly subject = new Subject<ServiceChanges>();
  private source: IndexSource;
  private tableIndex = 0;

  constructor(opts: { index?: IndexSource } = {}) {
    this.source = opts.index ?? new LocalIndex();
  }

  get index(): number {
    return this.tableIndex;
  }

  get changes$(): Observable<ServiceChanges> {
    return this.subject.asObservable();
  }

  /**
   * From now on takes indexes from `source` (the agent's, once its API is up). What was registered before
   * (allocations restored before the API started) is stamped with one new index of it, so every index the
   * API shows comes from the same sequence.
   */
  useIndex(source: IndexSource): void {
    this.source = source;
    if (this.regs.size === 0) return;
    const index = source.next();
    for (const [id, r] of this.regs) this.regs.set(id, { ...r, CreateIndex: index, ModifyIndex: index });
    this.tableIndex = index;
    source.changed(index);
  }

  /**
   * Makes `regs` what workload `workload` of allocation `allocId` has registered: new ones added, changed
   * ones updated in place (their CreateIndex kept), the rest of that workload's removed. One index for the
   * whole write; none when nothing changed.
   */
  sync(allocId: string, workload: string, regs: readonly ServiceRegistrationInput[]): ServiceChanges | undefined {
    const key = `${allocId}\0${workload}`;
    const before = this.owned.get(key) ?? new Set<string>();
    const wanted = new Map(regs.map((r) => [r.ID, r]));
    const removed = [...before].filter((id) => !wanted.has(id));
    const upserts = [...wanted.values()].filter((r) => {
      const current = this.regs.get(r.ID);
      return !current || !sameRegistration(current, r);
    });
    if (wanted.size > 0) this.owned.set(key, new Set(wanted.keys()));
    else this.owned.delete(key);
    return this.write(upserts, removed);
  }

  /** Removes what workload `workload` of `allocId` registered (its deregistration on kill or stop). */
  deregisterWorkload(allocId: string, workload: string): ServiceChanges | undefined {
    return this.sync(allocId, workload, []);
  }

  /** Removes everything allocation `allocId` registered. */
  deregisterAlloc(allocId: string): ServiceChanges | undefined {
    const ids: string[] = [];
    for (const [key, owned] of this.owned) {
      if (!key.startsWith(`${allocId}\0`)) continue;
      ids.push(...owned);
      this.owned.delete(key);
    }
    return this.write([], ids);
  }

  /** Removes one registration by ID (`DELETE /v1/service/:name/:id`); false when there is none. */
  remove(id: string): boolean {
    const r = this.regs.get(id);
    if (!r) return false;
    for (const [key, owned] of this.owned) {
      if (owned.delete(id) && owned.size === 0) this.owned.delete(key);
    }
    this.write([], [id]);
    return true;
  }

  list(name: string, namespace?: string): ServiceRegistration[] {
    return [...this.regs.values()].filter((r) => r.ServiceName === name && inNamespace(r, namespace)).sort(byId);
  }

  names(namespace?: string): ServiceNamespaceList[] {
    const spaces = new Map<string, Map<string, Set<string>>>();
    for (const r of this.regs.values()) {
      if (!inNamespace(r, namespace)) continue;
      const services = spaces.get(r.Namespace) ?? new Map<string, Set<string>>();
      spaces.set(r.Namespace, services);
      const tags = services.get(r.ServiceName) ?? new Set<string>();
      services.set(r.ServiceName, tags);
      for (const t of r.Tags) tags.add(t);
    }
    return [...spaces]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([Namespace, services]) => ({
        Namespace,
        Services: [...services].sort(([a], [b]) => (a < b ? -1 : 1)).map(([ServiceName, tags]) => ({ ServiceName, Tags: [...tags].sort() })),
      }));
  }

  get(id: string, namespace?: string): ServiceRegistration | undefined {
    const r = this.regs.get(id);
    return r && inNamespace(r, namespace) ? r : undefined;
  }

  byAlloc(allocId: string): ServiceRegistration[] {
    return [...this.regs.values()].filter((r) => r.AllocID === allocId).sort(byId);
  }

  byJob(jobId: string, namespace?: string): ServiceRegistration[] {
    return [...this.regs.values()].filter((r) => r.JobID === jobId && inNamespace(r, namespace)).sort(byId);
  }

  private write(upserts: readonly ServiceRegistrationInput[], removedIds: readonly string[]): ServiceChanges | undefined {
    const removals = removedIds.map((id) => this.regs.get(id)).filter((r): r is ServiceRegistration => r !== undefined);
    if (upserts.length === 0 && removals.length === 0) return undefined;
    const index = this.source.next();
    const changes: ServiceChange[] = [];
    for (const r of removals) {
      this.regs.delete(r.ID);
      changes.push({ type: 'ServiceDeregistration', registration: { ...r, ModifyIndex: index } });
    }
    for (const input of upserts) {
      const current = this.regs.get(input.ID);
      const registration: ServiceRegistration = { ...input, Tags: [...input.Tags], CreateIndex: current?.CreateIndex ?? index, ModifyIndex: index };
      this.regs.set(input.ID, registration);
      changes.push({ type: 'ServiceRegistration', registration });
    }
    this.tableIndex = index;
    const batch = { index, changes };
    this.source.changed(index);
    this.subject.next(batch);
    return batch;
  }
}
