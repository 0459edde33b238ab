/** A command made of subcommands (`job run`, `alloc logs`), as Nomad's CLI groups them. */
import type { Command } from './args.ts';
import { UsageError } from './errors.ts';

/**
 * Dispatches `<group> <sub> ...` to one of `subs`, with a help listing them. `missing` names Nomad's own
 * subcommands of the group that allocrun does not have, each with what to do instead: a Nomad user types them.
 */
export function commandGroup(name: string, summary: string, subs: Command[], missing: Readonly<Record<string, string>> = {}): Command {
  // A sub's own word: what follows the group's name (`job run` → run; `node meta apply` under `node meta` → apply).
  const word = (s: Command) => s.name.slice(name.length + 1);
  const usage = `${name} <${subs.map(word).join('|')}> [args]`;
  const details = `\n${summary}\n\nSubcommands:\n${subs.map((s) => `  allocrun ${s.usage}`).join('\n')}\n\nRun 'allocrun ${name} <subcommand> --help' for its flags.`;
  return {
    name,
    usage,
    details,
    async run(argv) {
      const [sub, ...rest] = argv;
      if (sub === undefined || sub === '--help' || sub === '-h') {
        const text = `Usage: allocrun ${usage}\n${details}\n`;
        (sub === undefined ? process.stderr : process.stdout).write(text);
        return sub === undefined ? 2 : 0;
      }
      const cmd = subs.find((s) => s.name === `${name} ${sub}`);
      if (!cmd && Object.hasOwn(missing, sub)) throw new UsageError(`${name} ${sub} is not supported: ${missing[sub]}`, name);
      if (!cmd) throw new UsageError(`${name}: unknown subcommand ${JSON.stringify(sub)}; subcommands: ${subs.map(word).join(', ')}`, name);
      return cmd.run(rest);
    },
  };
}

