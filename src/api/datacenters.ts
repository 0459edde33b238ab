/**
 * Which jobs may run on the agent's node, by datacenter, as Nomad's scheduler decides it
 * (scheduler/util.go readyNodesInDCsAndPool, structs.Node.IsInAnyDC): a job names datacenters, each a glob
 * where `*` stands for any run of characters (go-glob: no other wildcard, no escapes), and a node is eligible
 * when its datacenter matches any of them. A job that names none gets Nomad's default, `["*"]`: everywhere.
 */

/** Nomad's datacenters of a job that names none (since Nomad 1.5). */
export const DEFAULT_DATACENTERS: readonly string[] = ['*'];

/** Whether `datacenter` matches `pattern`: literal text, with `*` matching any run of characters, none included. */
export function datacenterMatches(pattern: string, datacenter: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === datacenter;
  const first = parts[0]!;
  const last = parts.at(-1)!;
  if (!datacenter.startsWith(first) || datacenter.length < first.length + last.length || !datacenter.endsWith(last)) return false;
  // The middle pieces in order, each as early as it occurs: the earliest match leaves the most room for the rest.
  let at = first.length;
  const end = datacenter.length - last.length;
  for (const piece of parts.slice(1, -1)) {
    const found = datacenter.indexOf(piece, at);
    if (found < 0 || found + piece.length > end) return false;
    at = found + piece.length;
  }
  return true;
}

/** The job's datacenters as the scheduler reads them: its own, or everywhere when it names none. */
export function datacentersOf(job: Record<string, unknown>): readonly string[] {
  const dcs = job['Datacenters'];
  return Array.isArray(dcs) && dcs.length > 0 ? dcs.map(String) : DEFAULT_DATACENTERS;
}

/** Whether a node in `datacenter` is eligible for a job naming `patterns`. */
export function inAnyDatacenter(patterns: readonly string[], datacenter: string): boolean {
  return patterns.some((p) => datacenterMatches(p, datacenter));
}
