/** Signal names and numbers (Linux), so exits can be reported the way Nomad does: 128 + signal. */
import { constants } from 'node:os';

/** The number of a signal name like `SIGTERM` or `TERM`; throws for an unknown name. */
export function signalNumber(name: string): number {
  const key = (name.startsWith('SIG') ? name : `SIG${name}`).toUpperCase() as keyof typeof constants.signals;
  const n = constants.signals[key];
  if (n === undefined) throw new Error(`unknown signal ${JSON.stringify(name)}: use a name like SIGTERM, SIGINT or SIGHUP`);
  return n;
}

/** The exit a process killed by `signal` reports: code 128 + n, signal n. */
export function killedBy(signal: string): { exitCode: number; signal: number } {
  const n = signalNumber(signal);
  return { exitCode: 128 + n, signal: n };
}
