// The preview page in a real browser: headless Debian chromium (software
// WebGL through SwiftShader) driven by puppeteer-core against a skinnerd
// started here on 127.0.0.1 and a free port. Uploads Fox and CesiumMan
// through the page's file picker, plays every clip to 5 fixed times and
// compares the page's canvas with Babylon.js's own render of the same frame
// (same browser, same camera): silhouette IoU >= 0.97. Then a local-axis
// rotate must change the picture as the API's answer says (Babylon given
// the same quaternion agrees), and errors must be shown.
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
const DATA = resolve(process.env.SK_TEST_DATA || "tests", "data");
const OUT = resolve(process.env.UI_TEST_OUT || "tests/ui_browser.out");
const SKINNERD = process.env.SKINNERD || "./skinnerd";
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const SIZE = 400;
const IOU_MIN = 0.97;
mkdirSync(OUT, { recursive: true });

let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? "PASS" : "FAIL"}: ${what}`);
}

// ---- the daemon and the reference server ------------------------------------------

function startDaemon() {
  return new Promise((res, rej) => {
    const p = spawn(SKINNERD, ["--listen", "127.0.0.1:0"], { stdio: ["ignore", "pipe", "inherit"] });
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

    const ref = await browser.newPage();
    await ref.goto(`${refsrv.base}/ref/`);
    await ref.waitForFunction(() => window.refReady === true);

    const models = [["Fox.glb", "fox"], ["CesiumMan.glb", "cesiumman"]];
    for (const [file, id] of models) {
      await uploadThroughPage(ui, file, id);
      check(true, `${file} uploaded through the page's file picker as "${id}" and drawn`);
      await ui.evaluate(() => { window.skPreview.setSize(null); window.skPreview.show({ armature: true, flat: false }); });
      await new Promise((r) => setTimeout(r, 1500)); // let it play a little
      await fullShot(ui, `${id}-page-full`);
      await ui.evaluate((s) => { window.skPreview.setSize(s, s); window.skPreview.show({ armature: false, flat: true }); }, SIZE);
      const info = await ref.evaluate((u) => window.ref.load(u), `${refsrv.base}/data/${file}`);
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

    // A rotate: the override the page sends changes the picture, and Babylon
    // given the same local rotation draws the same silhouette.
    await uploadThroughPage(ui, "Fox.glb", "fox"); // back to Fox (the stored copy is replaced)
    await ui.evaluate((s) => { window.skPreview.setSize(s, s); window.skPreview.show({ armature: false, flat: true }); }, SIZE);
    await ref.evaluate((u) => window.ref.load(u), `${refsrv.base}/data/Fox.glb`);
    const before = await compareFrame(ui, ref, "rotate-before", "Survey", 1);
    const bone = "b_Neck_04";
    const q = await ui.evaluate(async (bone) => {
      window.skPreview.pick(bone);
      await window.skPreview.rotatePicked(0, 60);
      return window.skPreview.state.overrides[bone].rotationQuaternion;
    }, bone);
    const after = await compareFrame(ui, ref, "rotate-after", "Survey", 1, { [bone]: q });
    const changed = iou(before.mask, after.mask);
    check(changed < 0.98, `rotating ${bone} 60° about its local X changes the silhouette (IoU with before ${changed.toFixed(4)} < 0.98)`);
    check(after.iou >= IOU_MIN, `the rotated frame matches Babylon given the same quaternion (IoU ${after.iou.toFixed(4)})`);
    const nums = await ui.evaluate(async (bone) => {
      const r = await window.skPreview.refreshNumbers();
      const b = window.skPreview.state.byName.get(bone);
      return { text: document.getElementById("m-local").textContent, local: r.local.slice(16 * b.index, 16 * b.index + 16), curl: document.getElementById("curl").textContent };
    }, bone);
    check(/rotationQuaternion/.test(nums.curl) && /b_Neck_04/.test(nums.curl), "the last request is shown as a curl line carrying the override");
    await ui.evaluate(() => window.skPreview.show({ armature: true, flat: false }));
    await fullShot(ui, "rotate-page-full");

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
