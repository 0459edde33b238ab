/**
 * The Nomad service checks of an allocation as the CLI shows them: the "Nomad Service Checks" table of
 * `alloc status`, and `alloc checks` (Nomad's command) with each check's full result.
 */
import type { CheckQueryResult } from '../checks/result.ts';
import type { Command } from './args.ts';
import { parseCommand } from './args.ts';
import { agentClient, AGENT_FLAGS, AGENT_FLAGS_HELP, type AgentClient } from './api-client.ts';
import { columns, keyValues } from './format.ts';

/** The allocation's check results by ID, as `/v1/client/allocation/:id/checks` serves them. */
export async function fetchChecks(client: AgentClient, allocId: string): Promise<Record<string, CheckQueryResult>> {
  return (await client.get<Record<string, CheckQueryResult>>(`/v1/client/allocation/${allocId}/checks`)).body;
}

const sorted = (results: Record<string, CheckQueryResult>) =>
  Object.values(results).sort((a, b) => a.Service.localeCompare(b.Service) || (a.Task ?? '').localeCompare(b.Task ?? '') || a.Check.localeCompare(b.Check));

/** `alloc status`'s section: one row per check (none when the allocation has no checks). */
export function formatChecksTable(results: Record<string, CheckQueryResult>): string[] {
  const all = sorted(results);
  if (all.length === 0) return [];
  return ['', 'Nomad Service Checks:', ...columns([['Service', 'Task', 'Name', 'Mode', 'Status'], ...all.map((r) => [r.Service, r.Task ?? '(group)', r.Check, r.Mode, r.Status])])];
}

/** `alloc checks`: every check's result, Nomad's layout. */
export function formatChecksDetail(results: Record<string, CheckQueryResult>): string {
  const all = sorted(results);
  if (all.length === 0) return 'No Nomad service checks\n';
  const blocks = all.map((r) =>
    keyValues([
      ['ID', r.ID],
      ['Name', r.Check],
      ['Group', r.Group],
      ['Task', r.Task ?? '(group)'],
      ['Service', r.Service],
      ['Status', r.Status],
      ...(r.StatusCode !== undefined ? [['StatusCode', String(r.StatusCode)] as [string, string]] : []),
      ['Mode', r.Mode],
      ['Timestamp', new Date(r.Timestamp * 1000).toISOString()],
      ['Output', r.Output],
    ]).join('\n'),
  );
  return `Status of ${all.length} Nomad Service Checks\n${blocks.join('\n\n')}\n`;
}

/** Builds `alloc checks`, given how the alloc group resolves an ID or prefix. */
export function allocChecksCommand(resolve: (client: AgentClient, wanted: string) => Promise<{ ID: string }>): Command {
  return {
    name: 'alloc checks',
    usage: 'alloc checks <alloc> [--json] [--data-dir D | --address URL [--token-file F | --token T]]',
    details: `
Show the latest result of each Nomad service check of an allocation (group and task services).

Flags:
  --json            the API's JSON (check ID → result)
${AGENT_FLAGS_HELP}`,
    async run(argv) {
      const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, json: { type: 'boolean' } }, { min: 1, max: 1, names: 'the allocation ID' });
      if (!parsed) return 0;
      const client = agentClient('alloc checks', parsed.values);
      const alloc = await resolve(client, parsed.positionals[0]!);
      const results = await fetchChecks(client, alloc.ID);
      process.stdout.write(parsed.values.json ? `${JSON.stringify(results, null, 2)}\n` : formatChecksDetail(results));
      return 0;
    },
  };
}
