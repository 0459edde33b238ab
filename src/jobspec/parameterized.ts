/**
 * Nomad's `parameterized` job block (structs.ParameterizedJobConfig) and a task's `dispatch_payload`
 * (structs.DispatchPayloadConfig): a parameterized job places nothing until it is dispatched; each dispatch
 * registers a child job with the dispatch's meta and payload (src/api/dispatch.ts).
 */
import { isAbsolute, normalize } from 'node:path';
import { z } from 'zod';

/** Nomad's payload rules. */
export const PAYLOAD_RULES = ['optional', 'required', 'forbidden'] as const;
export type PayloadRule = (typeof PAYLOAD_RULES)[number];

/** The block as Nomad's API ParameterizedJobConfig. */
export interface ParameterizedConfig {
  Payload: PayloadRule;
  MetaRequired: string[] | null;
  MetaOptional: string[] | null;
}

/** Nomad's ParameterizedJobConfig.Validate: a known payload rule, and no key both required and optional. */
export const parameterizedSchema = z
  .strictObject({
    payload: z.string().optional(),
    meta_required: z.array(z.string()).optional(),
    meta_optional: z.array(z.string()).optional(),
  })
  .superRefine((p, ctx) => {
    if (p.payload !== undefined && !(PAYLOAD_RULES as readonly string[]).includes(p.payload)) {
      ctx.addIssue({ code: 'custom', path: ['payload'], message: `Unknown payload requirement: ${JSON.stringify(p.payload)} (give "optional", "required" or "forbidden")` });
    }
    const both = (p.meta_required ?? []).filter((k) => (p.meta_optional ?? []).includes(k));
    if (both.length > 0) {
      ctx.addIssue({ code: 'custom', path: ['meta_optional'], message: `Required and optional meta keys should be disjoint. Following keys exist in both: [${both.join(' ')}]` });
    }
  });

export type ParameterizedBody = z.output<typeof parameterizedSchema>;

/** Nomad's DispatchPayloadConfig.Validate: a file inside the task's `local/` directory. */
export const dispatchPayloadSchema = z.strictObject({ file: z.string() }).superRefine((d, ctx) => {
  const problem = payloadFileProblem(d.file);
  if (problem) ctx.addIssue({ code: 'custom', path: ['file'], message: problem });
});

/** Why `file` cannot be where a payload is written (relative to the task's `local/`), if it cannot. */
export function payloadFileProblem(file: string): string | undefined {
  if (file === '') return 'must name a file, relative to the task\'s local/ directory';
  const inLocal = normalize(`local/${file}`);
  if (isAbsolute(file) || !inLocal.startsWith('local/') || inLocal === 'local/') return `destination escapes allocation directory: ${JSON.stringify(file)} is not a file inside the task's local/ directory`;
  return undefined;
}

/** The block as Nomad's API writes it, Nomad's default (`optional`) filled. */
export function parameterizedJson(p: ParameterizedBody): ParameterizedConfig {
  return { Payload: (p.payload as PayloadRule | undefined) ?? 'optional', MetaRequired: p.meta_required ?? null, MetaOptional: p.meta_optional ?? null };
}

/** The job's parameterized block, when it has one (its API JSON; a dispatched child keeps its parent's). */
export function parameterizedOf(job: Readonly<Record<string, unknown>>): ParameterizedConfig | undefined {
  const p = job['ParameterizedJob'];
  return typeof p === 'object' && p !== null && !Array.isArray(p) ? (p as ParameterizedConfig) : undefined;
}

/** Nomad's Job.IsParameterized: a parameterized job that is not itself a dispatched child, so it places nothing. */
export function isParameterizedParent(job: Readonly<Record<string, unknown>>): boolean {
  return parameterizedOf(job) !== undefined && job['Dispatched'] !== true;
}

/** Nomad's validateJobUpdate for this block: a job cannot become or stop being parameterized, nor change Dispatched. */
export function parameterizedUpdateRefusal(old: Readonly<Record<string, unknown>>, next: Readonly<Record<string, unknown>>): string | undefined {
  if (isParameterizedParent(old) && !isParameterizedParent(next)) return 'cannot update parameterized job to being non-parameterized';
  if (isParameterizedParent(next) && !isParameterizedParent(old)) return 'cannot update non-parameterized job to being parameterized';
  if ((old['Dispatched'] === true) !== (next['Dispatched'] === true)) return "field 'Dispatched' is read-only";
  return undefined;
}
