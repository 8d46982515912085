#!/usr/bin/env node
// Babylon.js oracle for AnimationEvents, firing order and all: generated
// Babylon skeletons (bones with "position" Animations, events added with
// Animation.addEvent, some onlyOnce, at whole, fractional and range-edge
// frames, some before the range), played with skeleton.beginAnimation
// (range, loop) and stepped by scene._animate: each animatable's clock at
// exactly (pose time) * 1000 ms (_localDelayOffset = -ms, the scene's clock
// 0), so each step is RuntimeAnimation.animate at the time skinnerd's pose
// has. Each event's action records its name and frame in the step's list.
// Writes one `skinner eval` case a line with the events Babylon fired at
// every pose (the skeleton is Skeleton.serialize()'s, each bone's
// animation given the "events" skinnerd reads: [{name, frame, onlyOnce}],
// in the order they were added):
//
//   node babylon_events.mjs [SEED] [COUNT] > cases.jsonl
//
// npm install in tests/oracle first. Deterministic for a seed.

console.log = (...args) => console.error(...args);
const B = await import("@babylonjs/core");
const { NullEngine, Scene, Skeleton, Bone, Animation, AnimationEvent, Matrix, Vector3, Logger } = B;
Logger.LogLevels = Logger.ErrorLogLevel;

const seed = Number(process.argv[2] ?? 34);
const count = Number(process.argv[3] ?? 24);
let s = seed >>> 0;
const r = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296;
const pick = (a) => a[Math.floor(r() * a.length)];
const int = (lo, hi) => lo + Math.floor(r() * (hi - lo + 1));

const engine = new NullEngine();
const scene = new Scene(engine);

function makeCase(ci) {
    const nb = int(1, 4), L = int(12, 60), fps = pick([24, 30, 60, 25]);
    const from = r() < 0.5 ? 0 : pick([int(1, Math.floor(L / 3)), int(1, Math.floor(L / 3)) + 0.5]);
    const to = r() < 0.4 ? L : Math.max(from + 4, int(Math.ceil(from) + 4, L));
    const sk = new Skeleton(`ev${ci}`, `ev${ci}`, scene);
    const fired = [];
    const added = [];
    let parent = null;
    for (let b = 0; b < nb; b++) {
        const bone = new Bone(`b${b}`, sk, parent, Matrix.Translation(0, 1, 0));
        parent = bone;
        if (b > 0 && r() < 0.25) {
            added.push(null);
            continue; /* a bone without an animation */
        }
        const a = new Animation(`a${b}`, "position", fps, Animation.ANIMATIONTYPE_VECTOR3, Animation.ANIMATIONLOOPMODE_CYCLE);
        const keys = [];
        for (let k = 0; k <= L; k += pick([1, 3, 5]))
            keys.push({ frame: k, value: new Vector3(r(), r(), r()) });
        if (keys[keys.length - 1].frame !== L) keys.push({ frame: L, value: new Vector3(r(), r(), r()) });
        a.setKeys(keys);
        const evs = [];
        for (let e = int(0, 6); e > 0; e--) {
            const frame = pick([int(0, L), int(0, L), int(0, L - 1) + 0.5, from, to, 0, int(0, L) + 0.25]);
            const name = `b${b}e${evs.length}`;
            const onlyOnce = r() < 0.3;
            a.addEvent(new AnimationEvent(frame, () => fired.push({ name, frame }), onlyOnce));
            evs.push({ name, frame, onlyOnce });
        }
        bone.animations.push(a);
        added.push(evs);
    }
    sk.createAnimationRange("r", from, to);
    const json = sk.serialize();
    json.bones.forEach((jb, b) => {
        if (jb.animation && added[b] && added[b].length) jb.animation.events = added[b];
    });
    const loop = r() < 0.7;
    // the steps: "times" (any order, loops and jumps back), or "frames"
    // [s, e] at fps F (Babylon plays 0 .. e - 1, the chunk answers s ..)
    const pose = { op: "pose", animation: "r", loop, events: true };
    let steps, skip = 0;
    if (r() < 0.5) {
        const n = int(3, 40);
        steps = [];
        let t = 0;
        for (let i = 0; i < n; i++) {
            t = r() < 0.15 ? r() * t : t + r() * 0.3;
            steps.push(Math.round(t * 1000) / 1000);
        }
        pose.times = steps;
    } else {
        const F = pick([24, 30, 60, 12]);
        const e = int(5, 120), st = r() < 0.5 ? 0 : int(0, e - 1);
        pose.fps = F;
        pose.frames = [st, e];
        steps = [];
        for (let k = 0; k < e; k++) steps.push(k / F);
        skip = st;
    }
    const animatable = sk.beginAnimation("r", loop);
    const ats = scene._activeAnimatables.slice();
    const expected = [];
    steps.forEach((t, i) => {
        fired.length = 0;
        for (const at of ats) {
            at._localDelayOffset = -(t * 1000);
            at._pausedDelay = null;
            at._manualJumpDelay = null;
        }
        scene._animationTime = 0;
        scene._animate(0);
        if (i >= skip) expected.push(fired.slice());
    });
    for (const at of ats) at.stop();
    void animatable;
    sk.dispose();
    const name = `events ${seed}-${ci}: ${nb} bones, frames ${from}..${to} of ${L} at ${fps}, loop ${loop}, ${pose.times ? `${steps.length} times` : `frames ${pose.frames} at ${pose.fps}`}`;
    return { name, case: { skeleton: json, ops: [pose] }, expected };
}

// typed arrays (Skeleton.serialize()'s matrices) as JSON arrays
const plain = (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v);
for (let ci = 0; ci < count; ci++) process.stdout.write(JSON.stringify(makeCase(ci), plain) + "\n");
