/**
 * `allocrun agent --dc NAME`: Nomad's `-dc` (the agent's `datacenter`). The node's datacenter is a plain name
 * jobs match with globs, so it may not itself hold `*` (nor NUL), as Nomad's agent refuses at start.
 */
import { NODE_DATACENTER } from '../api/alloc-metric.ts';
import { UsageError } from './errors.ts';

/** The datacenter the agent's node is in: `--dc` checked, else Nomad's default `dc1`. */
export function agentDatacenter(flag: string | undefined): string {
  if (flag === undefined) return NODE_DATACENTER;
  if (flag === '') throw new UsageError('agent: --dc must name a datacenter (e.g. --dc dc2); leave it out for dc1', 'agent');
  if (/[\0*]/.test(flag)) throw new UsageError(`agent: --dc ${JSON.stringify(flag)}: Datacenter contains invalid characters (null or '*'); a job's datacenters may be globs, the node's is a plain name`, 'agent');
  return flag;
}
