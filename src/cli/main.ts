/**
 * `allocrun`: picks the command from the first argument and runs it; every error ends here as one line
 * (or a list of job-file problems) and an exit status, never a stack trace.
 */
import { readFileSync } from 'node:fs';
import { helpText, type Command } from './args.ts';
import { CliError, UsageError } from './errors.ts';

/**
 * Every command, in the order the top-level help lists them. Each is imported only when it runs: `run`
 * pulls in the runtime and the job-file parser, which `graph` or `status` have no use for.
 */
const commands: readonly { name: string; summary: string; load(): Promise<Command> }[] = [
  { name: 'run', summary: "Run a job file's allocations in the foreground with a live view of their tasks.", load: async () => (await import('./run.ts')).runCommand },
  { name: 'validate', summary: 'Check a job file (HCL, JSON or YAML) and report every problem.', load: async () => (await import('./validate.ts')).validateCommand },
  { name: 'status', summary: 'Show the allocations in a data dir, or one allocation in detail.', load: async () => (await import('./status.ts')).statusCommand },
  { name: 'graph', summary: 'Print a runner statechart as a mermaid state diagram or JSON.', load: async () => (await import('./graph.ts')).graphCommand },
  { name: 'agent', summary: 'Run as a long-lived agent: restore the allocations of a data dir, stop leaving tasks running.', load: async () => (await import('./agent.ts')).agentCommand },
  { name: 'job', summary: 'Submit, plan, stop and inspect jobs on a running agent (job run|plan|stop|status).', load: async () => (await import('./job.ts')).jobCommand },
  { name: 'alloc', summary: 'Inspect and control allocations on a running agent (alloc status|checks|logs|exec|restart|signal|stop).', load: async () => (await import('./alloc.ts')).allocCommand },
  { name: 'operator', summary: "Save a consistent copy of a running agent's store, or restore one into an empty data dir.", load: async () => (await import('./operator.ts')).operatorCommand },
  { name: 'deployment', summary: "List, show, follow, promote and fail a running agent's deployments (deployment list|status|promote|fail).", load: async () => (await import('./deployment.ts')).deploymentCommand },
  { name: 'service', summary: "List a running agent's Nomad-native services and where they are registered (service list|info).", load: async () => (await import('./service.ts')).serviceCommand },
  { name: 'var', summary: "Read and write a running agent's Nomad Variables (var get|put|list|purge).", load: async () => (await import('./var.ts')).varCommand },
  { name: 'node', summary: "A running agent's node: its metadata and node pools (node meta apply|read, node pool list|info|jobs|nodes).", load: async () => (await import('./node.ts')).nodeCommand },
  { name: 'scaling', summary: "List and show a running agent's scaling policies (scaling policy list|info).", load: async () => (await import('./scaling.ts')).scalingCommand },
  { name: 'system', summary: "Run a running agent's garbage collection now (system gc).", load: async () => (await import('./system.ts')).systemCommand },
  { name: 'acl', summary: "Create, list and revoke a running agent's client tokens (acl token create|list|info|self|delete).", load: async () => (await import('./acl.ts')).aclCommand },
  { name: 'replay', summary: "Replay a recording made with 'run --record': in the visualizer, checked against today's machines (--check), or as a test (--to-test).", load: async () => (await import('./replay.ts')).replayCommand },
];

function topHelp(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'Usage: allocrun <command> [args] [--help]',
    '',
    "Runs Nomad job files' allocations through Nomad's alloc and task runner lifecycle.",
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "Run 'allocrun <command> --help' for a command's flags.",
    '',
  ].join('\n');
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
  return pkg.version ?? 'unknown';
}

/** Runs the command line `argv` (without node and the script) and resolves with the exit status. */
async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  try {
    if (first === undefined) {
      process.stderr.write(topHelp());
      return 2;
    }
    if (first === '--help' || first === '-h') {
      process.stdout.write(topHelp());
      return 0;
    }
    if (first === '--version' || first === '-v' || first === 'version') {
      process.stdout.write(`allocrun ${version()}\n`);
      return 0;
    }
    if (first === 'help') {
      const cmd = rest[0] === undefined ? undefined : commands.find((c) => c.name === rest[0]);
      if (rest[0] !== undefined && !cmd) throw unknownCommand(rest[0]);
      process.stdout.write(cmd ? helpText(await cmd.load()) : topHelp());
      return 0;
    }
    const cmd = commands.find((c) => c.name === first);
    if (!cmd) throw unknownCommand(first);
    return await (await cmd.load()).run(rest);
  } catch (err) {
    return report(err);
  }
}

function unknownCommand(name: string): UsageError {
  if (name.startsWith('-')) return new UsageError(`unknown flag ${name}: flags go after the command, e.g. 'allocrun run job.nomad --json'`);
  const near = commands.find((c) => c.name.startsWith(name.slice(0, 2)));
  return new UsageError(`unknown command ${JSON.stringify(name)}${near ? ` (did you mean '${near.name}'?)` : ''}; commands: ${commands.map((c) => c.name).join(', ')}`);
}

/** Prints an error the way a user can act on it and returns its exit status. */
function report(err: unknown): number {
  // A SpecError's message is already one `file:line:col: path: message` line per problem. Checked by
  // code, not class, so this file need not load the job-file parser.
  const spec = err as { code?: unknown; problems?: unknown; message?: unknown } | null;
  if (spec && spec.code === 'ErrSpec' && Array.isArray(spec.problems) && typeof spec.message === 'string') {
    const lines = spec.message.split('\n');
    process.stderr.write(`allocrun: the job file has ${lines.length} problem(s):\n${lines.map((l) => `  ${l}\n`).join('')}`);
    return 1;
  }
  if (err instanceof UsageError) {
    process.stderr.write(`allocrun: ${err.message}\nRun 'allocrun ${err.command ? `${err.command} ` : ''}--help' for usage.\n`);
    return err.exitCode;
  }
  if (err instanceof CliError) {
    process.stderr.write(`allocrun: ${err.message}\n`);
    return err.exitCode;
  }
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = e && typeof e.code === 'string' ? ` [${e.code}]` : '';
  const message = e && typeof e.message === 'string' ? e.message : String(err);
  process.stderr.write(`allocrun: ${message}${code}\n`);
  // The stack is for whoever debugs allocrun itself, not for its users.
  if (process.env.ALLOCRUN_DEBUG && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  return 1;
}

/** Waits until stdout and stderr have flushed, so exiting does not cut the last lines off a pipe. */
async function flushed(): Promise<void> {
  await Promise.all([process.stdout, process.stderr].map((s) => new Promise<void>((resolve) => s.write('', () => resolve()))));
}

// A closed pipe (`allocrun graph task | head`) is the reader's choice, not an error worth a trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
});

const code = await main(process.argv.slice(2));
await flushed();
// Exit now: drivers' timers or an inspector's socket must not keep a finished command alive.
process.exit(code);
