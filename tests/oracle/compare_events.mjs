#!/usr/bin/env node
// Runs each case of a babylon_events.mjs file through `skinner eval` and
// compares every pose's "events" with what Babylon fired: the same events,
// the same order, the same frames (==). Exit 1 on the first difference.
//
//   node compare_events.mjs CASES.jsonl SKINNER
import { readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";

const [file, skinner] = process.argv.slice(2);
let n = 0, poses = 0, fired = 0;
for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line) continue;
    const c = JSON.parse(line);
    const p = spawnSync(skinner, ["eval"], { input: JSON.stringify(c.case), encoding: "utf8", maxBuffer: 1 << 28 });
    if (p.status !== 0) {
        console.error(`${c.name}: skinner eval failed: ${p.stderr}`);
        process.exit(1);
    }
    const got = JSON.parse(p.stdout).results.map((x) => x.events);
    const want = c.expected;
    const a = JSON.stringify(got), b = JSON.stringify(want);
    if (a !== b) {
        const i = got.findIndex((g, k) => JSON.stringify(g) !== JSON.stringify(want[k]));
        console.error(`${c.name}: pose ${i} differs\n  skinnerd ${JSON.stringify(got[i])}\n  Babylon  ${JSON.stringify(want[i])}`);
        process.exit(1);
    }
    n++, poses += want.length, fired += want.reduce((s, e) => s + e.length, 0);
}
console.error(`compare_events: ${n} cases, ${poses} poses, ${fired} events fired, all as Babylon fires them`);
