/**
 * Which names can be path components. Alloc ids, job, group and task names become directory and file
 * names (the alloc dir, task dirs, the state record), so one rule serves job files and AllocSpecs built in
 * code. Nomad's own rules are part of it (Job.Validate: a job ID has no space and no NUL; TaskGroup: no NUL;
 * Task.Validate: no `/` or `\`); allocrun adds what a path needs: no `/`, `\` or NUL anywhere, and not `.`
 * or `..`.
 */

/** What a name is used as, which decides the rule and how the message calls it. */
export type NameKind = 'alloc id' | 'job' | 'group' | 'task';

/**
 * Why `name` cannot be used as a `kind` name (`must not contain "/"`), or undefined when it can. The empty
 * name is reported here too; callers with their own emptiness check may skip it.
 */
export function unsafeNameReason(name: string, kind: NameKind): string | undefined {
  if (name.length === 0) return 'must not be empty';
  if (name === '.' || name === '..') return `must not be "${name}" (it names a directory)`;
  const bad = /[/\\\0]/.exec(name)?.[0];
  if (bad !== undefined) return `must not contain ${bad === '\0' ? 'a NUL character' : `"${bad}"`}`;
  // Nomad: "Job ID contains a space". Any whitespace, since the id is also a word on a command line.
  if (kind === 'job' && /\s/.test(name)) return 'must not contain whitespace';
  return undefined;
}
