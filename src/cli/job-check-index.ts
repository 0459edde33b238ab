/**
 * `job run -check-index N`, as Nomad's: the registration carries `EnforceIndex` and `JobModifyIndex`, so the
 * agent registers the job only while its modify index is still N (0: only while it does not exist), the
 * index `job plan` printed. A refusal is said in the agent's words, then "Job not updated".
 */
import type { Command } from './args.ts';
import { ApiError } from './api-client.ts';
import { CliError, UsageError } from './errors.ts';

/** Nomad's prefix of every refusal of an enforced index (nomad/job_endpoint.go). */
export const ENFORCE_INDEX_PREFIX = 'Enforcing job modify index';

/** `-check-index N` as a non-negative integer; undefined when not given. */
export function checkIndexOf(cmd: Command, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new UsageError(`${cmd.name}: -check-index must be a non-negative integer, the job modify index 'allocrun job plan' printed (got ${JSON.stringify(text)})`, cmd.name);
  return Number(text);
}

/** The registration fields that make the agent check the index; none without one. */
export function enforcedRegistration(index: number | undefined): { EnforceIndex?: true; JobModifyIndex?: number } {
  return index === undefined ? {} : { EnforceIndex: true, JobModifyIndex: index };
}

/** Rethrows a refused index as Nomad's CLI says it ("... Job not updated", exit 1); other errors as they are. */
export function notUpdated(err: unknown): never {
  if (err instanceof ApiError && err.message.includes(ENFORCE_INDEX_PREFIX)) {
    const at = err.message.indexOf(ENFORCE_INDEX_PREFIX);
    throw new CliError(`${err.message.slice(at)}\nJob not updated`, 'ErrJobModifyIndex', 1);
  }
  throw err;
}
