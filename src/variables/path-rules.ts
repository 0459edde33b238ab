/**
 * Which variable paths and namespaces Nomad accepts (nomad/structs/variables.go's validatePath, and
 * Validate): URL-safe characters that do not clash with a template's `@` and `.`, at most 128 of them, and
 * the top-level `nomad/` directory reserved but for `nomad/jobs/...` and `nomad/job-templates/<name>`.
 * Messages never quote a variable's items: they name the path and what is wrong with it.
 */
import { itemsSize, MAX_VARIABLE_SIZE, type VariableItems } from './variable.ts';

/** A variable path: RFC 3986 unreserved characters but `.`, and `/`; 1 to 128 of them. */
const PATH = /^[a-zA-Z0-9\-_~/]{1,128}$/;
/** A namespace name, as Nomad's namespaces validate one. */
const NAMESPACE = /^[a-zA-Z0-9-]{1,128}$/;

/** A variable request Nomad would refuse (bad path, empty or oversized items, wildcard namespace). */
export class VariableError extends Error {
  readonly code = 'ErrInvalidVariable';
  constructor(message: string) {
    super(message);
    this.name = 'VariableError';
  }
}

/** Why `path` is not a variable path Nomad accepts, or undefined when it is one. */
export function pathProblem(path: string): string | undefined {
  if (path.length === 0) return 'variable requires path';
  if (!PATH.test(path)) {
    const why = path.length > 128 ? `it is ${path.length} characters long, the most is 128` : 'a path may hold only letters, digits, "-", "_", "~" and "/"';
    return `invalid path ${JSON.stringify(path)}: ${why}`;
  }
  const parts = path.split('/');
  if (parts[0] !== 'nomad') return undefined;
  if (parts.length === 1) return '"nomad" is a reserved top-level directory path, but you may write variables to "nomad/jobs", "nomad/job-templates", or below';
  if (parts[1] === 'jobs') return undefined;
  if (parts[1] === 'job-templates') {
    return parts.length === 3 ? undefined : '"nomad/job-templates" is a reserved directory path, but you may write variables at the level below it, for example, "nomad/job-templates/template-name"';
  }
  return 'only paths at "nomad/jobs" or "nomad/job-templates" and below are valid paths under the top-level "nomad" directory';
}

/** Why `namespace` cannot hold a variable, or undefined when it can. */
export function namespaceProblem(namespace: string): string | undefined {
  if (namespace === '*') return 'can not target wildcard ("*") namespace';
  if (!NAMESPACE.test(namespace)) return `invalid namespace ${JSON.stringify(namespace)}: a namespace name is 1 to 128 letters, digits and "-"`;
  return undefined;
}

/** Why `items` cannot be a variable's items (empty, over the size limit), or undefined. Never quotes a value. */
export function itemsProblem(items: VariableItems): string | undefined {
  if (Object.keys(items).length === 0) return 'empty variables are invalid: a variable needs at least one item';
  const size = itemsSize(items);
  if (size > MAX_VARIABLE_SIZE) return `variables are limited to 64KiB in total size (these items hold ${size} bytes of keys and values)`;
  return undefined;
}

/** Throws a VariableError when a variable at `namespace`/`path` with `items` is one Nomad would refuse. */
export function checkVariable(namespace: string, path: string, items: VariableItems): void {
  const problem = namespaceProblem(namespace) ?? pathProblem(path) ?? itemsProblem(items);
  if (problem !== undefined) throw new VariableError(problem);
}
