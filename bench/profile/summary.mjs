/**
 * Summarises a V8 profile so it can be compared before and after a change without opening DevTools:
 * a `.cpuprofile` (node --cpu-prof) as self time by function, a `.heapprofile` (node --heap-prof) as
 * sampled bytes allocated by function. Prints the top N.
 *
 *   node bench/profile/summary.mjs <file.cpuprofile|file.heapprofile> [top=25]
 */
import { readFileSync } from 'node:fs';

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/profile/summary.mjs <file.cpuprofile|file.heapprofile> [top=25]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8'));

const nameOf = (f) => {
  const where = f.url ? `${f.url.replace(/^.*\/(node_modules|src|machines|bench)\//, '$1/')}:${f.lineNumber + 1}` : '';
  return `${f.functionName || '(anonymous)'} ${where}`.trim();
};
const totals = new Map();
const add = (key, v) => totals.set(key, (totals.get(key) ?? 0) + v);

let unit;
if (file.endsWith('.heapprofile')) {
  unit = 'KiB';
  const walk = (n) => {
    add(nameOf(n.callFrame), n.selfSize / 1024);
    for (const c of n.children ?? []) walk(c);
  };
  walk(profile.head);
} else {
  unit = 'ms';
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  // Each sample names the node on top of the stack; timeDeltas give the time since the previous one (µs).
  profile.samples.forEach((id, i) => add(nameOf(byId.get(id).callFrame), (profile.timeDeltas[i] ?? 0) / 1000));
}
const total = [...totals.values()].reduce((a, b) => a + b, 0);
console.log(`total ${total.toFixed(0)} ${unit} sampled`);
for (const [k, v] of [...totals.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${((v / total) * 100).toFixed(1).padStart(5)}%  ${v.toFixed(0).padStart(7)} ${unit}  ${k}`);
}
