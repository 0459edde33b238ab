/**
 * Service blocks in Nomad's API Job JSON: `Services: [{ Name, PortLabel, Provider, Checks: [...] }]` written
 * from a checked jobspec, and the canonical form Nomad stores (api Service.Canonicalize plus the server's
 * structs canonicalisation): default names, AddressMode "auto", OnUpdate "require_healthy", the service's
 * CheckRestart merged into each check (structs.Service has none of its own), task names and namespace.
 */
import type { ServiceBody } from '../jobspec/service-schema.ts';
import { canonicalServiceName, defaultServiceName } from '../jobspec/service-rules.ts';
import { DEFAULT_GRACE_MS } from '../jobspec/service-specs.ts';

type Json = Record<string, unknown>;

const NS_PER_MS = 1e6;
const ns = (ms: number | undefined): number | undefined => (ms === undefined ? undefined : Math.round(ms * NS_PER_MS));
const compact = (obj: Json): Json => Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined));
const pascal = (key: string): string => key.replace(/(^|_)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase());
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function restartJson(r: ServiceBody['check_restart']): Json | undefined {
  return r && compact({ Limit: r.limit, Grace: ns(r.grace), IgnoreWarnings: r.ignore_warnings });
}

/** Fields the schema accepts without modelling them (Consul settings, warned about): kept under API names. */
function passThrough(body: Record<string, unknown>, keys: readonly string[]): Json {
  const names: Record<string, string> = { tls_server_name: 'TLSServerName', grpc_service: 'GRPCService', grpc_use_tls: 'GRPCUseTLS' };
  return Object.fromEntries(keys.filter((k) => body[k] !== undefined).map((k) => [names[k] ?? pascal(k), body[k]]));
}

/** A group's or task's service blocks as the API's Services list (undefined when there are none). */
export function servicesJson(services: ServiceBody[] | undefined): Json[] | undefined {
  if (!services || services.length === 0) return undefined;
  return services.map((s) =>
    compact({
      Name: s.name,
      TaskName: s.task,
      PortLabel: s.port,
      AddressMode: s.address_mode,
      Address: s.address,
      Tags: s.tags,
      CanaryTags: s.canary_tags,
      Meta: s.meta,
      CanaryMeta: s.canary_meta,
      OnUpdate: s.on_update,
      Provider: s.provider,
      CheckRestart: restartJson(s.check_restart),
      Checks: s.check?.map((c) =>
        compact({
          Name: c.name,
          Type: c.type,
          PortLabel: c.port,
          Path: c.path,
          Method: c.method,
          Header: c.header,
          Body: c.body,
          Protocol: c.protocol,
          TLSSkipVerify: c.tls_skip_verify,
          Interval: ns(c.interval),
          Timeout: ns(c.timeout),
          InitialStatus: c.initial_status,
          SuccessBeforePassing: c.success_before_passing,
          FailuresBeforeCritical: c.failures_before_critical,
          CheckRestart: restartJson(c.check_restart),
          OnUpdate: c.on_update,
          AddressMode: c.address_mode,
          TaskName: c.task,
          ...passThrough(c, ['notes', 'tls_server_name', 'failures_before_warning', 'advertise', 'expose', 'command', 'args', 'grpc_service', 'grpc_use_tls']),
        }),
      ),
      ...passThrough(s, ['enable_tag_override', 'tagged_addresses', 'identity', 'cluster', 'weights', 'kind', 'connect']),
    }),
  );
}

/**
 * The Services list as Nomad stores it (see the module comment); idempotent, so a job read back and
 * registered again compares equal. `task` is undefined for group services.
 */
export function canonicalServices(services: unknown, ids: { job: string; group: string; task?: string; namespace: string }): unknown {
  if (!Array.isArray(services)) return services;
  return services.map((raw) => {
    if (!isObject(raw)) return raw;
    const s: Json = { ...raw };
    s['Name'] = typeof s['Name'] === 'string' && s['Name'] !== '' ? canonicalServiceName(s['Name'], ids.job, ids.group, ids.task) : defaultServiceName(ids.job, ids.group, ids.task);
    if (ids.task !== undefined && !s['TaskName']) s['TaskName'] = ids.task;
    if (!s['AddressMode']) s['AddressMode'] = 'auto';
    if (!s['OnUpdate']) s['OnUpdate'] = 'require_healthy';
    if (s['Provider'] === 'nomad') s['Namespace'] = ids.namespace;
    const serviceRestart = isObject(s['CheckRestart']) ? s['CheckRestart'] : undefined;
    delete s['CheckRestart'];
    if (Array.isArray(s['Checks'])) {
      s['Checks'] = s['Checks'].map((rawCheck) => {
        if (!isObject(rawCheck)) return rawCheck;
        const c: Json = { ...rawCheck };
        if (!c['Name']) c['Name'] = `service: ${JSON.stringify(s['Name'])} check`;
        if (!c['OnUpdate']) c['OnUpdate'] = s['OnUpdate'];
        if (ids.task !== undefined && !c['TaskName']) c['TaskName'] = ids.task;
        const own = isObject(c['CheckRestart']) ? c['CheckRestart'] : undefined;
        if (own || serviceRestart) {
          const limit = Number(own?.['Limit'] ?? 0) > 0 ? own!['Limit'] : (serviceRestart?.['Limit'] ?? 0);
          const grace = own?.['Grace'] ?? serviceRestart?.['Grace'] ?? ns(DEFAULT_GRACE_MS);
          c['CheckRestart'] = { Limit: limit, Grace: grace, IgnoreWarnings: own?.['IgnoreWarnings'] === true || serviceRestart?.['IgnoreWarnings'] === true };
        }
        return c;
      });
    }
    return s;
  });
}
