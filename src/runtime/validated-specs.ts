/**
 * A spec the agent has just validated is not validated again by `createAllocRunner` (a zod parse of the
 * whole spec: ~5 µs for a one-task spec, more for large groups). The agent vouches for a spec right before it builds the
 * runner, in the same synchronous step, and the runner's check takes the voucher back at once: a spec
 * object cannot change in between, and one that is passed again later (or to `createAllocRunner` by an
 * embedder) is validated as before, with the same SpecError for bad input.
 */
import type { AllocSpec } from '../jobspec/types.ts';
import { validateAllocSpec } from '../jobspec/validate.ts';

const vouched = new WeakSet<object>();

/** Marks `spec` as validated for the next `validateUnlessVouched` of it only. */
export function vouchFor(spec: AllocSpec): void {
  vouched.add(spec);
}

/** Validates `spec` (throwing a SpecError for bad input) unless it was vouched for, taking the voucher back. */
export function validateUnlessVouched(spec: AllocSpec): void {
  if (typeof spec === 'object' && spec !== null && vouched.delete(spec)) return;
  validateAllocSpec(spec);
}
