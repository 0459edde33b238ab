/**
 * Embedding allocrun: run one task through Nomad's lifecycle and print its events as they happen.
 * The task exits 1 three times: its restart policy restarts it twice, then gives up (Not Restarting), failed.
 * Run with `npx tsx examples/embed.ts`.
 */
import { createTaskRunner } from '../src/index.ts';

const runner = createTaskRunner(
  { name: 'flaky', driver: 'mock', config: { run_for: '700ms', exit_code: 1 }, killTimeout: 1_000 },
  { jobType: 'service', groupRestart: { attempts: 2, interval: 60_000, delay: 300, mode: 'fail' } },
);

runner.events$.subscribe((ev) => {
  console.log(`${new Date(ev.time).toISOString()}  ${ev.type.padEnd(18)} ${ev.displayMessage}`);
});
runner.actor.subscribe((snap) => console.log(`                          state: ${JSON.stringify(snap.value)}`));
runner.start();

const final = await runner.done;
console.log(`\ntask ${final.state}, failed=${final.failed}, restarts=${final.restarts}`);
