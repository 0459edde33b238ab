/**
 * Parsed service blocks as the ServiceSpecs an allocation carries: Nomad's canonical service (default
 * name, `${JOB}`-style names replaced, address_mode "auto", on_update "require_healthy", provider "nomad")
 * with each check's defaults and the service's check_restart merged under the check's own.
 */
import type { CheckRestartSpec, CheckSpec, ServiceSpec } from './types.ts';
import type { CheckBody, CheckRestartBody, ServiceBody } from './service-schema.ts';
import { canonicalServiceName, defaultServiceName } from './service-rules.ts';

/** The group's (`task` undefined) or a task's service blocks as specs, in file order. */
export function servicesOf(bodies: ServiceBody[] | undefined, job: string, group: string, task?: string): ServiceSpec[] | undefined {
  if (!bodies || bodies.length === 0) return undefined;
  return bodies.map((s) => {
    const name = s.name ? canonicalServiceName(s.name, job, group, task) : defaultServiceName(job, group, task);
    const checks = (s.check ?? []).map((c) => checkOf(c, name, s.check_restart, s.on_update, task === undefined));
    return {
      name,
      provider: 'nomad',
      ...(s.port !== undefined && { port: s.port }),
      ...(s.tags && s.tags.length > 0 && { tags: s.tags }),
      ...(s.canary_tags && s.canary_tags.length > 0 && { canaryTags: s.canary_tags }),
      ...(s.meta && Object.keys(s.meta).length > 0 && { meta: s.meta }),
      ...(s.canary_meta && Object.keys(s.canary_meta).length > 0 && { canaryMeta: s.canary_meta }),
      ...(s.address && { address: s.address }),
      addressMode: s.address_mode === 'host' ? 'host' : 'auto',
      ...(task === undefined && s.task && { task: s.task }),
      onUpdate: s.on_update ?? 'require_healthy',
      ...(checks.length > 0 && { checks }),
    } satisfies ServiceSpec;
  });
}

function checkOf(c: CheckBody, service: string, serviceRestart: CheckRestartBody | undefined, serviceOnUpdate: ServiceBody['on_update'], groupService: boolean): CheckSpec {
  const checkRestart = restartOf(c.check_restart, serviceRestart);
  return {
    name: c.name || `service: ${JSON.stringify(service)} check`,
    type: c.type,
    ...(c.port !== undefined && { port: c.port }),
    ...(c.path !== undefined && c.path !== '' && { path: c.path }),
    ...(c.method && { method: c.method }),
    ...(c.header && Object.keys(c.header).length > 0 && { header: c.header }),
    ...(c.body !== undefined && c.body !== '' && { body: c.body }),
    ...(c.protocol && { protocol: c.protocol }),
    ...(c.tls_skip_verify && { tlsSkipVerify: true }),
    interval: c.interval ?? 0,
    timeout: c.timeout ?? 0,
    ...(c.initial_status && { initialStatus: c.initial_status }),
    successBeforePassing: c.success_before_passing ?? 0,
    failuresBeforeCritical: c.failures_before_critical ?? 0,
    ...(checkRestart && { checkRestart }),
    // Nomad: a check without on_update follows its service's.
    onUpdate: c.on_update ?? serviceOnUpdate ?? 'require_healthy',
    ...(c.address_mode === 'host' && { addressMode: 'host' }),
    // A task service's checks are that task's (Nomad fills TaskName with it): only a group's name one.
    ...(groupService && c.task && { task: c.task }),
  };
}

/**
 * Nomad's CheckRestart.Merge over the service's block: the check's limit when above 0, its grace when set,
 * ignore_warnings when either says so; grace defaults to 1s as Nomad's CheckRestart.Canonicalize has it.
 */
function restartOf(own: CheckRestartBody | undefined, service: CheckRestartBody | undefined): CheckRestartSpec | undefined {
  if (!own && !service) return undefined;
  return {
    limit: own?.limit ? own.limit : service?.limit ?? 0,
    grace: own?.grace ?? service?.grace ?? DEFAULT_GRACE_MS,
    ignoreWarnings: own?.ignore_warnings === true || service?.ignore_warnings === true,
  };
}

/** Nomad's default check_restart grace. */
export const DEFAULT_GRACE_MS = 1_000;
