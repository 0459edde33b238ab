/** What the agent API benchmarks share: a request over the agent's socket, a mock job, and percentiles. */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';

/** A one-task mock job that runs for an hour: what the API benches register. */
export const mockJob = (id: string) => ({ Job: { ID: id, Type: 'service', TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'mock', Config: { run_for: '1h' } }] }] } });

/** One request over the unix socket; resolves with the body of a 200, rejects with anything else. */
export function send(socketPath: string, method: string, path: string, body?: unknown): Promise<string> {
  return new Promise((resolve, reject) => {
    const raw = body === undefined ? undefined : JSON.stringify(body);
    const req = request({ socketPath, method, path, headers: raw ? { 'content-length': String(Buffer.byteLength(raw)) } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d)).on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`${path}: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.end(raw);
  });
}

/** The p-th percentile (nearest rank) of `xs`. */
export const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

export const ms = (x: number): string => `${x.toFixed(1)} ms`;

/**
 * Starts `node <bin> agent --data-dir <dataDir>` (with BENCH_AGENT_NODE_ARGS, e.g. --cpu-prof, and the agent's own
 * BENCH_AGENT_ARGS, e.g. --no-ui to measure without the UI feed) and resolves once its API listens. Its own
 * event lines (`--json`, one per task event) go to a file in the data dir, not a pipe to this process: a
 * pipe's writes are synchronous in Node, so whenever this process (busy sending the load) was slow to drain
 * it the agent's thread stopped inside `write` (3.2 s of a 1,000-registration run, in a profile).
 */
export async function startBenchAgent(bin: string, dataDir: string): Promise<ChildProcess> {
  const nodeArgs = process.env.BENCH_AGENT_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const logPath = join(dataDir, 'bench-agent-stdout.log');
  const log = openSync(logPath, 'w');
  const agent = spawn(process.execPath, [...nodeArgs, bin, 'agent', '--data-dir', dataDir, '--json', ...(process.env['BENCH_AGENT_ARGS']?.split(' ').filter(Boolean) ?? [])], { stdio: ['ignore', log, 'inherit'] });
  closeSync(log);
  let exited: number | null | undefined;
  agent.once('exit', (code) => (exited = code));
  for (;;) {
    if (readFileSync(logPath, 'utf8').includes('API listening on')) return agent;
    if (exited !== undefined) throw new Error(`the agent exited (${exited}) before listening`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
