/**
 * HCL job files (`.hcl`, `.nomad`), parsed by HashiCorp's own HCL parser compiled to WASM
 * (`@cdktf/hcl2json`). Its JSON form writes a block as a list of bodies keyed by label
 * (`{ job: { web: [ { group: { api: [ {...} ] } } ] } }`); expressions it cannot reduce to a literal come
 * back as `"${...}"` strings, which the schema then rejects with a hint.
 */
import { LineIndex } from './positions.ts';
import { findExcessiveNesting } from './hcl-guard.ts';
import { HclParserError, parseHclInWorker, stopHclWorker } from './hcl-parser.ts';
import { SpecError, type SpecProblem } from './spec-error.ts';
import type { ParsedSource } from './source.ts';
import { locateInHcl, scanHcl, type HclItem } from './hcl-locator.ts';

/** The name hcl2json sees, so its diagnostics can be found in its error text whatever the real file is. */
const MARKER = '__allocrun_jobfile__.hcl';

/**
 * Parses HCL text into the common structure and a locator; syntax errors become one SpecError. The
 * parser runs in a worker thread, stopped after `timeoutMs`; nesting deeper than `maxDepth` is refused
 * before it starts (deep nesting overflows the WASM parser's stack and leaves its Go runtime dead).
 * With `keepEscapes`, HCL's `$${` / `%%{` escapes stay as written, so variables can be evaluated before
 * they are removed (unescapeTemplates).
 */
export async function parseHclSource(text: string, file: string | undefined, limits: { maxDepth: number; parseTimeoutMs: number }, options: { keepEscapes?: boolean } = {}): Promise<ParsedSource> {
  const lines = new LineIndex(text);
  const at1 = { ...(file !== undefined && { file }), line: 1, column: 1 };
  const tooDeep = findExcessiveNesting(text, limits.maxDepth);
  if (tooDeep !== undefined) {
    throw new SpecError([{ path: '', message: `nested more than ${limits.maxDepth} levels deep`, file, ...lines.at(tooDeep) }]);
  }
  let value: unknown;
  try {
    value = await parseHclInWorker(MARKER, text, limits.parseTimeoutMs);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    if (err instanceof HclParserError && err.timedOut) {
      throw new SpecError([{ path: '', message: `${why}: the file is too large or too complex to parse`, ...at1 }]);
    }
    if (isDiagnostic(why)) throw new SpecError(diagnosticsOf(why, file));
    // Not a diagnostic: the Go runtime may be dead, so the next file gets a fresh worker.
    await stopHclWorker();
    throw new SpecError([{ path: '', message: `the HCL parser failed on this file: ${clean(why)}`, ...at1 }]);
  }
  let items: HclItem[] = [];
  try {
    items = scanHcl(text);
  } catch {
    // The locator is best effort: without it problems are still reported, at the top of the file.
  }
  if (!options.keepEscapes) value = unescapeTemplates(value);
  reorderBySource(value, items);
  return { value, lines, locate: (path) => locateInHcl(items, path) };
}

/** A parse error with HCL diagnostics, as opposed to a failure of the parser itself. */
function isDiagnostic(text: string): boolean {
  return text.includes('parse config:') || text.includes(MARKER);
}

/**
 * hcl2json's error is Go's `parse config: [file:L,C-C: Summary; Detail file:L,C-L,C: ...]`: one
 * problem per diagnostic, at its start position.
 */
function diagnosticsOf(message: string, file?: string): SpecProblem[] {
  const text = message.replace(/^(Error: )?parse config: \[/, '').replace(/\]\s*$/, '');
  const escaped = MARKER.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const head = new RegExp(`${escaped}:(\\d+),(\\d+)-(?:\\d+,)?\\d+: `, 'g');
  const here = new RegExp(`${escaped}:(\\d+),(\\d+)(?:-(?:\\d+,)?\\d+)?`, 'g');
  const hits = [...text.matchAll(head)];
  if (hits.length === 0) return [{ path: '', message: clean(text.replace(here, 'line $1, column $2')), file, line: 1, column: 1 }];
  return hits.map((m, k) => {
    const start = m.index + m[0].length;
    const end = k + 1 < hits.length ? hits[k + 1]!.index : text.length;
    // A detail may point at another place ("already set at <file>:2,3-7"): say it as a line number.
    const message = clean(text.slice(start, end).replace(here, 'line $1, column $2'));
    return { path: '', message, file, line: Number(m[1]), column: Number(m[2]) };
  });
}

function clean(message: string): string {
  return message.replace(/\s+/g, ' ').trim() || 'HCL syntax error';
}

/** HCL writes a literal `${` as `$${` (and `%{` as `%%{`); hcl2json keeps the escape, Nomad does not. */
export function unescapeTemplates(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('$${', '${').replaceAll('%%{', '%{');
  if (Array.isArray(value)) return value.map(unescapeTemplates);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unescapeTemplates(v)]));
  }
  return value;
}

/**
 * hcl2json comes from Go maps, so labelled blocks arrive sorted by label; put groups and tasks back in
 * the order the file writes them (task order is the order a user reads and the order of the task table).
 */
function reorderBySource(value: unknown, items: HclItem[]): void {
  const jobs = labelled(value, 'job');
  for (const jobBlock of blocksOf(items, 'job')) {
    const jobBody = firstBody(jobs?.[jobBlock.labels[0]?.value ?? '']);
    const groups = labelled(jobBody, 'group');
    if (!jobBody || !groups) continue;
    const groupBlocks = blocksOf(jobBlock.body, 'group');
    jobBody['group'] = sortKeys(groups, groupBlocks.map((b) => b.labels[0]?.value ?? ''));
    for (const groupBlock of groupBlocks) {
      const groupBody = firstBody((jobBody['group'] as Record<string, unknown>)[groupBlock.labels[0]?.value ?? '']);
      const tasks = labelled(groupBody, 'task');
      if (!groupBody || !tasks) continue;
      groupBody['task'] = sortKeys(tasks, blocksOf(groupBlock.body, 'task').map((b) => b.labels[0]?.value ?? ''));
    }
  }
}

type Block = Extract<HclItem, { kind: 'block' }>;

function blocksOf(items: HclItem[], type: string): Block[] {
  return items.filter((it): it is Block => it.kind === 'block' && it.type === type);
}

function labelled(body: unknown, key: string): Record<string, unknown> | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const v = (body as Record<string, unknown>)[key];
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function firstBody(v: unknown): Record<string, unknown> | undefined {
  const body = Array.isArray(v) ? v[0] : v;
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
}

function sortKeys(obj: Record<string, unknown>, order: string[]): Record<string, unknown> {
  const rank = (k: string): number => {
    const i = order.indexOf(k);
    return i < 0 ? order.length : i;
  };
  return Object.fromEntries(Object.entries(obj).sort(([a], [b]) => rank(a) - rank(b)));
}
