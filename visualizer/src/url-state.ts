/**
 * The selection in the URL, in Nomad's UI's route words: `#/alloc/<id>` for an allocation,
 * `#/alloc/<id>/task/<name>` for one of its tasks. A link with it opens the page there.
 */

/** The hash naming an id path (an allocation, or a task in it; deeper actors are named by their task). */
export function hashOf(path: readonly string[]): string {
  const [alloc, task] = path;
  if (alloc === undefined) return '';
  return `#/alloc/${encodeURIComponent(alloc)}${task === undefined ? '' : `/task/${encodeURIComponent(task)}`}`;
}

/** The id path a hash names, or undefined when it names none. */
export function pathOfHash(hash: string): string[] | undefined {
  const m = /^#\/alloc\/([^/]+)(?:\/task\/([^/]+))?\/?$/.exec(hash);
  if (!m) return undefined;
  try {
    const alloc = decodeURIComponent(m[1]!);
    return m[2] === undefined ? [alloc] : [alloc, decodeURIComponent(m[2])];
  } catch {
    return undefined;
  }
}
