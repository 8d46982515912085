// The preview page's clock and its two ways to get frames. Over the
// skeleton's WebSocket stream (proto/stream.md) the page sends one
// {"play"} message and the daemon pushes the clip's frames at FPS × speed,
// each drawn as it arrives: its frame index is the playhead, so a slow link
// slows the clip down (the daemon pauses a reader that falls behind) instead
// of skipping. Without the stream (a proxy that refuses the upgrade, an old
// daemon) the page fetches POST /pose frame ranges ahead of the playhead
// and plays them by its own clock. Single poses (scrubbing, drags) go over
// the stream too when it is open (poseMats).
import { SkinnerdError } from "./skinnerd.js";
import { ApiError } from "./api.js";

export const FPS = 30;   // frames per second fetched or pushed for playback
export const CHUNK = 1;  // seconds per range request
export const AHEAD = 2;  // chunks kept requested ahead of the playhead
const NUMBERS_EVERY = 1000; // ms between the picked bone's numbers while playing

// h: the page's state and what playback calls back into: { st, api, client,
// $, poseBody, applyMats, seek, showError, showTiming, updateTimeUi,
// refreshNumbers }.
export function createPlayback(h) {
  const { st, api, client, $ } = h;

  // ---- the stream ----------------------------------------------------------------

  function streamLive() { return !!(st.stream && st.stream.open && st.streamFor === st.id); }

  // One WebSocket session per skeleton shown, mat3x4 answers. A refused
  // upgrade (an old daemon, a proxy without WebSocket) leaves the HTTP path.
  function openStream(id) {
    if (st.stream) { st.stream.close(); st.stream = null; }
    st.streamFor = null;
    showStream();
    if (typeof WebSocket !== "function") return Promise.resolve(null);
    const p = client.stream(id, { format: "mat3x4" }).then((s) => {
      if (st.id !== id) { s.close(); return null; }
      st.stream = s;
      st.streamFor = id;
      s.ws.addEventListener("close", () => { if (st.stream === s) { st.stream = null; showStream(); } });
      showStream();
      return s;
    }, () => null);
    st.streamOpening = p;
    return p;
  }

  function showStream() {
    const live = streamLive();
    $("stream").textContent = live ? `stream: live (${st.streamed} answers)` : "stream: off (HTTP)";
    $("stream").title = live ? "playback is pushed by the daemon; scrubbing, IK and look-at drags go over the WebSocket stream (GET …/stream)"
      : "the stream did not open: playback and drags use POST /pose";
  }

  // Final matrices as mat3x4 over the stream when it is open, else POST /pose.
  async function poseMats(body, viaStream) {
    const s = st.stream;
    if (viaStream && streamLive()) {
      const t0 = performance.now();
      try {
        const f = await s.send(body);
        st.streamed++;
        st.streamedPoses += f.frames.poseCount;
        showStream();
        return { data: f.frames.data, poses: f.frames.poseCount, mats: f.frames.matrices, ms: performance.now() - t0 };
      } catch (e) {
        // 413: over a session's work bound ("send it to /pose"): HTTP answers it.
        if (e instanceof SkinnerdError && e.status !== 413) throw new ApiError(e.status, e.problem, "pose");
        // Else the session ended under the request: HTTP from here on.
      }
    }
    return api.framesMat3x4(st.id, body);
  }

  // ---- play mode: frames pushed by the stream --------------------------------------

  // What a push was started for: a change of any (an edit, the speed, the
  // clip, loop) restarts it from the playhead with the new request.
  const pushKey = () => `${st.gen}|${st.speed}|${st.clip ? st.clip.name : ""}|${st.loop}|${st.streamFor}`;

  function startPush(t) {
    const s = st.stream, clip = st.clip;
    const n = Math.max(1, Math.floor(clip.duration * FPS - 1e-9) + 1); // frames k/FPS < duration
    let k0 = Math.round(t * FPS);
    if (k0 >= n) k0 = 0;
    const push = { key: pushKey(), s, clip };
    st.push = push;
    const body = h.poseBody({ fps: FPS, frames: [k0, n], speed: st.speed });
    s.play(body, (f) => onPushed(push, f)).then((end) => {
      if (st.push !== push) return;
      st.push = null;
      if (end < 0 || !st.playing) return;
      if (st.loop) startPush(0);
      else { setPlaying(false); h.seek(clip.duration, false, true).catch(h.showError); }
    }, (e) => {
      if (st.push !== push) return;
      st.push = null;
      // A problem (a request the session will not play, e.g. over its work
      // bound): HTTP ranges play this one. A closed session: HTTP too.
      if (e instanceof SkinnerdError) st.pushRefused = push.key;
    });
  }

  // A pushed frame waits for the next animation frame to be drawn: drawing
  // in the message handler (software WebGL, the server mesh) would let
  // messages starve the browser's rendering steps (resize, the clock); a
  // frame a newer one replaces before it is drawn is not drawn.
  let latest = null;
  function onPushed(push, f) {
    if (st.push !== push || !st.playing) return;
    st.streamed++;
    st.streamedPoses += f.frames.poseCount;
    st.pushed = (st.pushed || 0) + 1;
    latest = { push, f };
  }

  function drawPushed() {
    const p = latest;
    latest = null;
    if (!p || st.push !== p.push) return false;
    const f = p.f, m = f.frames.matrices;
    st.time = f.index / FPS;
    h.applyMats(f.frames.data.subarray(0, m * 12), st.time);
    st.framesShown = (st.framesShown || 0) + 1;
    h.updateTimeUi();
    showStream();
    return true;
  }

  function stopPush() {
    const p = st.push;
    st.push = null;
    latest = null;
    if (p && p.s.open) p.s.stopPlay();
  }

  // ---- HTTP ranges ahead of the playhead -------------------------------------------

  // One range request per CHUNK seconds of the clip, cached per edit
  // generation; returns the chunk's promise (one text message, one binary
  // answer of CHUNK·FPS poses over the stream when it is open, else POST /pose).
  function chunk(k) {
    const key = `${st.gen}:${k}`;
    if (st.chunks.has(key)) return st.chunks.get(key);
    const from = k * CHUNK;
    const to = Math.min(from + CHUNK - 1 / FPS / 2, st.clip.duration);
    const gen = st.gen;
    const p = poseMats(h.poseBody({ from, to, fps: FPS }), true).then((r) => {
      st.timing = { ms: r.ms, frames: r.poses, at: performance.now() };
      h.showTiming();
      return { from, ...r, gen };
    });
    p.catch((e) => { st.chunks.delete(key); if (gen === st.gen) { setPlaying(false); h.showError(e); } });
    st.chunks.set(key, p);
    return p;
  }

  function framesReady(k) {
    const p = st.chunks.get(`${st.gen}:${k}`);
    return p && p.done ? p.done : null;
  }

  function prefetch(t) {
    const last = Math.floor(st.clip.duration / CHUNK - 1e-9);
    const k0 = Math.floor(t / CHUNK);
    for (let i = 0; i <= AHEAD; i++) {
      let k = k0 + i;
      if (k > last) { if (!st.loop) break; k -= last + 1; }
      const p = chunk(k);
      if (!p.hooked) { p.hooked = true; p.then((r) => (p.done = r)).catch(() => {}); }
    }
    // Drop chunks far behind the playhead so memory stays bounded.
    for (const key of st.chunks.keys()) {
      const [g, k] = key.split(":").map(Number);
      if (g !== st.gen || (k < k0 - 1 && !(st.loop && k <= AHEAD))) st.chunks.delete(key);
    }
  }

  // ---- the clock -------------------------------------------------------------------

  let lastTick = 0;
  function tick(now) {
    requestAnimationFrame(tick);
    if (!st.playing || !st.clip) { lastTick = now; return; }
    const dt = Math.min((now - lastTick) / 1000, 0.1) * st.speed;
    lastTick = now;
    if (streamLive() && st.pushRefused !== pushKey()) {
      if (st.push && st.push.key === pushKey()) drawPushed();
      else startPush(st.time);
    } else {
      if (st.push) stopPush();
      if (!rangesStep(dt)) return;
    }
    // The picked bone's numbers follow the playhead once a second (one JSON
    // request; the frames carry final matrices only).
    if (st.picked && !st.numbersBusy && now - (st.numbersAt || 0) > NUMBERS_EVERY) {
      st.numbersAt = now;
      st.numbersBusy = true;
      h.refreshNumbers().catch(() => {}).finally(() => (st.numbersBusy = false));
    }
  }

  // Advances the playhead by dt over the fetched ranges; false when it ended
  // the clip or the range is still on its way (the frame is held).
  function rangesStep(dt) {
    const dur = st.clip.duration;
    let t = st.time + dt;
    if (t > dur) {
      if (st.loop && dur > 0) t %= dur;
      else { t = dur; setPlaying(false); h.seek(dur, false, true).catch(h.showError); return false; }
    }
    prefetch(t);
    const k = Math.floor(t / CHUNK);
    const c = framesReady(k);
    if (!c || c.gen !== st.gen) return false;
    st.time = t;
    const i = Math.min(Math.round((t - c.from) * FPS), c.poses - 1);
    h.applyMats(c.data.subarray(i * c.mats * 12, (i + 1) * c.mats * 12), c.from + i / FPS);
    st.framesShown = (st.framesShown || 0) + 1;
    h.updateTimeUi();
    return true;
  }

  function setPlaying(on) {
    st.playing = on && !!st.clip;
    $("play").textContent = st.playing ? "❚❚" : "▶";
    if (!st.playing) stopPush();
    if (!st.playing && st.picked) h.refreshNumbers();
  }

  // How the frames come, for the numbers panel.
  function via() { return streamLive() ? "the stream" : "POST /pose"; }

  return { openStream, showStream, streamLive, poseMats, chunk, prefetch, tick, setPlaying, via };
}
