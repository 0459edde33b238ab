/**
 * The one error a job file or an AllocSpec can fail with: every problem found, each with its path and, for
 * files, where it is, so a user fixes them all in one pass instead of one per run.
 */

/** One problem: `path` names the field (`job.web.group.api.task.app.kill_timeout`), empty for syntax errors. */
export interface SpecProblem {
  path: string;
  message: string;
  file?: string;
  /** 1-based. */
  line?: number;
  /** 1-based. */
  column?: number;
}

/** A path as segments; numbers are list indices (`tasks[1]`) or the n-th repeat of a block. */
export type PathSegment = string | number;

/**
 * Joins segments the way users write them: `job.web.group.api`, `tasks[1].killTimeout`; a name that would
 * be ambiguous after a dot (empty, or with dots, brackets, quotes, spaces or control characters) is quoted: `group["a.b"]`.
 */
export function formatPath(path: readonly PathSegment[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    // A name of thousands of characters is refused for its length; the path need not repeat it whole.
    else if (seg.length > 64) out += `[${JSON.stringify(`${seg.slice(0, 40)}…`)}]`;
    else if (!/^[^.[\]"\s\p{Cc}]+$/u.test(seg)) out += `[${JSON.stringify(seg)}]`;
    else out += out === '' ? seg : `.${seg}`;
  }
  return out;
}

/** `file:line:col: path: message`, leaving out whatever the problem does not know. */
export function formatProblem(p: SpecProblem): string {
  const where: (string | number)[] = [];
  if (p.file !== undefined) where.push(p.file);
  if (p.line !== undefined) {
    where.push(p.line);
    if (p.column !== undefined) where.push(p.column);
  }
  const prefix = where.length > 0 ? `${where.join(':')}: ` : '';
  return `${prefix}${p.path ? `${p.path}: ` : ''}${p.message}`;
}

/** Sorts problems by position (those without one keep their order, last) so the message reads top to bottom. */
export function sortProblems(problems: readonly SpecProblem[]): SpecProblem[] {
  return problems
    .map((p, i) => ({ p, i }))
    .sort((a, b) => {
      const la = a.p.line ?? Infinity;
      const lb = b.p.line ?? Infinity;
      if (la !== lb) return la - lb;
      const ca = a.p.column ?? 0;
      const cb = b.p.column ?? 0;
      return ca !== cb ? ca - cb : a.i - b.i;
    })
    .map(({ p }) => p);
}

/** Every problem of a job file or spec at once; the message lists them one per line, never a stack trace. */
export class SpecError extends Error {
  readonly code = 'ErrSpec';
  readonly problems: SpecProblem[];

  constructor(problems: readonly SpecProblem[]) {
    const sorted = sortProblems(problems.length > 0 ? problems : [{ path: '', message: 'invalid job specification' }]);
    super(sorted.map(formatProblem).join('\n'));
    this.name = 'SpecError';
    this.problems = sorted;
  }
}

/** True for a SpecError, also one from another copy of this module (checked by code, not by class). */
export function isSpecError(err: unknown): err is SpecError {
  return err instanceof SpecError || (typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'ErrSpec');
}
