/**
 * Nomad's Service.Validate / validateNomadService / ServiceCheck.validateNomad and TaskGroup.validateServices
 * on a group's service blocks and its tasks': what the schema cannot say field by field. Read defensively
 * (the schema reports mistyped fields), every problem reported in one pass.
 */
import { isPlainObject, type Report } from './normalize.ts';
import type { PathSegment } from './spec-error.ts';
import { SERVICE_IGNORED } from './service-schema.ts';
import { parseDuration } from './duration.ts';

/** Nomad's minimum check interval and timeout (Consul's, mirrored). */
const MIN_CHECK_MS = 1_000;
/** RFC 1123 labels, as Nomad's Service.ValidateName. */
const SERVICE_NAME = /^(?:[a-z0-9]|[a-z0-9][a-z0-9-]{0,61}[a-z0-9])$/i;
const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE']);
const PROVIDER_FIX = 'set provider = "nomad" to register it in allocrun\'s own (Nomad-native) service catalog';

/** Where a service block is: its job, group and (task services) task, and the group's port labels. */
interface Scope {
  job: string;
  group: string;
  task?: string;
  tasks: string[];
  ports: string[];
}

/** Checks every service block of `group` (group level and task level); `path` is the group's. */
export function checkGroupServices(job: string, groupName: string, group: Record<string, unknown>, path: PathSegment[], report: Report): void {
  const network = isPlainObject(group['network']) ? group['network'] : {};
  const ports = isPlainObject(network['port']) ? Object.keys(network['port']) : [];
  const tasks = isPlainObject(group['task']) ? group['task'] : {};
  const scope: Scope = { job, group: groupName, tasks: Object.keys(tasks), ports };
  const seen = new Map<string, string>();
  const visit = (services: unknown, at: PathSegment[], task?: string) => {
    if (!Array.isArray(services)) return;
    services.forEach((service, i) => {
      if (!isPlainObject(service)) return;
      const servicePath = [...at, 'service', i];
      checkService(service, servicePath, { ...scope, ...(task !== undefined && { task }) }, report);
      // Nomad: one name and port pair per group, whichever task registers it.
      const name = typeof service['name'] === 'string' && service['name'] !== '' ? service['name'] : defaultServiceName(job, groupName, task);
      const key = `${name}\0${portOf(service['port']) ?? ''}`;
      const first = seen.get(key);
      if (first !== undefined) report.problems.push({ path: servicePath, message: `service ${JSON.stringify(name)} with this port is already defined at ${first}: each service name and port may be registered once per group` });
      else seen.set(key, servicePath.slice(2).join('.'));
    });
  };
  visit(group['service'], path);
  for (const [taskName, task] of Object.entries(tasks)) {
    if (isPlainObject(task)) visit(task['service'], [...path, 'task', taskName], taskName);
  }
}

/** Nomad's default service name: `<job>-<group>` for a group service, `<job>-<group>-<task>` for a task's. */
export function defaultServiceName(job: string, group: string, task: string | undefined): string {
  return task === undefined ? `${job}-${group}` : `${job}-${group}-${task}`;
}

/** `${JOB}`, `${TASKGROUP}`, `${TASK}` and `${BASE}` in a service name, replaced as Nomad's Service.Canonicalize does. */
export function canonicalServiceName(name: string, job: string, group: string, task: string | undefined): string {
  const vars: Record<string, string> = { JOB: job, TASKGROUP: group, TASK: task ?? 'group', BASE: `${job}-${group}-${task ?? 'group'}` };
  return name.replace(/\$\{(JOB|TASKGROUP|TASK|BASE)\}/g, (_, v: string) => vars[v]!);
}

function portOf(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

function checkService(service: Record<string, unknown>, path: PathSegment[], scope: Scope, report: Report): void {
  const provider = service['provider'];
  if (provider === undefined) {
    report.problems.push({ path: [...path, 'provider'], message: `a service needs provider = "nomad": Nomad's default provider is Consul, which allocrun does not run (on a Nomad node without Consul the job would never be placed); ${PROVIDER_FIX}` });
  } else if (provider === 'consul') {
    report.problems.push({ path: [...path, 'provider'], message: `provider "consul" is not supported: allocrun has no Consul; ${PROVIDER_FIX}` });
  } else if (typeof provider === 'string' && provider !== 'nomad') {
    report.problems.push({ path: [...path, 'provider'], message: `provider ${JSON.stringify(provider)} is not a service provider: ${PROVIDER_FIX}` });
  }
  if (service['connect'] !== undefined) {
    report.problems.push({ path: [...path, 'connect'], message: 'a service with provider "nomad" cannot have a connect block (Consul Connect needs Consul)' });
  }
  for (const key of SERVICE_IGNORED.service) {
    if (service[key] !== undefined) report.warnings.push({ path: [...path, key], message: `ignored: "${key}" is a Consul setting; Nomad-native services do not use it` });
  }

  const rawName = service['name'];
  const name = typeof rawName === 'string' && rawName !== '' ? canonicalServiceName(rawName, scope.job, scope.group, scope.task) : defaultServiceName(scope.job, scope.group, scope.task);
  if (rawName === undefined || typeof rawName === 'string') {
    // Runtime variables resolve later; the rest of the name must already be a DNS label.
    const stripped = name.replace(/\$\{[^}]*\}/g, 'ENV-VAR');
    if (!SERVICE_NAME.test(stripped)) {
      const why = `service name ${JSON.stringify(name)} is not valid: use letters, digits and dashes (RFC 1123), at most 63 characters, not starting or ending with a dash`;
      report.problems.push({ path: rawName === undefined ? path : [...path, 'name'], message: rawName === undefined ? `${why}; it is the default name, so set name` : why });
    }
  }

  const port = portOf(service['port']);
  if (port !== undefined) checkPortRef(port, [...path, 'port'], scope, report);
  const addressMode = service['address_mode'];
  if (typeof service['address'] === 'string' && service['address'] !== '' && addressMode !== undefined && addressMode !== 'auto') {
    report.problems.push({ path: [...path, 'address'], message: 'a service with an address needs address_mode "auto" (or none)' });
  }
  const task = service['task'];
  if (typeof task === 'string' && task !== '') {
    if (scope.task !== undefined && task !== scope.task) report.problems.push({ path: [...path, 'task'], message: `a service of task "${scope.task}" cannot name task ${JSON.stringify(task)}` });
    else if (scope.task === undefined && !scope.tasks.includes(task)) report.problems.push({ path: [...path, 'task'], message: `task ${JSON.stringify(task)} is not a task of group "${scope.group}"${known(scope.tasks, 'its tasks are')}` });
  }

  const checks = service['check'];
  if (!Array.isArray(checks)) return;
  const checkNames = new Map<string, number>();
  checks.forEach((check, i) => {
    if (!isPlainObject(check)) return;
    const at = [...path, 'check', i];
    checkCheck(check, at, port, service['check_restart'], scope, report);
    const checkName = typeof check['name'] === 'string' && check['name'] !== '' ? check['name'] : `service: ${JSON.stringify(name)} check`;
    const first = checkNames.get(checkName);
    if (first !== undefined) report.problems.push({ path: at, message: `check ${JSON.stringify(checkName)} is already defined by check[${first}]: give each check of a service its own name` });
    else checkNames.set(checkName, i);
  });
}

function checkCheck(check: Record<string, unknown>, path: PathSegment[], servicePort: string | undefined, serviceRestart: unknown, scope: Scope, report: Report): void {
  for (const key of SERVICE_IGNORED.check) {
    if (check[key] !== undefined) report.warnings.push({ path: [...path, key], message: `ignored: "${key}" is a Consul check setting; Nomad-native checks do not use it` });
  }
  if (check['expose'] === true) report.problems.push({ path: [...path, 'expose'], message: 'expose may only be set for Consul service checks (it needs Consul Connect)' });
  for (const key of ['command', 'args'] as const) {
    if (check[key] !== undefined) report.problems.push({ path: [...path, key], message: `"${key}" belongs to script checks, which Nomad-native services do not run (use an "http" or "tcp" check)` });
  }
  for (const key of ['grpc_service', 'grpc_use_tls'] as const) {
    if (check[key] !== undefined) report.problems.push({ path: [...path, key], message: `"${key}" belongs to gRPC checks, which Nomad-native services do not run (use an "http" or "tcp" check)` });
  }

  const type = typeof check['type'] === 'string' ? check['type'].toLowerCase() : undefined;
  if (type === 'http') {
    const p = check['path'];
    if (p === undefined || p === '') report.problems.push({ path: [...path, 'path'], message: 'an http check needs a path, such as path = "/health"' });
    else if (typeof p === 'string' && /^[a-z][a-z0-9+.-]*:/i.test(p)) report.problems.push({ path: [...path, 'path'], message: `path ${JSON.stringify(p)} must be relative to the service's address (such as "/health"), not a URL` });
    const method = check['method'];
    if (typeof method === 'string' && method !== '' && !HTTP_METHODS.has(method)) report.problems.push({ path: [...path, 'method'], message: `method ${JSON.stringify(method)} is not an HTTP method (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, ...)` });
  }
  const checkPort = portOf(check['port']);
  if (checkPort !== undefined) checkPortRef(checkPort, [...path, 'port'], scope, report);
  else if (servicePort === undefined && (type === 'http' || type === 'tcp')) {
    report.problems.push({ path, message: `an ${type} check needs a port, but neither the check nor its service has one: set port = "<label>" (a port of the group's network block)` });
  }
  for (const field of ['interval', 'timeout'] as const) {
    const raw = check[field];
    if (raw === undefined) {
      report.problems.push({ path: [...path, field], message: `a check needs ${field} (at least ${MIN_CHECK_MS / 1000}s), such as ${field} = "${field === 'interval' ? '10s' : '2s'}"` });
      continue;
    }
    const ms = durationOf(raw);
    if (ms !== undefined && ms < MIN_CHECK_MS) report.problems.push({ path: [...path, field], message: `${field} cannot be less than 1s (Nomad's minimum for checks)` });
  }

  const onUpdate = check['on_update'];
  if (onUpdate === 'ignore_warnings') report.problems.push({ path: [...path, 'on_update'], message: 'on_update = "ignore_warnings" is for Consul checks: Nomad-native checks have no warning state (use "require_healthy" or "ignore")' });
  const restarts = check['check_restart'] !== undefined || serviceRestart !== undefined;
  if (onUpdate === 'ignore' && restarts) report.problems.push({ path: [...path, 'on_update'], message: 'on_update = "ignore" is not compatible with check_restart (a check that does not count for health cannot restart the task)' });
}

/** A port label names a port of the group's network block; a number is any port. */
function checkPortRef(port: string, path: PathSegment[], scope: Scope, report: Report): void {
  if (/^\d+$/.test(port) || scope.ports.includes(port)) return;
  report.problems.push({ path, message: `port ${JSON.stringify(port)} is not a port of the group's network block${known(scope.ports, 'its ports are')}` });
}

function known(names: string[], lead: string): string {
  return names.length === 0 ? ' (it has none)' : ` (${lead} ${names.map((n) => JSON.stringify(n)).join(', ')})`;
}

function durationOf(raw: unknown): number | undefined {
  try {
    return typeof raw === 'string' || typeof raw === 'number' ? parseDuration(raw) : undefined;
  } catch {
    return undefined; // the schema reports a bad duration
  }
}
