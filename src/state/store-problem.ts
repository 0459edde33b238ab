/**
 * What is wrong with an agent store file, as data: the cause a StoreDamagedError carries besides its message,
 * so a caller that shows the file under another name (a snapshot restore checks a temporary copy of the
 * user's file) builds its own words from it instead of editing the store's text.
 */

/** Why a store file was refused, without its name. */
export type StoreProblem =
  /** Opened with `create: false` where no store file is. */
  | { kind: 'missing' }
  /** The file is not whole or not an LMDB store at all (checked before LMDB maps it). */
  | { kind: 'damaged'; why: string }
  /** LMDB refused to open it; `detail` is the library's own text, which may name the path opened. */
  | { kind: 'unopenable'; detail: string }
  /** A newer allocrun wrote it, in a layout this one does not read. */
  | { kind: 'newer-layout'; layout: unknown; reads: number }
  /** One stored value does not parse. */
  | { kind: 'value'; table: string; key: string; why: string };

/** The problem said of `file` (a path, or words such as "the file"): the sentence the store's messages start with. */
export function describeStoreProblem(p: StoreProblem, file: string): string {
  switch (p.kind) {
    case 'missing':
      return `${file}: no agent store here`;
    case 'damaged':
      return `${file} is damaged: ${p.why}`;
    case 'unopenable':
      return `${file} cannot be opened as the agent's store: ${p.detail}`;
    case 'newer-layout':
      return `${file} was written by a newer allocrun (store layout ${JSON.stringify(p.layout)}, this one reads ${p.reads})`;
    case 'value':
      return `${file}: ${p.table}/${p.key} is ${p.why}`;
  }
}
