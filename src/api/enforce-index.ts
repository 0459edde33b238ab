/**
 * Why a registration with `EnforceIndex` is refused, in Nomad's words (nomad/job_endpoint.go, Register): the
 * index given must be the job's current JobModifyIndex, or 0 for a job that does not exist yet. Nomad answers
 * these as 500 (an RPC error its HTTP layer does not classify); the agent answers 400, the request's fault, with
 * the same text, which is what Nomad's clients match on.
 */

/** The refusal for `given` when the job's index is `current` (undefined: no such job); undefined when it may register. */
export function enforceIndexRefusal(given: number, current: number | undefined): string | undefined {
  if (current === undefined) return given === 0 ? undefined : `Enforcing job modify index ${given}: job does not exist`;
  if (given === 0) return 'Enforcing job modify index 0: job already exists';
  return given === current ? undefined : `Enforcing job modify index ${given}: job exists with conflicting job modify index: ${current}`;
}
