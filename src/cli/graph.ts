/** `allocrun graph task|alloc|controller`: a machine's statechart, drawn from its definition. */
import { oneOf, parseCommand, type Command } from './args.ts';
import { UsageError } from './errors.ts';
import { machineGraph, toMermaid } from './machine-graph.ts';
import type { MachineName } from '../runtime/machine-definitions.ts';

const MACHINES = ['task', 'alloc', 'controller'] as const satisfies readonly MachineName[];
const FORMATS = ['mermaid', 'json'] as const;

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
    // Loaded on demand: the other commands do not need the machine definitions.
    const { machineDefinition } = await import('../runtime/machine-definitions.ts');
    const graph = machineGraph(machineDefinition(name as MachineName));
    process.stdout.write(format === 'json' ? `${JSON.stringify(graph, null, 2)}\n` : toMermaid(graph, { fold: parsed.values.unfold !== true }));
    return 0;
  },
};
