/**
 * Checks an AllocSpec built in code (camelCase, millisecond durations) before it is run, reporting every
 * problem at once with its path (`tasks[1].killTimeout`), as a SpecError.
 */
import { payloadFileProblem } from './parameterized.ts';
import { plainlyValid } from './plain-spec.ts';
import { constants as osConstants } from 'node:os';
import { z } from 'zod';
import { templateProblems } from '../template/validate-template.ts';
import { escapesTaskDir, TEMPLATE_CHANGE_MODES } from './template-schema.ts';
import type { AllocSpec } from './types.ts';
import { ARTIFACT_MODES, HEALTH_CHECKS, JOB_TYPES, LIFECYCLE_HOOKS, RESTART_MODES } from './jobspec-schema.ts';
import { checkArtifacts } from './artifact-rules.ts';
import { envKeyProblem } from './env-names.ts';
import { shownName, unsafeNameReason, type NameKind } from './names.ts';
import { SpecError, formatPath, type PathSegment } from './spec-error.ts';
import { describeValue, issueToProblems, type RawProblem } from './zod-problems.ts';

const SIGNALS = new Set(Object.keys(osConstants.signals));

const ms = z.number().finite('must be a finite number of milliseconds').min(0, 'must not be negative');
const count = (min: number) => z.number().int('expected a whole number').min(min, `must be at least ${min}`);
const stringMap = z.record(z.string(), z.string());
/** A task's env: a string map whose keys are valid, unreserved environment variable names. */
const envMap = stringMap.superRefine((env, ctx) => {
  for (const key of Object.keys(env)) {
    const why = envKeyProblem(key);
    if (why) ctx.addIssue({ code: 'custom', path: [key], message: why, input: key });
  }
});
/** Names become directory names (the alloc dir, task dirs, the state record), so they must be path-safe. */
const safeName = (kind: NameKind) =>
  z
    .string()
    .min(1, 'must not be empty')
    .superRefine((s, ctx) => {
      const why = s === '' ? undefined : unsafeNameReason(s, kind);
      if (why) ctx.addIssue({ code: 'custom', message: `${kind === 'job id' ? 'job' : kind} ${shownName(s)} ${why}`, input: s });
    });

const restartPolicy = z.strictObject({
  attempts: count(0),
  interval: ms,
  delay: ms,
  mode: z.enum(RESTART_MODES),
  renderTemplates: z.boolean().optional(),
});

/** An artifact built in code: the job loader's rules, on the fields as the runner has them. */
const artifactSpec = z
  .strictObject({
    source: z.string().min(1, 'must not be empty'),
    destination: z.string().min(1, 'must not be empty'),
    mode: z.enum(ARTIFACT_MODES),
    options: stringMap.optional(),
    headers: stringMap.optional(),
    insecure: z.boolean().optional(),
    chown: z.boolean().optional(),
  })
  .superRefine((a, ctx) => {
    const report: { problems: RawProblem[]; warnings: RawProblem[] } = { problems: [], warnings: [] };
    checkArtifacts({ artifact: [a] }, [], report);
    for (const p of report.problems) ctx.addIssue({ code: 'custom', path: p.path.slice(2), message: p.message, input: a });
  });

const taskSpec = z.strictObject({
  name: safeName('task'),
  driver: z.string().min(1, 'must not be empty'),
  config: z.record(z.string(), z.unknown()),
  env: envMap.optional(),
  meta: stringMap.optional(),
  leader: z.boolean().optional(),
  lifecycle: z.strictObject({ hook: z.enum(LIFECYCLE_HOOKS), sidecar: z.boolean().optional() }).optional(),
  restart: restartPolicy.optional(),
  killTimeout: ms.optional(),
  killSignal: z.string().refine((s) => SIGNALS.has(s), { message: 'must be a signal name such as "SIGTERM" or "SIGINT"' }).optional(),
  shutdownDelay: ms.optional(),
  logs: z.strictObject({ maxFiles: count(1), maxFileSize: count(1) }).optional(),
  resources: z.record(z.string(), z.unknown()).optional(),
  user: z.string().min(1, 'must not be empty (leave it out to run as the agent\'s user)').optional(),
  artifacts: z.array(artifactSpec).optional(),
  services: z.array(z.lazy(() => serviceSpec)).optional(),
  templates: z.array(z.lazy(() => templateSpec)).optional(),
  dispatchPayload: z.strictObject({ file: z.string().refine((f) => payloadFileProblem(f) === undefined, { message: 'must name a file inside the task\'s local/ directory' }) }).optional(),
});

const updateStrategy = z
  .strictObject({ minHealthyTime: ms, healthyDeadline: ms, healthCheck: z.enum(HEALTH_CHECKS).optional() })
  .refine((u) => u.minHealthyTime < u.healthyDeadline, { message: 'minHealthyTime must be less than healthyDeadline' });

const portNumber = z.number().int('expected a whole number').min(1, 'must be at least 1').max(65535, 'must be at most 65535');
const portLabel = z.string().regex(/^[A-Za-z0-9_]+$/, 'a port label may only use ASCII letters, digits and "_" (it names NOMAD_PORT_<label>)');
const networkAsk = z.strictObject({
  mode: z.literal('host', 'allocrun runs tasks in "host" networking mode only'),
  ports: z.array(z.strictObject({ label: portLabel, static: portNumber.optional(), to: z.number().int().min(-1).max(65535).optional() })),
});
const allocatedPort = z.strictObject({ label: portLabel, value: portNumber, to: z.number().int().min(-1).max(65535), hostIP: z.string().min(1, 'must not be empty') });

const onUpdate = z.enum(['require_healthy', 'ignore_warnings', 'ignore']);
const portRef = z.string().min(1, 'must not be empty (a port label or number)');
const checkSpec = z.strictObject({
  name: z.string().min(1, 'must not be empty'),
  type: z.enum(['http', 'tcp']),
  port: portRef.optional(),
  path: z.string().optional(),
  method: z.string().optional(),
  header: z.record(z.string(), z.array(z.string())).optional(),
  body: z.string().optional(),
  protocol: z.enum(['http', 'https']).optional(),
  tlsSkipVerify: z.boolean().optional(),
  interval: ms.min(1000, 'must be at least 1000 (1s)'),
  timeout: ms.min(1000, 'must be at least 1000 (1s)'),
  initialStatus: z.enum(['passing', 'warning', 'critical']).optional(),
  successBeforePassing: count(0),
  failuresBeforeCritical: count(0),
  checkRestart: z.strictObject({ limit: count(0), grace: ms, ignoreWarnings: z.boolean() }).optional(),
  onUpdate,
  addressMode: z.literal('host').optional(),
  task: z.string().optional(),
});
const serviceSpec = z.strictObject({
  name: z.string().min(1, 'must not be empty'),
  provider: z.literal('nomad', 'allocrun registers services with the "nomad" provider only'),
  port: portRef.optional(),
  tags: z.array(z.string()).optional(),
  canaryTags: z.array(z.string()).optional(),
  meta: stringMap.optional(),
  canaryMeta: stringMap.optional(),
  address: z.string().optional(),
  addressMode: z.enum(['auto', 'host']),
  task: z.string().optional(),
  onUpdate,
  checks: z.array(checkSpec).optional(),
});

const allocSpec = z.strictObject({
  id: safeName('alloc id'),
  job: safeName('job id'),
  group: safeName('group'),
  type: z.enum(JOB_TYPES),
  namespace: z.string().optional(),
  meta: stringMap.optional(),
  restart: restartPolicy.optional(),
  shutdownDelay: ms.optional(),
  tasks: z.array(taskSpec).min(1, 'an allocation needs at least one task'),
  desiredStatus: z.enum(['run', 'stop', 'evict']).optional(),
  update: updateStrategy.optional(),
  deploymentId: z.string().min(1, 'must not be empty').optional(),
  canary: z.boolean().optional(),
  modifyIndex: count(0).optional(),
  index: count(0).optional(),
  network: networkAsk.optional(),
  ports: z.array(allocatedPort).optional(),
  services: z.array(serviceSpec).optional(),
  parentJob: safeName('job id').optional(),
  payload: z.base64('must be base64 (the dispatched job\'s payload)').optional(),
});

/** A TemplateSpec built in code: the file checks' rules, in the spec's names. */
const templateSpec = z
  .strictObject({
    data: z.string().optional(),
    source: z.string().min(1, 'must not be empty').optional(),
    destination: z.string().min(1, 'must not be empty'),
    changeMode: z.enum(TEMPLATE_CHANGE_MODES),
    changeSignal: z.string().refine((s) => SIGNALS.has(s), { message: 'must be a signal name such as "SIGHUP"' }).optional(),
    changeScript: z.strictObject({ command: z.string().min(1, 'must not be empty'), args: z.array(z.string()), timeout: ms, failOnError: z.boolean() }).optional(),
    splay: ms,
    perms: z.string().regex(/^0?[0-7]{3,4}$/, 'must be octal permissions such as "0644"'),
    uid: count(0).optional(),
    gid: count(0).optional(),
    leftDelim: z.string().min(1, 'must not be empty'),
    rightDelim: z.string().min(1, 'must not be empty'),
    env: z.boolean(),
    errMissingKey: z.boolean(),
    wait: z.strictObject({ min: ms.optional(), max: ms.optional() }).optional(),
  })
  .superRefine((t, ctx) => {
    const at = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message, input: undefined });
    if (!t.data && !t.source) at('data', 'a template needs data (the text) or source (a file in the task directory)');
    if (escapesTaskDir(t.destination)) at('destination', `${JSON.stringify(t.destination)} escapes the task directory`);
    if (t.source !== undefined && escapesTaskDir(t.source)) at('source', `${JSON.stringify(t.source)} escapes the task directory`);
    if (t.changeMode === 'signal' && !t.changeSignal) at('changeSignal', 'changeMode "signal" needs changeSignal');
    if (t.changeMode === 'script' && !t.changeScript) at('changeScript', 'changeMode "script" needs changeScript');
    if (t.data) for (const p of templateProblems(t.data, { name: t.destination, leftDelim: t.leftDelim, rightDelim: t.rightDelim })) at('data', p);
  });

/** The keys allowed in the object at `path`, for "did you mean" suggestions. */
function keysAt(path: readonly PathSegment[]): readonly string[] {
  const last = path[path.length - 1];
  if (path.length === 0) return Object.keys(allocSpec.shape);
  if (path.length === 2 && path[0] === 'tasks') return Object.keys(taskSpec.shape);
  if (last === 'restart') return Object.keys(restartPolicy.shape);
  if (last === 'lifecycle') return ['hook', 'sidecar'];
  if (last === 'logs') return ['maxFiles', 'maxFileSize'];
  if (path.length === 1 && last === 'update') return Object.keys(updateStrategy.shape);
  return [];
}

/** Returns `value` typed as an AllocSpec, or throws a SpecError listing every problem with its path. */
export function validateAllocSpec(value: unknown): AllocSpec {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SpecError([{ path: '', message: `expected an AllocSpec object, got ${describeValue(value, 'code')}` }]);
  }
  // The plainest specs are passed at a glance; anything else, or any doubt, goes through the schema (plain-spec.ts).
  if (plainlyValid(value)) return value as AllocSpec;
  return validateBySchema(value);
}

/** validateAllocSpec without the quick yes: the schema and the cross-task rules always (exported for its test). */
export function validateBySchema(value: object): AllocSpec {
  const problems: RawProblem[] = [];
  const result = allocSpec.safeParse(value, { reportInput: true });
  if (!result.success) for (const issue of result.error.issues) problems.push(...issueToProblems(issue, [], keysAt, 'code'));
  problems.push(...crossTaskProblems(value));
  if (problems.length > 0) throw new SpecError(problems.map((p) => ({ path: formatPath(p.path), message: p.message })));
  return value as AllocSpec;
}

/** Rules across tasks (unique names, one leader), read defensively so they run even when fields are wrong. */
function crossTaskProblems(value: unknown): RawProblem[] {
  const tasks = (value as { tasks?: unknown } | null)?.tasks;
  if (!Array.isArray(tasks)) return [];
  const problems: RawProblem[] = [];
  const seen = new Map<string, number>();
  let leader: number | undefined;
  tasks.forEach((task: unknown, i) => {
    const t = (typeof task === 'object' && task !== null ? task : {}) as { name?: unknown; leader?: unknown };
    if (typeof t.name === 'string' && t.name !== '') {
      const first = seen.get(t.name);
      if (first !== undefined) problems.push({ path: ['tasks', i, 'name'], message: `task name ${JSON.stringify(t.name)} is already used by tasks[${first}]` });
      else seen.set(t.name, i);
    }
    if (t.leader === true) {
      if (leader !== undefined) problems.push({ path: ['tasks', i, 'leader'], message: `only one task can be the leader; tasks[${leader}] already is` });
      else leader = i;
    }
  });
  return problems;
}
