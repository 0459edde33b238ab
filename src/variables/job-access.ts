/**
 * What a job's task may read without any ACL policy: Nomad's automatic workload access
 * (acl/acl.go's matchingVariablesCapabilitySet). In the task's own namespace it may read and list exactly
 * `nomad/jobs`, `nomad/jobs/<job>`, `nomad/jobs/<job>/<group>` and `nomad/jobs/<job>/<group>/<task>`:
 * those paths themselves, not what lies below them, and nothing of another job or namespace.
 */

/** Who is reading: the task's identity, as Nomad's workload identity claims name it. */
export interface TaskClaim {
  namespace: string;
  job: string;
  group: string;
  task: string;
}

/** The paths `claim` may read, broadest first. */
export function implicitPaths(claim: TaskClaim): string[] {
  return ['nomad/jobs', `nomad/jobs/${claim.job}`, `nomad/jobs/${claim.job}/${claim.group}`, `nomad/jobs/${claim.job}/${claim.group}/${claim.task}`];
}

/** Whether the task of `claim` may read (or list) the variable at `path` in `namespace`. */
export function taskMayRead(claim: TaskClaim, namespace: string, path: string): boolean {
  return namespace === claim.namespace && implicitPaths(claim).includes(path);
}
