/**
 * Which names can be path components. Alloc ids, job, group and task names become directory and file
 * names (the alloc dir, task dirs, log files, the state record), so one rule serves job files, the API and
 * AllocSpecs built in code, and the runtime's validate hook applies the same one.
 *
 * Nomad's own rules are part of it (Job.Validate: a job ID has no space and no NUL; TaskGroup: no NUL;
 * Task.Validate: no `/` or `\`). allocrun adds what a path needs: no `/`, `\`, NUL or other control
 * character anywhere, not `.` or `..`, and a length that fits a file name (NAME_MAX is 255 bytes, and a
 * task's log files add `.stdout.N` to its name; an alloc id is `<job>-<group>-<index>`). A task name is
 * stricter, as allocrun's runtime has always required: ASCII letters, digits, `_`, `-` and `.`, because it
 * names the task's directory and log files and Nomad derives variable names from it (NOMAD_ADDR_<task>_...).
 */

/** What a name is used as, which decides the rule and how the message calls it. */
export type NameKind = 'alloc id' | 'job' | 'group' | 'task' | 'job id';

/** The longest job, group or task name, in UTF-8 bytes: two of them and an index still fit one file name. */
export const MAX_NAME_BYTES = 100;
/** The longest alloc id, in UTF-8 bytes (`<job>-<group>-<index>` of the longest names fits). */
export const MAX_ALLOC_ID_BYTES = 210;

/** The characters of a task name. */
const TASK_NAME = /^[A-Za-z0-9_.-]+$/;

/**
 * Why `name` cannot be used as a `kind` name (`must not contain "/"`), or undefined when it can. The empty
 * name is reported here too; callers with their own emptiness check may skip it.
 */
export function unsafeNameReason(name: string, kind: NameKind): string | undefined {
  if (name.length === 0) return 'must not be empty';
  if (name === '.' || name === '..') return `must not be "${name}" (it names a directory)`;
  // A periodic child's ID is its parent's and `/periodic-<unix seconds>`.
  const max = kind === 'alloc id' ? MAX_ALLOC_ID_BYTES : kind === 'job id' ? MAX_NAME_BYTES + 32 : MAX_NAME_BYTES;
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > max) return `is ${bytes} bytes long; ${kind === 'job id' ? 'it' : 'it becomes a directory name, so it'} may have at most ${max}`;
  // An allocation's job ID names no file, and a periodic job's children are `<job>/periodic-<time>` (Nomad's).
  const bad = (kind === 'job id' ? /[\\\0]/ : /[/\\\0]/).exec(name)?.[0];
  if (bad !== undefined) return `must not contain ${bad === '\0' ? 'a NUL character' : `"${bad}"`}`;
  // Nomad: "Job ID contains a space". Any whitespace, since the id is also a word on a command line.
  if ((kind === 'job' || kind === 'job id') && /\s/.test(name)) return 'must not contain whitespace';
  if (/\p{Cc}/u.test(name)) return 'must not contain a control character (a newline, a tab, ...)';
  if (kind === 'task' && !TASK_NAME.test(name)) return 'may only use ASCII letters, digits, "_", "-" and "." (it names the task\'s directory and log files)';
  return undefined;
}

/** A name as a message shows it: quoted, and cut short when long (a 10,000-character name is not repeated). */
export function shownName(name: string): string {
  return name.length > 40 ? `${JSON.stringify(name.slice(0, 40)).slice(0, -1)}…" (${name.length} characters)` : JSON.stringify(name);
}
