// The numbers panel's "server" box: the last request's round trip, the
// daemon's own time per frame from /metrics, and what playback draws. It is
// rewritten on every sample, so it never shows an old number as current: a
// looping clip plays from ranges already fetched, or pushed by the stream,
// and sends no requests.

// The routes whose request time is pose work (/pose and /poses): their
// duration sums over skinnerd_poses_evaluated_total.
const POSE_ROUTES = ["/v1/skeletons/{id}/pose", "/v1/skeletons/{id}/poses"];

// { sum, poses } from a /metrics text, or null when it has no
// skinnerd_poses_evaluated_total. A route's histogram appears only once that
// route has answered, so an absent series counts as 0, never NaN.
export function readMetrics(text) {
  let sum = 0;
  for (const m of String(text).matchAll(/^skinnerd_request_duration_seconds_sum\{route="([^"]*)"\} (\S+)$/gm))
    if (POSE_ROUTES.includes(m[1]) && Number.isFinite(Number(m[2]))) sum += Number(m[2]);
  const p = /^skinnerd_poses_evaluated_total (\S+)$/m.exec(String(text));
  const poses = p ? Number(p[1]) : NaN;
  return Number.isFinite(poses) ? { sum, poses } : null;
}

// Poses a reading counts that the routes' times do not cover: `untimed`
// (set by the page: the poses its stream session received so far).
const timed = (m) => m.poses - (Number.isFinite(m.untimed) ? m.untimed : 0);

// Seconds per frame between two readings (cur after prev), or null when no
// timed pose was evaluated in between.
export function perFrame(prev, cur) {
  if (!prev || !cur || !(timed(cur) > timed(prev))) return null;
  const n = timed(cur) - timed(prev), s = (cur.sum - prev.sum) / n;
  return Number.isFinite(s) && s >= 0 ? { seconds: s, poses: n } : null;
}

const us = (s) => `${(s * 1e6).toFixed(1)} µs`;
const ago = (ms) => (ms < 1000 ? "just now" : `${(ms / 1000).toFixed(0)} s ago`);

// The box's text. t: { last: {ms, frames, at} | null, now, window: {seconds,
// poses} | null, total: {sum, poses} | null, windowSeconds, playing: {fps,
// cached, pushed?} | null (pushed: frames the stream pushed, when it plays),
// ranges: {fps, chunk, ahead, via?} }. Every number is finite.
export function timingText(t) {
  const lines = [];
  if (t.last) {
    const perMs = t.last.ms / Math.max(t.last.frames, 1);
    lines.push(`last request: ${t.last.frames} frame(s) in ${t.last.ms.toFixed(1)} ms round trip = ${perMs.toFixed(3)} ms/frame (${ago(t.now - t.last.at)})`);
  } else lines.push("last request: none yet");
  if (t.window) lines.push(`daemon: ${us(t.window.seconds)} per frame (/metrics, ${t.window.poses} poses in the last ${t.windowSeconds} s)`);
  else if (t.total && timed(t.total) > 0)
    lines.push(`daemon: ${us(t.total.sum / timed(t.total))} per frame since it started (${timed(t.total)} poses over HTTP; none in the last ${t.windowSeconds} s)`);
  else lines.push(t.total ? "daemon: no poses evaluated yet" : "daemon: /metrics not read yet");
  if (t.playing) {
    const rate = t.playing.fps === null ? "" : `${t.playing.fps.toFixed(0)} frames/s drawn `;
    if (Number.isFinite(t.playing.pushed)) lines.push(`playing: ${rate}from ${t.playing.pushed} frames pushed by the stream`);
    else lines.push(`playing: ${rate}from ${t.playing.cached} fetched range(s)`);
  }
  const via = t.ranges.via ? `, over ${t.ranges.via}` : "";
  lines.push(`range requests: ${t.ranges.fps} fps, ${t.ranges.chunk} s each, ${t.ranges.ahead} ahead of the playhead${via}`);
  return lines.join("\n");
}
