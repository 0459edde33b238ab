/**
 * Loads a module of this package that may not be part of the build yet (the visualizer, the task manager
 * machine), so a missing piece fails only the flag or command that needs it, with a message saying so.
 */
import { UnavailableError } from './errors.ts';

/**
 * Imports `relPath` (relative to src/cli/) and returns its `exportName`; throws UnavailableError with
 * `what` when the file or the export is missing. Errors inside an existing module propagate as they are.
 */
export async function importOptional<T>(relPath: string, exportName: string, what: string): Promise<T> {
  const url = new URL(relPath, import.meta.url);
  let mod: Record<string, unknown>;
  try {
    // A computed specifier keeps tsc from requiring the file to exist at type-check time.
    mod = (await import(url.href)) as Record<string, unknown>;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if ((e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'ENOENT') && e.message.includes(url.pathname.split('/').pop()!)) {
      throw new UnavailableError(`${what}: ${url.pathname.replace(/^.*\/(src|machines)\//, '$1/')} is not part of this build yet`);
    }
    throw err;
  }
  const value = mod[exportName];
  if (value === undefined) throw new UnavailableError(`${what}: ${relPath} does not export ${exportName} yet`);
  return value as T;
}
