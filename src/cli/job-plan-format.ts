/**
 * What `allocrun job plan` prints, laid out as `nomad job plan` lays it out (command/job_plan.go): the job's
 * diff with Nomad's markers (`+` added, `-` deleted, `+/-` edited) and its alignment rules, the "Scheduler
 * dry-run:" section, and the exit status a script reads (0: no allocation created or destroyed, 1: some are).
 * Pure text from the plan's JSON, so every rule is a table row. No colour: the CLI prints none elsewhere.
 */
import { allocMetricLines, type AllocationMetricBody } from './placement-failures.ts';

type DiffType = 'Added' | 'Deleted' | 'Edited' | 'None';

/** Nomad's FieldDiff as the plan answers it. */
export interface FieldDiffBody {
  Type: DiffType;
  Name: string;
  Old: string;
  New: string;
  Annotations?: string[] | null;
}

/** Nomad's ObjectDiff. */
export interface ObjectDiffBody {
  Type: DiffType;
  Name: string;
  Fields?: FieldDiffBody[] | null;
  Objects?: ObjectDiffBody[] | null;
}

/** Nomad's TaskDiff. */
export interface TaskDiffBody extends ObjectDiffBody {
  Annotations?: string[] | null;
}

/** Nomad's TaskGroupDiff. */
export interface TaskGroupDiffBody extends ObjectDiffBody {
  Tasks?: TaskDiffBody[] | null;
  Updates?: Record<string, number> | null;
}

/** Nomad's JobDiff. */
export interface JobDiffBody {
  Type: DiffType;
  ID: string;
  Fields?: FieldDiffBody[] | null;
  Objects?: ObjectDiffBody[] | null;
  TaskGroups?: TaskGroupDiffBody[] | null;
}

/** The parts of `PUT /v1/job/:id/plan`'s answer the command reads. */
export interface PlanResponseBody {
  JobModifyIndex: number;
  Diff: JobDiffBody | null;
  Annotations?: { DesiredTGUpdates?: Record<string, Record<string, number>> | null } | null;
  FailedTGAllocs?: Record<string, AllocationMetricBody> | null;
  Warnings?: string;
}

/** The marker before a diff line and how wide it is. */
function marker(type: DiffType): string {
  return type === 'Added' ? '+ ' : type === 'Deleted' ? '- ' : type === 'Edited' ? '+/- ' : '';
}

const spaces = (n: number): string => ' '.repeat(Math.max(0, n));

/** Go's %q: double quotes, with control characters escaped as Go escapes them (JSON writes some differently). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (c >= 0x20 && c < 0x7f) out += ch;
    else if (c === 0x07) out += '\\a';
    else if (c === 0x08) out += '\\b';
    else if (c === 0x0c) out += '\\f';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c === 0x0b) out += '\\v';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if ((c >= 0x80 && c < 0xa0) || c === 0x2028 || c === 0x2029 || c === 0xfeff) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** The longest field name and the widest marker among fields and objects: what the lines are aligned to. */
function widths(fields: readonly FieldDiffBody[], objects: readonly ObjectDiffBody[]): { field: number; marker: number } {
  let field = 0;
  let mark = 0;
  for (const f of fields) {
    field = Math.max(field, f.Name.length);
    mark = Math.max(mark, marker(f.Type).length);
  }
  for (const o of objects) mark = Math.max(mark, marker(o.Type).length);
  return { field, marker: mark };
}

function fieldLine(f: FieldDiffBody, start: number, keyPad: number, valuePad: number): string {
  const value = f.Type === 'Added' ? goQuote(f.New) : f.Type === 'Deleted' ? goQuote(f.Old) : f.Type === 'Edited' ? `${goQuote(f.Old)} => ${goQuote(f.New)}` : goQuote(f.New);
  const notes = f.Annotations && f.Annotations.length > 0 ? ` (${f.Annotations.join(', ')})` : '';
  return `${spaces(start)}${marker(f.Type)}${spaces(keyPad)}${f.Name}: ${spaces(valuePad)}${value}${notes}`;
}

function objectBlock(o: ObjectDiffBody, start: number, keyPad: number): string {
  const fields = o.Fields ?? [];
  const objects = o.Objects ?? [];
  const w = widths(fields, objects);
  const inner = aligned(fields, objects, start + keyPad + 2, w.field, w.marker);
  return `${spaces(start)}${marker(o.Type)}${spaces(keyPad)}${o.Name} {\n${inner}\n${spaces(start + marker(o.Type).length + keyPad)}}`;
}

/** Fields then objects, one a line, markers right-aligned to `markerWidth` and values to `fieldWidth`; no trailing newline. */
function aligned(fields: readonly FieldDiffBody[], objects: readonly ObjectDiffBody[], start: number, fieldWidth: number, markerWidth: number): string {
  const lines = [
    ...fields.map((f) => fieldLine(f, start, markerWidth - marker(f.Type).length, fieldWidth - f.Name.length)),
    ...objects.map((o) => objectBlock(o, start, markerWidth - marker(o.Type).length)),
  ];
  return lines.join('\n');
}

function taskBlock(t: TaskDiffBody, start: number, taskPad: number, verbose: boolean): string {
  let out = `${spaces(start)}${marker(t.Type)}${spaces(taskPad)}Task: ${goQuote(t.Name)}`;
  if (t.Annotations && t.Annotations.length > 0) out += ` (${t.Annotations.join(', ')})`;
  // An added or deleted task is one line unless verbose; an unchanged one always is.
  if (t.Type === 'None' || ((t.Type === 'Added' || t.Type === 'Deleted') && !verbose)) return out;
  const fields = t.Fields ?? [];
  const objects = t.Objects ?? [];
  const w = widths(fields, objects);
  return `${out}\n${aligned(fields, objects, start + 2, w.field, w.marker)}`;
}

function groupBlock(g: TaskGroupDiffBody, groupPad: number, verbose: boolean): string {
  let out = `${marker(g.Type)}${spaces(groupPad)}Task Group: ${goQuote(g.Name)}`;
  const updates = Object.keys(g.Updates ?? {}).sort();
  out += updates.length > 0 ? ` (${updates.map((u) => `${g.Updates![u]} ${u}`).join(', ')})\n` : '\n';
  const fields = g.Fields ?? [];
  const objects = g.Objects ?? [];
  const tasks = g.Tasks ?? [];
  const w = widths(fields, objects);
  const markerWidth = Math.max(w.marker, ...tasks.map((t) => marker(t.Type).length));
  const inner = groupPad + 2;
  if (g.Type === 'Edited' || verbose) {
    const fo = aligned(fields, objects, inner, w.field, markerWidth);
    if (fo.length > 0) out += `${fo}\n`;
  }
  for (const t of tasks) out += `${taskBlock(t, inner, markerWidth - marker(t.Type).length, verbose)}\n`;
  return out;
}

/**
 * The job's diff as `nomad job plan` prints it: the job line, its own fields and blocks when it is edited
 * (or always, `verbose`), then each group with its updates (`1 create`, `2 in-place update`) and its tasks
 * with their annotations; `verbose` also expands added and deleted groups and tasks.
 */
export function formatJobDiff(diff: JobDiffBody, verbose: boolean): string {
  let out = `${marker(diff.Type)}Job: ${goQuote(diff.ID)}\n`;
  const fields = diff.Fields ?? [];
  const objects = diff.Objects ?? [];
  const groups = diff.TaskGroups ?? [];
  const w = widths(fields, objects);
  const markerWidth = Math.max(w.marker, ...groups.map((g) => marker(g.Type).length));
  if (diff.Type === 'Edited' || verbose) {
    const fo = aligned(fields, objects, 0, w.field, markerWidth);
    if (fo.length > 0) out += `${fo}\n`;
  }
  for (const g of groups) out += `${groupBlock(g, markerWidth - marker(g.Type).length, verbose)}\n`;
  return out.trim();
}

/**
 * The "Scheduler dry-run:" lines: every allocation placed, or per group (in name order) how many could not
 * be, with the facts of its first failed placement as `nomad job run`'s monitor states them.
 */
export function formatDryRun(plan: PlanResponseBody, jobType: string): string[] {
  const failed = Object.entries(plan.FailedTGAllocs ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (failed.length === 0) return ['- All tasks successfully allocated.'];
  const lines = [jobType === 'system' ? '- WARNING: Failed to place allocations on all nodes.' : '- WARNING: Failed to place all allocations.'];
  failed.forEach(([group, metric], i) => {
    const n = (metric.CoalescedFailures ?? 0) + 1;
    if (i > 0) lines.push('');
    lines.push(`  Task Group ${goQuote(group)} (failed to place ${n} allocation${n > 1 ? 's' : ''}):`, ...allocMetricLines(metric, '    '));
  });
  return lines;
}

/** Nomad's plan exit status: 1 when allocations would be created, destroyed, migrated or replaced, else 0. */
export function planExitCode(plan: PlanResponseBody): 0 | 1 {
  if (!plan.Diff || plan.Diff.Type === 'None') return 0;
  for (const u of Object.values(plan.Annotations?.DesiredTGUpdates ?? {})) {
    if ((u['Stop'] ?? 0) + (u['Place'] ?? 0) + (u['Migrate'] ?? 0) + (u['DestructiveUpdate'] ?? 0) + (u['Canary'] ?? 0) > 0) return 1;
  }
  return 0;
}

/** The closing lines: the job modify index and how to submit exactly what was planned. */
export function jobModifyIndexLines(index: number, file: string): string[] {
  return [
    `Job Modify Index: ${index}`,
    'To submit the job with version verification run:',
    '',
    `allocrun job run -check-index ${index} ${file}`,
    '',
    'With -check-index the job is registered only while its modify index on the agent is still the one',
    'given. If it has moved, the job was changed since this plan and what the plan says may no longer hold.',
  ];
}
