/**
 * The values consul-template's Nomad functions return, shaped as its Go types so templates written for
 * Nomad work unchanged: `nomadVar` gives NomadVarItems (a map of NomadVarItem with `Keys`, `Values`,
 * `Tuples`, `Metadata`, `Parent`, `ItemsMap`), each item prints its value and has `.Key`/`.Value`;
 * `nomadVarList` gives NomadVarMeta (prints its path); `nomadService` gives NomadService structs.
 */
import { MARSHAL_JSON } from './go-json.ts';
import { formatGoTime } from './go-time.ts';
import { GO_TYPE } from './values.ts';

/** A variable as the variables store gives it (Nomad's api.Variable). */
export interface VariableRecord {
  Namespace: string;
  Path: string;
  CreateIndex: number;
  ModifyIndex: number;
  /** Unix nanoseconds. */
  CreateTime: number;
  /** Unix nanoseconds. */
  ModifyTime: number;
  Items?: Record<string, string>;
}

/** A service instance as the service registry gives it (Nomad's ServiceRegistration). */
export interface ServiceRecord {
  ID: string;
  ServiceName: string;
  NodeID: string;
  Datacenter: string;
  JobID: string;
  AllocID: string;
  Tags: readonly string[];
  Address: string;
  Port: number;
}

/** consul-template's nanoTime: Unix nanoseconds that print as Go prints a time. */
export class NanoTime {
  constructor(private readonly nanos: number) {}
  get [GO_TYPE](): string {
    return 'dependency.nanoTime';
  }
  String(): string {
    return formatGoTime(this.Time(), '2006-01-02 15:04:05.999999999 -0700 MST');
  }
  Time(): Date {
    return new Date(Math.floor(this.nanos / 1_000_000));
  }
  [MARSHAL_JSON](): number {
    return this.nanos;
  }
}

/** consul-template's NomadVarMeta. */
export class NomadVarMeta {
  readonly Namespace: string;
  readonly Path: string;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
  readonly CreateTime: NanoTime;
  readonly ModifyTime: NanoTime;
  constructor(v: VariableRecord) {
    this.Namespace = v.Namespace;
    this.Path = v.Path;
    this.CreateIndex = v.CreateIndex;
    this.ModifyIndex = v.ModifyIndex;
    this.CreateTime = new NanoTime(v.CreateTime);
    this.ModifyTime = new NanoTime(v.ModifyTime);
  }
  get [GO_TYPE](): string {
    return '*dependency.NomadVarMeta';
  }
  String(): string {
    return this.Path;
  }
}

/** consul-template's NomadVariable: the metadata and the items. */
export class NomadVariable extends NomadVarMeta {
  readonly Items: NomadVarItems;
  readonly #record: VariableRecord;
  constructor(v: VariableRecord) {
    super(v);
    this.#record = v;
    this.Items = nomadVarItems(this, v.Items ?? {});
  }
  override get [GO_TYPE](): string {
    return '*dependency.NomadVariable';
  }
  Metadata(): NomadVarMeta {
    return new NomadVarMeta(this.#record);
  }
}

/** consul-template's NomadVarItem: prints (and marshals) as its value. */
export class NomadVarItem {
  readonly #parent: NomadVariable;
  constructor(
    readonly Key: string,
    readonly Value: string,
    parent: NomadVariable,
  ) {
    this.#parent = parent;
  }
  get [GO_TYPE](): string {
    return 'dependency.NomadVarItem';
  }
  String(): string {
    return this.Value;
  }
  Metadata(): NomadVarMeta {
    return this.#parent.Metadata();
  }
  Parent(): NomadVariable {
    return this.#parent;
  }
  [MARSHAL_JSON](): string {
    return this.Value;
  }
}

/** A map of key to NomadVarItem, with NomadVarItems' methods (not enumerable, so not keys). */
export type NomadVarItems = Record<string, NomadVarItem>;

function nomadVarItems(parent: NomadVariable, items: Record<string, string>): NomadVarItems {
  const map = Object.create(null) as NomadVarItems;
  for (const [k, v] of Object.entries(items)) map[k] = new NomadVarItem(k, v, parent);
  const keys = () => Object.keys(map).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const methods: Record<string, () => unknown> = {
    Keys: keys,
    Values: () => keys().map((k) => map[k]!.Value),
    Tuples: () => keys().map((k) => ({ K: k, V: map[k]!.Value })),
    Metadata: () => parent.Metadata(),
    Parent: () => parent,
    ItemsMap: () => Object.fromEntries(keys().map((k) => [k, map[k]!.Value])),
  };
  for (const [name, fn] of Object.entries(methods)) Object.defineProperty(map, name, { value: fn, enumerable: false });
  return map;
}

/** consul-template's NomadService. */
export class NomadService {
  readonly ID: string;
  readonly Name: string;
  readonly Node: string;
  readonly Address: string;
  readonly Port: number;
  readonly Datacenter: string;
  readonly Tags: string[];
  readonly JobID: string;
  readonly AllocID: string;
  constructor(r: ServiceRecord) {
    this.ID = r.ID;
    this.Name = r.ServiceName;
    this.Node = r.NodeID;
    this.Address = r.Address;
    this.Port = r.Port;
    this.Datacenter = r.Datacenter;
    this.Tags = [...r.Tags].sort();
    this.JobID = r.JobID;
    this.AllocID = r.AllocID;
  }
  get [GO_TYPE](): string {
    return '*dependency.NomadService';
  }
}

/** consul-template's NomadServicesSnippet: a service name and its tags (`nomadServices`). */
export class NomadServicesSnippet {
  constructor(
    readonly Name: string,
    readonly Tags: string[],
  ) {}
  get [GO_TYPE](): string {
    return '*dependency.NomadServicesSnippet';
  }
}
