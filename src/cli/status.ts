/** `allocrun status [alloc]`: the allocations a data dir holds, or one of them, in `nomad alloc status`'s shape. */
import type { AllocRecord } from '../state/store.ts';
import { scanDataDir } from '../state/scan-data-dir.ts';
import { parseCommand, type Command } from './args.ts';
import { agentClient, agentSocketIn, ApiError } from './api-client.ts';
import { recordOfApiAlloc, type ApiAllocation, type Placement } from './api-records.ts';
import { dataDirFor } from './data-dir.ts';
import { CliError } from './errors.ts';
import { columns, formatTime, inRunOrder, keyValues, lifecycleWord, shortId, taskStateWord, timeAgo } from './format.ts';

const RECENT_EVENTS = 10;

/** The allocations as `nomad job status` lists them. */
export function formatAllocList(records: AllocRecord[], now = Date.now()): string {
  const rows = [['ID', 'Job', 'Task Group', 'Desired', 'Status', 'Created', 'Modified']];
  for (const r of records) {
    rows.push([shortId(r.spec.id), r.spec.job, r.spec.group, r.spec.desiredStatus ?? 'run', r.state.clientStatus, timeAgo(r.createdAt ?? r.updatedAt, now), timeAgo(r.updatedAt, now)]);
  }
  return `${columns(rows).join('\n')}\n`;
}

/**
 * One allocation the way `nomad alloc status <id>` shows it: header, task states, each task's recent events;
 * with `placement` (read from an agent), Nomad's Eval ID, Node, Job Version and descriptions in its header too.
 */
export function formatAllocDetail(r: AllocRecord, opts: { verbose?: boolean; now?: number; placement?: Placement } = {}): string {
  const now = opts.now ?? Date.now();
  const { spec, state } = r;
  const p = opts.placement;
  const id = (v: string) => (opts.verbose ? v : shortId(v)) || '<none>';
  const out: string[] = keyValues([
    ['ID', spec.id],
    ...(p ? [['Eval ID', id(p.evalId)] as [string, string]] : []),
    // Nomad's allocation name: which instance of its group this is.
    ['Name', `${spec.job}.${spec.group}[${spec.index ?? 0}]`],
    ...(p ? [['Node ID', id(p.nodeId)], ['Node Name', p.nodeName]] as [string, string][] : []),
    ['Job ID', spec.job],
    ...(p ? [['Job Version', String(p.jobVersion)] as [string, string]] : []),
    ['Job Type', spec.type],
    ['Namespace', spec.namespace ?? 'default'],
    ['Task Group', spec.group],
    ['Client Status', state.clientStatus],
    ...(p ? [['Client Description', p.clientDescription || '<none>'] as [string, string]] : []),
    ['Desired Status', spec.desiredStatus ?? 'run'],
    ...(p ? [['Desired Description', p.desiredDescription || '<none>'] as [string, string]] : []),
    ['Created', opts.verbose ? formatTime(r.createdAt ?? r.updatedAt) : timeAgo(r.createdAt ?? r.updatedAt, now)],
    ['Modified', opts.verbose ? formatTime(r.updatedAt) : timeAgo(r.updatedAt, now)],
    ...(p?.reschedule ?? []),
  ]);
  if (spec.ports && spec.ports.length > 0) {
    // Nomad's "Allocation Addresses": where each port of the group's network is reached (`-> to` when mapped).
    const dynamic = (label: string) => spec.network?.ports.find((p) => p.label === label)?.static === undefined;
    out.push('', `Allocation Addresses (mode = "${spec.network?.mode ?? 'host'}")`);
    out.push(...columns([['Label', 'Dynamic', 'Address'], ...spec.ports.map((p) => [p.label, dynamic(p.label) ? 'yes' : 'no', `${p.hostIP}:${p.value}${p.to > 0 ? ` -> ${p.to}` : ''}`])]));
  }
  const taskOf = (name: string) => spec.tasks.find((t) => t.name === name);
  // Tasks in run order; tasks only in the state (should not happen) go last.
  const names = [...inRunOrder(spec.tasks).map((t) => t.name), ...Object.keys(state.taskStates).filter((n) => !taskOf(n))];

  out.push('', 'Task States');
  const rows = [['Task', 'Lifecycle', 'Driver', 'State', 'Failed', 'Restarts', 'Started', 'Finished']];
  for (const name of names) {
    const ts = state.taskStates[name];
    const t = taskOf(name);
    rows.push([
      name, lifecycleWord(t), t?.driver ?? '-', ts?.state ?? 'pending', String(ts?.failed ?? false), String(ts?.restarts ?? 0),
      ts?.startedAt ? formatTime(ts.startedAt) : 'N/A', ts?.finishedAt ? formatTime(ts.finishedAt) : 'N/A',
    ]);
  }
  out.push(...columns(rows));

  for (const name of names) {
    const ts = state.taskStates[name];
    const t = taskOf(name);
    const hook = t?.lifecycle ? ` (${lifecycleWord(t)})` : '';
    out.push('', `Task "${name}"${hook} is "${ts ? taskStateWord(ts) : 'pending'}"`);
    const events = [...(ts?.events ?? [])].reverse(); // newest first, as Nomad lists them
    const shown = opts.verbose ? events : events.slice(0, RECENT_EVENTS);
    out.push(opts.verbose ? 'Events:' : 'Recent Events:');
    out.push(...columns([['Time', 'Type', 'Description'], ...shown.map((e) => [formatTime(e.time), e.type, e.displayMessage])]));
    if (shown.length < events.length) out.push(`(${events.length - shown.length} older event(s); --verbose shows all)`);
  }
  return `${out.join('\n')}\n`;
}

/** The `status` command. */
export const statusCommand: Command = {
  name: 'status',
  usage: 'status [--data-dir D | --address URL [--token-file F | --token T]] [--verbose] [--json] [alloc]',
  details: `
Show the allocations in a data dir, or one allocation in detail.

Without an alloc ID, lists every allocation in the data dir (ID, job, group, status, times).
With an ID (or a unique prefix of one), shows the allocation like 'nomad alloc status':
its task states and each task's recent events.

When an agent serves the data dir (or --address names one), the allocations are read from it,
live; otherwise from the data dir's files.

Flags:
  --data-dir D    the data dir a run used (default: $ALLOCRUN_DATA_DIR, else the last
                  'allocrun run' on this machine)
  --address URL   read from the agent at URL instead (default: $ALLOCRUN_ADDR)
  --token-file F  read the agent's token for --address from F (default: $ALLOCRUN_TOKEN_FILE)
  --token T       the agent's token for --address (default: $ALLOCRUN_TOKEN, else $NOMAD_TOKEN);
                  visible to other local users, prefer --token-file
  --verbose       every event, and full timestamps
  --json          the stored record(s) as JSON
  -h, --help      show this help

Example:
  allocrun run examples/demo.nomad --data-dir /tmp/demo
  allocrun status --data-dir /tmp/demo`,
  async run(argv) {
    const parsed = parseCommand(
      this,
      argv,
      { 'data-dir': { type: 'string', short: 'd' }, address: { type: 'string' }, token: { type: 'string' }, 'token-file': { type: 'string' }, verbose: { type: 'boolean' }, json: { type: 'boolean' } },
      { min: 0, max: 1, names: 'an allocation ID' },
    );
    if (!parsed) return 0;
    const remote = parsed.values.address ?? process.env.ALLOCRUN_ADDR;
    const dir = remote ? `the agent at ${remote}` : await dataDirFor('status', parsed.values['data-dir']);
    let records = await fromAgent(parsed.values, remote ? undefined : dir);
    if (!records) {
      const scan = await scanDataDir(dir);
      // A damaged record is named and skipped: the healthy allocations are still shown.
      for (const p of scan.problems) process.stderr.write(`allocrun status: warning: ${p.message}\n`);
      records = scan.records;
    }
    const wanted = parsed.positionals[0];

    if (wanted === undefined) {
      if (parsed.values.json) process.stdout.write(`${JSON.stringify(records.map(publicRecord), null, 2)}\n`);
      else if (records.length === 0) process.stdout.write(`No allocations in ${dir}\n`);
      else process.stdout.write(formatAllocList(records));
      return 0;
    }
    const record = findAlloc(records, wanted, dir);
    process.stdout.write(parsed.values.json ? `${JSON.stringify(publicRecord(record), null, 2)}\n` : formatAllocDetail(record, { verbose: parsed.values.verbose }));
    return 0;
  },
};

/**
 * The allocations of the agent named by --address, or serving `dataDir`; undefined when no agent serves
 * the data dir (a stale socket of an agent that is gone counts as none: the files are read instead).
 */
async function fromAgent(values: { address?: string; token?: string; 'token-file'?: string }, dataDir: string | undefined): Promise<AllocRecord[] | undefined> {
  if (dataDir !== undefined && !agentSocketIn(dataDir)) return undefined;
  const client = agentClient('status', { ...values, 'data-dir': dataDir });
  try {
    const { body: stubs } = await client.get<ApiAllocation[]>('/v1/allocations');
    const full = await Promise.all(stubs.map(async (s) => (await client.get<ApiAllocation>(`/v1/allocation/${s.ID}`)).body));
    return full.map(recordOfApiAlloc);
  } catch (err) {
    if (dataDir !== undefined && !(err instanceof ApiError) && (err as { code?: string }).code === 'ErrNoAgent') return undefined;
    throw err;
  }
}

/** A record without what only the runtime reads (the actor snapshot an agent resumes from). */
function publicRecord(r: AllocRecord): AllocRecord {
  return { spec: r.spec, state: r.state, ...(r.createdAt !== undefined ? { createdAt: r.createdAt } : {}), updatedAt: r.updatedAt };
}

/** Finds an allocation by ID or unique ID prefix, as Nomad does. */
function findAlloc(records: AllocRecord[], wanted: string, dir: string): AllocRecord {
  const exact = records.find((r) => r.spec.id === wanted);
  if (exact) return exact;
  const matches = records.filter((r) => r.spec.id.startsWith(wanted));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) throw new CliError(`status: no allocation ${JSON.stringify(wanted)} in ${dir} ('allocrun status --data-dir ${dir}' lists them)`, 'ErrAllocNotFound');
  throw new CliError(`status: prefix ${JSON.stringify(wanted)} matches ${matches.length} allocations: ${matches.map((r) => r.spec.id).join(', ')}`, 'ErrAllocAmbiguous');
}
