/**
 * What `allocrun run` shows while allocations run: a task table redrawn in place on a terminal, one line
 * per task event when output is a pipe or file, or one JSON object per event and state change (`--json`).
 */
import type { RunnerRejection } from '../runtime/create-alloc-runner.ts';
import type { AllocSpec, AllocState, ClientStatus, TaskEvent, TaskState } from '../jobspec/types.ts';
import { clockTime, columns, inRunOrder, lifecycleWord, shortId, taskStateWord, visibleLength } from './format.ts';

/** What a view says first. */
export interface StartInfo {
  /** What is running, e.g. `running job.nomad` or `agent: restored 2 allocation(s)`. */
  title: string;
  jobFile?: string;
  dataDir: string;
  allocs: AllocSpec[];
  inspectUrl?: string;
  record?: string;
}

/** What a view says last. `forced`: a second Ctrl-C; `detached`: the agent stopped, leaving tasks running. */
export interface FinishInfo {
  dataDir: string;
  results: { alloc: AllocSpec; state: AllocState; error?: string }[];
  exitCode: number;
  forced: boolean;
  detached?: boolean;
}

/** Everything `run` (or `agent`) reports, in the order it happens. */
export interface RunView {
  start(info: StartInfo): void;
  taskEvent(alloc: AllocSpec, task: string, event: TaskEvent): void;
  state(alloc: AllocSpec, state: AllocState): void;
  rejection(alloc: AllocSpec, rejection: RunnerRejection): void;
  /** A line a task wrote, for views that show output (the table); undefined: the view does not want them. */
  output?(alloc: AllocSpec, task: string, line: { stream: 'stdout' | 'stderr'; line: string }): void;
  /** A message from the CLI itself (a signal received, a save that failed). */
  note(message: string): void;
  finish(summary: FinishInfo): void;
}

type Out = { write(s: string): unknown };

/** The closing lines of the plain and table views: each allocation's outcome and where its state is. */
function summaryLines(summary: FinishInfo): string[] {
  const lines = summary.results.map(({ alloc, state, error }) => `alloc ${alloc.id} (${alloc.job}.${alloc.group}): ${state.clientStatus}${error ? ` (error: ${error})` : ''}`);
  const live = summary.results.some((r) => r.state.clientStatus === 'running' || r.state.clientStatus === 'pending');
  if ((summary.forced || summary.detached) && live) {
    lines.push(`${summary.forced ? 'forced exit' : 'agent stopped'}: tasks still running were left running; 'allocrun agent --data-dir ${summary.dataDir}' reattaches to them`);
  }
  lines.push(`state saved in ${summary.dataDir}; see: allocrun status --data-dir ${summary.dataDir}`);
  return lines;
}

/** Remembers task and alloc states to report only what changed. */
class Changes {
  private readonly tasks = new Map<string, string>();
  private readonly allocs = new Map<string, ClientStatus>();

  /** Tasks whose state, failed flag or restart count changed since the last call. */
  changedTasks(alloc: AllocSpec, state: AllocState): [string, TaskState][] {
    const out: [string, TaskState][] = [];
    for (const [name, ts] of Object.entries(state.taskStates)) {
      const key = `${alloc.id}\0${name}`;
      const sig = `${ts.state}/${ts.failed}/${ts.restarts}`;
      if (this.tasks.get(key) !== sig) {
        this.tasks.set(key, sig);
        out.push([name, ts]);
      }
    }
    return out;
  }

  /** The alloc's client status when it changed, else undefined. */
  changedStatus(alloc: AllocSpec, state: AllocState): ClientStatus | undefined {
    if (this.allocs.get(alloc.id) === state.clientStatus) return undefined;
    this.allocs.set(alloc.id, state.clientStatus);
    return state.clientStatus;
  }
}

/** One JSON object per line: task events, task state changes, alloc status changes, notes and the exit. */
export function jsonView(out: Out, now: () => number = Date.now): RunView {
  const changes = new Changes();
  const emit = (obj: Record<string, unknown>) => out.write(`${JSON.stringify({ ...obj, at: new Date(now()).toISOString() })}\n`);
  return {
    start: ({ title, jobFile, dataDir, allocs, inspectUrl, record }) =>
      emit({
        type: 'start',
        title,
        ...(jobFile ? { jobFile } : {}),
        dataDir,
        ...(inspectUrl ? { inspect: inspectUrl } : {}),
        ...(record ? { record } : {}),
        allocs: allocs.map((a) => ({ id: a.id, job: a.job, group: a.group, tasks: a.tasks.map((t) => t.name) })),
      }),
    taskEvent: (alloc, task, event) => emit({ type: 'task-event', alloc: alloc.id, task, event }),
    state: (alloc, state) => {
      for (const [task, ts] of changes.changedTasks(alloc, state)) emit({ type: 'task-state', alloc: alloc.id, task, state: ts.state, failed: ts.failed, restarts: ts.restarts });
      const status = changes.changedStatus(alloc, state);
      if (status) emit({ type: 'alloc-status', alloc: alloc.id, status });
    },
    rejection: (alloc, r) => emit({ type: 'rejection', alloc: alloc.id, command: r.command, message: r.message }),
    note: (message) => emit({ type: 'note', message }),
    finish: ({ dataDir, results, exitCode, forced, detached }) =>
      emit({ type: 'exit', code: exitCode, forced, detached: detached ?? false, dataDir, allocs: Object.fromEntries(results.map((r) => [r.alloc.id, r.state.clientStatus])) }),
  };
}

/** One line per task event and per alloc status change, for pipes, files and CI logs. */
export function plainView(out: Out, now: () => number = Date.now): RunView {
  const changes = new Changes();
  const announced = new Set<string>();
  let multi = false;
  let taskWidth = 8;
  const prefix = (alloc: AllocSpec) => (multi ? `${shortId(alloc.id)}  ` : '');
  return {
    start: ({ title, dataDir, allocs, inspectUrl, record }) => {
      multi = allocs.length > 1;
      taskWidth = Math.max(4, ...allocs.flatMap((a) => a.tasks.map((t) => t.name.length)));
      out.write(`${title}: ${allocs.length} allocation(s)${allocs.length > 0 ? `: ${allocs.map((a) => a.id).join(', ')}` : ''}\n`);
      out.write(`data dir: ${dataDir}\n`);
      if (inspectUrl) out.write(`inspector: ${inspectUrl}\n`);
      if (record) out.write(`recording inspection to ${record}\n`);
    },
    taskEvent: (alloc, task, e) => out.write(`${clockTime(e.time)}  ${prefix(alloc)}${task.padEnd(taskWidth)}  ${e.type.padEnd(18)}  ${e.displayMessage}\n`),
    state: (alloc, state) => {
      const status = changes.changedStatus(alloc, state);
      // Between lifecycle stages every task is dead or pending, so the status flips back to pending for a
      // moment; in a log only the first start and the outcome are news.
      if (!status || status === 'pending' || (status === 'running' && announced.has(alloc.id))) return;
      announced.add(alloc.id);
      out.write(`${clockTime(now())}  ${prefix(alloc)}alloc ${alloc.id} is ${status}\n`);
    },
    rejection: (alloc, r) => out.write(`${clockTime(r.time)}  ${prefix(alloc)}rejected ${r.command}: ${r.message}\n`),
    note: (message) => out.write(`${clockTime(now())}  ${message}\n`),
    finish: (summary) => out.write(`${summaryLines(summary).join('\n')}\n`),
  };
}

const ESC = '\x1b[';
const RECENT_OUTPUT = 6;

/**
 * The live table for a terminal: one block per allocation (status, elapsed time) with a row per task
 * (lifecycle, state, restarts, last event), redrawn in place with ANSI cursor movement. Notes scroll above it.
 */
export function tableView(out: Out & { columns?: number }, opts: { color: boolean; now?: () => number }): RunView {
  const now = opts.now ?? Date.now;
  const allocs: AllocSpec[] = [];
  const states = new Map<string, AllocState>();
  const lastEvent = new Map<string, TaskEvent>();
  const startedAt = now();
  let drawn = 0; // lines of the table currently on screen
  let timer: NodeJS.Timeout | undefined;
  let ticker: NodeJS.Timeout | undefined;
  let header: string[] = [];
  const recent: { task: string; alloc: AllocSpec; stream: 'stdout' | 'stderr'; line: string }[] = [];

  const paint = (code: string, s: string) => (opts.color ? `${ESC}${code}m${s}${ESC}0m` : s);
  const stateCell = (ts: TaskState | undefined) => {
    if (!ts) return paint('2', 'pending');
    const w = taskStateWord(ts);
    if (ts.failed) return paint('31', w);
    if (ts.state === 'running') return paint('32', w);
    return ts.state === 'dead' ? paint('2', w) : w;
  };
  const statusCell = (s: ClientStatus) => paint(s === 'failed' ? '1;31' : s === 'complete' ? '1;32' : s === 'running' ? '1;33' : '1', s);

  const lines = (): string[] => {
    const width = Math.max(40, out.columns || 120); // a pty without a size reports 0
    const elapsed = Math.floor((now() - startedAt) / 1000);
    const text: string[] = [];
    for (const alloc of allocs) {
      const st = states.get(alloc.id);
      text.push(`${paint('1', `alloc ${alloc.id}`)}  job ${alloc.job}  group ${alloc.group}  ${statusCell(st?.clientStatus ?? 'pending')}  ${elapsed}s`);
      const rows = [[paint('2', 'TASK'), paint('2', 'LIFECYCLE'), paint('2', 'STATE'), paint('2', 'RESTARTS'), paint('2', 'LAST EVENT')]];
      for (const t of inRunOrder(alloc.tasks)) {
        const ts = st?.taskStates[t.name];
        const ev = lastEvent.get(`${alloc.id}\0${t.name}`);
        rows.push([t.name, lifecycleWord(t), stateCell(ts), String(ts?.restarts ?? 0), ev ? `${ev.type}: ${ev.displayMessage}` : '']);
      }
      text.push(...columns(rows).map((l) => `  ${l}`));
    }
    if (recent.length > 0) {
      // What the tasks print is what a newcomer came to see; the last few lines, tagged with their task.
      const w = Math.max(...recent.map((r) => r.task.length));
      text.push(paint('2', 'recent output'));
      for (const r of recent) {
        const who = allocs.length > 1 ? `${shortId(r.alloc.id)} ${r.task}` : r.task.padEnd(w);
        text.push(`  ${paint('2', `${who} |`)} ${r.stream === 'stderr' ? paint('31', r.line) : r.line}`);
      }
    }
    // A wrapped line would throw the cursor arithmetic off: cut every line to the terminal width.
    return text.map((l) => truncate(l, width - 1));
  };

  const clear = () => {
    if (drawn > 0) out.write(`${ESC}${drawn}A\r${ESC}J`);
    drawn = 0;
  };
  const draw = () => {
    timer = undefined;
    const ls = lines();
    clear();
    out.write(`${ls.join('\n')}\n`);
    drawn = ls.length;
  };
  // Events come in bursts (a hook phase is several events in one tick): redraw once per burst.
  const schedule = () => {
    timer ??= setTimeout(draw, 30);
  };

  return {
    start: ({ title, dataDir, allocs: list, inspectUrl, record }) => {
      allocs.push(...list);
      header = [title, `data dir: ${dataDir}`];
      if (inspectUrl) header.push(`inspector: ${inspectUrl}`);
      if (record) header.push(`recording inspection to ${record}`);
      out.write(`${header.join('\n')}\n${ESC}?25l`);
      draw();
      ticker = setInterval(schedule, 1000);
      ticker.unref();
    },
    taskEvent: (alloc, task, event) => {
      lastEvent.set(`${alloc.id}\0${task}`, event);
      schedule();
    },
    state: (alloc, state) => {
      states.set(alloc.id, state);
      // The state holds every event too: a restored allocation's history shows without replaying it.
      for (const [task, ts] of Object.entries(state.taskStates)) {
        const last = ts.events.at(-1);
        if (last) lastEvent.set(`${alloc.id}\0${task}`, last);
      }
      schedule();
    },
    rejection: (_alloc, r) => {
      clear();
      out.write(`rejected ${r.command}: ${r.message}\n`);
      draw();
    },
    note: (message) => {
      clear();
      out.write(`${message}\n`);
      draw();
    },
    output: (alloc, task, { stream, line }) => {
      recent.push({ alloc, task, stream, line: line.replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '') });
      if (recent.length > RECENT_OUTPUT) recent.shift();
      schedule();
    },
    finish: (summary) => {
      if (timer) clearTimeout(timer);
      if (ticker) clearInterval(ticker);
      draw();
      out.write(`${ESC}?25h${summaryLines(summary).join('\n')}\n`);
    },
  };
}

function truncate(s: string, width: number): string {
  if (visibleLength(s) <= width) return s;
  // Cut by visible characters, keeping colour codes intact, and reset colour at the cut.
  let seen = 0;
  let i = 0;
  while (i < s.length && seen < width - 1) {
    if (s[i] === '\x1b') {
      const end = s.indexOf('m', i);
      i = end === -1 ? s.length : end + 1;
      continue;
    }
    seen++;
    i++;
  }
  return `${s.slice(0, i)}${s.includes('\x1b') ? '\x1b[0m' : ''}…`;
}
