/**
 * A checked job becomes allocations: one AllocSpec per group instance (`count`), named the way Nomad
 * names allocations but path-safe and deterministic (`<job>-<group>-<index>`), with restart policies
 * resolved (task over group over the job type's defaults) so the runner needs no jobspec knowledge.
 */
import { defaultRestartPolicy } from '../../machines/model.ts';
import type { AllocSpec, NetworkAsk, RestartPolicy, ServiceSpec, TaskSpec } from './types.ts';
import type { JobBody, NetworkBody, RestartBody, TaskBody } from './jobspec-schema.ts';
import { clientUpdateOf, mergeUpdate } from './update-strategy.ts';
import { artifactSpecOf } from './artifact-rules.ts';
import { servicesOf } from './service-specs.ts';
import { templatesOf } from './template-specs.ts';

const MB = 1024 * 1024;

/** One AllocSpec per instance of every group of the job, in file order. */
export function jobToAllocs(jobName: string, job: JobBody): AllocSpec[] {
  const allocs: AllocSpec[] = [];
  for (const [groupName, group] of Object.entries(job.group)) {
    const restart = mergeRestart(defaultRestartPolicy(job.type), group.restart);
    const tasks = Object.entries(group.task).map(([name, task]) => toTaskSpec(name, task, restart, servicesOf(task.service, jobName, groupName, name)));
    const meta = job.meta || group.meta ? { ...job.meta, ...group.meta } : undefined;
    const update = clientUpdateOf(job.type, mergeUpdate(job.update, group.update));
    const network = group.network && networkOf(group.network);
    const services = servicesOf(group.service, jobName, groupName);
    for (let index = 0; index < group.count; index++) {
      allocs.push(
        structuredClone({
          id: `${jobName}-${groupName}-${index}`,
          job: jobName,
          group: groupName,
          type: job.type,
          ...(job.namespace !== undefined && { namespace: job.namespace }),
          ...(meta && { meta }),
          restart,
          ...(group.shutdown_delay !== undefined && { shutdownDelay: group.shutdown_delay }),
          ...(update && { update }),
          ...(network && { network }),
          ...(services && { services }),
          tasks,
        } satisfies AllocSpec),
      );
    }
  }
  return allocs;
}

function toTaskSpec(name: string, t: TaskBody, groupRestart: RestartPolicy, services: ServiceSpec[] | undefined): TaskSpec {
  return {
    name,
    driver: t.driver,
    config: t.config,
    ...(t.env && { env: t.env }),
    ...(t.meta && { meta: t.meta }),
    // `false` is the default for both flags; leaving it out makes every format produce the same spec.
    ...(t.leader && { leader: true }),
    ...(t.lifecycle && { lifecycle: { hook: t.lifecycle.hook, ...(t.lifecycle.sidecar && { sidecar: true }) } }),
    restart: mergeRestart(groupRestart, t.restart),
    ...(t.kill_timeout !== undefined && { killTimeout: t.kill_timeout }),
    ...(t.kill_signal !== undefined && { killSignal: t.kill_signal }),
    ...(t.shutdown_delay !== undefined && { shutdownDelay: t.shutdown_delay }),
    ...(t.logs && { logs: { maxFiles: t.logs.max_files, maxFileSize: t.logs.max_file_size * MB } }),
    ...(t.resources && { resources: resourcesOf(t.resources) }),
    ...(t.user !== undefined && { user: t.user }),
    ...(t.artifact && t.artifact.length > 0 && { artifacts: t.artifact.map(artifactSpecOf) }),
    ...(services && { services }),
    ...(t.template && t.template.length > 0 && { templates: templatesOf(t.template) }),
    ...(t.dispatch_payload && { dispatchPayload: { file: t.dispatch_payload.file } }),
  };
}

/** The block's fields over `base` (Nomad merges a task's restart block over its group's). */
function mergeRestart(base: RestartPolicy, own: RestartBody | undefined): RestartPolicy {
  return {
    attempts: own?.attempts ?? base.attempts,
    interval: own?.interval ?? base.interval,
    delay: own?.delay ?? base.delay,
    mode: own?.mode ?? base.mode,
    ...((own?.render_templates ?? base.renderTemplates) && { renderTemplates: true }),
  };
}

/** Nomad's resource units kept (MHz, MB), named with them so nobody mistakes MB for bytes. */
function resourcesOf(r: NonNullable<TaskBody['resources']>): Record<string, unknown> {
  return {
    ...(r.cpu !== undefined && { cpu: r.cpu }),
    ...(r.cores !== undefined && { cores: r.cores }),
    ...(r.memory !== undefined && { memoryMB: r.memory }),
    ...(r.memory_max !== undefined && { memoryMaxMB: r.memory_max }),
  };
}

/** The group's network ask: its ports in file order, `static` and `to` only when they say something. */
function networkOf(n: NetworkBody): NetworkAsk | undefined {
  const ports = Object.entries(n.port).map(([label, p]) => ({
    label,
    ...(p.static !== undefined && { static: p.static }),
    ...(p.to !== undefined && p.to > 0 && { to: p.to }),
  }));
  // A network block without ports asks for nothing on the host: the spec stays as if it were absent.
  return ports.length > 0 ? { mode: 'host', ports } : undefined;
}
