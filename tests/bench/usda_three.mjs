// Reads a USD ASCII layer with three.js's USDLoader (a reader this project did not write)
// and prints one JSON line per mesh: its name and the float32 positions three.js built
// (the points at time code 0, or the first sample, expanded over faceVertexIndices).
// tests/skinner_frames_usda.py runs it when tests/bench/node_modules has three
// (cd tests/bench && npm install): `node tests/bench/usda_three.mjs FILE.usda`.
import { readFileSync } from "node:fs";
import { USDLoader } from "three/addons/loaders/USDLoader.js";

const group = new USDLoader().parse(readFileSync(process.argv[2], "utf8"));
group.traverse((o) => {
    if (!o.isMesh) return;
    const p = o.geometry.attributes.position;
    const idx = o.geometry.index ? Array.from(o.geometry.index.array) : null;
    console.log(JSON.stringify({ name: o.name, positions: Array.from(p.array), index: idx }));
});
