/**
 * `allocrun system gc`: Nomad's `nomad system gc`, the server's garbage collection now (PUT /v1/system/gc): the
 * dead jobs, finished evaluations and allocations go, whatever their age, and the agent collects those it holds.
 */
import { parseCommand, type Command } from './args.ts';
import { agentClient, AGENT_FLAGS, AGENT_FLAGS_HELP } from './api-client.ts';
import { commandGroup } from './command-group.ts';

const systemGc: Command = {
  name: 'system gc',
  usage: 'system gc [--data-dir D | --address URL [--token-file F]]',
  details: `
Run the agent's garbage collection now, as 'nomad system gc' does: dead jobs, finished
evaluations and allocations are deleted whatever their age (the agent's alloc dirs and runner
records of those allocations with them). Needs the agent's own token over TCP.

Flags:
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS }, { min: 0, max: 0, names: '' });
    if (!parsed) return 0;
    await agentClient('system gc', parsed.values).send('PUT', '/v1/system/gc');
    return 0;
  },
};

/** `allocrun system <gc>`. */
export const systemCommand: Command = commandGroup('system', 'Maintain a running agent (system gc).', [systemGc]);
