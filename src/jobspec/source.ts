/** What every job-file format parser hands on: the plain value, and how to point a path back into the file. */
import type { LineIndex, Locator } from './positions.ts';

/** A parsed job file: its value in the common (hcl2json-like) structure and a locator for its paths. */
export interface ParsedSource {
  value: unknown;
  lines: LineIndex;
  /** The offset where a path is written, best effort; undefined when it cannot tell. */
  locate: Locator;
}
