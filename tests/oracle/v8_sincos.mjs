// V8's Math.sin and Math.cos on arguments where they are hard to get right
// (tests/data/v8_sincos.txt, read by tests/check_sk_fdlibm.c):
//
//   node tests/oracle/v8_sincos.mjs > tests/data/v8_sincos.txt
//
// One line per argument: x, sin(x), cos(x) as the 16 hex digits of their
// IEEE-754 bits. Deterministic (mulberry32): small angles, the half-angles
// of 4-decimal Euler angles the generators draw, large ones, near multiples
// of pi/2, tiny ones, zeros, infinities and NaN.
import { mulberry32 } from "./gen_common.mjs";

const rnd = mulberry32(2026);
const bits = (x) => {
    const b = new DataView(new ArrayBuffer(8));
    b.setFloat64(0, x);
    return b.getBigUint64(0).toString(16).padStart(16, "0");
};
const xs = [0, -0, 1e-300, -5e-324, 2 ** -27, Math.PI / 4, Math.PI / 2, -Math.PI / 2, Math.PI, 3 * Math.PI / 4,
    2 ** 19 * Math.PI / 2, 823549.5, Infinity, -Infinity, NaN];
for (let i = 0; i < 4000; i++) {
    const k = i % 5;
    if (k === 0) xs.push((rnd() - 0.5) * 20);
    else if (k === 1) xs.push(Math.round((rnd() - 0.5) * 2 * Math.PI * 1e4) / 1e4 * 0.5);
    else if (k === 2) xs.push((rnd() - 0.5) * 1.6e6);
    else if (k === 3) xs.push(Math.floor(rnd() * 200 - 100) * Math.PI / 2 + (rnd() - 0.5) * 1e-6);
    else xs.push((rnd() - 0.5) * 2 ** (Math.floor(rnd() * 40) - 40));
}
process.stdout.write(xs.map((x) => `${bits(x)} ${bits(Math.sin(x))} ${bits(Math.cos(x))}`).join("\n") + "\n");
