#!/usr/bin/env node
// Babylon.js oracle for the bone controllers on real assets (issue 13): loads a
// .glb with @babylonjs/loaders (NullEngine), samples an animation at every
// frame of a range as babylon_gltf.mjs does (goToFrame, skeleton.prepare(true)),
// runs ONE update() of a fresh BoneIKController or BoneLookController on
// Babylon's own bones with the skinned mesh as the controller's mesh, and
// prints every bone's world position (bone.getAbsolutePosition(mesh)) by name.
//
//   node babylon_gltf_ctrl.mjs --regenerate     rewrites tests/gltf/ctrl/*.json
//
// Each output file is {"case": <a skinner eval case>, "expected": [{bone: [x,y,z]}, ...]}:
// the case names the same .glb, carries the skinned mesh's TransformNode chain
// (position, rotationQuaternion, scaling of the mesh and each parent, as the
// loader built them) as its "mesh", and has one "pose" op per frame with the
// clip time, the controller op and "output": ["positions"]. The controller
// target of each frame is made from Babylon's pose of that frame. Positions
// are printed exactly (doubles, -0 as -0.0); tests/check_sk_ops compares them
// bit for bit as float32, as it does ops.jsonl's.

import { readFileSync, writeFileSync, mkdirSync } from "node:fs";

import { B, FPS, loadBytes, meshChain } from "./babylon_common.mjs";

const { BoneIKController, BoneLookController, Vector3 } = B;
// Positions are exact: each double as JSON writes it (shortest round trip),
// -0 as -0.0 (NEG0, replaced after the stringify).
const NEG0 = "\u0000-0\u0000";
const FMT = (x) => (Object.is(x, -0) ? NEG0 : x);
const here = new URL(".", import.meta.url);

// The real-asset scenarios: asset, clip, frame range, controller.
const SCENARIOS = [
    {
        out: "fox-walk-foot-ik.json",
        asset: "Fox.glb",
        animation: "Walk",
        from: 0,
        to: 0.7,
        fps: 30,
        // Left foot IK: bone = the lower leg, its parent the upper leg; the
        // target is the foot's own position at that frame, lifted and moved.
        make: (sk, mesh, bone) => ({
            op: { op: "ik", bone: "b_LeftLeg02_016" },
            target: (pos) => {
                const p = pos("b_LeftFoot01_017");
                return [p.x + 3, p.y + 12, p.z - 4];
            },
        }),
    },
    {
        out: "cesiumman-head-look-at.json",
        asset: "CesiumMan.glb",
        animation: 0,
        from: 0,
        to: 1.0,
        fps: 30,
        make: () => ({
            op: { op: "lookAt", bone: "Skeleton_neck_joint_2", maxYaw: 0.8, minYaw: -0.8, maxPitch: 0.5, minPitch: -0.5 },
            target: (pos) => {
                const p = pos("Skeleton_neck_joint_2");
                return [p.x + 0.6, p.y + 0.3, p.z - 0.8];
            },
        }),
    },
];

function r3(v) {
    return [FMT(v.x), FMT(v.y), FMT(v.z)];
}

async function runScenario(sc) {
    const bytes = new Uint8Array(readFileSync(new URL(`../data/${sc.asset}`, here)));
    const { engine, scene } = await loadBytes(bytes, ".glb");
    const sk = scene.skeletons[0];
    const mesh = scene.meshes.find((m) => m.skeleton === sk);
    if (sk.getPoseMatrix()) throw new Error(`${sc.asset}: a pose matrix: not modelled`);
    const nodes = scene.transformNodes.concat(scene.meshes);
    const saved = nodes.map((n) => ({ n, p: n.position.clone(), q: n.rotationQuaternion?.clone() ?? null, s: n.scaling.clone() }));
    const restore = () => {
        for (const { n, p, q, s } of saved) {
            n.position.copyFrom(p);
            if (q) n.rotationQuaternion.copyFrom(q);
            n.scaling.copyFrom(s);
        }
    };
    const group = typeof sc.animation === "number" ? scene.animationGroups[sc.animation] : scene.animationGroups.find((g) => g.name === sc.animation);
    const byName = new Map(sk.bones.map((b) => [b.name, b]));
    mesh.computeWorldMatrix(true);
    const caseOps = [];
    const expected = [];
    const frames = Math.floor((sc.to - sc.from) * sc.fps + 1e-9) + 1;
    for (let k = 0; k < frames; k++) {
        const t = sc.from + k / sc.fps;
        restore();
        group.start(false, 1, group.from, group.to);
        group.pause();
        group.goToFrame(t * FPS);
        sk.prepare(true);
        group.stop();
        for (const b of sk.bones) if (!b.getParent()) b.computeAbsoluteMatrices();
        const pos = (name) => byName.get(name).getAbsolutePosition(mesh);
        const { op, target } = sc.make(sk, mesh);
        const tgt = target(pos);
        const o = { ...op, target: tgt };
        const bone = byName.get(op.bone);
        const v = new Vector3(...tgt);
        if (op.op === "ik") {
            // {} options: the pole bone defaults to the grandparent, as the op's does.
            const ik = new BoneIKController(mesh, bone, {});
            ik.targetPosition.copyFrom(v);
            ik.update();
        } else new BoneLookController(mesh, bone, v, { ...op }).update();
        for (const b of sk.bones) if (!b.getParent()) b.computeAbsoluteMatrices();
        const res = {};
        for (const b of sk.bones) res[b.name] = r3(b.getAbsolutePosition(mesh));
        expected.push(res);
        caseOps.push({ op: "pose", animation: group.name, time: t, ops: [o], output: ["positions"] });
    }
    const c = { skeleton: { gltf: `../../data/${sc.asset}` }, mesh: meshChain(mesh), ops: caseOps };
    engine.dispose();
    return { name: `${sc.asset} ${group.name} ${sc.from}..${sc.to}s at ${sc.fps} fps, ${sc.make().op.op}`, case: c, expected };
}

async function main(argv) {
    if (argv[0] !== "--regenerate") {
        console.error("usage: babylon_gltf_ctrl.mjs --regenerate");
        return 2;
    }
    const dir = new URL("../gltf/ctrl/", here);
    mkdirSync(dir, { recursive: true });
    for (const sc of SCENARIOS) {
        const r = await runScenario(sc);
        writeFileSync(new URL(sc.out, dir), JSON.stringify(r).replaceAll(JSON.stringify(NEG0), "-0.0") + "\n");
        console.error(`wrote tests/gltf/ctrl/${sc.out}: ${r.expected.length} frames`);
    }
    return 0;
}

process.exitCode = await main(process.argv.slice(2));
