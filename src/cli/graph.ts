/** `allocrun graph task|alloc|controller`: a machine's statechart, drawn from its definition. */
import type { AnyStateMachine } from 'xstate';
import { oneOf, parseCommand, type Command } from './args.ts';
import { UsageError } from './errors.ts';
import { machineGraph, toMermaid } from './machine-graph.ts';
import { importOptional } from './optional-module.ts';

const MACHINES = ['task', 'alloc', 'controller'] as const;
const FORMATS = ['mermaid', 'json'] as const;

/** Loads the named machine; the task manager (SwarmKit's controller loop) may not be in the build yet. */
async function machineOf(name: (typeof MACHINES)[number]): Promise<AnyStateMachine> {
  switch (name) {
    case 'task':
      return (await import('../../machines/task-runner.ts')).taskRunnerMachine as unknown as AnyStateMachine;
    case 'alloc':
      return (await import('../../machines/alloc-runner.ts')).allocRunnerMachine as unknown as AnyStateMachine;
    case 'controller':
      return importOptional<AnyStateMachine>('../../machines/task-manager.ts', 'taskManagerMachine', 'graph controller (the task manager machine)');
  }
}

/** The `graph` command. */
export const graphCommand: Command = {
  name: 'graph',
  usage: 'graph task|alloc|controller [--format mermaid|json] [--unfold]',
  details: `
Print a runner statechart as a mermaid state diagram or JSON.

Machines:
  task        the task runner (pending, running, killing, exited, terminal, ...)
  alloc       the alloc runner (prerun, running, postrun, terminal, destroyed, ...)
  controller  SwarmKit's task manager loop driving a Controller

Flags:
  --format F  mermaid (default): a stateDiagram-v2 with nested states and arrows
              labelled by event; json: every state with its transitions, guards,
              actions and invoked actors
  --unfold    draw every hook loop's inner next/calling states (folded into
              one box per hook phase by default, as the visualizer draws them)
  -h, --help  show this help

Example:
  allocrun graph task > task.mmd`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { format: { type: 'string', short: 'f' }, unfold: { type: 'boolean' } }, { min: 1, max: 1, names: 'the machine: task, alloc or controller' });
    if (!parsed) return 0;
    const name = parsed.positionals[0]!;
    if (!(MACHINES as readonly string[]).includes(name)) {
      throw new UsageError(`graph: unknown machine ${JSON.stringify(name)} (expected task, alloc or controller)`, 'graph');
    }
    const format = oneOf(this, 'format', parsed.values.format, FORMATS, 'mermaid');
    const graph = machineGraph(await machineOf(name as (typeof MACHINES)[number]));
    process.stdout.write(format === 'json' ? `${JSON.stringify(graph, null, 2)}\n` : toMermaid(graph, { fold: parsed.values.unfold !== true }));
    return 0;
  },
};
