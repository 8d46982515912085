// The preview page in a real browser: headless Debian chromium (software
// WebGL through SwiftShader) driven by puppeteer-core against a skinnerd
// started here on 127.0.0.1 and a free port. Uploads Fox and CesiumMan
// through the page's file picker, plays every clip to 5 fixed times and
// compares the page's canvas with Babylon.js's own render of the same frame
// (same browser, same camera): silhouette IoU >= 0.97. Then the edit tools,
// which send the API's ops: a local- and a world-axis rotate, an IK drag and
// a look-at drag must change the picture as the API's answer says (the drawn
// joints are the "positions" of the same request sent here with fetch; Babylon
// given the bones' answered local rotations draws the same silhouette; the IK
// end reaches the target, the look-at aims the head), and errors (a 422 for a
// bad op among them) must be shown. The server mesh toggle must agree with
// the GPU-skinned mesh (the panel's number and the silhouettes), and the
// page's text must hold no NaN or undefined at two window sizes.
//
// env: SKINNERD (./skinnerd), SK_TEST_DATA (tests), CHROMIUM (/usr/bin/chromium),
//      UI_TEST_OUT (screenshots and masks; tests/ui_browser.out)
// Prints "ui_browser: N passed, N failed"; exit 0 when all passed.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import puppeteer from "puppeteer-core";

const HERE = dirname(fileURLToPath(import.meta.url));
const { decompose, rotationOf } = await import(join(HERE, "..", "..", "ui", "mat.js"));
const DATA = resolve(process.env.SK_TEST_DATA || "tests", "data");
const OUT = resolve(process.env.UI_TEST_OUT || "tests/ui_browser.out");
const SKINNERD = process.env.SKINNERD || "./skinnerd";
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const SIZE = 400;
const IOU_MIN = 0.97;
const SERVER_TOL = 1e-5; // of the mesh's size: float32 matrices skinned in doubles against Babylon's float32 sum
const SERVER_IOU = 0.99; // the same triangles drawn twice: only antialiased edge pixels differ
mkdirSync(OUT, { recursive: true });

let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? "PASS" : "FAIL"}: ${what}`);
}

// ---- the daemon and the reference server ------------------------------------------

function startDaemon(...more) {
  return new Promise((res, rej) => {
    const p = spawn(SKINNERD, ["--listen", "127.0.0.1:0", ...more], { stdio: ["ignore", "pipe", "inherit"] });
    process.on("exit", () => p.kill("SIGKILL")); // never outlive the test, whatever ends it
    let buf = "";
    const t = setTimeout(() => rej(new Error("skinnerd did not print its address in 10 s")), 10000);
    p.stdout.on("data", (d) => {
      buf += d;
      const m = /listening on ([0-9.]+):(\d+)/.exec(buf);
      if (m) { clearTimeout(t); res({ proc: p, base: `http://${m[1]}:${m[2]}` }); }
    });
    p.on("exit", (code) => rej(new Error(`skinnerd exited ${code}`)));
  });
}

// Serves the Babylon.js reference page, Babylon's UMD bundles and the test
// GLBs: test-only files the daemon never serves.
function startReference() {
  const files = {
    "/ref/": [join(HERE, "reference.html"), "text/html"],
    "/babylon/babylon.js": [join(HERE, "node_modules/babylonjs/babylon.js"), "text/javascript"],
    "/babylon/babylonjs.loaders.min.js": [join(HERE, "node_modules/babylonjs-loaders/babylonjs.loaders.min.js"), "text/javascript"],
    "/data/Fox.glb": [join(DATA, "Fox.glb"), "model/gltf-binary"],
    "/data/CesiumMan.glb": [join(DATA, "CesiumMan.glb"), "model/gltf-binary"],
  };
  const srv = createServer((req, res) => {
    const f = files[req.url.split("?")[0]];
    if (!f) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { "Content-Type": f[1] });
    res.end(readFileSync(f[0]));
  });
  return new Promise((r) => srv.listen(0, "127.0.0.1", () => r({ srv, base: `http://127.0.0.1:${srv.address().port}` })));
}

// ---- images -----------------------------------------------------------------------------

// Foreground = farther than half-way from the clear colour to white, so
// antialiased edges count the same in both renders. Runs in the browser
// (the pixels stay there); the answer is one "0"/"1" per pixel, bottom row first.
const MASK_FN = `(function (w, h, px) {
  const bg = [26, 26, 31], out = new Array(w * h);
  for (let i = 0; i < w * h; i++) {
    const d = Math.max(Math.abs(px[4 * i] - bg[0]), Math.abs(px[4 * i + 1] - bg[1]), Math.abs(px[4 * i + 2] - bg[2]));
    out[i] = d > 114 ? "1" : "0";
  }
  return out.join("");
})`;
const mask = (s) => Uint8Array.from(s, (c) => (c === "1" ? 1 : 0));

function iou(a, b) {
  if (a.length !== b.length) throw new Error(`masks of ${a.length} and ${b.length} pixels`);
  let inter = 0, uni = 0;
  for (let i = 0; i < a.length; i++) { inter += a[i] & b[i]; uni += a[i] | b[i]; }
  return uni ? inter / uni : 1;
}

// A PPM-free look at both masks: a PNG would need a library, so the test
// saves the page's and Babylon's canvases as browser screenshots, and the
// masks' overlap as a tiny PGM (red = page only, green = Babylon only).
function saveOverlap(name, a, b) {
  const head = Buffer.from(`P6\n${SIZE} ${SIZE}\n255\n`);
  const body = Buffer.alloc(SIZE * SIZE * 3);
  for (let y = 0; y < SIZE; y++)
    for (let x = 0; x < SIZE; x++) {
      const src = (SIZE - 1 - y) * SIZE + x, dst = 3 * (y * SIZE + x); // readPixels is bottom-up
      const pa = a[src], pb = b[src];
      body[dst] = pa && !pb ? 255 : pa && pb ? 200 : 0;
      body[dst + 1] = pb && !pa ? 255 : pa && pb ? 200 : 0;
      body[dst + 2] = pa && pb ? 200 : 0;
    }
  writeFileSync(join(OUT, `${name}-overlap.ppm`), Buffer.concat([head, body]));
}

// The mask and a PNG of the canvas, both read in the task that drew it (the
// page's canvas keeps no drawing buffer; a background tab is not painted).
function savePng(name, dataUrl) {
  writeFileSync(join(OUT, `${name}.png`), Buffer.from(dataUrl.split(",")[1], "base64"));
}

async function pageMask(page, name) {
  const r = await page.evaluate((fn) => {
    const { w, h, px } = window.skPreview.pixels();
    return { m: eval(fn)(w, h, px), png: document.getElementById("canvas").toDataURL("image/png") };
  }, MASK_FN);
  savePng(`${name}-page`, r.png);
  return mask(r.m);
}

async function refMask(ref, name, clip, time, cam, overrides) {
  const r = await ref.evaluate((fn, clip, time, cam, s, o) => {
    const { w, h, px } = window.ref.render(clip, time, cam, s, s, o);
    return { m: eval(fn)(w, h, px), png: document.getElementById("c").toDataURL("image/png") };
  }, MASK_FN, clip, time, cam, SIZE, overrides);
  savePng(`${name}-babylon`, r.png);
  return mask(r.m);
}

async function fullShot(page, name) {
  await page.bringToFront();
  await page.screenshot({ path: join(OUT, `${name}.png`) });
}

// ---- the checks ---------------------------------------------------------------------------

const T0 = Date.now();
const debug = (m) => process.env.UI_TEST_DEBUG && console.log(`  [${((Date.now() - T0) / 1000).toFixed(1)} s] ${m}`);

async function compareFrame(ui, ref, name, clip, time, overrides = {}) {
  debug(`${name}: seek`);
  await ui.evaluate(async (clip, time) => {
    window.skPreview.setPlaying(false);
    window.skPreview.setClip(clip);
    await window.skPreview.seek(time);
  }, clip, time);
  const cam = await ui.evaluate(() => window.skPreview.camera());
  debug(`${name}: page mask`);
  const a = await pageMask(ui, name);
  debug(`${name}: babylon`);
  const b = await refMask(ref, name, clip, time, cam, overrides);
  debug(`${name}: screenshots`);
  const v = iou(a, b);
  saveOverlap(name, a, b);
  const fg = a.reduce((s, x) => s + x, 0);
  return { iou: v, fg, mask: a };
}

// The joints the page draws now against the "positions" of the same pose
// request (the page's own body: clip time, ops, mesh) sent here with fetch.
// worst: the largest coordinate difference; size: the largest coordinate.
async function drawnVsApi(ui) {
  return ui.evaluate(async () => {
    const p = window.skPreview, id = p.state.id;
    const res = await fetch(`/v1/skeletons/${encodeURIComponent(id)}/pose`,
      { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(p.numbersBody()) });
    const r = await res.json();
    if (!res.ok) return { status: res.status, detail: r.detail, worst: Infinity, size: 0 };
    let worst = 0, size = 0;
    p.drawn().forEach((d, i) => d.forEach((v, c) => {
      worst = Math.max(worst, Math.abs(v - r.positions[3 * i + c]));
      size = Math.max(size, Math.abs(r.positions[3 * i + c]));
    }));
    const order = p.state.bones.map((b) => b.name);
    return { status: res.status, worst, size, positions: r.positions, world: r.world, order };
  });
}
const DRAWN_TOL = 1e-5; // of the model's size: float32 final matrices times the page's doubles

// {bone: quaternion} of every bone whose local matrix the page's ops change,
// from the API's "local" answers with and without them: what Babylon's
// reference needs to draw the same pose on its glTF nodes.
async function opsOverrides(ui) {
  const changed = await ui.evaluate(async () => {
    const p = window.skPreview, st = p.state;
    const post = async (b) => (await fetch(`/v1/skeletons/${encodeURIComponent(st.id)}/pose`,
      { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(b) })).json();
    const withOps = p.numbersBody(), plain = { ...withOps };
    delete plain.ops;
    const [a, b] = [await post(plain), await post(withOps)];
    const out = {};
    for (const bone of st.bones) {
      if (bone.index < 0) continue;
      const k = 16 * bone.index, la = a.local.slice(k, k + 16), lb = b.local.slice(k, k + 16);
      if (la.some((v, i) => Math.abs(v - lb[i]) > 1e-6)) out[bone.name] = lb;
    }
    return out;
  });
  // A local with determinant -1 (Babylon's IK in a left-handed mesh world
  // can answer one) keeps its mirror: Babylon is given its scaling too.
  const det = (m) => m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8]) + m[2] * (m[4] * m[9] - m[5] * m[8]);
  return Object.fromEntries(Object.entries(changed).map(([k, m]) => [k, det(m) < 0 ? decompose(m) : rotationOf(m)]));
}

// Drags the edit's target handle with the mouse by (dx, dy) CSS pixels in
// steps, then waits for the page's last op request to be answered.
async function dragHandle(ui, dx, dy, steps = 6, which = "handle") {
  await ui.bringToFront();
  const at = await ui.evaluate((w) => window.skPreview.screenOf(w), which);
  if (!at) throw new Error("the page shows no target handle");
  await ui.mouse.move(at.x, at.y);
  await ui.mouse.down();
  for (let i = 1; i <= steps; i++) await ui.mouse.move(at.x + (dx * i) / steps, at.y + (dy * i) / steps);
  await ui.mouse.up();
  await ui.mouse.move(1, 1); // no hover label over the screenshot
  await ui.evaluate(() => window.skPreview.idle());
  return ui.evaluate(() => ({ target: window.skPreview.state.edit.target, pole: window.skPreview.state.edit.pole, ops: window.skPreview.state.ops }));
}

const pos = (r, name) => { const i = r.order.indexOf(name); return r.positions.slice(3 * i, 3 * i + 3); };
const worldRow = (r, name, row) => { const i = r.order.indexOf(name); return r.world.slice(16 * i + 4 * row, 16 * i + 4 * row + 3); };
const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
const angleDeg = (a, b) => {
  const d = (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) / (Math.hypot(...a) * Math.hypot(...b));
  return (Math.acos(Math.max(-1, Math.min(1, d))) * 180) / Math.PI;
};
// v rotated by `deg` about world +Y, right-handed (+X turns to -Z): v ×
// Babylon's Matrix.RotationY, what rotate(Axis.Y, amount) applies.
const rotY = (v, deg) => {
  const a = (deg * Math.PI) / 180, c = Math.cos(a), s = Math.sin(a);
  return [v[0] * c + v[2] * s, v[1], -v[0] * s + v[2] * c];
};

async function uploadThroughPage(ui, file, id) {
  await ui.$eval("#upload-id", (el, id) => (el.value = id), id);
  const input = await ui.$("#file");
  await input.uploadFile(join(DATA, file));
  try {
    await ui.waitForFunction((id) => window.skPreview.state.id === id && !!window.skPreview.state.lastMats, { timeout: 60000, polling: 200 }, id);
  } catch (e) {
    const why = await ui.evaluate(() => `status "${document.getElementById("status").textContent}", error "${window.skPreview.state.lastError}"`);
    throw new Error(`uploading ${file} through the page: ${why}`);
  }
}

async function main() {
  const daemon = await startDaemon();
  const refsrv = await startReference();
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    protocolTimeout: 120000,
    args: ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist",
      "--disable-gpu-vsync", "--no-first-run", "--no-default-browser-check"],
  });
  try {
    const ui = await browser.newPage();
    await ui.setViewport({ width: 1300, height: 800 });
    const pageErrors = [], foreign = [];
    ui.on("pageerror", (e) => pageErrors.push(e.message));
    ui.on("request", (r) => { if (!r.url().startsWith(daemon.base + "/") && !r.url().startsWith("data:")) foreign.push(r.url()); });
    await ui.goto(`${daemon.base}/ui/`);
    check(await ui.evaluate(() => window.skPreview.ready), "the page loads with no skeleton stored and says so");
    check(/no skeleton stored yet/.test(await ui.$eval("#status", (e) => e.textContent)), "an empty daemon: the page asks for an upload");
    const emptyText = await ui.evaluate(() => document.body.innerText);
    check(!/\b(NaN|undefined)\b/.test(emptyText) && /daemon: /.test(emptyText), "an empty daemon: the server box says so, no NaN or undefined");

    const ref = await browser.newPage();
    await ref.goto(`${refsrv.base}/ref/`);
    await ref.waitForFunction(() => window.refReady === true);

    const models = [["Fox.glb", "fox"], ["CesiumMan.glb", "cesiumman"]];
    for (const [file, id] of models) {
      await uploadThroughPage(ui, file, id);
      check(true, `${file} uploaded through the page's file picker as "${id}" and drawn`);
      const own = await ui.evaluate(() => ({ status: document.getElementById("status").textContent, body: window.skPreview.numbersBody() }));
      check(!("mesh" in own.body) && !/differs/.test(own.status),
        `${id}: the GLB's own mesh chain equals the daemon's default mesh, so the page sends no "mesh" (status "${own.status}")`);
      await ui.evaluate(() => { window.skPreview.setSize(null); window.skPreview.show({ armature: true, flat: false }); });
      await new Promise((r) => setTimeout(r, 1500)); // let it play a little
      await fullShot(ui, `${id}-page-full`);
      await ui.evaluate((s) => { window.skPreview.setSize(s, s); window.skPreview.show({ armature: false, flat: true }); }, SIZE);
      const info = await ref.evaluate((u) => window.ref.load(u), `${refsrv.base}/data/${file}`);
      if (id === "fox") {
        // The renders are Babylon's as tests/oracle pins it (the matrices' reference), not an older copy.
        const pinned = JSON.parse(readFileSync(join(HERE, "..", "oracle", "package.json"), "utf8")).dependencies["@babylonjs/core"];
        const running = await ref.evaluate(() => BABYLON.Engine.Version);
        check(running === pinned, `the reference renders run Babylon.js ${running}, tests/oracle's @babylonjs/core ${pinned}`);
      }
      const clips = await ui.evaluate(() => window.skPreview.state.info.animations.map((a) => ({ name: a.name, duration: a.duration })));
      check(JSON.stringify(clips.map((c) => c.name)) === JSON.stringify(info.clips), `${id}: the page lists Babylon's clips (${info.clips.join(", ")})`);
      for (const clip of clips) {
        for (let k = 0; k < 5; k++) {
          const t = +(clip.duration * (k + 0.5) / 5).toFixed(4);
          const name = `${id}-${clip.name}-${k}`.replace(/[^A-Za-z0-9_.-]/g, "_");
          const r = await compareFrame(ui, ref, name, clip.name, t);
          check(r.iou >= IOU_MIN && r.fg > 500, `${id} ${clip.name} t=${t}s: silhouette IoU ${r.iou.toFixed(4)} >= ${IOU_MIN} (${r.fg} px)`);
        }
      }
    }

    // The server-skinned mesh (issue 33): the "server mesh" toggle draws the
    // daemon's "vertices" (POST /pose) over the GPU-skinned mesh. Per GLB at
    // three clip times the panel's own number (the page's skinning of the
    // drawn matrices against the daemon's positions) is within SERVER_TOL of
    // the mesh's size, and the daemon's triangles filled cover the GPU mesh's
    // silhouette (IoU >= SERVER_IOU); the daemon's triangles of another time
    // are the negative control.
    for (const [, id] of models) {
      await ui.evaluate(async (id, s) => {
        const p = window.skPreview;
        await p.open(id);
        p.setPlaying(false);
        p.setSize(s, s);
      }, id, SIZE);
      const clip = await ui.evaluate(() => window.skPreview.state.info.animations[0]);
      const masks = [];
      for (let k = 0; k < 3; k++) {
        const t = +(clip.duration * (k + 0.5) / 3).toFixed(4), name = `${id}-server-${k}`;
        const r = await ui.evaluate(async (clip, t) => {
          const p = window.skPreview;
          p.setClip(clip);
          await p.seek(t);
          const res = await p.serverMesh(true);
          return res && { vertices: res.vertices, worst: res.worst, size: res.size, unmatched: res.unmatched, time: res.time,
            text: document.getElementById("server-mesh").textContent };
        }, clip.name, t);
        check(r && r.time === t && r.vertices > 0 && r.unmatched === 0 && r.worst <= SERVER_TOL * r.size && !/NaN|undefined/.test(r.text),
          `${id} ${clip.name} t=${t}s server mesh: ${r && r.vertices} vertices, page vs daemon worst ${r && r.worst.toExponential(2)} <= ${SERVER_TOL} x size ${r && r.size.toFixed(3)}; the panel says "${r && r.text.replace(/\n/g, " / ")}"`);
        await ui.evaluate(() => window.skPreview.show({ armature: false, flat: true, mesh: true, server: false }));
        const gpu = await pageMask(ui, `${name}-gpu`);
        await ui.evaluate(() => window.skPreview.show({ mesh: false, server: true }));
        const srv = await pageMask(ui, `${name}-daemon`);
        saveOverlap(name, gpu, srv);
        masks.push({ gpu, srv, t });
        const v = iou(gpu, srv);
        check(v >= SERVER_IOU && gpu.reduce((a, x) => a + x, 0) > 500, `${id} t=${t}s: the daemon's triangles cover the GPU-skinned silhouette (IoU ${v.toFixed(4)} >= ${SERVER_IOU})`);
      }
      const neg = iou(masks[0].gpu, masks[2].srv);
      check(neg < SERVER_IOU, `${id}: negative control, the daemon's mesh at t=${masks[2].t}s against the GPU's at t=${masks[0].t}s: IoU ${neg.toFixed(4)} < ${SERVER_IOU}`);
      // Seen as a user sees it: the green edges over the shaded mesh.
      await ui.evaluate(() => { const p = window.skPreview; p.setSize(null); p.show({ armature: true, flat: false, mesh: true, server: undefined }); });
      await fullShot(ui, `${id}-server-mesh`);
      await ui.evaluate(() => window.skPreview.serverMesh(false));
    }

    // The page's text (issue 35) at two window sizes, with a clip looping, a
    // bone picked and the server mesh on: no "NaN" or "undefined" anywhere in
    // it (text and field values); no box cut off at its edge, the controls
    // inside the window and the right panel scrolling to its last box; the
    // server box changes while the clip loops from ranges already fetched.
    for (const [w, h] of [[1300, 800], [1024, 640]]) {
      await ui.setViewport({ width: w, height: h });
      await ui.evaluate(async () => {
        const p = window.skPreview;
        await p.open("fox");
        p.pick("b_Neck_04");
        await p.serverMesh(true);
        p.setPlaying(true);
      });
      await new Promise((r) => setTimeout(r, 2500));
      const seen = () => ui.evaluate(() => {
        const text = document.body.innerText + "\n" + [...document.querySelectorAll("input, select")].map((e) => e.value).join("\n");
        const cut = [...document.querySelectorAll("aside pre, #controls, header, #right h3")]
          .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.id || e.tagName);
        const box = (id) => document.getElementById(id).getBoundingClientRect();
        const right = document.getElementById("right"), keep = right.scrollTop;
        right.scrollTop = right.scrollHeight;
        const last = box("server-mesh"), panel = box("right");
        right.scrollTop = keep;
        return { bad: text.split("\n").filter((l) => /\b(NaN|undefined)\b/.test(l)), cut, timing: document.getElementById("timing").textContent,
          controls: box("controls").bottom <= Math.min(innerHeight, box("view").bottom) + 0.5 && box("controls").right <= innerWidth + 0.5,
          lastBox: last.bottom <= panel.bottom + 0.5 && last.top >= panel.top, playing: window.skPreview.state.playing,
          boxes: `controls ${JSON.stringify(box("controls"))}, view ${JSON.stringify(box("view"))}, window ${innerWidth}x${innerHeight}` };
      });
      const a = await seen();
      await new Promise((r) => setTimeout(r, 2500));
      const b = await seen();
      await fullShot(ui, `numbers-${w}x${h}`);
      check(a.bad.length === 0 && b.bad.length === 0, `${w}x${h}: no NaN or undefined in the page (${[...a.bad, ...b.bad].join(" | ")})`);
      check(a.cut.length === 0 && a.controls && a.lastBox, `${w}x${h}: no box cut off (${a.cut.join(", ")}), controls in the window (${a.controls}), the panel scrolls to its last box (${a.lastBox})${a.controls ? "" : `; ${a.boxes}`}`);
      check(a.playing && b.playing && a.timing !== b.timing && /daemon: /.test(b.timing),
        `${w}x${h}: the server box follows a looping clip ("${a.timing.replace(/\n/g, " / ")}" then "${b.timing.replace(/\n/g, " / ")}")`);
      await ui.evaluate(async () => { const p = window.skPreview; p.setPlaying(false); await p.serverMesh(false); p.pick(null); });
    }
    await ui.setViewport({ width: 1300, height: 800 });
    await ui.evaluate((s) => { window.skPreview.setSize(s, s); window.skPreview.show({ armature: false, flat: true }); }, SIZE);

    // A skeleton uploaded by another client (fetch here, not the page): no
    // GLB in the page, so the armature is drawn in the daemon's default mesh
    // (GET's "mesh"): upright, at the API's positions, where the page draws
    // the same joints of the CesiumMan it holds the GLB of.
    {
      const put = await fetch(`${daemon.base}/v1/skeletons/cesium-curl`,
        { method: "PUT", headers: { "Content-Type": "model/gltf-binary" }, body: readFileSync(join(DATA, "CesiumMan.glb")) });
      check(put.status === 201, `CesiumMan PUT by fetch as "cesium-curl": ${put.status}`);
      await ui.bringToFront();
      const withGlb = await ui.evaluate(async () => {
        const p = window.skPreview;
        await p.open("cesiumman");
        p.setPlaying(false);
        await p.seek(0.5);
        return p.drawn();
      });
      const r = await ui.evaluate(async () => {
        const p = window.skPreview;
        await p.open("cesium-curl");
        p.setPlaying(false);
        await p.seek(0.5);
        p.show({ armature: true, flat: false });
        return { status: document.getElementById("status").textContent, mesh: !!p.state.mesh, body: p.numbersBody(), drawn: p.drawn(), order: p.state.bones.map((b) => b.name) };
      });
      const api = await drawnVsApi(ui);
      const worstGlb = Math.max(...r.drawn.map((d, i) => dist(d, withGlb[i])));
      const ys = r.drawn.map((d) => d[1]), xs = r.drawn.map((d) => d[0]), zs = r.drawn.map((d) => d[2]);
      const span = (v) => Math.max(...v) - Math.min(...v);
      const neck = r.drawn[r.order.indexOf("Skeleton_neck_joint_2")], foot = r.drawn[r.order.indexOf("leg_joint_R_5")];
      check(!r.mesh && /no mesh/.test(r.status) && !("mesh" in r.body),
        `cesium-curl: no GLB in the page, no "mesh" sent: the daemon's default applies (status "${r.status}")`);
      check(api.status === 200 && api.worst <= DRAWN_TOL * api.size,
        `cesium-curl: the drawn joints are the API's positions (worst ${api.worst.toExponential(2)}, size ${api.size.toFixed(3)})`);
      check(worstGlb <= DRAWN_TOL * api.size, `cesium-curl: drawn where the page draws the joints of the CesiumMan it has the GLB of (worst ${worstGlb.toExponential(2)})`);
      check(span(ys) > 1.5 * Math.max(span(xs), span(zs)) && neck[1] - foot[1] > 0.8 * span(ys),
        `cesium-curl stands upright: height ${span(ys).toFixed(3)}, width ${span(xs).toFixed(3)}, depth ${span(zs).toFixed(3)}, neck ${(neck[1] - foot[1]).toFixed(3)} above the right foot`);
      await fullShot(ui, "curl-upload-armature");
      await ui.evaluate(async () => { await window.skPreview.open("cesiumman"); window.skPreview.setPlaying(false); });
    }

    // The bone tree picks; joint names show on hover.
    {
      await ui.bringToFront();
      await ui.evaluate(() => { window.skPreview.setPlaying(false); window.skPreview.show({ armature: true, flat: false }); });
      await ui.click('#tree li[data-bone="leg_joint_R_2"]');
      const picked = await ui.$eval("#picked-name", (e) => e.textContent);
      const numbers = await ui.waitForFunction(() => document.getElementById("m-abs").textContent.split("\n").length === 4, { timeout: 10000, polling: 100 }).then(() => true, () => false);
      check(picked === "leg_joint_R_2" && numbers, `clicking leg_joint_R_2 in the bone tree picks it and shows its matrices`);
      const at = await ui.evaluate(() => window.skPreview.screenOf("Skeleton_neck_joint_2"));
      await ui.mouse.move(at.x, at.y);
      const hover = await ui.waitForFunction(() => !document.getElementById("hover").hidden && document.getElementById("hover").textContent, { timeout: 5000, polling: 100 })
        .then((h) => h.jsonValue(), () => "");
      check(hover === "Skeleton_neck_joint_2", `hovering a joint names it ("${hover}")`);
      await fullShot(ui, "pick-and-hover");
    }

    // A world-axis rotate on CesiumMan, whose mesh sits under two rotated
    // nodes: the page sends that chain as the API's "mesh", so the world the
    // op turns about is the world the page draws.
    {
      const bone = "leg_joint_R_2";
      const before = await drawnVsApi(ui);
      await ui.evaluate(async (bone) => { window.skPreview.pick(bone); await window.skPreview.rotatePicked(1, 45, "world"); }, bone);
      const after = await drawnVsApi(ui);
      const sent = await ui.evaluate(() => window.skPreview.state.ops);
      check(sent.length === 1 && sent[0].op === "rotate" && sent[0].space === "world" && sent[0].bone === bone,
        `CesiumMan: the world rotate is sent as the API's op (${JSON.stringify(sent)})`);
      check(after.status === 200 && after.worst <= DRAWN_TOL * after.size,
        `CesiumMan: the drawn joints are the API's "positions" of the same request (worst ${after.worst.toExponential(2)}, size ${after.size.toFixed(3)})`);
      // Every axis of the bone turned 45° about world +Y; the bone stayed where it was.
      const axes = [0, 1, 2].map((k) => dist(worldRow(after, bone, k), rotY(worldRow(before, bone, k), 45)) / Math.hypot(...worldRow(before, bone, k)));
      check(Math.max(...axes) < 1e-4 && dist(pos(after, bone), pos(before, bone)) < 1e-4 * after.size,
        `CesiumMan: ${bone}'s world axes turned 45° about world Y (worst ${Math.max(...axes).toExponential(2)})`);
      await fullShot(ui, "world-rotate-cesiumman");
      await ui.evaluate(() => window.skPreview.setOps([]));
    }

    // Playback: frames come from range requests ahead of the playhead.
    {
      await ui.bringToFront();
      const p0 = await ui.evaluate(async () => {
        const p = window.skPreview;
        p.setClip("animation0");
        await p.seek(0);
        p.state.framesShown = 0;
        const sent = p.api.sent;
        p.setPlaying(true);
        await new Promise((r) => setTimeout(r, 3000));
        p.setPlaying(false);
        return { frames: p.state.framesShown, requests: p.api.sent - sent, time: p.state.time };
      });
      check(p0.frames >= 10 && p0.requests <= 8 && p0.time > 0.5,
        `playing 3 s showed ${p0.frames} frames from ${p0.requests} range requests (playhead at ${p0.time.toFixed(2)} s)`);
      const daemonLine = await ui.waitForFunction(() => /daemon: [0-9.]+ µs per frame/.exec(document.getElementById("timing").textContent)?.[0],
        { timeout: 10000, polling: 200 }).then((h) => h.jsonValue(), () => "");
      check(daemonLine !== "", `the numbers panel shows the daemon's own time per frame from /metrics ("${daemonLine}")`);
    }

    // A negative control: the comparison tells frames apart.
    {
      await ui.evaluate(async (s) => {
        window.skPreview.setSize(s, s);
        window.skPreview.show({ armature: false, flat: true });
        window.skPreview.setClip("animation0");
        await window.skPreview.seek(0.2);
      }, SIZE);
      const cam = await ui.evaluate(() => window.skPreview.camera());
      const a = await pageMask(ui, "control-t0.2");
      const b = await refMask(ref, "control-t1.4", "animation0", 1.4, cam, {});
      const v = iou(a, b);
      check(v < IOU_MIN, `negative control: CesiumMan at 0.2 s against Babylon at 1.4 s scores ${v.toFixed(4)} < ${IOU_MIN}`);
    }

    // A local-axis rotate: the op the page sends changes the picture, and
    // Babylon given the local rotation the API answered draws the same.
    await uploadThroughPage(ui, "Fox.glb", "fox"); // back to Fox (the stored copy is replaced)
    await ui.evaluate((s) => { window.skPreview.setSize(s, s); window.skPreview.show({ armature: false, flat: true }); }, SIZE);
    await ref.evaluate((u) => window.ref.load(u), `${refsrv.base}/data/Fox.glb`);
    const before = await compareFrame(ui, ref, "rotate-before", "Survey", 1);
    const bone = "b_Neck_04";
    await ui.evaluate(async (bone) => {
      window.skPreview.pick(bone);
      await window.skPreview.rotatePicked(0, 60, "local");
    }, bone);
    const q = await opsOverrides(ui);
    const after = await compareFrame(ui, ref, "rotate-after", "Survey", 1, q);
    const changed = iou(before.mask, after.mask);
    check(changed < 0.98, `rotating ${bone} 60° about its local X changes the silhouette (IoU with before ${changed.toFixed(4)} < 0.98)`);
    check(after.iou >= IOU_MIN && Object.keys(q).join() === bone,
      `the rotated frame matches Babylon given the API's local rotation of ${Object.keys(q).join()} (IoU ${after.iou.toFixed(4)})`);
    const nums = await ui.evaluate(() => ({ curl: document.getElementById("curl").textContent, world: document.getElementById("m-world").textContent }));
    check(/"op":"rotate"/.test(nums.curl) && /b_Neck_04/.test(nums.curl) && /"space":"local"/.test(nums.curl),
      "the last request is shown as a curl line carrying the rotate op");
    check(nums.world.split("\n").length === 4, "the numbers panel shows the picked bone's world matrix (the API's \"world\")");
    await ui.evaluate(() => window.skPreview.show({ armature: true, flat: false }));
    await fullShot(ui, "rotate-page-full");

    // A world-axis rotate on Fox: the picture follows the API's answer.
    {
      await ui.evaluate((s) => { window.skPreview.setSize(s, s); window.skPreview.show({ armature: false, flat: true }); }, SIZE);
      await ui.evaluate(() => window.skPreview.setOps([]));
      const b0 = await drawnVsApi(ui);
      await ui.evaluate(async () => { window.skPreview.pick("b_Neck_04"); await window.skPreview.rotatePicked(1, 90, "world"); });
      const a0 = await drawnVsApi(ui);
      const qw = await opsOverrides(ui);
      const r = await compareFrame(ui, ref, "world-rotate", "Survey", 1, qw);
      check(iou(before.mask, r.mask) < 0.98 && r.iou >= IOU_MIN,
        `rotating b_Neck_04 90° about world Y changes the picture (IoU with before ${iou(before.mask, r.mask).toFixed(4)}) as Babylon draws the API's answer (IoU ${r.iou.toFixed(4)})`);
      const axes = [0, 1, 2].map((k) => dist(worldRow(a0, "b_Neck_04", k), rotY(worldRow(b0, "b_Neck_04", k), 90)) / Math.hypot(...worldRow(b0, "b_Neck_04", k)));
      check(a0.worst <= DRAWN_TOL * a0.size && Math.max(...axes) < 1e-4,
        `the drawn joints are the API's positions (worst ${a0.worst.toExponential(2)}) and the neck's world axes turned 90° about world Y (worst ${Math.max(...axes).toExponential(2)})`);
    }

    // IK drag: pick the lower leg, drag the handle from the foot up and
    // forward; each step sends the ik op, the foot follows.
    {
      await ui.evaluate(async () => { await window.skPreview.setOps([]); window.skPreview.show({ armature: true, flat: false }); });
      const ikBone = "b_LeftLeg02_016", end = "b_LeftFoot01_017";
      await ui.evaluate((b) => window.skPreview.pick(b), ikBone);
      await ui.click("#ik");
      const start = await ui.evaluate(() => window.skPreview.state.edit.target);
      const b0 = await drawnVsApi(ui);
      const m0 = (await compareFrame(ui, ref, "ik-before", "Survey", 1)).mask;
      await ui.evaluate(() => window.skPreview.show({ armature: true, flat: false }));
      const { target, ops } = await dragHandle(ui, -30, -25);
      // The whole page as a user sees it (docs/preview.png), then back to 400×400.
      await ui.evaluate(() => window.skPreview.setSize(null));
      await fullShot(ui, "ik-drag-full");
      await ui.evaluate((s) => window.skPreview.setSize(s, s), SIZE);
      const a0 = await drawnVsApi(ui);
      const chain = dist(pos(b0, ikBone), pos(b0, "b_LeftLeg01_015")) + dist(pos(b0, end), pos(b0, ikBone));
      const reach = dist(pos(a0, end), target);
      check(ops.length === 1 && ops[0].op === "ik" && ops[0].bone === ikBone && dist(ops[0].target, target) === 0 && dist(target, start) > 0.1 * chain,
        `the drag sent the ik op with the handle's position (moved ${dist(target, start).toFixed(2)} of a ${chain.toFixed(2)} chain)`);
      check(a0.worst <= DRAWN_TOL * a0.size, `after the IK drag the drawn joints are the API's positions (worst ${a0.worst.toExponential(2)})`);
      check(reach <= 1e-4 * chain, `the IK end ${end} reaches the target (off by ${reach.toExponential(2)}, chain ${chain.toFixed(2)})`);
      // Playing, the op rides along with every range request: the clip moves
      // the fox, the IK keeps the foot on the target in every frame drawn.
      const play = await ui.evaluate(async (end) => {
        const p = window.skPreview, st = p.state, sent = p.api.sent;
        st.framesShown = 0;
        let worst = 0;
        const at = () => { const w = st.lastWorlds.get(end).world; return [w[12], w[13], w[14]]; };
        p.setPlaying(true);
        const t0 = performance.now();
        while (performance.now() - t0 < 1500) {
          await new Promise((r) => requestAnimationFrame(r));
          const f = at();
          worst = Math.max(worst, Math.hypot(f[0] - st.edit.target[0], f[1] - st.edit.target[1], f[2] - st.edit.target[2]));
        }
        p.setPlaying(false);
        return { frames: st.framesShown, requests: p.api.sent - sent, worst };
      }, end);
      check(play.frames >= 10 && play.worst <= 1e-4 * chain,
        `playing Survey with the ik op: ${play.frames} frames from ${play.requests} requests, the foot within ${play.worst.toExponential(2)} of the target in every one`);
      await ui.evaluate(async () => { window.skPreview.setClip("Survey"); await window.skPreview.seek(1); });
      await ui.evaluate(() => window.skPreview.show({ armature: false, flat: true }));
      const qi = await opsOverrides(ui);
      const r = await compareFrame(ui, ref, "ik-after", "Survey", 1, qi);
      check(iou(m0, r.mask) < 0.995 && r.iou >= IOU_MIN,
        `the IK drag changes the picture (IoU with before ${iou(m0, r.mask).toFixed(4)}) as Babylon draws the API's answer for ${Object.keys(qi).join(", ")} (IoU ${r.iou.toFixed(4)})`);
    }

    // Live IK over the stream (GET …/stream, WebSocket): with the handle
    // held, every step goes out as a text message and comes back as a
    // binary frame; no POST /pose until the handle is released.
    {
      await ui.evaluate(async () => { const p = window.skPreview; p.stopEdit(); await p.setOps([]); p.setClip("Survey"); await p.seek(1); p.show({ armature: true, flat: false }); });
      const live = await ui.evaluate(() => window.skPreview.streamReady());
      check(live, "the page opened the skeleton's WebSocket stream");
      const ikBone = "b_LeftLeg02_016", end = "b_LeftFoot01_017";
      await ui.evaluate((b) => window.skPreview.pick(b), ikBone);
      await ui.click("#ik");
      const cdp = await ui.createCDPSession();
      await cdp.send("Network.enable");
      const ws = { sent: 0, binary: 0 }, http = [];
      cdp.on("Network.webSocketFrameSent", () => ws.sent++);
      cdp.on("Network.webSocketFrameReceived", (f) => { if (f.response.opcode === 2) ws.binary++; });
      const onReq = (r) => { if (/\/pose$/.test(new URL(r.url()).pathname)) http.push(r.method()); };
      ui.on("request", onReq);
      await ui.bringToFront();
      const at = await ui.evaluate(() => window.skPreview.screenOf("handle"));
      const before = await ui.evaluate(() => window.skPreview.state.streamed);
      const steps = 8;
      await ui.mouse.move(at.x, at.y);
      await ui.mouse.down();
      for (let i = 1; i <= steps; i++) {
        await ui.mouse.move(at.x - (35 * i) / steps, at.y - (20 * i) / steps);
        await new Promise((r) => setTimeout(r, 40));
      }
      await ui.evaluate(() => window.skPreview.idle());
      await new Promise((r) => setTimeout(r, 200)); // the CDP events of the last frames
      const held = { sent: ws.sent, binary: ws.binary, http: http.length };
      const st = await ui.evaluate(() => ({ streamed: window.skPreview.state.streamed, target: window.skPreview.state.edit.target, text: document.body.innerText,
        stream: document.getElementById("stream").textContent }));
      await fullShot(ui, "ik-stream-live");
      await ui.mouse.up();
      await ui.mouse.move(1, 1);
      await ui.evaluate(() => window.skPreview.idle());
      ui.off("request", onReq);
      await cdp.detach();
      check(held.sent >= 2 && held.binary >= 2 && held.binary === held.sent && st.streamed - before === held.binary,
        `while the handle is held the ik op goes over the WebSocket: ${held.sent} messages sent, ${held.binary} binary frames back (the page counted ${st.streamed - before})`);
      check(held.http === 0, `no HTTP /pose request during the drag (${held.http})`);
      check(!/\b(NaN|undefined)\b/.test(st.text) && /stream: live/.test(st.stream), `no NaN or undefined in the page during the live drag ("${st.stream}")`);
      const a0 = await drawnVsApi(ui);
      const b0len = dist(pos(a0, ikBone), pos(a0, "b_LeftLeg01_015")) + dist(pos(a0, end), pos(a0, ikBone));
      const reach = dist(pos(a0, end), st.target);
      check(a0.worst <= DRAWN_TOL * a0.size && reach <= 1e-4 * b0len,
        `after the live drag the drawn joints are the API's positions (worst ${a0.worst.toExponential(2)}) and the foot is on the handle (off by ${reach.toExponential(2)})`);
      // The HTTP fallback: with the stream closed the same drag posts /pose.
      await ui.evaluate(() => { const p = window.skPreview; p.state.stream.close(); });
      await ui.waitForFunction(() => !window.skPreview.state.stream, { timeout: 10000 });
      const http2 = [];
      const onReq2 = (r) => { if (/\/pose$/.test(new URL(r.url()).pathname)) http2.push(r.method()); };
      ui.on("request", onReq2);
      await dragHandle(ui, 15, 10, 4);
      ui.off("request", onReq2);
      const fb = await ui.evaluate(() => ({ stream: document.getElementById("stream").textContent, text: document.body.innerText }));
      check(http2.length >= 1 && /HTTP/.test(fb.stream) && !/\b(NaN|undefined)\b/.test(fb.text),
        `with the stream closed the drag falls back to POST /pose (${http2.length} requests, "${fb.stream}")`);
      await ui.evaluate(async () => { const p = window.skPreview; p.stopEdit(); await p.setOps([]); await p.openStream(p.state.id); });
    }

    // Playback and scrubbing over the stream: play is one text message
    // ({"play"}) and the daemon pushes every frame as a binary message of
    // /pose's bytes, drawn as it comes; no HTTP range POST /pose goes out;
    // pause stops the push; the numbers panel stays readable and current
    // while the clip loops. With the stream closed, playback posts /pose ranges.
    {
      await ui.bringToFront();
      const live = await ui.evaluate(() => window.skPreview.streamReady());
      check(live, "the stream is open again for playback");
      await ui.evaluate(async () => { const p = window.skPreview; p.setSize(null); p.show({ armature: true, flat: false }); p.pick("b_Head_05"); p.setClip("Survey"); await p.seek(2.5); });
      const cdp = await ui.createCDPSession();
      await cdp.send("Network.enable");
      const ws = { sent: 0, binary: 0, texts: [] }, ranges = [], binaryHttp = [];
      cdp.on("Network.webSocketFrameSent", (f) => { ws.sent++; ws.texts.push(f.response.payloadData); });
      cdp.on("Network.webSocketFrameReceived", (f) => { if (f.response.opcode === 2) ws.binary++; });
      const onReq = (r) => {
        if (!/\/pose$/.test(new URL(r.url()).pathname)) return;
        if (/"fps"/.test(r.postData() || "")) ranges.push(r.postData());
        if (/mat3x4/.test(r.headers().accept || "")) binaryHttp.push(r.postData());
      };
      ui.on("request", onReq);
      const sent0 = ws.sent;
      const play = await ui.evaluate(async () => {
        const p = window.skPreview, st = p.state, streamed = st.streamed, sent = p.api.sent;
        st.framesShown = 0;
        let wrapped = false, last = st.time;
        const texts = [], times = [];
        p.setPlaying(true);
        const t0 = performance.now();
        while (performance.now() - t0 < 4500) {
          await new Promise((r) => setTimeout(r, 250));
          if (st.time < last) wrapped = true;
          last = st.time;
          texts.push(document.getElementById("timing").textContent);
          times.push(document.getElementById("m-time").textContent);
        }
        const page = document.body.innerText;
        return { frames: st.framesShown, streamed: st.streamed - streamed, http: p.api.sent - sent, wrapped, texts, times, page, time: st.time,
          stream: document.getElementById("stream").textContent };
      });
      await fullShot(ui, "play-stream-live");
      const playMsgs = ws.texts.slice(sent0).map((t) => JSON.parse(t)).filter((m) => m.play);
      await ui.evaluate(() => window.skPreview.setPlaying(false));
      await new Promise((r) => setTimeout(r, 300));
      const held = { sent: ws.sent, binary: ws.binary, ranges: ranges.length };
      const bin0 = ws.binary;
      const paused = await ui.evaluate(async () => {
        const st = window.skPreview.state, n = st.streamed, t = st.time;
        await new Promise((r) => setTimeout(r, 500));
        return { more: st.streamed - n, moved: st.time !== t, text: document.body.innerText };
      });
      await fullShot(ui, "play-stream-paused");
      const stopMsg = ws.texts.slice(sent0).some((t) => JSON.parse(t).play === null);
      check(play.frames >= 60 && play.streamed >= 60 && held.binary >= play.streamed && held.ranges === 0 && playMsgs.length >= 1 && playMsgs.length <= 3 &&
            playMsgs.every((m) => m.play.animation === "Survey" && m.play.fps === 30 && m.play.speed === 1 && m.play.loop === true),
        `playing Survey over the stream: ${play.frames} frames drawn from ${play.streamed} frames the daemon pushed (${held.binary} binary WebSocket frames) after ${playMsgs.length} play message(s) (${JSON.stringify(playMsgs[0])}), ${held.ranges} HTTP range requests`);
      check(stopMsg && ws.binary === bin0 && paused.more === 0 && !paused.moved && !/\b(NaN|undefined)\b/.test(paused.text),
        `pause sends {"play": null} and the daemon stops pushing (${ws.binary - bin0} binary frames, ${paused.more} drawn in 0.5 s; playhead moved: ${paused.moved})`);
      check(play.wrapped, `the clip looped over the stream (playhead at ${play.time.toFixed(2)} s)`);
      const bad = play.texts.filter((t) => /\b(NaN|undefined)\b/.test(t));
      check(bad.length === 0 && !/\b(NaN|undefined)\b/.test(play.page) && new Set(play.texts).size >= 3 && /over the stream/.test(play.texts.at(-1)) && /stream: live/.test(play.stream),
        `while looping over the stream the numbers panel has no NaN or undefined and changes (${new Set(play.texts).size} distinct texts of ${play.texts.length}; "${play.texts.at(-1).split("\n").join(" | ")}")`);
      const times = [...new Set(play.times)];
      check(times.length >= 3 && times.every((t) => /^\(at [0-9.]+ s\)$/.test(t)) && play.http <= 6,
        `the picked bone's numbers follow the playhead (${times.join(", ")}; ${play.http} JSON requests in 4.5 s)`);
      // Scrubbing: each input is one pose over the stream, none over HTTP.
      const s0 = { sent: ws.sent, binary: binaryHttp.length };
      await ui.evaluate(async () => {
        const el = document.getElementById("scrub");
        for (const t of [0.4, 0.8, 1.2, 1.6]) { el.value = String(t); el.dispatchEvent(new Event("input")); await new Promise((r) => setTimeout(r, 60)); }
        await new Promise((r) => setTimeout(r, 300));
      });
      const scrubbed = await ui.evaluate(() => window.skPreview.state.drawnTime);
      check(ws.sent - s0.sent >= 4 && binaryHttp.length === s0.binary && Math.abs(scrubbed - 1.6) < 1e-9,
        `scrubbing sends single poses over the stream (${ws.sent - s0.sent} messages, ${binaryHttp.length - s0.binary} binary HTTP /pose, drawn at ${scrubbed} s)`);
      const a0 = await drawnVsApi(ui);
      check(a0.worst <= DRAWN_TOL * a0.size, `after scrubbing over the stream the drawn joints are the API's positions (worst ${a0.worst.toExponential(2)})`);
      // The fallback: the stream closed, playback fetches HTTP ranges again.
      await ui.evaluate(() => window.skPreview.state.stream.close());
      await ui.waitForFunction(() => !window.skPreview.state.stream, { timeout: 10000 });
      const f0 = { binary: ws.binary, ranges: ranges.length };
      const fb = await ui.evaluate(async () => {
        const p = window.skPreview, st = p.state;
        st.gen++; // fresh ranges (those cached came over the stream)
        st.framesShown = 0;
        p.setPlaying(true);
        await new Promise((r) => setTimeout(r, 2000));
        p.setPlaying(false);
        return { frames: st.framesShown, text: document.body.innerText, stream: document.getElementById("stream").textContent };
      });
      ui.off("request", onReq);
      await cdp.detach();
      check(fb.frames >= 10 && ranges.length - f0.ranges >= 1 && ws.binary === f0.binary && /HTTP/.test(fb.stream) && !/\b(NaN|undefined)\b/.test(fb.text),
        `with the stream closed playback falls back to HTTP ranges (${ranges.length - f0.ranges} POST /pose ranges, ${fb.frames} frames, "${fb.stream}")`);
      await ui.evaluate(async () => { const p = window.skPreview; await p.openStream(p.state.id); p.setSize(400, 400); });
    }

    // A browser's WebSocket cannot set Authorization: against a daemon with
    // --tokens, the JS client (/ui/skinnerd.js, in the page) sends the token
    // as the base64url.bearer.skinner. subprotocol beside skinner.v1.
    {
      const tokPath = join(OUT, "tokens");
      writeFileSync(tokPath, "browser~~~/+=-0123456789 read\nwriter-token-0123456789 write\n");
      const td = await startDaemon("--tokens", tokPath);
      try {
        const up = await fetch(`${td.base}/v1/skeletons/fox`, { method: "PUT", body: readFileSync(join(DATA, "Fox.glb")),
          headers: { "Content-Type": "model/gltf-binary", Authorization: "Bearer writer-token-0123456789" } });
        const r = await ui.evaluate(async (base) => {
          const { Client } = await import("/ui/skinnerd.js");
          const out = {};
          const s = await new Client(base, { token: "browser~~~/+=-0123456789" }).stream("fox", { format: "mat3x4" });
          out.protocol = s.ws.protocol;
          const f = await s.send({ animation: "Walk", time: 0.5 });
          out.matrices = f.frames.matrices;
          out.finite = [...f.frames.data].every(Number.isFinite);
          s.close();
          out.refused = await new Client(base, { token: "unknown-token-0123456789" }).stream("fox").then(() => "opened", (e) => e.constructor.name);
          out.none = await new Client(base).stream("fox").then(() => "opened", (e) => e.constructor.name);
          return out;
        }, td.base);
        check(up.ok && r.protocol === "skinner.v1" && r.matrices === 25 && r.finite && r.refused === "ProtocolError" && r.none === "ProtocolError",
          `in the browser the token rides the WebSocket subprotocol: the 101 selects ${r.protocol}, a pose of ${r.matrices} matrices comes back; an unknown token or none: ${r.refused}, ${r.none}`);
      } finally {
        td.proc.kill("SIGTERM");
      }
    }

    // Look-at: the head's +Z (BoneLookController's forward) turns to the handle.
    {
      await ui.evaluate(async () => { window.skPreview.stopEdit(); await window.skPreview.setOps([]); window.skPreview.show({ armature: true, flat: false }); });
      const head = "b_Head_05";
      await ui.evaluate((b) => window.skPreview.pick(b), head);
      await ui.click("#look");
      const b0 = await drawnVsApi(ui);
      const { target, ops } = await dragHandle(ui, 60, -20);
      await fullShot(ui, "look-at-full");
      const a0 = await drawnVsApi(ui);
      const toT = (r) => target.map((v, i) => v - pos(r, head)[i]);
      const angBefore = angleDeg(worldRow(b0, head, 2), toT(b0)), angAfter = angleDeg(worldRow(a0, head, 2), toT(a0));
      check(ops.length === 1 && ops[0].op === "lookAt" && a0.worst <= DRAWN_TOL * a0.size,
        `the look-at drag sent the lookAt op and the drawn joints are the API's positions (worst ${a0.worst.toExponential(2)})`);
      check(angBefore > 10 && angAfter < 0.1, `look-at turns the head: its +Z was ${angBefore.toFixed(1)}° off the target, now ${angAfter.toFixed(3)}°`);
    }

    // Pole target: a second (cyan) handle; dragging it sends the ik op with
    // "poleTarget", and the chain bends in the plane through its top, the
    // target and the pole (BoneIKController's pole), at the API's positions.
    {
      const ikBone = "b_LeftLeg02_016", top = "b_LeftLeg01_015", end = "b_LeftFoot01_017";
      await ui.evaluate(async () => { const p = window.skPreview; p.stopEdit(); await p.setOps([]); p.setClip("Survey"); await p.seek(1); p.show({ armature: false, flat: true }); });
      const m0 = (await compareFrame(ui, ref, "pole-before", "Survey", 1)).mask;
      await ui.evaluate(() => window.skPreview.show({ armature: true, flat: false }));
      const b0 = await drawnVsApi(ui);
      await ui.evaluate((b) => window.skPreview.pick(b), ikBone);
      await ui.click("#pole-target");
      await ui.click("#ik");
      const shown = await ui.evaluate(() => !!window.skPreview.screenOf("pole"));
      const { target, pole, ops } = await dragHandle(ui, 45, 10, 6, "pole");
      await ui.evaluate(() => window.skPreview.setSize(null));
      await fullShot(ui, "ik-pole-full");
      await ui.evaluate((s) => window.skPreview.setSize(s, s), SIZE);
      const a0 = await drawnVsApi(ui);
      const chain = dist(pos(b0, ikBone), pos(b0, top)) + dist(pos(b0, end), pos(b0, ikBone));
      check(shown && ops.length === 1 && ops[0].op === "ik" && ops[0].poleTarget && dist(ops[0].poleTarget, pole) === 0 && dist(ops[0].target, target) === 0,
        `the pole handle is shown and dragging it sends the ik op with "poleTarget" (${JSON.stringify(ops[0]?.poleTarget?.map((v) => +v.toFixed(2)))})`);
      check(a0.worst <= DRAWN_TOL * a0.size, `with a pole target the drawn joints are the API's positions (worst ${a0.worst.toExponential(2)})`);
      // The knee's distance from the plane (top, target, pole), and how far it moved.
      const [h, t, q, k] = [pos(a0, top), target, pole, pos(a0, ikBone)];
      const u = t.map((v, i) => v - h[i]), w = q.map((v, i) => v - h[i]);
      const n = [u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]], nl = Math.hypot(...n);
      const off = Math.abs(n.reduce((s, v, i) => s + v * (k[i] - h[i]), 0)) / nl;
      const moved = dist(k, pos(b0, ikBone));
      check(off <= 1e-3 * chain && moved > 0.05 * chain && dist(pos(a0, end), target) <= 1e-4 * chain,
        `the knee bends towards the pole: ${off.toExponential(2)} off the plane of hip, target and pole, moved ${moved.toFixed(2)} (chain ${chain.toFixed(2)}); the foot stays on the target`);
      await ui.evaluate(() => window.skPreview.show({ armature: false, flat: true }));
      const qp = await opsOverrides(ui);
      const r = await compareFrame(ui, ref, "pole-after", "Survey", 1, qp);
      check(iou(m0, r.mask) < 0.999 && r.iou >= IOU_MIN,
        `the pole target changes the picture (IoU with before ${iou(m0, r.mask).toFixed(4)}) as Babylon draws the API's answer (IoU ${r.iou.toFixed(4)})`);
      await ui.click("#pole-target");
    }

    // Look-at options: Fox's muzzle is its head's +X, so adjustYaw -90° aims
    // it (upAxis -Y keeps the head's top up in the daemon's left-handed world).
    {
      const head = "b_Head_05";
      await ui.evaluate(async () => { const p = window.skPreview; p.stopEdit(); await p.setOps([]); p.show({ armature: false, flat: true }); });
      const m0 = (await compareFrame(ui, ref, "muzzle-before", "Survey", 1)).mask;
      await ui.evaluate(() => window.skPreview.show({ armature: true, flat: false }));
      await ui.evaluate((b) => window.skPreview.pick(b), head);
      await ui.select("#up-axis", "0,-1,0");
      await ui.$eval("#adjust-yaw", (el) => (el.value = "-90"));
      await ui.click("#look");
      const { target, ops } = await dragHandle(ui, -70, -40);
      await ui.evaluate(() => window.skPreview.setSize(null));
      await fullShot(ui, "look-at-muzzle-full");
      await ui.evaluate((s) => window.skPreview.setSize(s, s), SIZE);
      const a0 = await drawnVsApi(ui);
      const toT = target.map((v, i) => v - pos(a0, head)[i]);
      const muzzle = angleDeg(worldRow(a0, head, 0), toT), upY = worldRow(a0, head, 1)[1] / Math.hypot(...worldRow(a0, head, 1));
      check(ops.length === 1 && ops[0].op === "lookAt" && JSON.stringify(ops[0].upAxis) === "[0,-1,0]" && Math.abs(ops[0].adjustYaw + Math.PI / 2) < 1e-12 && !("adjustPitch" in ops[0]),
        `the look-at options ride in the op (${JSON.stringify({ upAxis: ops[0]?.upAxis, adjustYaw: ops[0]?.adjustYaw })})`);
      check(a0.worst <= DRAWN_TOL * a0.size && muzzle < 0.1 && upY > 0,
        `Fox aims its muzzle: the head's +X is ${muzzle.toFixed(3)}° off the target, its +Y up (${upY.toFixed(2)}), the drawn joints are the API's (worst ${a0.worst.toExponential(2)})`);
      await ui.evaluate(() => window.skPreview.show({ armature: false, flat: true }));
      const ql = await opsOverrides(ui);
      const r = await compareFrame(ui, ref, "muzzle-after", "Survey", 1, ql);
      check(iou(m0, r.mask) < 0.995 && r.iou >= IOU_MIN,
        `the muzzle look-at changes the picture (IoU with before ${iou(m0, r.mask).toFixed(4)}) as Babylon draws the API's answer (IoU ${r.iou.toFixed(4)})`);
      await ui.select("#up-axis", "");
      await ui.$eval("#adjust-yaw", (el) => (el.value = "0"));
      await ui.evaluate(() => { window.skPreview.stopEdit(); window.skPreview.show({ armature: true, flat: false }); });
    }

    // A bad op: the daemon's 422 is shown with its detail and pointer; the
    // page keeps the ops it had.
    {
      const r = await ui.evaluate(async () => {
        const p = window.skPreview, n = p.state.ops.length;
        document.getElementById("error").hidden = true;
        await p.setOps([...p.state.ops, { op: "rotate", bone: "b_Neck_04", axis: [0, 0, 0], amount: 1 }]).catch(p.showError);
        return { n, after: p.state.ops.length, shown: !document.getElementById("error").hidden, text: document.getElementById("error-text").textContent };
      });
      await fullShot(ui, "error-bad-op");
      check(r.shown && /^pose: 422 .*\(at \/ops\/\d+\/axis\)$/.test(r.text) && r.after === r.n,
        `a zero-length rotate axis shows the daemon's 422 detail and pointer ("${r.text}"), the ops stay as they were`);
      await ui.evaluate(async () => { document.getElementById("error").hidden = true; await window.skPreview.resetToRest(); });
      check(await ui.evaluate(() => window.skPreview.state.ops.length === 0 && !window.skPreview.state.edit && document.getElementById("ops").textContent === "[]"),
        "reset to rest clears the ops");
    }

    // Two pages on Fox: each upload replacing it sends If-Match with the ETag
    // its page read; the second page's upload, on a version the first one
    // replaced meanwhile, gets the daemon's 412, shown as "changed by someone
    // else: reload", and lands nothing; after reload it goes through.
    {
      const puts = [];
      const onPut = (who) => (r) => { if (r.method() === "PUT") puts.push({ who, url: r.url(), ifMatch: r.headers()["if-match"], ifNoneMatch: r.headers()["if-none-match"] }); };
      ui.on("request", onPut("A"));
      await ui.bringToFront();
      await ui.evaluate(async () => { const p = window.skPreview; await p.resetToRest(); await p.open("fox"); p.setPlaying(false); document.getElementById("error").hidden = true; });
      const ui2 = await browser.newPage();
      await ui2.setViewport({ width: 1300, height: 800 });
      ui2.on("pageerror", (e) => pageErrors.push(`page B: ${e.message}`));
      ui2.on("request", onPut("B"));
      await ui2.goto(`${daemon.base}/ui/?id=fox`);
      await ui2.evaluate(() => window.skPreview.ready);
      // Through the page's own upload path: the file is the sample the daemon serves.
      const uploadFox = (page, id = "fox") => page.evaluate(async (id) => {
        const p = window.skPreview, banner = document.getElementById("error");
        document.getElementById("upload-id").value = id;
        banner.hidden = true;
        const buf = await (await fetch("samples/fox.glb")).arrayBuffer();
        let err = null;
        try { await p.upload(new File([buf], "fox.glb")); } catch (e) { err = e; p.showError(e); }
        return { status: err ? err.status : 200, text: banner.hidden ? "" : document.getElementById("error-text").textContent,
          reload: !document.getElementById("error-reload").hidden, etag: p.api.etags.get(id) };
      }, id);
      const etagA = await ui.evaluate(() => window.skPreview.api.etags.get("fox"));
      const b1 = await uploadFox(ui2);
      const putB = puts.filter((x) => x.who === "B").pop();
      check(b1.status === 200 && putB && putB.ifMatch === etagA && b1.etag !== etagA,
        `page B replaces fox with If-Match ${putB?.ifMatch} (the ETag both pages read): 200, now ${b1.etag}`);
      await ui.bringToFront();
      const a1 = await uploadFox(ui);
      const putA = puts.filter((x) => x.who === "A").pop();
      await fullShot(ui, "etag-412");
      const stored = (await fetch(`${daemon.base}/v1/skeletons/fox`, { method: "HEAD" })).headers.get("etag");
      check(a1.status === 412 && putA.ifMatch === etagA && /changed by someone else.*reload/.test(a1.text) && a1.reload && stored === b1.etag,
        `page A's upload on its stale version (If-Match ${putA?.ifMatch}) shows "${a1.text}" with a reload button; the stored version stays B's (${stored})`);
      await ui.click("#error-reload");
      await ui.waitForFunction((t) => window.skPreview.api.etags.get("fox") === t && document.getElementById("error").hidden, { timeout: 20000, polling: 100 }, b1.etag);
      const a2 = await uploadFox(ui);
      const putA2 = puts.filter((x) => x.who === "A").pop();
      check(a2.status === 200 && putA2.ifMatch === b1.etag && a2.etag !== b1.etag,
        `after reload page A's upload goes through with If-Match ${putA2.ifMatch}: now ${a2.etag}`);
      const a3 = await uploadFox(ui, "fox-copy");
      const putA3 = puts.filter((x) => x.who === "A").pop();
      check(a3.status === 200 && putA3.ifNoneMatch === "*" && !putA3.ifMatch, `an upload under a new id is create-only (If-None-Match: *) and goes through`);
      await ui2.close();
      await ui.evaluate(async () => { await window.skPreview.open("fox"); window.skPreview.setPlaying(false); });
    }

    // Errors: a bad GLB and a 4xx show the problem+json detail.
    writeFileSync(join(OUT, "bad.glb"), Buffer.concat([Buffer.from("glTF"), Buffer.alloc(60, 7)]));
    await ui.$eval("#upload-id", (el) => (el.value = "bad"));
    await (await ui.$("#file")).uploadFile(join(OUT, "bad.glb"));
    await ui.waitForFunction(() => !document.getElementById("error").hidden, { timeout: 20000 });
    const badText = await ui.$eval("#error-text", (e) => e.textContent);
    check(/^upload: 4\d\d /.test(badText), `a bad GLB shows the daemon's problem detail: "${badText}"`);
    await fullShot(ui, "error-bad-glb");
    await ui.evaluate(() => (document.getElementById("error").hidden = true));
    await ui.evaluate(() => window.skPreview.open("nope").catch(window.skPreview.showError));
    await ui.waitForFunction(() => !document.getElementById("error").hidden, { timeout: 20000 });
    const nfText = await ui.$eval("#error-text", (e) => e.textContent);
    check(/404 no skeleton with id "nope"/.test(nfText), `a 404 shows its detail: "${nfText}"`);
    await fullShot(ui, "error-404");
    const ui2 = await browser.newPage();
    await ui2.goto(`${daemon.base}/ui/?id=missing`);
    await ui2.evaluate(() => window.skPreview.ready);
    await fullShot(ui2, "error-missing-id");
    const qText = await ui2.$eval("#error-text", (e) => e.textContent);
    check(/no stored skeleton "missing"/.test(qText) && await ui2.$eval("#error", (e) => !e.hidden), `?id= of a missing skeleton says so: "${qText}"`);
    check(pageErrors.length === 0, `no uncaught page errors (${pageErrors.join("; ")})`);
    check(foreign.length === 0, `the page asked nothing of anyone but the daemon (${foreign.join(", ")})`);
  } finally {
    await browser.close();
    refsrv.srv.close();
    daemon.proc.kill("SIGTERM");
  }
}

// A hang must fail the test, not the CI run: the checks take ~15 s here.
setTimeout(() => {
  console.log(`FAIL: the browser test was still running after 300 s`);
  console.log(`ui_browser: ${passed} passed, ${failed + 1} failed`);
  process.exit(1);
}, 300000).unref();

try {
  await main();
} catch (e) {
  failed++;
  console.log(`FAIL: ${e.stack || e}`);
}
console.log(`ui_browser: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
