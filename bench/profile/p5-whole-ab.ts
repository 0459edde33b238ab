/**
 * A/B of the inspection stream inside the whole P5 loop (bench/inspection-overhead.ts's workload: 200
 * three-task allocations run to completion on a simulated clock), against another version of src/inspect (a
 * git revision), in one process: a no-op inspect, the other version's stream + JSON and this tree's, in
 * rotating order round after round. The replay A/B (p5-stream-ab.ts) resolves the stream's own compute; this
 * one also sees what the stream costs the collector while the machines run (the events it holds until a
 * flush, the messages it makes), which the replay does not.
 *
 *   npx tsx bench/profile/p5-whole-ab.ts [rev=main] [rounds=10] [n=200]
 *
 * Prints, per lifecycle (medians), the CPU and the main thread's GC time of each variant, and each stream's
 * P5 ratio (a no-op inspect's CPU over the stream + JSON's).
 */
import { runAgainst } from './p5-against.ts';

const [rev = 'main', rounds = '10', n = '200'] = process.argv.slice(2);
process.exitCode = await runAgainst(rev, 'p5-whole-ab', `import { runRounds } from '../../../../bench/profile/p5-whole-loop.ts';
await runRounds(${JSON.stringify(rev)}, base as never, ${Number(rounds)}, ${Number(n)});
`);
