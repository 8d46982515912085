// What the seeded case generators (gen_cases.mjs, gen_ops.mjs,
// gen_banim.mjs) share: the PRNG, a drawing helper on top of it, short
// decimals, the size bound on results, the command line and the output.
// Deterministic by construction: mulberry32 is the only randomness, so the
// same seed gives byte-identical output (Math.random is never used).

/** Largest |number| a drawn case may produce before it is drawn again. */
export const MAX_ABS = 1e5;

/** mulberry32: a 32-bit state PRNG, returns floats in [0, 1). */
export function mulberry32(seed) {
    let a = seed >>> 0;
    return function () {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

/** Draws from one mulberry32 stream; every method consumes it in a fixed way. */
export class Gen {
    constructor(seed) {
        this.r = mulberry32(seed);
    }
    f() {
        return this.r();
    }
    range(a, b) {
        return a + (b - a) * this.r();
    }
    int(a, b) {
        // inclusive
        return a + Math.floor(this.r() * (b - a + 1));
    }
    chance(p) {
        return this.r() < p;
    }
    pick(arr) {
        return arr[Math.floor(this.r() * arr.length)];
    }
    weighted(pairs) {
        let total = 0;
        for (const [, w] of pairs) total += w;
        let x = this.r() * total;
        for (const [v, w] of pairs) {
            if ((x -= w) < 0) return v;
        }
        return pairs[pairs.length - 1][0];
    }
    shuffle(arr) {
        const a = arr.slice();
        for (let i = a.length - 1; i > 0; i--) {
            const j = Math.floor(this.r() * (i + 1));
            [a[i], a[j]] = [a[j], a[i]];
        }
        return a;
    }
}

// Short decimals keep the committed files small; the value is still an
// arbitrary double that Babylon rounds to float32 when it stores a matrix.
export const rnd = (x, d = 4) => {
    const p = 10 ** d;
    const v = Math.round(x * p) / p;
    return v === 0 ? 0 : v;
};

/**
 * `--seed S --count N [--named]` (and any flags in `extra`, each taking a
 * number) from argv. Returns {seed, count, named, ...extra} or null after
 * printing the usage of `name` (an unknown flag, or a seed outside
 * [0, 2^32) or a negative count).
 */
export function parseGenArgs(name, argv, defaults = {}, extra = []) {
    const o = { seed: null, count: null, named: false, ...defaults };
    for (let i = 0; i < argv.length; i++) {
        if (argv[i] === "--seed") o.seed = Number(argv[++i]);
        else if (argv[i] === "--count") o.count = Number(argv[++i]);
        else if (argv[i] === "--named") o.named = true;
        else if (extra.includes(argv[i])) o[argv[i].slice(2)] = Number(argv[++i]);
        else {
            console.error(`usage: ${name} --seed S --count N [--named]${extra.map((f) => ` [${f} N]`).join("")}`);
            return null;
        }
    }
    if (!Number.isInteger(o.seed) || o.seed < 0 || o.seed > 0xffffffff || !Number.isInteger(o.count) || o.count < 0) {
        console.error(`${name}: --seed must be an integer in [0, 2^32) and --count a non-negative integer`);
        return null;
    }
    return o;
}

/** Writes JSON Lines to stdout: one line each, a newline after the last. */
export function writeLines(lines) {
    process.stdout.write(lines.join("\n") + (lines.length ? "\n" : ""));
}
