/**
 * `allocrun alloc status|logs|exec|restart|signal|stop`: Nomad's alloc commands against a running agent, over its
 * HTTP API. Allocations are named by ID or a unique ID prefix, as Nomad names them.
 */
import { constants as osConstants } from 'node:os';
import { parseCommand, type Command } from './args.ts';
import { agentClient, AGENT_FLAGS, AGENT_FLAGS_HELP, readAll, type AgentClient } from './api-client.ts';
import { commandGroup } from './command-group.ts';
import { placementOfApiAlloc, recordOfApiAlloc, type ApiAllocation } from './api-records.ts';
import { isTerminalStatus, watchAllocs } from './api-watch.ts';
import { CliError, UsageError } from './errors.ts';
import { shortId } from './format.ts';
import { formatAllocDetail } from './status.ts';
import { allocChecksCommand, fetchChecks, formatChecksTable } from './alloc-checks.ts';
import { allocExecCommand } from './alloc-exec.ts';
import { allocFsCommand } from './alloc-fs.ts';
import { startOfLastLines } from './last-lines.ts';
import { fetchRescheduleLines, type RescheduledAlloc } from './alloc-reschedule.ts';

/** The allocation an ID or unique prefix names (Nomad's short IDs); a CliError naming the candidates otherwise. */
export async function resolveAlloc(client: AgentClient, wanted: string): Promise<ApiAllocation> {
  if (wanted.length === 0) throw new UsageError('alloc: the allocation ID is empty', 'alloc');
  const { body: matches } = await client.get<ApiAllocation[]>('/v1/allocations', { prefix: wanted });
  const exact = matches.find((a) => a.ID === wanted);
  const found = exact ?? (matches.length === 1 ? matches[0] : undefined);
  if (!found) {
    if (matches.length === 0) throw new CliError(`no allocation ${JSON.stringify(wanted)} on the agent at ${client.label}`, 'ErrAllocNotFound');
    throw new CliError(`prefix ${JSON.stringify(wanted)} matches ${matches.length} allocations: ${matches.map((a) => `${shortId(a.ID)} (${a.Name})`).join(', ')}`, 'ErrAllocAmbiguous');
  }
  return (await client.get<ApiAllocation>(`/v1/allocation/${found.ID}`)).body;
}

/** The one task of an allocation when none is named; Nomad asks for a name when there are several. */
export function taskOf(alloc: ApiAllocation, named: string | undefined, command: string): string {
  const tasks = Object.keys(alloc.TaskStates ?? {});
  if (named !== undefined) {
    if (!tasks.includes(named)) throw new CliError(`${command}: allocation ${shortId(alloc.ID)} has no task ${JSON.stringify(named)}; its tasks: ${tasks.join(', ')}`, 'ErrTaskNotFound');
    return named;
  }
  if (tasks.length === 1) return tasks[0]!;
  throw new UsageError(`${command}: allocation ${shortId(alloc.ID)} has ${tasks.length} tasks (${tasks.join(', ')}); name one`, command);
}

const allocStatus: Command = {
  name: 'alloc status',
  usage: 'alloc status <alloc> [--verbose] [--json] [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
Show an allocation of a running agent: its task states, each task's recent events and its
Nomad service checks.

Flags:
  --verbose         every event, and full timestamps
  --json            the API's JSON
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, verbose: { type: 'boolean' }, json: { type: 'boolean' } }, { min: 1, max: 1, names: 'the allocation ID' });
    if (!parsed) return 0;
    const client = agentClient('alloc status', parsed.values);
    const alloc = await resolveAlloc(client, parsed.positionals[0]!);
    if (parsed.values.json) {
      process.stdout.write(`${JSON.stringify(alloc, null, 2)}\n`);
      return 0;
    }
    const checks = formatChecksTable(await fetchChecks(client, alloc.ID));
    const reschedule = await fetchRescheduleLines(client, alloc as RescheduledAlloc, { verbose: parsed.values.verbose });
    process.stdout.write(formatAllocDetail(recordOfApiAlloc(alloc), { verbose: parsed.values.verbose, placement: { ...placementOfApiAlloc(alloc), reschedule } }) + (checks.length > 0 ? `${checks.join('\n')}\n` : ''));
    return 0;
  },
};

const allocLogs: Command = {
  name: 'alloc logs',
  usage: 'alloc logs [-f] [-stderr] [-tail] [-n N] <alloc> [task] [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
Print a task's output (stdout, or stderr with -stderr); -f follows it as it is written.

The task may be left out when the allocation has only one. Nomad's single-dash spellings work.

Flags:
  -f, --follow      keep printing new output until the task is dead (Ctrl-C to stop)
  --stderr          the task's stderr instead of its stdout
  --stdout          the task's stdout (the default)
  --task T          the task (instead of the second argument)
  --tail            start at the end: the last -n lines (default 10)
  -n N              how many lines --tail prints
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(
      this,
      argv,
      { ...AGENT_FLAGS, follow: { type: 'boolean', short: 'f' }, stderr: { type: 'boolean' }, stdout: { type: 'boolean' }, task: { type: 'string' }, tail: { type: 'boolean' }, n: { type: 'string' } },
      { min: 1, max: 2, names: 'the allocation ID and the task' },
    );
    if (!parsed) return 0;
    const v = parsed.values;
    if (v.stderr && v.stdout) throw new UsageError('alloc logs: --stderr and --stdout exclude each other', 'alloc logs');
    const lines = v.n === undefined ? 10 : Number(v.n);
    if (!Number.isInteger(lines) || lines < 0) throw new UsageError(`alloc logs: -n must be a whole number of lines (got ${JSON.stringify(v.n)})`, 'alloc logs');
    const client = agentClient('alloc logs', v);
    const alloc = await resolveAlloc(client, parsed.positionals[0]!);
    const task = taskOf(alloc, v.task ?? parsed.positionals[1], 'alloc logs');
    const query = { task, type: v.stderr ? 'stderr' : 'stdout', plain: true };
    const path = `/v1/client/fs/logs/${alloc.ID}`;
    let offset = 0;
    if (v.tail) {
      // The start of the last N lines, as an absolute offset, so following from there misses nothing.
      const text = await readAll(await client.stream(path, query));
      const all = Buffer.from(text);
      offset = startOfLastLines(all, lines);
      if (!v.follow) {
        process.stdout.write(all.subarray(offset));
        return 0;
      }
    }
    const res = await client.stream(path, { ...query, follow: v.follow ? true : undefined, origin: 'start', offset });
    await new Promise<void>((resolve, reject) => {
      res.on('data', (chunk: Buffer) => process.stdout.write(chunk));
      res.on('end', resolve);
      res.on('error', reject);
    });
    return 0;
  },
};


const allocRestart: Command = {
  name: 'alloc restart',
  usage: 'alloc restart <alloc> [task] [--all-tasks] [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
Restart a task of an allocation, or its running tasks, or with --all-tasks every task in lifecycle order.

Flags:
  --task T          the task (instead of the second argument)
  --all-tasks       restart every task, prestart ones included
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, task: { type: 'string' }, 'all-tasks': { type: 'boolean' } }, { min: 1, max: 2, names: 'the allocation ID and the task' });
    if (!parsed) return 0;
    const client = agentClient('alloc restart', parsed.values);
    const alloc = await resolveAlloc(client, parsed.positionals[0]!);
    const named = parsed.values.task ?? parsed.positionals[1];
    if (named !== undefined && parsed.values['all-tasks']) throw new UsageError('alloc restart: a task and --all-tasks exclude each other', 'alloc restart');
    const task = named === undefined ? undefined : taskOf(alloc, named, 'alloc restart');
    await client.send('POST', `/v1/client/allocation/${alloc.ID}/restart`, { TaskName: task ?? '', AllTasks: parsed.values['all-tasks'] === true });
    process.stdout.write(`Restart of ${task ? `task "${task}"` : parsed.values['all-tasks'] ? 'all tasks' : 'the running tasks'} in allocation "${shortId(alloc.ID)}" sent\n`);
    return 0;
  },
};

const allocSignal: Command = {
  name: 'alloc signal',
  usage: 'alloc signal [-s SIGNAL] <alloc> [task] [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
Send a signal to a task of an allocation, or to all its running tasks.

Flags:
  -s SIGNAL         the signal (default SIGKILL, as Nomad's)
  --task T          the task (instead of the second argument)
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, s: { type: 'string', short: 's' }, task: { type: 'string' } }, { min: 1, max: 2, names: 'the allocation ID and the task' });
    if (!parsed) return 0;
    const signal = (parsed.values.s ?? 'SIGKILL').toUpperCase();
    const name = signal.startsWith('SIG') ? signal : `SIG${signal}`;
    if (!(name in osConstants.signals)) throw new UsageError(`alloc signal: -s ${parsed.values.s} is not a signal name; e.g. SIGHUP, SIGUSR1, SIGTERM (kill -l lists them)`, 'alloc signal');
    const client = agentClient('alloc signal', parsed.values);
    const alloc = await resolveAlloc(client, parsed.positionals[0]!);
    const named = parsed.values.task ?? parsed.positionals[1];
    const task = named === undefined ? undefined : taskOf(alloc, named, 'alloc signal');
    await client.send('POST', `/v1/client/allocation/${alloc.ID}/signal`, { Signal: name, Task: task ?? '' });
    process.stdout.write(`Signal ${name} sent to ${task ? `task "${task}"` : 'the tasks'} of allocation "${shortId(alloc.ID)}"\n`);
    return 0;
  },
};

const allocStop: Command = {
  name: 'alloc stop',
  usage: 'alloc stop <alloc> [--detach] [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
Stop an allocation. While its job still wants it, the agent starts a replacement (as Nomad does).
Waits until the allocation has stopped, unless --detach.

Flags:
  --detach          return once the stop is registered
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, detach: { type: 'boolean' } }, { min: 1, max: 1, names: 'the allocation ID' });
    if (!parsed) return 0;
    const client = agentClient('alloc stop', parsed.values);
    const alloc = await resolveAlloc(client, parsed.positionals[0]!);
    const res = await client.send<{ Index: number }>('POST', `/v1/allocation/${alloc.ID}/stop`);
    if (parsed.values.detach) {
      process.stdout.write(`Allocation "${shortId(alloc.ID)}" stop registered at index ${res.Index}\n`);
      return 0;
    }
    const [stopped] = await watchAllocs(client, '/v1/allocations', (list) => list.some((a) => a.ID === alloc.ID && isTerminalStatus(a.ClientStatus))).then((list) => list.filter((a) => a.ID === alloc.ID));
    process.stdout.write(`Allocation "${shortId(alloc.ID)}" stopped (${stopped?.ClientStatus ?? 'gone'})\n`);
    return 0;
  },
};

/** The `alloc` command. */
export const allocCommand = commandGroup(
  'alloc',
  "Inspect and control allocations on a running agent (Nomad's alloc commands).",
  [allocStatus, allocChecksCommand(resolveAlloc), allocLogs, allocFsCommand(resolveAlloc), allocExecCommand(resolveAlloc, taskOf), allocRestart, allocSignal, allocStop],
);
