/**
 * Top functions of a V8 CPU profile (`node --cpu-prof`, `npm run bench -- --profile`) by self
 * time, and by total time for the functions of this repository:
 *
 *   npx tsx bench/profile-summary.ts bench/profiles/01-parquet-duckdb-engine-default-.cpuprofile [top=25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const file = process.argv[2];
if (!file) {
  console.error('usage: npx tsx bench/profile-summary.ts <file.cpuprofile> [top]');
  process.exit(2);
}
const top = Number(process.argv[3] ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const selfUs = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i]!;
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const totalUs = profile.endTime - profile.startTime;

const name = (n: ProfileNode) => {
  const url = n.callFrame.url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/work\/main\//, '')
    .replace(/^.*node_modules\//, 'nm:');
  return `${n.callFrame.functionName || '(anonymous)'} ${url ? `${url}:${n.callFrame.lineNumber + 1}` : ''}`.trim();
};

const self = new Map<string, number>();
const total = new Map<string, number>();
for (const [id, us] of selfUs) {
  const node = byId.get(id)!;
  self.set(name(node), (self.get(name(node)) ?? 0) + us);
  // Total time: every distinct frame on the stack of this sample.
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const k = name(byId.get(cur)!);
    if (seen.has(k)) continue;
    seen.add(k);
    total.set(k, (total.get(k) ?? 0) + us);
  }
}

const pct = (us: number) => `${((100 * us) / totalUs).toFixed(1).padStart(5)}%`;
console.log(`${file}: ${(totalUs / 1e6).toFixed(2)} s profiled (main thread)`);
console.log('\nself time:');
for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);
console.log('\ntotal time, functions of src/:');
for (const [k, us] of [...total]
  .filter(([k]) => k.includes(' src/') || k.includes('.insight-export-bench'))
  .sort((a, b) => b[1] - a[1])
  .slice(0, top))
  console.log(`${pct(us)}  ${k}`);
