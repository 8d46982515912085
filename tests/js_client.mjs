// clients/js (dist/skinnerd.js) against the real daemon ($SKINNERD): uploads
// of every format, poses, batches and ranges chunked under the daemon's
// limits with the bytes of one whole request, Float32Array decoding (mat4
// and mat3x4), the slot <-> bone map, ops, typed errors, tokens, the 503
// retry, the WebSocket StreamSession (answers, problems, playback), the
// event-stream playback (Client.events: paced, resumed, aborted), and the
// README's example run as written. Also: src/openapi.d.ts is what
// openapi-typescript makes of proto/openapi.yaml now, `tsc --noEmit` passes,
// and dist/ is what tsc makes of src/ now. Every daemon listens on 127.0.0.1
// on a port it picks and is stopped by this test.
// Prints "js_client: N passed, N failed"; exit 0 when all passed.
import { spawn, spawnSync } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as sk from "../clients/js/dist/skinnerd.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const TOP = resolve(HERE, "..");
const JS = join(TOP, "clients", "js");
const SKINNERD = process.env.SKINNERD || join(TOP, "skinnerd");
const HAS_WS = typeof WebSocket === "function";
const FOX = readFileSync(join(TOP, "tests/data/Fox.glb"));
const SIMPLE = readFileSync(join(TOP, "tests/data/SimpleSkin.gltf"), "utf8");
const PAGE = JSON.parse(readFileSync(join(TOP, "proto/examples/skeleton-babylon-page.json"), "utf8"));
const SERIALIZED = readFileSync(join(TOP, "proto/examples/skeleton-babylon-serialized.json"), "utf8");

let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) { passed++; console.log(`ok - ${what}`); } else { failed++; console.log(`FAIL - ${what}`); }
}
async function test(name, fn) {
  try { await fn(); } catch (e) { failed++; console.log(`FAIL - ${name}: ${e && e.stack || e}`); }
}
async function throws(p, cls) {
  try { await p; } catch (e) { return e instanceof cls ? e : Object.assign(new Error(`got ${e}`), { wrong: true }); }
  return { wrong: true, message: "no error" };
}
const same = (a, b) => Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0;
const deepEq = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function daemon(...args) {
  return new Promise((ok, bad) => {
    const p = spawn(SKINNERD, ["--listen", "127.0.0.1:0", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "", err = "";
    p.stderr.on("data", (d) => (err += d));
    p.stdout.on("data", (d) => {
      out += d;
      const m = /:(\d+)\s*\n/.exec(out);
      if (m && !p.port) { p.port = Number(m[1]); p.url = `http://127.0.0.1:${p.port}`; ok(p); }
    });
    p.on("exit", (code) => { if (!p.port) bad(new Error(`skinnerd did not start (${code}): ${err}`)); });
    p.stop = () => new Promise((r) => { if (p.exitCode !== null) return r(); p.on("exit", r); p.kill("SIGTERM"); });
  });
}

async function raw(url, path, body, accept = "application/json") {
  const r = await fetch(url + path, { method: "POST", headers: { "Content-Type": "application/json", Accept: accept }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${path}: ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

function generated() {
  const tmp = mkdtempSync(join(tmpdir(), "js_client."));
  try {
    const bin = join(JS, "node_modules", ".bin");
    const gen = spawnSync(join(bin, "openapi-typescript"), [join(TOP, "proto/openapi.yaml"), "-o", join(tmp, "openapi.d.ts")],
      { encoding: "utf8", env: { ...process.env, NO_COLOR: "1", REDOCLY_TELEMETRY: "off" } });
    const want = readFileSync(join(JS, "src/openapi.d.ts"), "utf8");
    const got = gen.status === 0 ? readFileSync(join(tmp, "openapi.d.ts"), "utf8") : null;
    check(got === want, `src/openapi.d.ts is openapi-typescript's output for proto/openapi.yaml now (npm run gen)${gen.status ? `: ${gen.stderr}` : ""}`);
    check(readFileSync(join(JS, "dist/openapi.d.ts"), "utf8") === want, "dist/openapi.d.ts is src/openapi.d.ts");
    const tsc = spawnSync(join(bin, "tsc"), ["-p", join(JS, "tsconfig.json"), "--outDir", join(tmp, "dist")], { encoding: "utf8" });
    check(tsc.status === 0, `tsc compiles src/skinnerd.ts against the contract's types${tsc.status ? `: ${tsc.stdout}` : ""}`);
    for (const f of ["skinnerd.js", "skinnerd.d.ts"]) {
      let fresh = null;
      try { fresh = readFileSync(join(tmp, "dist", f), "utf8"); } catch { /* reported below */ }
      check(fresh === readFileSync(join(JS, "dist", f), "utf8"), `dist/${f} is what tsc makes of src/ now (npm run build)`);
    }
    // A typed use of the surface: what a TypeScript user writes type-checks.
    writeFileSync(join(tmp, "use.ts"), `import { Client, ik, query, type Pose } from ${JSON.stringify(join(JS, "dist/skinnerd.js"))};
const c = new Client("http://127.0.0.1:1", { token: "t" });
const p: Pose = { animation: "Walk", time: 0.25, ops: [ik("b", [0, 1, 0]), query("b", "absolutePosition"), { op: "rotate", bone: "b", axis: [0, 1, 0], amount: 1 }] };
export const a: Promise<Float32Array> = c.pose("fox", p, "mat4").then((f) => f.matrix(0, 1));
export const b: Promise<number | undefined> = c.pose("fox", p).then((r) => ("results" in r ? r.results.length : r.final?.length));
`);
    writeFileSync(join(tmp, "bad.ts"), `import { Client } from ${JSON.stringify(join(JS, "dist/skinnerd.js"))};
new Client("x").pose("fox", { animation: "Walk", tme: 0.25 });
`);
    // One tsc run for both (each costs seconds): errors in bad.ts only, naming the field.
    const tsc2 = spawnSync(join(bin, "tsc"), ["--noEmit", "--strict", "--target", "ES2020", "--module", "ES2020", "--moduleResolution", "bundler",
      "--lib", "ES2022,DOM", join(tmp, "use.ts"), join(tmp, "bad.ts")], { encoding: "utf8" });
    const errs = tsc2.stdout.split("\n").filter((l) => /error TS/.test(l));
    check(errs.length > 0 && errs.every((l) => /bad\.ts/.test(l)), `tsc --noEmit: a typed use of dist/skinnerd.d.ts checks${errs.some((l) => !/bad\.ts/.test(l)) ? `: ${tsc2.stdout}` : ""}`);
    check(errs.some((l) => /tme/.test(l)), "tsc --noEmit refuses a pose field the contract does not have (\"tme\")");
  } finally { rmSync(tmp, { recursive: true, force: true }); }
}

async function main() {
  generated();
  const d = await daemon("--max-frames", "50", "--max-batch", "8");
  const big = await daemon();
  const c = new sk.Client(d.url), bc = new sk.Client(big.url);
  try {
    const fox = await c.upload("fox", FOX);
    await bc.upload("fox", new Uint8Array(FOX));

    await test("uploads", async () => {
      check(fox.id === "fox" && fox.order.length === 24 && fox.animations().includes("Walk"), `a GLB upload names its 24 bones and clips (${fox.animations()})`);
      const g = await c.upload("simple", SIMPLE);
      check(g.order.length === 2, `a glTF JSON text upload (model/gltf+json from its "asset") has 2 bones (${g.order})`);
      const p = await c.upload("page", PAGE);
      check(p.order.length === 3, `a case-format object upload has ${p.order.length} bones`);
      const s = await c.upload("ser", SERIALIZED);
      check(s.order.length > 0, `a Babylon Skeleton.serialize() text upload has ${s.order.length} bones`);
      const dry = await c.upload("dry", PAGE, { dryRun: true });
      check(dry.order.length === 3 && !(await c.skeletons()).some((x) => x.id === "dry"), "dryRun answers without storing");
      const got = await c.skeleton("fox");
      check(deepEq(got.order, fox.order) && got.slotOf("b_Head_05") === fox.slotOf("b_Head_05"), "GET's skeleton has the same slot map as the upload's");
    });

    await test("slots", async () => {
      const head = fox.slotOf("b_Head_05");
      check(Number.isInteger(head) && fox.boneOf(head) === "b_Head_05", `slotOf/boneOf both ways (b_Head_05 is slot ${head})`);
      check(fox.boneCount === 24 && fox.boneOf(24) === null, "the trailing identity slot has no bone");
      let threw = false;
      try { fox.slotOf("nope"); } catch (e) { threw = e instanceof RangeError; }
      check(threw, "an unknown bone name throws RangeError");
    });

    await test("pose", async () => {
      const body = { bones: { b_Head_05: { rotation: [0, 0.6, 0] } } };
      const js = await c.pose("fox", body);
      check(deepEq(js, JSON.parse(new TextDecoder().decode(await raw(d.url, "/v1/skeletons/fox/pose", body)))), "a JSON pose is the raw request's answer");
      const f = await c.pose("fox", body, "mat4");
      check(same(f.data, await raw(d.url, "/v1/skeletons/fox/pose", body, sk.MAT4)), "a mat4 pose is the raw answer's bytes as a Float32Array");
      check(f.data instanceof Float32Array && f.poseCount === 1 && f.matrices === 25 && f.floatsPerMatrix === 16, "Frames: 1 pose x 25 matrices x 16 floats");
      const head = fox.slotOf("b_Head_05");
      check(deepEq([...f.matrix(0, head)], [...Float32Array.from(js.final.slice(16 * head, 16 * head + 16))]), "matrix(0, slot) is the JSON's final matrix rounded to float32");
      const m4 = await c.pose("fox", { animation: "Walk", time: 0.3 }, "mat4");
      const m3 = await c.pose("fox", { animation: "Walk", time: 0.3 }, "mat3x4");
      let ok = m3.floatsPerMatrix === 12;
      for (let s = 0; s < m4.matrices; s++) {
        const a = m4.matrix(0, s), b = m3.matrix(0, s);
        for (let col = 0; col < 3; col++) for (let r = 0; r < 4; r++) ok = ok && b[col * 4 + r] === a[4 * r + col];
      }
      check(ok, "mat3x4 is the documented transpose of mat4's first three columns");
    });

    await test("range", async () => {
      for (const fmt of ["mat4", "mat3x4", "json"]) {
        const whole = await bc.pose("fox", { animation: "Run", from: 0.1, to: 4.2, fps: 24 }, fmt);
        const cc = new sk.Client(d.url);
        const got = await cc.range("fox", "Run", 0.1, 4.2, 24, fmt);
        const eq = fmt === "json" ? deepEq(got, whole) && got.results.length === sk.rangeFrameCount(0.1, 4.2, 24) : same(got.data, whole.data) && got.poseCount === 99;
        check(eq && cc.maxFrames === 8, `${fmt}: a range chunked under the learned limit (${cc.maxFrames}, from the 413) is one whole request's answer (${cc.sent} requests)`);
      }
      const odd = new sk.Client(big.url, { maxFrames: 7 });
      const a = await odd.range("fox", "Walk", 0, 1, 30, "mat4", { loop: true });
      const b = await bc.pose("fox", { animation: "Walk", from: 0, to: 1, fps: 30, loop: true }, "mat4");
      check(same(a.data, b.data) && odd.sent === 5, `31 frames in chunks of 7 (${odd.sent} requests) are the bytes of one`);
    });

    await test("frames", async () => {
      const got = await c.frames("fox", "Walk", 30, 95, 160, "mat4");
      let ok = got.poseCount === 65;
      for (const k of [95, 96, 127, 159]) {
        const one = await c.pose("fox", { animation: "Walk", time: k / 30 }, "mat4");
        ok = ok && same(got.pose(k - 95), one.data);
      }
      check(ok, `frames [95, 160) by "frames": [s, e] chunks under --max-frames are the poses at k / 30 (${got.poseCount})`);
      const js = await c.frames("fox", "Walk", 30, 3, 4);
      check(deepEq(js.results[0], await c.pose("fox", { animation: "Walk", time: 3 / 30 })), "a JSON frame is the pose at its time");
      let threw = false;
      try { await c.frames("fox", "Walk", 30, 5, 4); } catch (e) { threw = e instanceof RangeError; }
      check(threw, "frames with end < start throw RangeError");
    });

    await test("batches", async () => {
      const poses = Array.from({ length: 19 }, (_, t) => ({ animation: "Survey", time: t / 10 }));
      const cc = new sk.Client(d.url);
      const got = await cc.poses("fox", poses);
      check(cc.maxBatch === 8 && deepEq(got, await bc.poses("fox", poses)), `a 19-pose batch split under --max-batch (learned ${cc.maxBatch}) is one whole batch's answer`);
      const b = await cc.poses("fox", poses, "mat4");
      check(b.poseCount === 19 && same(b.data, (await bc.poses("fox", poses, "mat4")).data), "binary batches too");
    });

    await test("ops", async () => {
      const r = await c.pose("fox", { animation: "Walk", time: 0.25, output: ["final", "positions"], ops: [
        sk.op("rotate", "b_Head_05", { axis: [0, 1, 0], amount: 0.5, space: "world" }), sk.ik("b_LeftLeg02_016", [-7, 20, -40]),
        sk.query("b_LeftFoot01_017", "absolutePosition")] });
      check(deepEq(r.queries[0].value, [-6.999999523162842, 20, -40]) && r.positions.length === 72, `ik and a query: the foot at ${r.queries[0].value}`);
      const b = await c.pose("fox", { animation: "Walk", time: 0.25, output: ["final", "positions"], ops: [sk.ik("b_LeftLeg02_016", [-7, 20, -40])] }, "mat4");
      check(b.floatsPerPose === 25 * 16 + 72 && deepEq([...b.pose(0).subarray(400)], [...Float32Array.from(r.positions)]), "binary output with positions: extra floats per pose decoded");
      const out = await c.applyOps("page", [sk.op("setScale", "armLeft", { scale: [2, 2, 2] })]);
      check(out && typeof out === "object", "POST /ops answers an object");
      check(deepEq(sk.ik("b", [1, 2, 3], { poleTarget: [0, 1, 0] }), { op: "ik", bone: "b", target: [1, 2, 3], poleTarget: [0, 1, 0] }), "ik() builds the op as Babylon names its fields");
    });

    await test("errors", async () => {
      const e = await throws(c.pose("fox", { bones: { b_Head_05: { rotation: [0, "a", 0] } } }), sk.Unprocessable);
      check(!e.wrong && e.status === 422 && e.kind === "wrong-type" && e.pointer === "/bones/b_Head_05/rotation/1" && e.field === "1",
        `422 as Unprocessable with kind, pointer and field (${e.message})`);
      const nf = await throws(c.pose("fox", { bones: { nope: { rotation: [0, 0, 0] } } }), sk.NotFound);
      check(!nf.wrong && nf.pointer === "/bones/nope" && nf.field === "nope", `404 as NotFound naming the bone (${nf.message})`);
      const hint = await throws(c.pose("fox", { bones: { b_Head_5: { rotation: [0, 0, 0] } } }), sk.NotFound);
      check(/did you mean "b_Head_05"/.test(hint.detail || ""), `the detail's hint reaches the error (${hint.detail})`);
      const sk404 = await throws(c.skeleton("nope"), sk.NotFound);
      check(!sk404.wrong && sk404 instanceof sk.SkinnerdError && sk404.kind === "not-found", "an unknown skeleton is NotFound (a SkinnerdError)");
      const bad = await throws(c.upload("bad", new Uint8Array([1, 2, 3]), { contentType: "model/gltf-binary" }), sk.SkinnerdError);
      check(!bad.wrong && bad.status >= 400 && bad.status < 500, `a bad GLB is a ${bad.status} ${bad.kind}`);
      const big413 = await throws(new sk.Client(d.url, { maxBatch: 1 }).poses("fox", [{}, {}]).then(() => c.pose("fox", { animation: "Walk", from: 0, to: 100, fps: 30 })), sk.TooLarge);
      check(!big413.wrong && /the limit is/.test(big413.detail), `a range over --max-frames sent as is: TooLarge (${big413.detail})`);
    });

    await test("operational", async () => {
      check((await c.healthz()).status === "ok", "healthz");
    const served = new Uint8Array(await (await fetch(`${d.url}/ui/skinnerd.js`)).arrayBuffer());
    check(Buffer.compare(Buffer.from(served), readFileSync(join(JS, "dist/skinnerd.js"))) === 0, "the daemon serves dist/skinnerd.js as /ui/skinnerd.js");
      const m = await c.metrics();
      check(Object.keys(m).some((k) => k.startsWith("skinnerd_")), `metrics parsed (${Object.keys(m).length} series)`);
    });

    await test("events", async () => eventTests(c, d));
    if (HAS_WS) await test("stream", async () => streamTests(c, d, fox));
    else console.log("ok - # SKIP stream: this node has no WebSocket (Node 22, or 20 with --experimental-websocket)");
  } finally {
    await d.stop();
    await big.stop();
  }
  await test("tls", tlsTests);
  await test("tokens", tokenTests);
  await test("retry", retryTests);
  if (HAS_WS) await test("readme", readmeTest);
  else console.log("ok - # SKIP the README example (it streams): no WebSocket in this node");
}

async function streamTests(c, d, fox) {
  const s = await c.stream("fox");
  const bodies = [{}, { animation: "Walk", time: 0.5 }, { ops: [sk.ik("b_LeftLeg02_016", [-7, 20, -40])] },
    { animation: "Run", from: 0, to: 0.2, fps: 30 }, { animation: "Walk", fps: 30, frames: [3, 9], loop: true }];
  const seen = [];
  s.onframe = (f) => seen.push(f.index);
  const answers = await Promise.all(bodies.map((b) => s.send(b)));
  let ok = true;
  for (let i = 0; i < bodies.length; i++) {
    const want = await raw(d.url, "/v1/skeletons/fox/pose", bodies[i], sk.MAT4);
    ok = ok && same(answers[i].frames.data, want) && answers[i].index === i && answers[i].id === i + 1;
  }
  check(ok, "each stream answer is /pose's mat4 bytes for the request, its header's index and id in order");
  check(answers[3].frames.poseCount === 7 && answers[4].frames.poseCount === 6 && answers[0].frames.matrices === 25, "ranges and frame indices over the stream: the header's pose and matrix counts");
  check(deepEq(seen, [0, 1, 2, 3, 4]), "onframe sees every frame");
  const p = await throws(s.send({ bones: { nope: { rotation: [0, 0, 0] } } }), sk.NotFound);
  check(!p.wrong && p.pointer === "/bones/nope", `a failed stream request rejects with the problem /pose answers (${p.message})`);
  const after = await s.send({ animation: "Walk", time: 0.1 });
  check(after.index === 5, "the session goes on after a problem");

  const frames = [];
  const played = await s.play({ animation: "Walk", fps: 100, frames: [10, 20] }, (f) => frames.push(f));
  let pok = frames.length === 10;
  for (const f of frames) {
    const want = await raw(d.url, "/v1/skeletons/fox/pose", { animation: "Walk", fps: 100, frames: [f.index, f.index + 1] }, sk.MAT4);
    pok = pok && same(f.frames.data, want);
  }
  check(played === 20 && pok && deepEq(frames.map((f) => f.index), [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]),
    `play pushes frames 10..19 with /pose's bytes, then resolves with "played": ${played}`);
  const bad = await throws(s.play({ animation: "Walk", fps: 0, frames: [0, 5] }, () => {}), sk.Unprocessable);
  check(!bad.wrong && bad.pointer === "/play/fps", `a bad play rejects with its problem (${bad.message})`);
  const long = s.play({ animation: "Walk", fps: 50, frames: [0, 100000] }, () => {});
  await new Promise((r) => setTimeout(r, 100));
  s.stopPlay();
  check((await long) === -1, "stopPlay stops a clip (its promise resolves with -1)");
  const q = await s.send({ animation: "Walk", time: 0 });
  check(q.frames.matrices === 25, "requests are answered after a stop");
  s.close();

  // 300 requests pipelined on one session: every answer, in order, with /pose's bytes.
  const s2 = await c.stream("fox");
  const many = Array.from({ length: 300 }, (_, k) => ({ animation: "Run", time: k / 97, ops: [sk.ik("b_LeftLeg02_016", [-7, 20 + (k % 9), -40])] }));
  const got = await Promise.all(many.map((b) => s2.send(b)));
  const want = [];
  for (const b of many) want.push(await raw(d.url, "/v1/skeletons/fox/pose", b, sk.MAT4));
  check(got.every((f, k) => f.index === k && same(f.frames.data, want[k])), "300 pipelined stream requests: each answer in order with /pose's bytes");
  s2.close();
  const par = await Promise.all(many.slice(0, 16).map((b) => c.pose("fox", b, "mat4")));
  check(par.every((f, k) => same(f.data, want[k])), "16 concurrent pose requests on one Client: each its own answer");

  const s3 = await c.stream("fox", { format: "mat3x4" });
  const a3 = await s3.send({ animation: "Walk", time: 0.3 });
  check(a3.frames.floatsPerMatrix === 12 && same(a3.frames.data, await raw(d.url, "/v1/skeletons/fox/pose", { animation: "Walk", time: 0.3 }, sk.MAT3X4)),
    "format mat3x4: the stream answers /pose's mat3x4 bytes");
  s3.close();
  const none = await throws(c.stream("nope"), sk.ProtocolError);
  check(!none.wrong, `an unknown skeleton's stream does not open (${none.message})`);
  void fox;
}

// The event-stream playback (Client.events): fetch-read, no WebSocket or EventSource needed.
async function eventTests(c, d) {
  const got = [];
  const t0 = performance.now();
  const played = await c.events("fox", { animation: "Walk", fps: 50, frames: [5, 31] }, (f) => got.push({ f, t: performance.now() - t0 }));
  let ok = got.length === 26;
  for (const { f } of got) {
    const want = await raw(d.url, "/v1/skeletons/fox/pose", { animation: "Walk", fps: 50, frames: [f.index, f.index + 1] }, sk.MAT4);
    ok = ok && same(f.frames.data, want) && f.id === null && f.frames.matrices === 25 && f.frames.poseCount === 1;
  }
  const span = got.length ? (got[got.length - 1].t - got[0].t) / 1000 : 0;
  check(played === 31 && ok && deepEq(got.map(({ f }) => f.index), Array.from({ length: 26 }, (_, k) => k + 5)),
    `events plays frames 5..30 with /pose's mat4 bytes, then resolves with "played": ${played}`);
  check(span >= 0.5 - 0.02 && span < 0.5 + 0.3, `events are paced at fps: 26 frames at 50 fps over ${span.toFixed(3)} s (0.5 s due)`);
  const m3 = [];
  const p3 = await c.events("fox", { animation: "Walk", fps: 30, frames: [5, 45], speed: 16, format: "mat3x4", lastEventId: 40 }, (f) => m3.push(f));
  check(p3 === 45 && deepEq(m3.map((f) => f.index), [41, 42, 43, 44]) && m3[0].frames.floatsPerMatrix === 12 &&
    same(m3[0].frames.data, await raw(d.url, "/v1/skeletons/fox/pose", { animation: "Walk", fps: 30, frames: [41, 42] }, sk.MAT3X4)),
    "events resumes after lastEventId 40 (Last-Event-ID), mat3x4 at speed 16");
  const nf = await throws(c.events("fox", { animation: "Nope", fps: 30, frames: [0, 3] }, () => {}), sk.NotFound);
  check(!nf.wrong, `an unknown clip rejects with NotFound (${nf.message})`);
  const bad = await throws(c.events("fox", { animation: "Walk", fps: 30, frames: [0, 3], speed: 0 }, () => {}), sk.Unprocessable);
  check(!bad.wrong && /speed/.test(bad.detail || ""), `speed 0 rejects with Unprocessable (${bad.detail})`);
  const ac = new AbortController();
  let n = 0;
  const stopped = await c.events("fox", { animation: "Walk", fps: 100, frames: [0, 100000], signal: ac.signal }, () => { if (++n === 3) ac.abort(); });
  check(stopped === -1 && n === 3, `aborting the signal stops the playback (resolves -1 after ${n} frames)`);
  // A stream cut mid-way (the daemon deletes nothing here: a proxy drops it) rejects with StreamEnded naming the last frame.
  const cut = new sk.Client(d.url, { fetch: async (u, init) => {
    const r = await fetch(u, init);
    const rd = r.body.getReader();
    let sent = 0;
    return new Response(new ReadableStream({ async pull(ctl) {
      const { value, done } = await rd.read();
      if (done || sent > 3000) { rd.cancel(); ctl.close(); return; }
      sent += value.byteLength;
      ctl.enqueue(value);
    } }), { status: r.status, headers: r.headers });
  } });
  const seen = [];
  const ended = await throws(cut.events("fox", { animation: "Walk", fps: 200, frames: [0, 1000] }, (f) => seen.push(f.index)), sk.StreamEnded);
  check(!ended.wrong && ended.lastEventId === seen[seen.length - 1] && seen.length > 0,
    `a dropped event stream rejects with StreamEnded, lastEventId ${ended.lastEventId} (the last frame seen)`);
}

// https and wss with a self-signed certificate the child's Node trusts (NODE_EXTRA_CA_CERTS).
async function tlsTests() {
  const tmp = mkdtempSync(join(tmpdir(), "js_client."));
  const cert = join(tmp, "c.crt"), key = join(tmp, "c.key");
  const ssl = spawnSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"], { encoding: "utf8" });
  if (ssl.status !== 0) { console.log("ok - # SKIP tls: no openssl"); rmSync(tmp, { recursive: true, force: true }); return; }
  const dd = await daemon("--tls-cert", cert, "--tls-key", key);
  try {
    const file = join(tmp, "tls.mjs"), url = `https://127.0.0.1:${dd.port}`;
    writeFileSync(file, `import * as sk from ${JSON.stringify(pathToFileURL(join(JS, "dist/skinnerd.js")).href)};
const c = new sk.Client(${JSON.stringify(url)});
await c.upload("page", ${JSON.stringify(PAGE)});
const f = await c.pose("page", {}, "mat4");
const s = typeof WebSocket === "function" ? await c.stream("page") : null;
const a = s ? await s.send({}) : { frames: f };
s?.close();
console.log(f.data.length, a.frames.data.length, s ? new URL(s.ws.url).protocol : "no-websocket");
`);
    const run = (extra) => spawnSync(process.execPath, [...process.execArgv, file], { encoding: "utf8", timeout: 60000, env: { ...process.env, ...extra } });
    const r = run({ NODE_EXTRA_CA_CERTS: cert });
    check(r.status === 0 && r.stdout.trim() === `64 64 ${HAS_WS ? "wss:" : "no-websocket"}`, `https${HAS_WS ? " and wss://" : ""} with a trusted certificate (${(r.stdout + r.stderr).trim().split("\n").pop()})`);
    const no = run({ NODE_EXTRA_CA_CERTS: "" });
    check(no.status !== 0, "a certificate nobody trusts: the client fails");
  } finally {
    await dd.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function tokenTests() {
  const tmp = mkdtempSync(join(tmpdir(), "js_client."));
  const path = join(tmp, "tokens");
  writeFileSync(path, "reader-token-0123456789 read\nwriter-token-0123456789 write\nbrowser~~~/+=-0123456789 read\n");
  const dd = await daemon("--tokens", path);
  try {
    const u = await throws(new sk.Client(dd.url).skeletons(), sk.Unauthorized);
    check(!u.wrong, "no token: Unauthorized");
    await new sk.Client(dd.url, { token: "writer-token-0123456789" }).upload("page", PAGE);
    const r = new sk.Client(dd.url, { token: "reader-token-0123456789" });
    check((await r.pose("page")).final.length === 64, "a read token poses");
    const f = await throws(r.upload("page2", PAGE), sk.Forbidden);
    check(!f.wrong && f.kind === "forbidden", "a read token's upload: Forbidden");
    if (HAS_WS) {
      check(JSON.stringify(sk.streamProtocols("browser~~~/+=-0123456789")) ===
            '["skinner.v1","base64url.bearer.skinner.YnJvd3Nlcn5-fi8rPS0wMTIzNDU2Nzg5"]', "the token subprotocol is unpadded base64url");
      const s = await r.stream("page");
      const a = await s.send({});
      check(a.frames.matrices === 4, "the stream carries the token as a subprotocol, as a browser's WebSocket must");
      check(s.ws.protocol === "skinner.v1", `the 101 selects skinner.v1, not ${s.ws.protocol}`);
      s.close();
      const b = await new sk.Client(dd.url, { token: "browser~~~/+=-0123456789" }).stream("page");
      check((await b.send({})).frames.matrices === 4, "a token with / + = goes through base64url");
      b.close();
      const h = await new sk.Client(dd.url, { token: "reader-token-0123456789", headers: { "X-Trace": "1" } }).stream("page");
      check((await h.send({})).frames.matrices === 4, "extra headers and the token subprotocol together");
      h.close();
      const bad = await throws(new sk.Client(dd.url, { token: "unknown-token-0123456789" }).stream("page"), sk.ProtocolError);
      check(!bad.wrong, "an unknown token's stream does not open");
      const no = await throws(new sk.Client(dd.url).stream("page"), sk.ProtocolError);
      check(!no.wrong, "a stream without a token does not open");
    }
  } finally {
    await dd.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function retryTests() {
  const hits = [];
  const srv = createServer((req, res) => {
    hits.push(req.url);
    if (hits.length <= 2 || req.url === "/always") {
      res.writeHead(503, { "Content-Type": "application/problem+json", "Retry-After": "0" });
      res.end(JSON.stringify({ type: "https://skinnerd.dev/problems/overloaded", title: "overloaded", status: 503, detail: "busy", pointer: "" }));
    } else {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end('{"status":"ok"}');
    }
  });
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  try {
    const c = new sk.Client(`http://127.0.0.1:${srv.address().port}`, { retries: 2 });
    check(deepEq(await c.healthz(), { status: "ok" }) && hits.length === 3, "two 503s with Retry-After are retried, the third try answers");
    const e = await throws(c.request("GET", "/always"), sk.Overloaded);
    check(!e.wrong && e.retryAfter === 0 && hits.length === 6, "then given up after the retries: Overloaded with retryAfter");
  } finally { srv.close(); }
}

async function readmeTest() {
  const text = readFileSync(join(JS, "README.md"), "utf8");
  const code = /```js\n([\s\S]*?)```/.exec(text)[1];
  const dd = await daemon();
  try {
    // Written outside the tree (distcheck's is read-only): the import made absolute.
    const tmp = mkdtempSync(join(tmpdir(), "js_client."));
    const file = join(tmp, "example.mjs");
    writeFileSync(file, code.replace("127.0.0.1:8080", `127.0.0.1:${dd.port}`)
      .replace('"./clients/js/dist/skinnerd.js"', JSON.stringify(pathToFileURL(join(JS, "dist/skinnerd.js")).href)));
    const r = spawnSync(process.execPath, [...process.execArgv, file], { cwd: TOP, encoding: "utf8", timeout: 120000 });
    rmSync(tmp, { recursive: true, force: true });
    check(r.status === 0, `the README example runs as written${r.status ? `: ${r.stderr}` : ""}`);
    check(/1801 poses/.test(r.stdout) && /foot at \[ -6\.999999523162842, 20, -40 \]/.test(r.stdout) && /422 wrong-type \/bones\/b_Head_05\/rotation\/1/.test(r.stdout)
      && /stream answer 0 25 matrices/.test(r.stdout), `its output (${r.stdout.trim().split("\n").join(" | ")})`);
  } finally { await dd.stop(); }
}

main().catch((e) => { failed++; console.log(`FAIL - ${e && e.stack || e}`); }).finally(() => {
  console.log(`js_client: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
});
