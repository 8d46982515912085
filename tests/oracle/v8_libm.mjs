// V8's Math.tan, acos, asin, atan and atan2 on arguments where they are
// hard to get right (tests/data/v8_libm.txt, read by tests/check_sk_fdlibm.c):
//
//   node tests/oracle/v8_libm.mjs > tests/data/v8_libm.txt          # 1,000 a function
//   node tests/oracle/v8_libm.mjs 1000000 7 > /tmp/v8_libm_big.txt   # count, seed
//   SK_V8_LIBM=/tmp/v8_libm_big.txt tests/check_sk_fdlibm
//
// One line per call: the function's name, its arguments and its result as
// the 16 hex digits of their IEEE-754 bits (atan2: y, then x). Deterministic
// (mulberry32): uniform draws, every binade from 2^-60 to 2^70, the edges of
// fdlibm's intervals (acos/asin at 0.5, 0.975 and within a few ulps of 1;
// atan at 7/16, 11/16, 19/16, 39/16, 2^66; tan at 0.6744 and near multiples
// of pi/2), Babylon-like values (slerp dots, half-angles, Euler read-back
// pairs), all four quadrants and y/x ratios past 2^+-60 for atan2, signed
// zeros, infinities and NaN.
import { mulberry32 } from "./gen_common.mjs";

const count = Number(process.argv[2] ?? 1000);
const rnd = mulberry32(Number(process.argv[3] ?? 2026));
const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);
const bits = (x) => {
    f64[0] = x;
    return u64[0].toString(16).padStart(16, "0");
};
const fromBits = (b) => {
    u64[0] = b;
    return f64[0];
};
const sign = () => (rnd() < 0.5 ? -1 : 1);
const binade = (lo, hi) => sign() * (1 + rnd()) * 2 ** Math.floor(lo + rnd() * (hi - lo));
// x moved by k ulps (k may be negative), x > 0
const ulps = (x, k) => {
    f64[0] = x;
    return fromBits(u64[0] + BigInt(k));
};
const specials = [0, -0, 1, -1, 0.5, -0.5, 2 ** -1074, -(2 ** -1074), 2 ** -1022, 1e-300, Infinity, -Infinity, NaN,
    Math.PI, -Math.PI, Math.PI / 2, Math.PI / 4, 2 ** 66, 1e300];

function unitArg() { // for acos and asin
    const k = Math.floor(rnd() * 7);
    if (k === 0) return (rnd() - 0.5) * 2;
    if (k === 1) return sign() * ulps(1, -Math.floor(rnd() * 64) - 1);
    if (k === 2) return sign() * (1 - rnd() * 2 ** -Math.floor(rnd() * 52));
    if (k === 3) return sign() * ulps([0.5, 0.975, 0.9750000000000001][Math.floor(rnd() * 3)], Math.floor(rnd() * 64) - 32);
    if (k === 4) return binade(-60, 0);
    if (k === 5) return 0.9 + rnd() * 0.099999; // slerp dots
    return sign() * (1 + rnd() * 2 ** -Math.floor(rnd() * 52)); // just past 1: NaN
}

function realArg() { // for atan
    const k = Math.floor(rnd() * 4);
    if (k === 0) return (rnd() - 0.5) * 8;
    if (k === 1) return binade(-60, 70);
    if (k === 2) return sign() * ulps([7 / 16, 11 / 16, 19 / 16, 39 / 16, 2 ** 66][Math.floor(rnd() * 5)],
        Math.floor(rnd() * 64) - 32);
    return Math.round((rnd() - 0.5) * 2e4) / 1e4;
}

function angleArg() { // for tan
    const k = Math.floor(rnd() * 5);
    if (k === 0) return (rnd() - 0.5) * 2 * Math.PI;
    if (k === 1) return sign() * ulps(0.6744, Math.floor(rnd() * 2 ** 20) - 2 ** 19);
    if (k === 2) return Math.floor(rnd() * 200 - 100) * Math.PI / 2 + (rnd() - 0.5) * 1e-6;
    if (k === 3) return binade(-60, 19);
    return Math.round((rnd() - 0.5) * 2 * Math.PI * 1e4) / 1e4; // 4-decimal pitch limits
}

function pairArg() { // for atan2: [y, x]
    const k = Math.floor(rnd() * 6);
    if (k === 0) return [(rnd() - 0.5) * 4, (rnd() - 0.5) * 4];
    if (k === 1) return [binade(-60, 60), binade(-60, 60)];
    if (k === 2) { // Euler read-back of a random unit quaternion: as quat_to_euler forms them
        const q = [0, 0, 0, 0].map(() => rnd() - 0.5);
        const n = Math.hypot(...q);
        const [qx, qy, qz, qw] = q.map((v) => v / n);
        const sqw = qw * qw, sqz = qz * qz, sqx = qx * qx, sqy = qy * qy;
        return rnd() < 0.5 ? [2.0 * (qx * qy + qz * qw), -sqz - sqx + sqy + sqw]
            : [2.0 * (qz * qx + qy * qw), sqz - sqx - sqy + sqw];
    }
    if (k === 3) { // |y/x| around 2^+-60 and x = 1
        const y = binade(-30, 30);
        const r = rnd();
        return [y, r < 0.4 ? y * 2 ** (60 + Math.floor(rnd() * 3) - 1) * sign()
            : r < 0.8 ? y * 2 ** -(60 + Math.floor(rnd() * 3) - 1) * sign() : 1];
    }
    if (k === 4) return [specials[Math.floor(rnd() * specials.length)], specials[Math.floor(rnd() * specials.length)]];
    return [specials[Math.floor(rnd() * specials.length)] * rnd(), (rnd() - 0.5) * 10];
}

const out = [];
// tan past 2^19 * pi/2 runs fdlibm's multi-precision reduction, which
// sk_fdlibm leaves to the C library (see sk_fdlibm.h): not compared.
const emit = (name, args, r) => {
    if (name !== "tan" || !(Math.abs(args[0]) > 823549))
        out.push(`${name} ${args.map(bits).join(" ")} ${bits(r)}`);
};
for (const x of specials) {
    emit("tan", [x], Math.tan(x));
    emit("acos", [x], Math.acos(x));
    emit("asin", [x], Math.asin(x));
    emit("atan", [x], Math.atan(x));
}
for (let i = 0; i < count; i++) {
    const t = angleArg(), u = unitArg(), v = unitArg(), a = realArg(), [y, x] = pairArg();
    emit("tan", [t], Math.tan(t));
    emit("acos", [u], Math.acos(u));
    emit("asin", [v], Math.asin(v));
    emit("atan", [a], Math.atan(a));
    emit("atan2", [y, x], Math.atan2(y, x));
    if (out.length >= 50000) {
        process.stdout.write(out.join("\n") + "\n");
        out.length = 0;
    }
}
if (out.length)
    process.stdout.write(out.join("\n") + "\n");
