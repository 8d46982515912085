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

import { B, drawSteps, fireSteps, seeded } from "./babylon_common.mjs";

const { NullEngine, Scene, Skeleton, Bone, Animation, AnimationEvent, Matrix, Vector3 } = B;

const seed = Number(process.argv[2] ?? 34);
const count = Number(process.argv[3] ?? 24);
const rnd = seeded(seed);
const { r, pick, int } = rnd;

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
    const pose = { op: "pose", animation: "r", loop, events: true };
    const { steps, skip } = drawSteps(rnd, pose, 0.3, [24, 30, 60, 12], 120);
    const animatable = sk.beginAnimation("r", loop);
    const ats = scene._activeAnimatables.slice();
    const expected = fireSteps(scene, ats, steps, skip, fired);
    for (const at of ats) at.stop();
    void animatable;
    sk.dispose();
    const name = `events ${seed}-${ci}: ${nb} bones, frames ${from}..${to} of ${L} at ${fps}, loop ${loop}, ${pose.times ? `${steps.length} times` : `frames ${pose.frames} at ${pose.fps}`}`;
    return { name, case: { skeleton: json, ops: [pose] }, expected };
}

// typed arrays (Skeleton.serialize()'s matrices) as JSON arrays
const plain = (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v);
for (let ci = 0; ci < count; ci++) process.stdout.write(JSON.stringify(makeCase(ci), plain) + "\n");
