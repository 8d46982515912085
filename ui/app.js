// The preview page: picks a stored skeleton, draws its skinned mesh from the
// server's final matrices, plays its clips (pushed by the skeleton's
// WebSocket stream when open, else from frame ranges fetched ahead of the
// playhead: play.js), and edits the picked bone through the API's ops (rotate
// about a local or world axis, IK drag, look-at), which ride along with
// every later pose request so what the page shows is what any client gets.
// An IK or look-at drag goes over the skeleton's WebSocket stream when the
// upgrade works (skinnerd.js, the JS client: no HTTP round trip per step),
// over POST /pose otherwise.
import { Api, ApiError } from "./api.js";
import { Client, SkinnerdError } from "./skinnerd.js";
import { loadSkinnedMesh } from "./glb.js";
import { fmt, handedness, identity, invert, lookAt, meshWorld, mul, perspective, rayPlane, transformPoint } from "./mat.js";
import { Renderer } from "./render.js";
import { findGlb, glbPut, memoryGlb } from "./store.js";
import { ServerMesh } from "./servermesh.js";
import { perFrame, readMetrics, timingText } from "./timing.js";
import { AHEAD, CHUNK, FPS, createPlayback } from "./play.js";

const $ = (id) => document.getElementById(id);

const MAX_OPS = 64;       // edits kept; older rotates are merged before this

const api = new Api("");
const client = new Client(location.origin);
const st = {
  id: null, info: null, bones: [], byName: new Map(), mesh: null, meshNote: "",
  world: identity(), display: identity(), displayInv: identity(), sendMesh: undefined, etags: new Map(),
  clip: null, time: 0, playing: false, speed: 1, loop: true,
  ops: [], edit: null, picked: null, gen: 0, chunks: new Map(), lastMats: null, lastWorlds: null,
  cam: { yaw: 0.6, pitch: 0.25, dist: 3, target: [0, 0, 0], fovY: 0.8, near: 0.01, far: 100 },
  fitted: false, timing: null, metrics: { last: null, window: null },
  stream: null, streamFor: null, streamOpening: null, streamed: 0, streamedPoses: 0, dragging: false,
  push: null, pushed: 0, pushRefused: null,
};
// The clock, the stream and playback (play.js): it calls back into the page.
const playback = createPlayback({ st, api, client, $, poseBody, applyMats, seek, showError, showTiming, updateTimeUi, refreshNumbers });
const { openStream, showStream, poseMats, tick, setPlaying } = playback;

// ---- errors: always visible, never a blank page -----------------------------

function showError(e) {
  const text = e instanceof ApiError ? e.message : `${e.message || e}`;
  $("error-text").textContent = text;
  $("error").hidden = false;
  // A 412 on an upload: the skeleton changed under us; offer to read it again.
  const reload = e && e.reload;
  $("error-reload").hidden = !reload;
  $("error-reload").onclick = reload ? () => { $("error").hidden = true; refreshList(reload).then(() => open(reload)).catch(showError); } : null;
  st.lastError = text;
  console.error(e);
}
window.addEventListener("error", (ev) => showError(ev.error || ev.message));
window.addEventListener("unhandledrejection", (ev) => showError(ev.reason));
$("error-close").onclick = () => ($("error").hidden = true);
function status(text) { $("status").textContent = text; }

// ---- skeletons ------------------------------------------------------------------

async function refreshList(select) {
  const list = await api.list();
  const sel = $("skeletons");
  sel.innerHTML = "";
  for (const s of list) sel.add(new Option(`${s.id} (${s.bones} bones)`, s.id));
  if (select && list.some((s) => s.id === select)) sel.value = select;
  return list;
}

async function open(id) {
  status(`loading ${id}…`);
  const info = await api.skeleton(id); // first: a 404 leaves the current skeleton as it was
  st.id = id;
  st.gen++;
  st.chunks.clear();
  st.ops = [];
  st.edit = null;
  st.picked = null;
  $("hover").hidden = true;
  showOps();
  $("picked-name").textContent = "(none)";
  for (const el of ["m-local", "m-abs", "m-world", "m-pos"]) $(el).textContent = "";
  st.fitted = false;
  st.lastMats = null;
  // Stored by another client since the list was read: list again.
  if (![...$("skeletons").options].some((o) => o.value === id)) await refreshList(id).catch(() => {});
  $("skeletons").value = id;
  st.info = info;
  st.bones = info.bones.map((b) => ({ ...b, children: [] }));
  st.byName = new Map(st.bones.map((b) => [b.name, b]));
  for (const b of st.bones) {
    const p = b.parent !== null ? st.byName.get(b.parent) : null;
    b.parentBone = p || null;
    if (p) p.children.push(b);
    // Parent-first order: the parent's absolute bind is already known.
    b.absBind = p ? mul(b.bind, p.absBind) : b.bind.slice();
  }
  buildTree();
  const clipSel = $("clip");
  clipSel.innerHTML = "";
  clipSel.add(new Option("(no clip: stored pose)", ""));
  for (const a of info.animations) clipSel.add(new Option(`${a.name} (${a.duration.toFixed(2)} s)`, String(a.index)));
  st.clip = info.animations[0] || null;
  clipSel.value = st.clip ? String(st.clip.index) : "";
  st.time = 0;
  st.mesh = null;
  try {
    const glb = await findGlb(id);
    st.mesh = glb ? loadSkinnedMesh(glb) : null;
    st.meshNote = glb ? "" : "no mesh: upload the GLB from this page to see it (armature only)";
    const slots = Math.max(0, ...st.bones.map((b) => b.index + 1));
    if (st.mesh && st.mesh.jointCount !== slots) {
      // A GLB kept for this id that is not what the daemon stores now.
      st.meshNote = `the GLB kept for "${id}" has ${st.mesh.jointCount} joints, the stored skeleton ${slots}: armature only`;
      st.mesh = null;
    }
  } catch (e) {
    st.meshNote = `mesh not drawn: ${e.message}`;
    showError(new Error(`the GLB of "${id}": ${e.message}`));
  }
  chooseWorld(info.mesh ?? null);
  renderer.setMesh(st.mesh);
  serverMesh.clear();
  updateClipUi();
  await seek(0);
  openStream(id);
  status(`${id}: ${st.bones.length} bones, ${info.animations.length} clips${st.meshNote ? " · " + st.meshNote : ""}`);
  if (st.clip) setPlaying(true);
}

function buildTree() {
  const ul = $("tree");
  ul.innerHTML = "";
  const add = (b, depth) => {
    const li = document.createElement("li");
    li.textContent = "  ".repeat(depth) + b.name;
    li.style.paddingLeft = `${depth * 10}px`;
    li.dataset.bone = b.name;
    if (b.index < 0) { li.classList.add("noslot"); li.title = "not a joint: no output slot"; }
    li.onclick = () => pick(b.name);
    b.li = li;
    ul.appendChild(li);
    b.children.forEach((c) => add(c, depth + 1));
  };
  st.bones.filter((b) => !b.parentBone).forEach((b) => add(b, 0));
}

// ---- poses -------------------------------------------------------------------

// The world the page computes and draws in. The daemon's default mesh (GET's
// "mesh": the chain Babylon's loader builds, "__root__" included) when it has
// one: the page then sends no "mesh", so its ops and "world"/"positions" are
// what any client gets. A GLB the page holds must give the same chain (its
// own, read from the file, lacks only "__root__"); a difference is reported
// and the daemon's wins. Without a default mesh the GLB's chain is sent
// explicitly, and without either the armature is drawn in skeleton space.
// "__root__" mirrors x (left-handed scene): the view undoes it (st.display).
function chooseWorld(daemonMesh) {
  st.sendMesh = undefined;
  st.display = identity();
  if (daemonMesh) {
    st.world = meshWorld(daemonMesh);
    st.display = handedness(daemonMesh);
    if (st.mesh) {
      const mine = st.mesh.ownWorld || st.mesh.world, theirs = mul(st.world, st.display);
      const scale = Math.max(1, ...theirs.map(Math.abs));
      if (mine.some((v, i) => Math.abs(v - theirs[i]) > 1e-5 * scale))
        st.meshNote = (st.meshNote ? st.meshNote + "; " : "") + "the GLB's mesh chain differs from the daemon's default mesh: drawn with the daemon's";
    } else if (st.meshNote.startsWith("no mesh")) st.meshNote = "no mesh: upload the GLB from this page to see it (armature in the daemon's default mesh)";
  } else if (st.mesh) {
    st.world = st.mesh.ownWorld || st.mesh.world;
    st.sendMesh = st.mesh.apiMesh;
  } else st.world = identity();
  st.displayInv = invert(st.display);
  if (st.mesh) { st.mesh.ownWorld = st.mesh.ownWorld || st.mesh.world; st.mesh.world = st.world; }
}

function poseBody(extra) {
  const body = {};
  if (st.clip) { body.animation = st.clip.name; if (st.loop) body.loop = true; }
  if (st.ops.length) { body.ops = st.ops; if (st.sendMesh !== undefined) body.mesh = st.sendMesh; }
  return Object.assign(body, extra);
}

// Exactly the pose at time t (one request): for scrubbing, pausing, tests.
// `latest`: draw the answer even if the ops moved on meanwhile (a drag's
// steps, sent over the stream when open: the picture follows the handle
// instead of waiting for it to stop). `viaStream`: over the stream when
// open (drags and scrubbing: answers come back in order, no round trip
// per HTTP request).
async function seek(t, latest = false, viaStream = latest) {
  st.time = t;
  const gen = st.gen, id = st.id;
  const r = await poseMats(poseBody(st.clip ? { time: t } : {}), viaStream);
  st.timing = { ms: r.ms, frames: 1, at: performance.now() };
  showTiming();
  if (gen !== st.gen && !(latest && id === st.id)) return;
  applyMats(r.data.subarray(0, r.mats * 12), t);
  updateTimeUi();
  // While a handle is held the numbers wait for its release (one JSON request
  // then); a drag step the ops have moved past leaves them to the newer one.
  if (st.picked && gen === st.gen && !(latest && st.dragging)) refreshNumbers();
}

// `time`: the clip time the matrices are of (a range's frame time, not the playhead's).
function applyMats(mats, time) {
  st.lastMats = mats;
  st.drawnTime = time;
  renderer.setBones(mats);
  st.lastWorlds = boneWorlds(mats);
  if (!st.fitted) fitCamera();
  updateArmature();
  draw();
  serverMesh.update();
}

// World matrices of the bones from the final matrices: world = absBind ×
// final (final = absInvBind × world, Babylon order), then the mesh's world.
function boneWorlds(mats) {
  const model = st.world;
  const worlds = new Map();
  for (const b of st.bones) {
    let w;
    if (b.index >= 0 && (b.index + 1) * 12 <= mats.length) {
      const d = mats.subarray(b.index * 12, b.index * 12 + 12), f = new Array(16);
      for (let r = 0; r < 4; r++) for (let c = 0; c < 3; c++) f[4 * r + c] = d[4 * c + r];
      f[3] = f[7] = f[11] = 0; f[15] = 1;
      w = mul(b.absBind, f);
    } else {
      // No output slot (a glTF node between joints): its stored local.
      w = b.parentBone ? mul(b.local, worlds.get(b.parentBone.name).skel) : b.local.slice();
    }
    worlds.set(b.name, { skel: w, world: mul(w, model) });
  }
  return worlds;
}

function updateArmature() {
  const seg = [], pts = [];
  if (st.edit) {
    // The edit's target handle: a magenta cross, about a tenth of the view wide.
    const t = st.edit.target, r = st.cam.dist * 0.06, col = [1, 0.2, 1];
    for (let a = 0; a < 3; a++) {
      const lo = t.slice(), hi = t.slice();
      lo[a] -= r; hi[a] += r;
      seg.push([lo, hi, col]);
    }
    pts.push([t, col]);
    if (st.edit.pole) {
      const q = st.edit.pole, pc = [0.2, 1, 1];
      for (let a = 0; a < 3; a++) { const lo = q.slice(), hi = q.slice(); lo[a] -= r; hi[a] += r; seg.push([lo, hi, pc]); }
      seg.push([st.lastWorlds.get(st.edit.bone).world.slice(12, 15), q, pc]);
      pts.push([q, pc]);
    }
  }
  for (const b of st.bones) {
    const w = st.lastWorlds.get(b.name).world;
    const p = [w[12], w[13], w[14]];
    const col = b.name === st.picked ? [1, 0.9, 0.2] : [0.4, 0.8, 1];
    if (b.parentBone) {
      const q = st.lastWorlds.get(b.parentBone.name).world;
      seg.push([[q[12], q[13], q[14]], p, col]);
    }
    pts.push([p, col]);
    b.screenPos = p;
  }
  renderer.setLines(seg, pts);
}

// ---- camera and drawing ---------------------------------------------------------

function fitCamera() {
  let lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  const grow = (p) => { for (let c = 0; c < 3; c++) { lo[c] = Math.min(lo[c], p[c]); hi[c] = Math.max(hi[c], p[c]); } };
  if (st.mesh) {
    // The skinned positions of the current pose, on the CPU, once.
    const m = st.lastMats;
    for (const p of st.mesh.primitives)
      for (let i = 0; i < p.position.length / 3; i++) {
        const v = [0, 0, 0];
        for (let k = 0; k < 4; k++) {
          const w = p.weights[4 * i + k], j = p.joints[4 * i + k];
          if (!w) continue;
          for (let c = 0; c < 3; c++)
            v[c] += w * (m[12 * j + 4 * c] * p.position[3 * i] + m[12 * j + 4 * c + 1] * p.position[3 * i + 1] +
                         m[12 * j + 4 * c + 2] * p.position[3 * i + 2] + m[12 * j + 4 * c + 3]);
        }
        grow(transformPoint(st.mesh.world, v));
      }
  }
  if (!isFinite(lo[0])) for (const w of st.lastWorlds.values()) grow([w.world[12], w.world[13], w.world[14]]);
  if (!isFinite(lo[0])) return;
  const size = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1e-3);
  // The camera lives in the display space (the world without "__root__").
  const c0 = transformPoint(st.display, lo), c1 = transformPoint(st.display, hi);
  st.cam.target = [(c0[0] + c1[0]) / 2, (c0[1] + c1[1]) / 2, (c0[2] + c1[2]) / 2];
  st.cam.dist = size * 1.6;
  st.cam.near = size * 0.01;
  st.cam.far = size * 20;
  st.fitted = true;
}

function camera() {
  const c = st.cam;
  const eye = [c.target[0] + c.dist * Math.cos(c.pitch) * Math.sin(c.yaw), c.target[1] + c.dist * Math.sin(c.pitch),
    c.target[2] + c.dist * Math.cos(c.pitch) * Math.cos(c.yaw)];
  return { eye, target: c.target.slice(), up: [0, 1, 0], fovY: c.fovY, near: c.near, far: c.far };
}

function matrices() {
  const c = camera(), cv = $("canvas");
  return { view: mul(st.display, lookAt(c.eye, c.target, c.up)), proj: perspective(c.fovY, cv.width / cv.height, c.near, c.far) };
}

function draw() {
  const { view, proj } = matrices();
  renderer.draw(view, proj, { mesh: $("show-mesh").checked, armature: $("show-armature").checked, flat: st.flat, server: serverMesh.on && st.drawServer !== false });
}

function project(p) {
  const { view, proj } = matrices(), cv = $("canvas");
  const v = mul(mul([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, p[0], p[1], p[2], 1], view), proj);
  const w = v[15];
  return [(v[12] / w * 0.5 + 0.5) * cv.width, (1 - (v[13] / w * 0.5 + 0.5)) * cv.height, w];
}

// ---- playback -------------------------------------------------------------------

function updateClipUi() {
  $("scrub").max = st.clip ? String(st.clip.duration) : "0";
  $("play").disabled = !st.clip;
  updateTimeUi();
}

function updateTimeUi() {
  $("scrub").value = String(st.time);
  $("time").textContent = `${st.time.toFixed(3)} s`;
}

// The "server" box, rewritten on every metrics sample and request (timing.js).
function showTiming() {
  const now = performance.now(), m = st.metrics;
  let playing = null;
  if (st.playing && st.clip) {
    const shown = st.framesShown || 0, w = st.fpsWindow;
    if (!w || now - w.at > 2000) st.fpsWindow = { at: now, shown, fps: w ? ((shown - w.shown) * 1000) / (now - w.at) : null };
    playing = { fps: st.fpsWindow.fps, cached: [...st.chunks.keys()].filter((k) => k.startsWith(`${st.gen}:`)).length,
      pushed: st.push ? st.pushed : null };
  }
  $("timing").textContent = timingText({
    last: st.timing, now, window: m.window, total: m.last, windowSeconds: METRICS_EVERY / 1000, playing,
    ranges: { fps: FPS, chunk: CHUNK, ahead: AHEAD, via: playback.via() },
  });
}

// The daemon's own time per frame: the growth of its pose routes' duration
// sums over the growth of its poses-evaluated counter between two /metrics
// reads (every client's poses, headers in to answer sent).
const METRICS_EVERY = 2000;
async function sampleMetrics() {
  if (document.hidden) return;
  try {
    const cur = readMetrics(await (await fetch("/metrics")).text());
    // Poses the stream answered count in the daemon's poses but not in the
    // routes' times: the page's own are taken out of both readings.
    if (cur) { cur.untimed = st.streamedPoses; st.metrics.window = perFrame(st.metrics.last, cur); st.metrics.last = cur; }
  } catch { /* the numbers panel only: the error banner is for what the user asked */ }
  showTiming();
}

// ---- picking and editing ---------------------------------------------------------

function pick(name) {
  st.picked = name;
  $("picked-name").textContent = name || "(none)";
  for (const b of st.bones) if (b.li) b.li.classList.toggle("picked", b.name === name);
  if (st.lastWorlds) { updateArmature(); draw(); }
  refreshNumbers();
}

// The picked bone's local and absolute matrices at the current time (one
// JSON request; the binary frames carry final matrices only).
async function refreshNumbers() {
  const b = st.byName.get(st.picked);
  if (!b) return;
  const gen = st.gen, body = numbersBody();
  const r = await api.poseJson(st.id, body);
  if (gen !== st.gen || st.picked !== b.name) return null;
  $("m-time").textContent = st.clip ? `(at ${body.time.toFixed(3)} s)` : "";
  // "world" and "positions" cover every bone, in the order of GET's "bones".
  const k = st.bones.indexOf(b);
  b.curWorld = r.world.slice(16 * k, 16 * k + 16);
  b.curPos = r.positions.slice(3 * k, 3 * k + 3);
  $("m-world").textContent = fmt(b.curWorld);
  $("m-pos").textContent = b.curPos.map((v) => v.toFixed(4)).join(" ");
  if (b.index < 0) {
    $("m-local").textContent = "(not a joint: no output slot)";
    $("m-abs").textContent = "";
  } else {
    b.curLocal = r.local.slice(16 * b.index, 16 * b.index + 16);
    b.curAbs = r.absolute.slice(16 * b.index, 16 * b.index + 16);
    $("m-local").textContent = fmt(b.curLocal);
    $("m-abs").textContent = fmt(b.curAbs);
  }
  return r;
}

// The JSON pose the numbers panel asks for: the drawn pose (same clip time,
// same ops) with the matrices and world positions of every bone.
function numbersBody() {
  const body = { ...poseBody(st.clip ? { time: st.time } : {}), output: ["final", "local", "absolute", "world", "positions"] };
  if (st.sendMesh !== undefined) body.mesh = st.sendMesh;
  return body;
}

function pickedBone() {
  const b = st.byName.get(st.picked);
  if (!b) throw new Error("pick a bone first (bone tree or click in the view)");
  return b;
}

function showOps() {
  $("ops").textContent = st.ops.length ? JSON.stringify(st.ops).replace(/\},\{/g, "},\n{") : "[]";
}

// Replaces the ops and shows their pose; a refused list (422: the daemon's
// problem detail goes to the banner) is taken back, so later requests carry
// only what the daemon accepted.
async function setOps(ops) {
  const prev = st.ops;
  st.ops = ops;
  st.gen++;
  showOps();
  try {
    await seek(st.time);
  } catch (e) {
    st.ops = prev;
    st.gen++;
    showOps();
    throw e;
  }
}

// Babylon's bone.rotate(axis, amount, space, mesh) as an op, after every
// earlier one (and after the clip sample). A rotate right after one about
// the same bone, axis and space adds to its amount: the same rotation.
async function rotatePicked(axis, degrees, space = $("rot-space").value) {
  const b = pickedBone();
  setPlaying(false);
  const ax = [[1, 0, 0], [0, 1, 0], [0, 0, 1]][axis];
  const amount = (degrees * Math.PI) / 180;
  const ops = st.ops.slice(), last = ops[ops.length - 1];
  if (last && last.op === "rotate" && last.bone === b.name && last.space === space && last.axis.every((v, i) => v === ax[i]))
    ops[ops.length - 1] = { ...last, amount: last.amount + amount };
  else if (ops.length >= MAX_OPS) throw new Error(`${MAX_OPS} edits already: reset to rest first`);
  else ops.push({ op: "rotate", bone: b.name, axis: ax, amount, space });
  await setOps(ops);
}

// IK drag and look-at: a target handle, dragged on the plane through it
// facing the camera; each step replaces the edit's one op (ik: one update()
// of BoneIKController on the picked bone and its parent; lookAt: of
// BoneLookController). Positions are world space: the page's mesh.
function startEdit(kind) {
  const b = pickedBone();
  if (kind === "ik" && !(b.parentBone && b.parentBone.parentBone))
    throw new Error(`IK needs a chain: ${b.name} has no parent and grandparent (pick the lower bone, e.g. a shin or forearm)`);
  setPlaying(false);
  const w = st.lastWorlds.get(b.name).world;
  let target;
  if (kind === "ik") {
    // Start at the chain's end: the bone's first child, where IK puts the tip.
    const c = b.children[0];
    const cw = c ? st.lastWorlds.get(c.name).world : w;
    target = [cw[12], cw[13], cw[14]];
  } else {
    // Start in front of the bone, towards the camera.
    const eye = transformPoint(st.displayInv, camera().eye), p = [w[12], w[13], w[14]];
    const d = [eye[0] - p[0], eye[1] - p[1], eye[2] - p[2]], l = Math.hypot(...d) || 1;
    target = p.map((v, i) => v + (d[i] / l) * st.cam.dist * 0.25);
  }
  st.edit = { kind, bone: b.name, target, pole: null, op: -1 };
  if (kind === "ik" && $("pole-target").checked) st.edit.pole = polePlace(b);
  $("edit-note").textContent = `${kind === "ik" ? "IK" : "look-at"} on ${b.name}: drag the magenta handle` +
    (st.edit.pole ? " (the cyan one is the pole target)" : "");
  updateArmature();
  draw();
}

// Where the pole handle starts: in front of the middle joint (the picked
// bone's), half the chain away, on the side the chain bends to now (towards
// the camera when it is straight), so the first pose keeps the current bend.
function polePlace(b) {
  const at = (x) => { const w = st.lastWorlds.get(x.name).world; return [w[12], w[13], w[14]]; };
  const top = at(b.parentBone), mid = at(b), end = b.children[0] ? at(b.children[0]) : mid;
  const len = Math.hypot(...mid.map((v, i) => v - top[i])) + Math.hypot(...end.map((v, i) => v - mid[i]));
  const axis = end.map((v, i) => v - top[i]), al = Math.hypot(...axis) || 1;
  const rel = mid.map((v, i) => v - top[i]), k = rel.reduce((s, v, i) => s + v * axis[i], 0) / (al * al);
  let d = rel.map((v, i) => v - k * axis[i]);
  if (Math.hypot(...d) < 1e-3 * len) { const eye = transformPoint(st.displayInv, camera().eye); d = eye.map((v, i) => v - mid[i]); }
  const dl = Math.hypot(...d) || 1;
  return mid.map((v, i) => v + (d[i] / dl) * len * 0.5);
}

function stopEdit() {
  st.edit = null;
  $("edit-note").textContent = "";
  if (st.lastWorlds) { updateArmature(); draw(); }
}

// The edit's op from its handles and the option inputs; options at their
// defaults are left out, so the op reads as Babylon's call would.
function editOp(e) {
  const rad = (id) => (Number($(id).value) * Math.PI) / 180;
  if (e.kind === "ik") {
    const op = { op: "ik", bone: e.bone, target: e.target.slice() };
    if (e.pole) op.poleTarget = e.pole.slice();
    if (rad("pole-angle")) op.poleAngle = rad("pole-angle");
    return op;
  }
  const op = { op: "lookAt", bone: e.bone, target: e.target.slice() };
  if ($("up-axis").value) op.upAxis = $("up-axis").value.split(",").map(Number);
  if ($("up-space").value) op.upAxisSpace = $("up-space").value;
  for (const [id, key] of [["adjust-yaw", "adjustYaw"], ["adjust-pitch", "adjustPitch"], ["adjust-roll", "adjustRoll"]])
    if (rad(id)) op[key] = rad(id);
  return op;
}

// Moves the handle; one request in flight at a time, the latest target wins.
let sending = null, again = false;
// `which`: "target" (the magenta handle) or "pole" (the cyan one).
function moveTarget(target, which = "target") {
  const e = st.edit;
  if (!e) throw new Error("no IK or look-at edit started");
  if (target) e[which] = target;
  const ops = st.ops.slice();
  if (e.op < 0) {
    if (ops.length >= MAX_OPS) throw new Error(`${MAX_OPS} edits already: reset to rest first`);
    e.op = ops.length;
    ops.push(editOp(e));
  } else ops[e.op] = editOp(e);
  const good = st.ops;
  st.ops = ops;
  st.gen++;
  showOps();
  updateArmature();
  draw();
  if (sending) { again = true; return sending; }
  sending = (async () => {
    try {
      do { again = false; await seek(st.time, true); } while (again);
    } catch (err) {
      if (st.edit === e && e.op >= good.length) e.op = -1;
      st.ops = good;
      st.gen++;
      showOps();
      showError(err);
    } finally { sending = null; }
  })();
  return sending;
}

async function resetToRest() {
  setPlaying(false);
  st.ops = [];
  st.edit = null;
  $("edit-note").textContent = "";
  showOps();
  st.clip = null;
  $("clip").value = "";
  st.gen++;
  updateClipUi();
  await seek(0);
}

// ---- upload -------------------------------------------------------------------------

function idFromName(name) {
  const base = name.replace(/\.[^.]*$/, "").toLowerCase().replace(/[^a-z0-9._-]+/g, "-").slice(0, 128);
  return base || "model";
}

async function upload(file) {
  const buf = await file.arrayBuffer();
  const id = $("upload-id").value.trim() || idFromName(file.name);
  status(`uploading ${file.name} as ${id}…`);
  const exists = [...$("skeletons").options].some((o) => o.value === id);
  try {
    await api.upload(id, buf, exists);
  } catch (e) {
    status("upload failed");
    throw e;
  }
  memoryGlb.set(id, buf);
  await glbPut(id, buf);
  await refreshList(id);
  await open(id);
}

// ---- wiring ----------------------------------------------------------------------------

const renderer = new Renderer($("canvas"));
// The server-skinned overlay is of exactly the matrices drawn and the pose
// body they came from, at the frame's own time.
const serverMesh = new ServerMesh({
  api, renderer,
  snapshot: () => (st.mesh && st.lastMats ? {
    key: st.mesh, id: st.id, mesh: st.mesh, mats: st.lastMats.slice(), time: st.clip ? st.drawnTime : null,
    body: poseBody(st.clip ? { time: st.drawnTime } : {}),
  } : null),
  current: () => st.mesh,
  shown: (text) => { $("server-mesh").textContent = text; if (st.lastWorlds) draw(); },
  failed: (e) => { $("show-server").checked = false; showError(e); },
});

function wire() {
  $("skeletons").onchange = () => open($("skeletons").value).catch(showError);
  $("refresh").onclick = () => refreshList(st.id).catch(showError);
  $("file").onchange = () => { const f = $("file").files[0]; if (f) upload(f).catch(showError); $("file").value = ""; };
  $("play").onclick = () => setPlaying(!st.playing);
  $("scrub").oninput = () => { setPlaying(false); seek(Number($("scrub").value), false, true).catch(showError); };
  $("speed").onchange = () => (st.speed = Number($("speed").value));
  $("loop").onchange = () => { st.loop = $("loop").checked; st.gen++; };
  $("show-mesh").onchange = draw;
  $("show-armature").onchange = draw;
  $("show-server").onchange = () => serverMesh.set($("show-server").checked);
  $("clip").onchange = () => {
    const v = $("clip").value;
    st.clip = v === "" ? null : st.info.animations.find((a) => String(a.index) === v);
    st.gen++;
    updateClipUi();
    seek(0).then(() => setPlaying(!!st.clip)).catch(showError);
  };
  const rb = $("rot-buttons");
  $("ik").onclick = () => { try { startEdit("ik"); } catch (e) { showError(e); } };
  $("look").onclick = () => { try { startEdit("look"); } catch (e) { showError(e); } };
  $("stop-edit").onclick = stopEdit;
  // A changed option re-sends the edit's op (only once it has one).
  const resend = () => { if (st.edit && st.edit.op >= 0) moveTarget(null); };
  for (const id of ["pole-angle", "up-axis", "up-space", "adjust-yaw", "adjust-pitch", "adjust-roll"]) $(id).onchange = resend;
  $("pole-target").onchange = () => {
    const e = st.edit;
    if (!e || e.kind !== "ik") return;
    e.pole = $("pole-target").checked ? polePlace(st.byName.get(e.bone)) : null;
    if (e.op >= 0) moveTarget(null); else { updateArmature(); draw(); }
  };
  ["X", "Y", "Z"].forEach((n, axis) => {
    for (const sign of [-1, 1]) {
      const btn = document.createElement("button");
      btn.textContent = `${n}${sign < 0 ? "−" : "+"}`;
      btn.onclick = () => rotatePicked(axis, sign * Number($("rot-step").value)).catch(showError);
      rb.appendChild(btn);
    }
  });
  $("reset").onclick = () => resetToRest().catch(showError);
  $("copy-curl").onclick = () => navigator.clipboard?.writeText(api.lastCurl);
  api.onRequest = (line) => ($("curl").textContent = line);

  // Orbit (drag), zoom (wheel), hover names and click-to-pick.
  const cv = $("canvas");
  let drag = null;
  cv.onpointerdown = (e) => {
    drag = { x: e.clientX, y: e.clientY, moved: false, handle: onHandle(e) };
    st.dragging = !!drag.handle;
    cv.setPointerCapture(e.pointerId);
  };
  cv.onpointerup = (e) => {
    if (drag && !drag.moved && !drag.handle) { const b = boneAt(e); if (b) pick(b.name); }
    if (drag && drag.handle) {
      st.dragging = false;
      if (drag.moved) (sending || Promise.resolve()).then(() => st.picked && refreshNumbers()).catch(showError);
    }
    drag = null;
  };
  cv.onpointermove = (e) => {
    if (drag && drag.handle) {
      drag.moved = true;
      const p = targetAt(e, drag.handle);
      if (p) moveTarget(p, drag.handle);
      return;
    }
    if (drag) {
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 2) drag.moved = true;
      st.cam.yaw -= dx * 0.01;
      st.cam.pitch = Math.max(-1.5, Math.min(1.5, st.cam.pitch + dy * 0.01));
      drag.x = e.clientX; drag.y = e.clientY;
      if (st.lastWorlds) draw();
      return;
    }
    const b = boneAt(e), h = $("hover");
    h.hidden = !b;
    if (b) { h.textContent = b.name; h.style.left = `${e.offsetX + cv.offsetLeft + 12}px`; h.style.top = `${e.offsetY + cv.offsetTop}px`; }
  };
  cv.onpointerleave = () => ($("hover").hidden = true);
  cv.onwheel = (e) => { e.preventDefault(); st.cam.dist *= Math.exp(e.deltaY * 0.001); if (st.lastWorlds) draw(); };

  // Drag-and-drop anywhere on the page.
  let depth = 0;
  window.addEventListener("dragenter", (e) => { e.preventDefault(); depth++; $("drop").hidden = false; });
  window.addEventListener("dragleave", () => { if (--depth <= 0) { depth = 0; $("drop").hidden = true; } });
  window.addEventListener("dragover", (e) => e.preventDefault());
  window.addEventListener("drop", (e) => {
    e.preventDefault(); depth = 0; $("drop").hidden = true;
    const f = e.dataTransfer.files[0];
    if (f) upload(f).catch(showError);
  });
}

// The canvas point under the pointer in device pixels, and the ray there.
function canvasXY(e) {
  const cv = $("canvas");
  return [e.offsetX * cv.width / cv.clientWidth, e.offsetY * cv.height / cv.clientHeight];
}

// Which handle is under the pointer: "target", "pole" or false.
function onHandle(e) {
  if (!st.edit) return false;
  const [px, py] = canvasXY(e), r = 12 * $("canvas").width / $("canvas").clientWidth;
  for (const which of ["target", "pole"]) {
    if (!st.edit[which]) continue;
    const [x, y, w] = project(st.edit[which]);
    if (w > 0 && Math.hypot(x - px, y - py) < r) return which;
  }
  return false;
}

// Where the pointer's ray meets the plane through the target facing the
// camera: the handle moves parallel to the screen, as in Blender's grab.
function targetAt(e, which = "target") {
  const cv = $("canvas"), [px, py] = canvasXY(e);
  const { view, proj } = matrices(), inv = invert(mul(view, proj));
  const un = (z) => {
    const x = (px / cv.width) * 2 - 1, y = 1 - (py / cv.height) * 2;
    const v = [x * inv[0] + y * inv[4] + z * inv[8] + inv[12], x * inv[1] + y * inv[5] + z * inv[9] + inv[13],
      x * inv[2] + y * inv[6] + z * inv[10] + inv[14], x * inv[3] + y * inv[7] + z * inv[11] + inv[15]];
    return [v[0] / v[3], v[1] / v[3], v[2] / v[3]];
  };
  const a = un(-1), b = un(1), c = camera();
  const eye = transformPoint(st.displayInv, c.eye), at = transformPoint(st.displayInv, c.target);
  const n = [eye[0] - at[0], eye[1] - at[1], eye[2] - at[2]];
  return rayPlane(a, [b[0] - a[0], b[1] - a[1], b[2] - a[2]], st.edit[which], n);
}

function boneAt(e) {
  if (!st.bones.length || !st.lastWorlds) return null;
  const cv = $("canvas"), sx = cv.width / cv.clientWidth, sy = cv.height / cv.clientHeight;
  let best = null, bd = 8 * sx;
  for (const b of st.bones) {
    if (!b.screenPos) continue;
    const [x, y, w] = project(b.screenPos);
    if (w <= 0) continue;
    const d = Math.hypot(x - e.offsetX * sx, y - e.offsetY * sy);
    if (d < bd) { bd = d; best = b; }
  }
  return best;
}

// What the browser tests drive (and a console user may too).
window.skPreview = {
  state: st, api, showError, open, seek, pick, rotatePicked, resetToRest, upload, camera, refreshNumbers,
  startEdit, stopEdit, moveTarget, setOps, numbersBody, poseBody,
  // Resolves when the edit's drag requests have all been answered.
  idle: () => sending || Promise.resolve(),
  // Resolves with whether the skeleton's stream is open (drags go over it).
  streamReady: async () => { await st.streamOpening; return playback.streamLive(); },
  openStream,
  // The pose and the joint positions the page draws now (world space).
  drawn() { return st.bones.map((b) => { const w = st.lastWorlds.get(b.name).world; return [w[12], w[13], w[14]]; }); },
  // The server-skinned overlay on or off; resolves once its answer is shown.
  serverMesh(on) { $("show-server").checked = on; return serverMesh.set(on).then(() => serverMesh.result); },
  setPlaying, setClip(name) {
    st.clip = st.info.animations.find((a) => a.name === name || String(a.index) === String(name)) || null;
    $("clip").value = st.clip ? String(st.clip.index) : "";
    st.gen++;
    updateClipUi();
  },
  setSize(w, h) { if (!w) { st.fixedSize = false; fitCanvas(); return; } st.fixedSize = true; const cv = $("canvas"); cv.width = w; cv.height = h; cv.style.width = `${w}px`; cv.style.height = `${h}px`; if (st.lastWorlds) draw(); },
  setView(opts) { Object.assign(st.cam, opts); if (st.lastWorlds) draw(); },
  show(opts) { if ("flat" in opts) st.flat = opts.flat; if ("server" in opts) st.drawServer = opts.server; if ("mesh" in opts) $("show-mesh").checked = opts.mesh; if ("armature" in opts) $("show-armature").checked = opts.armature; draw(); },
  // Where bone `name`'s joint is drawn, in CSS pixels from the page's corner.
  screenOf(name) {
    const handle = { handle: "target", pole: "pole" }[name];
    const b = handle ? (st.edit && st.edit[handle] ? { screenPos: st.edit[handle] } : null) : st.byName.get(name), cv = $("canvas");
    if (!b || !b.screenPos) return null;
    const [x, y] = project(b.screenPos), r = cv.getBoundingClientRect();
    return { x: r.left + x * cv.clientWidth / cv.width, y: r.top + y * cv.clientHeight / cv.height };
  },
  // RGBA pixels of the canvas as drawn now (rendered and read in one task).
  pixels() {
    draw();
    const gl = renderer.gl, w = gl.drawingBufferWidth, h = gl.drawingBufferHeight, px = new Uint8Array(w * h * 4);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
    return { w, h, px };
  },
};

// The canvas fills the view (in device pixels) unless a test fixed its size.
function fitCanvas() {
  if (st.fixedSize) return;
  const cv = $("canvas"), view = $("view"), controls = $("controls");
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(100, view.clientWidth), h = Math.max(100, view.clientHeight - controls.offsetHeight - 4);
  cv.style.width = `${w}px`;
  cv.style.height = `${h}px`;
  cv.width = Math.round(w * dpr);
  cv.height = Math.round(h * dpr);
  if (st.lastWorlds) draw();
}

async function main() {
  wire();
  fitCanvas();
  setInterval(sampleMetrics, METRICS_EVERY);
  showTiming();
  window.addEventListener("resize", fitCanvas);
  // The banner, a wrapped header or controls row change the view's height
  // without a window resize: the canvas follows, so the controls stay visible.
  if (window.ResizeObserver) new ResizeObserver(() => fitCanvas()).observe($("view"));
  requestAnimationFrame(tick);
  const list = await refreshList();
  const want = new URLSearchParams(location.search).get("id");
  if (want && !list.some((s) => s.id === want)) throw new Error(`no stored skeleton "${want}" (?id=)`);
  const id = want || list[0]?.id;
  if (id) await open(id);
  else status("no skeleton stored yet: upload a GLB (file picker or drag and drop)");
}

window.skPreview.ready = main().then(() => true, (e) => { showError(e); return false; });
