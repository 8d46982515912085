#!/usr/bin/env node
// Writes tests/data/gen/walker.glb, the in-place root-motion asset of issue 34
// (deterministic: the same bytes every run).
// `cd tests/data/gen && npm install && node make_rootmotion_assets.mjs`.
//
// A stick walker: joint "hips" (the skeleton root, under the scene) with leaf
// joints "head" (static, high), "footL" and "footR" (translation keys in the
// hips' space), skinning a small box. One cycle is 1 s, keyed at 30 per second
// (LINEAR). A foot is on the ground for 60 % of the cycle, sliding back 0.6 at
// 1 unit a second, then swings forward 0.15 high; the feet are half a cycle
// apart; the hips bob 0.03.
//  * "walk": in place (the hips bob, never travel): Babylon finds the travel
//    in the planted feet (footContact), 1 unit a cycle along +Z.
//  * "walk_root": the same feet, the hips travelling 1 unit a cycle along +Z
//    with a sway and a lateral drift of 0.04 a cycle (source root; the
//    in-place group removes the travel and the drift from the hips' keys).
//  * "turn_walk": the hips walk a quarter circle, turning 90 degrees about +Y
//    over the cycle (source root with the rotation extracted: the in-place
//    group rewrites the hips' position and rotation keys).
//  * "step_walk": "walk_root" with STEP hips keys.
//  * "cubic_walk", "cubic_turn": "walk_root" and "turn_walk" with CUBICSPLINE
//    hips keys (the tangents the paths' derivatives).
// Licence: made for this project, same licence as the project (tests/data/LICENSES.md).

import { Document, NodeIO } from "@gltf-transform/core";
import { writeFileSync } from "node:fs";

const quatY = (a) => [0, Math.sin(a / 2), 0, Math.cos(a / 2)];
const N = 30; // keys a cycle
const ts = Array.from({ length: N + 1 }, (_, i) => i / N);
const STANCE = 0.6, SPEED = 1, LIFT = 0.15, HALF = (STANCE * SPEED) / 2;
const hipsHeight = (t) => 0.9 + 0.03 * Math.cos(4 * Math.PI * t);

/** A foot's position relative to the character at phase t (0..1): z and height. */
function foot(t) {
    const p = ((t % 1) + 1) % 1;
    if (p < STANCE) return [HALF - SPEED * p, 0];
    const s = (p - STANCE) / (1 - STANCE);
    return [-HALF + 2 * HALF * s, LIFT * Math.sin(Math.PI * s)];
}

function walker() {
    const doc = new Document();
    doc.getRoot().getAsset().generator = "skinnerd tests/data/gen/make_rootmotion_assets.mjs (walker)";
    const buffer = doc.createBuffer("bin");
    const acc = (type, array) => doc.createAccessor().setType(type).setArray(array).setBuffer(buffer);
    const scene = doc.createScene("scene");
    const hips = doc.createNode("hips").setTranslation([0, hipsHeight(0), 0]);
    const head = doc.createNode("head").setTranslation([0, 0.7, 0]);
    const footL = doc.createNode("footL").setTranslation([0.15, -0.9, 0]);
    const footR = doc.createNode("footR").setTranslation([-0.15, -0.9, 0]);
    hips.addChild(head).addChild(footL).addChild(footR);
    const joints = [hips, head, footL, footR];
    // Inverse binds of the rest pose (translations only).
    const world = [[0, 0.93, 0], [0, 1.63, 0], [0.15, 0.03, 0], [-0.15, 0.03, 0]];
    const ibm = world.flatMap(([x, y, z]) => [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -x, -y, -z, 1]);
    const skin = doc.createSkin("skin").setSkeleton(hips);
    joints.forEach((j) => skin.addJoint(j));
    skin.setInverseBindMatrices(acc("MAT4", new Float32Array(ibm)));
    // A box from the feet to the head, each corner on its nearest joint.
    const pos = [], J = [], W = [];
    for (const y of [0, 0.9, 1.6])
        for (const [x, z] of [[-0.2, -0.1], [0.2, -0.1], [0.2, 0.1], [-0.2, 0.1]]) {
            pos.push(x, y, z);
            J.push(y === 0 ? (x > 0 ? 2 : 3) : y > 1 ? 1 : 0, 0, 0, 0);
            W.push(1, 0, 0, 0);
        }
    const idx = [];
    for (let r = 0; r < 2; r++)
        for (let k = 0; k < 4; k++) {
            const a = r * 4 + k, b = r * 4 + ((k + 1) % 4);
            idx.push(a, a + 4, b, b, a + 4, b + 4);
        }
    const prim = doc.createPrimitive()
        .setAttribute("POSITION", acc("VEC3", new Float32Array(pos)))
        .setAttribute("JOINTS_0", acc("VEC4", new Uint16Array(J)))
        .setAttribute("WEIGHTS_0", acc("VEC4", new Float32Array(W)))
        .setIndices(acc("SCALAR", new Uint16Array(idx)));
    const body = doc.createNode("body").setMesh(doc.createMesh("box").addPrimitive(prim)).setSkin(skin);
    scene.addChild(hips).addChild(body);

    // CUBICSPLINE hips: each key (in-tangent, value, out-tangent), the tangents the path's derivative (per second).
    const cubic = (f, df) => (t) => [...df(t), ...f(t), ...df(t)];
    const clip = (name, hipsPos, hipsRot, interp = "LINEAR") => {
        const anim = doc.createAnimation(name);
        const add = (node, path, type, values, ip = "LINEAR") => {
            const s = doc.createAnimationSampler().setInput(acc("SCALAR", new Float32Array(ts)))
                .setOutput(acc(type, new Float32Array(values))).setInterpolation(ip);
            anim.addSampler(s).addChannel(doc.createAnimationChannel().setTargetNode(node).setTargetPath(path).setSampler(s));
        };
        add(hips, "translation", "VEC3", ts.flatMap(hipsPos), interp);
        if (hipsRot) add(hips, "rotation", "VEC4", ts.flatMap(hipsRot), interp);
        // The feet in the hips' space: planted on the ground of the character.
        for (const [node, x, phase] of [[footL, 0.15, 0], [footR, -0.15, 0.5]])
            add(node, "translation", "VEC3", ts.flatMap((t) => {
                const [z, h] = foot(t + phase);
                return [x, h - hipsHeight(t), z];
            }));
    };
    clip("walk", (t) => [0, hipsHeight(t), 0]);
    const rooted = (t) => [0.02 * Math.sin(2 * Math.PI * t) + 0.04 * t, hipsHeight(t), SPEED * t];
    clip("walk_root", rooted);
    // A quarter circle of length 1: radius 2 / PI, heading turning with the path.
    const R = 2 / Math.PI;
    clip("turn_walk", (t) => [R * (1 - Math.cos((Math.PI / 2) * t)), hipsHeight(t), R * Math.sin((Math.PI / 2) * t)],
        (t) => quatY((Math.PI / 2) * t));
    clip("step_walk", rooted, null, "STEP");
    const dHeight = (t) => -0.03 * 4 * Math.PI * Math.sin(4 * Math.PI * t);
    clip("cubic_walk", cubic(rooted, (t) => [0.02 * 2 * Math.PI * Math.cos(2 * Math.PI * t) + 0.04, dHeight(t), SPEED]),
        null, "CUBICSPLINE");
    const turnPos = (t) => [R * (1 - Math.cos((Math.PI / 2) * t)), hipsHeight(t), R * Math.sin((Math.PI / 2) * t)];
    const a = Math.PI / 2;
    clip("cubic_turn", cubic(turnPos, (t) => [R * a * Math.sin(a * t), dHeight(t), R * a * Math.cos(a * t)]),
        cubic((t) => quatY(a * t), (t) => [0, (a / 2) * Math.cos((a * t) / 2), 0, -(a / 2) * Math.sin((a * t) / 2)]),
        "CUBICSPLINE");
    return doc;
}

const bytes = await new NodeIO().writeBinary(walker());
writeFileSync(new URL("walker.glb", import.meta.url), bytes);
console.error(`make_rootmotion_assets: tests/data/gen/walker.glb, ${bytes.length} bytes`);
