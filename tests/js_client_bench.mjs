// A live IK drag's cost per step, the JS client's two paths against one
// daemon: a StreamSession message (the preview's drag) and a POST /pose,
// each step waiting for its answer (as a drag that follows the handle
// does). Alternating rounds (A/B/A/B...) in one run so the machine's noise
// falls on both; prints each path's median µs per step, the ratio, and
// PASS when the stream is not slower.
//   node --experimental-websocket tests/js_client_bench.mjs [./skinnerd] [steps]
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as sk from "../clients/js/dist/skinnerd.js";

const TOP = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SKINNERD = process.argv[2] || process.env.SKINNERD || join(TOP, "skinnerd");
const STEPS = Number(process.argv[3] || 200), ROUNDS = 6;

const d = spawn(SKINNERD, ["--listen", "127.0.0.1:0"], { stdio: ["ignore", "pipe", "inherit"] });
const port = await new Promise((ok) => { let out = ""; d.stdout.on("data", (b) => { out += b; const m = /:(\d+)\s*\n/.exec(out); if (m) ok(Number(m[1])); }); });
const c = new sk.Client(`http://127.0.0.1:${port}`);
try {
  await c.upload("fox", readFileSync(join(TOP, "tests/data/Fox.glb")));
  const s = await c.stream("fox", { format: "mat3x4" });
  const body = (k) => ({ animation: "Survey", time: 1, ops: [sk.ik("b_LeftLeg02_016", [-7 + (k % 13) * 0.3, 20 + (k % 7) * 0.5, -40])] });
  const paths = {
    stream: async (k) => s.send(body(k)),
    http: async (k) => c.pose("fox", body(k), "mat3x4"),
  };
  const us = { stream: [], http: [] };
  for (const name of Object.keys(paths)) for (let k = 0; k < 20; k++) await paths[name](k); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    for (const name of r % 2 ? ["http", "stream"] : ["stream", "http"]) {
      const t0 = process.hrtime.bigint();
      for (let k = 0; k < STEPS; k++) await paths[name](k);
      us[name].push(Number(process.hrtime.bigint() - t0) / 1000 / STEPS);
    }
  }
  s.close();
  const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
  const ms = med(us.stream), mh = med(us.http);
  console.log(`cpu: ${cpus()[0]?.model}`);
  console.log(`ik drag step, ${ROUNDS} alternating rounds of ${STEPS}: stream ${ms.toFixed(1)} µs, POST /pose ${mh.toFixed(1)} µs (median per step)`);
  console.log(`ratio http/stream ${(mh / ms).toFixed(2)}x ${ms <= mh ? "PASS" : "MISS"} (stream not slower)`);
} finally {
  d.kill("SIGTERM");
}
