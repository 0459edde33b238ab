/**
 * `allocrun alloc exec [-task T] [-i] <alloc> <command> [args...]`: Nomad's alloc exec without a terminal.
 * Opens the agent's exec WebSocket, sends this process's stdin (unless -i=false), writes the command's
 * stdout and stderr to ours, and exits with its exit code. Everything after the allocation ID is the
 * command, flags included (`sh -c 'exit 3'`), as Nomad's flag parsing stops at the first argument.
 */
import type { WebSocket } from 'ws';
import { parseCommand, type Command } from './args.ts';
import { agentClient, AGENT_FLAGS, AGENT_FLAGS_HELP, type AgentClient } from './api-client.ts';
import type { ApiAllocation } from './api-records.ts';
import { CliError, UsageError } from './errors.ts';

const NAME = 'alloc exec';

/** This command's flags, as parseArgs takes them. */
const OPTIONS = { ...AGENT_FLAGS, task: { type: 'string' } } as const;

/**
 * The flags that take a value, by every name they are spelled with (`data-dir` and its `d`), so the scan for
 * the allocation ID steps over their values: `-d /srv/d <alloc>` must not take `/srv/d` for the ID.
 */
const VALUE_FLAGS = new Set(
  Object.entries(OPTIONS as Record<string, { type: string; short?: string }>)
    .filter(([, o]) => o.type === 'string')
    .flatMap(([name, o]) => (o.short ? [name, o.short] : [name])),
);

/** A boolean flag Nomad spells `-i`, `-i=false`, `-t=auto`: its value, or undefined when `token` is not it. */
function boolFlag(token: string, name: string): string | undefined {
  const m = new RegExp(`^--?${name}(?:=(.*))?$`).exec(token);
  return m ? (m[1] ?? 'true') : undefined;
}

/** Splits argv into this command's flags, the allocation ID and the command to run. */
export function splitExecArgs(argv: readonly string[]): { flags: string[]; interactive: boolean; tty: string; rest: string[] } {
  const flags: string[] = [];
  let interactive = 'true';
  let tty = 'auto';
  let i = 0;
  for (; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '--') return { flags, interactive: interactive === 'true', tty, rest: argv.slice(i + 1) };
    if (!token.startsWith('-') || token === '-') break;
    const iv = boolFlag(token, 'i');
    const tv = boolFlag(token, 't');
    if (iv !== undefined) interactive = iv;
    else if (tv !== undefined) tty = tv;
    else {
      flags.push(token);
      const name = token.replace(/^--?/, '');
      if (VALUE_FLAGS.has(name) && i + 1 < argv.length) flags.push(argv[++i]!);
    }
  }
  if (!['true', 'false'].includes(interactive)) throw new UsageError(`${NAME}: -i takes true or false (got ${JSON.stringify(interactive)})`, NAME);
  if (!['true', 'false', 'auto'].includes(tty)) throw new UsageError(`${NAME}: -t takes true, false or auto (got ${JSON.stringify(tty)})`, NAME);
  return { flags, interactive: interactive === 'true', tty, rest: argv.slice(i) };
}

/** Relays stdin to the socket and its output to ours; resolves with the command's exit code. */
function runSession(ws: WebSocket, interactive: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    let exit: number | undefined;
    const send = (frame: object) => ws.readyState === ws.OPEN && ws.send(JSON.stringify(frame));
    ws.on('message', (raw) => {
      const frame = JSON.parse(String(raw)) as { stdout?: { data?: string }; stderr?: { data?: string }; exited?: boolean; result?: { exit_code?: number } };
      if (frame.stdout?.data) process.stdout.write(Buffer.from(frame.stdout.data, 'base64'));
      if (frame.stderr?.data) process.stderr.write(Buffer.from(frame.stderr.data, 'base64'));
      if (frame.exited) exit = frame.result?.exit_code ?? 0;
    });
    ws.once('close', (code, reason) => {
      process.stdin.pause();
      if (exit !== undefined) return resolve(exit);
      reject(new CliError(`${NAME}: the agent closed the session before the command exited (${code}${reason.length ? `: ${String(reason)}` : ''})`, 'ErrExecClosed'));
    });
    ws.once('error', (err) => reject(new CliError(`${NAME}: ${err.message}`, 'ErrExecClosed')));
    if (!interactive) return void send({ stdin: { close: true } });
    process.stdin.on('data', (d: Buffer) => send({ stdin: { data: d.toString('base64') } }));
    process.stdin.once('end', () => send({ stdin: { close: true } }));
  });
}

/** The `alloc exec` command, given alloc.ts's ID resolver and task chooser. */
export function allocExecCommand(resolveAlloc: (client: AgentClient, wanted: string) => Promise<ApiAllocation>, taskOf: (alloc: ApiAllocation, named: string | undefined, command: string) => string): Command {
  return {
    name: NAME,
    usage: 'alloc exec [--data-dir D | --address URL [--token-file F | --token T]] [-task T] [-i=false] <alloc> <command> [args...]',
    details: `
Run a command in a running task of an allocation (Nomad's alloc exec): in the task's directory, with its
environment, as its user. This process's stdin goes to the command (unless -i=false); its stdout and
stderr come back here; the exit code is the command's. Everything after the allocation ID is the
command, flags included. The task may be left out when the allocation has only one.

Flags (all before the allocation ID: what follows it is the command's):
  --task T          the task to run the command in
  -i[=false]        pass stdin to the command (default true)
  -t[=true|false]   a terminal for the command: not supported (allocrun has no pseudo-terminal);
                    -t=auto (the default) and -t=false run it without one
${AGENT_FLAGS_HELP}`,
    async run(argv) {
      const split = splitExecArgs(argv);
      if (split.tty === 'true') throw new UsageError(`${NAME}: -t: allocrun cannot give the command a terminal (a pseudo-terminal needs a native module); run it without -t`, NAME);
      const parsed = parseCommand(this, [...split.flags, ...split.rest.slice(0, 1)], OPTIONS, { min: 1, max: 1, names: 'the allocation ID' });
      if (!parsed) return 0;
      const command = split.rest.slice(1);
      if (command.length === 0) throw new UsageError(`${NAME}: missing the command to run (after the allocation ID)`, NAME);
      const misplaced = command.find((a) => /^--?(data-dir|address|token|token-file|task)(=|$)/.test(a));
      if (misplaced && parsed.values['data-dir'] === undefined && parsed.values.address === undefined && !process.env.ALLOCRUN_DATA_DIR && !process.env.ALLOCRUN_ADDR) {
        throw new UsageError(`${NAME}: ${misplaced} comes after the allocation ID, so it is part of the command; put this command's flags before the ID`, NAME);
      }
      const client = agentClient(NAME, parsed.values);
      const alloc = await resolveAlloc(client, parsed.positionals[0]!);
      const task = taskOf(alloc, parsed.values.task, NAME);
      const ws = await client.socket(`/v1/client/allocation/${alloc.ID}/exec`, { task, tty: false, command: JSON.stringify(command) });
      return runSession(ws, split.interactive);
    },
  };
}
