/**
 * What a reader of variables is given (the template hook's `nomadVar`/`nomadVarList`): reads of what is
 * committed now and a stream of changes to wait on. The agent's VariableStore is one; `forTask` narrows it
 * to what a job's task may read. Values read here live in memory only: a reader must not put them in a
 * machine's context, an event, a log line or an error message.
 */
import type { Observable } from 'rxjs';
import type { Variable, VariableMetadata } from './variable.ts';

/** One committed change: a variable written (created or updated) or deleted, at `index`. */
export interface VariableChange {
  namespace: string;
  path: string;
  /** The change's modify index (the agent's index; later changes have larger ones). */
  index: number;
  deleted: boolean;
}

/** Reads and watches variables. */
export interface VariableSource {
  /** The variable at `path` in `namespace` (the reader's default namespace when omitted), or undefined. */
  get(path: string, namespace?: string): Variable | undefined;
  /** The metadata of every variable whose path starts with `prefix`, ordered by namespace then path. */
  list(prefix: string, namespace?: string): VariableMetadata[];
  /** Whether this reader may read `path` in `namespace` at all (a denied read answers as absent). */
  allowed(path: string, namespace?: string): boolean;
  /** Every change committed from now on that this reader may see; never its items. */
  readonly changes$: Observable<VariableChange>;
}
