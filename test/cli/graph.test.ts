import { describe, expect, it } from 'vitest';
import { runCli } from './spawn-cli.ts';

describe.concurrent('allocrun graph', { timeout: 60_000 }, () => {
  it('draws the task runner as a mermaid state diagram with nested states and labelled arrows', async () => {
    const res = await runCli(['graph', 'task']);
    expect(res.code).toBe(0);
    const out = res.stdout;
    expect(out.startsWith('stateDiagram-v2\n')).toBe(true);
    for (const state of ['pending', 'running', 'exited', 'terminal']) expect(out).toContain(`state "${state}" as task_${state} {`);
    expect(out).toMatch(/\[\*\] --> task_pending\b/);
    expect(out).toMatch(/--> task_running_killing\w* : KILL/);
    // Internal event names are said in words, never as xstate.* ids.
    expect(out).not.toContain('xstate.');
    // Mermaid ends a label at ':' or ';': labels carry them only as entity codes (`driver#58;start done`).
    expect(out).toContain('driver#58;start done');
    for (const line of out.split('\n').filter((l) => l.includes(' --> ') && l.includes(' : '))) {
      expect(line.split(' : ').slice(1).join(' : ').replace(/#\d+;/g, '')).not.toMatch(/[:;]/);
    }
  });

  it('gives the alloc runner as JSON with its lifecycle states', async () => {
    const res = await runCli(['graph', 'alloc', '--format', 'json']);
    expect(res.code).toBe(0);
    const graph = JSON.parse(res.stdout) as { machine: string; root: { states: Record<string, { transitions: { event: string }[] }> } };
    expect(graph.machine).toBe('alloc');
    expect(Object.keys(graph.root.states)).toEqual(expect.arrayContaining(['prerun', 'running', 'postrun', 'terminal', 'destroyed']));
    expect(graph.root.states.terminal!.transitions.map((t) => t.event)).toContain('DESTROY');
  });

  it("draws SwarmKit's task manager for controller", async () => {
    const res = await runCli(['graph', 'controller']);
    expect(res.code).toBe(0);
    expect(res.stdout.startsWith('stateDiagram-v2\n')).toBe(true);
  });

  it('rejects an unknown machine and an unknown format with exit status 2', async () => {
    const machine = await runCli(['graph', 'nope']);
    expect(machine.code).toBe(2);
    expect(machine.stderr).toMatch(/unknown machine "nope"/);
    const format = await runCli(['graph', 'task', '--format', 'dot']);
    expect(format.code).toBe(2);
    expect(format.stderr).toMatch(/--format must be one of mermaid, json/);
  });
});
