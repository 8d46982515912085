#!/usr/bin/env node
// Compares `skinner eval` results with the Babylon oracle's.
//
//   node compare.mjs [--max-report N] EXPECTED ACTUAL
//
// EXPECTED: a JSON file or JSON Lines; each item is a result {"order", "results"}
//   or a wrapper {"name", "case", "expected"} (as in tests/conformance/*.jsonl).
// ACTUAL:   the same kinds of file, or a directory holding one NNNNN.json per
//   case (0-based position in EXPECTED, 5 digits) and optionally NNNNN.err
//   (the tool's stderr, quoted when the case fails).
//
// A case passes when "order" is identical, the results have the same count and
// keys, and every number is bit for bit Babylon's: float32(actual) and
// float32(expected) are the same value, the sign of zero included
// (babylon_eval.mjs writes -0 as -0.0). A number off by more than 1e-5 * max(1, largest |entry| of that
// expected 16-number matrix) is reported as a wrong answer, one within it as
// "close but not bit for bit": both fail. An expected {"error"} (a case Babylon
// rejects) passes when the actual output is missing or an {"error"} too.
// Prints one line per failure (up to N, default 20) and then
//   conformance: P passed, F failed (X bit-exact)
// Exit status: 0 all passed, 1 any failure, 2 usage or unreadable EXPECTED.

import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const REL_TOL = 1e-5;

function parseDoc(text) {
    const t = text.trim();
    if (t === "") return [];
    try {
        return [JSON.parse(t)];
    } catch {
        return t.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
    }
}

function unwrapExpected(item, k) {
    if (item && typeof item === "object" && ("expected" in item || "case" in item)) {
        const name = item.name ?? `#${k}`;
        if ("expected" in item) return { name, value: item.expected };
        return { name, value: { error: item.error ?? "no expected result" } };
    }
    return { name: `#${k}`, value: item };
}

/** Returns an array of {value} | {missing: reason}, one per expected case. */
function loadActual(path, n) {
    if (statSync(path).isDirectory()) {
        const out = [];
        for (let k = 0; k < n; k++) {
            const base = join(path, String(k).padStart(5, "0"));
            const errFile = `${base}.err`;
            const errText = existsSync(errFile) ? readFileSync(errFile, "utf8").trim().split("\n")[0] : "";
            const why = (what) => ({ missing: errText ? `${what}; stderr: ${errText}` : what });
            if (!existsSync(`${base}.json`)) {
                out.push(why("no output file"));
                continue;
            }
            const text = readFileSync(`${base}.json`, "utf8");
            if (text.trim() === "") {
                out.push(why("empty output"));
                continue;
            }
            try {
                out.push({ value: JSON.parse(text) });
            } catch (e) {
                out.push(why(`output is not JSON (${e.message})`));
            }
        }
        return out;
    }
    const items = parseDoc(readFileSync(path, "utf8")).map((it, k) => ({ value: unwrapExpected(it, k).value }));
    while (items.length < n) items.push({ missing: "no output line" });
    return items;
}

const isErr = (v) => v && typeof v === "object" && "error" in v && !("results" in v);

/** Compares one case; returns {ok, exact, why}. */
export function compareResult(exp, act) {
    if (isErr(exp)) {
        return act === undefined || isErr(act) ? { ok: true, exact: true } : { ok: false, why: `Babylon rejects this case (${exp.error}) but a result was produced` };
    }
    if (act === undefined) return { ok: false, why: "no result" };
    if (isErr(act)) return { ok: false, why: `error: ${act.error}` };
    if (!act || typeof act !== "object") return { ok: false, why: "result is not an object" };
    if (JSON.stringify(act.order) !== JSON.stringify(exp.order)) {
        return { ok: false, why: `order differs: expected ${JSON.stringify(exp.order).slice(0, 200)}, got ${JSON.stringify(act.order ?? null).slice(0, 200)}` };
    }
    if (!Array.isArray(act.results) || act.results.length !== exp.results.length) {
        return { ok: false, why: `expected ${exp.results.length} results, got ${Array.isArray(act.results) ? act.results.length : "none"}` };
    }
    let exact = true;
    let firstClose = "";
    for (let r = 0; r < exp.results.length; r++) {
        const er = exp.results[r];
        const ar = act.results[r];
        const ek = Object.keys(er);
        if (!ar || typeof ar !== "object" || JSON.stringify(Object.keys(ar).sort()) !== JSON.stringify(ek.slice().sort())) {
            return { ok: false, why: `results[${r}]: expected keys ${ek.join(",")}, got ${ar && typeof ar === "object" ? Object.keys(ar).join(",") : typeof ar}` };
        }
        for (const key of ek) {
            const e = er[key];
            const a = ar[key];
            if (!Array.isArray(a) || a.length !== e.length) {
                return { ok: false, why: `results[${r}].${key}: expected ${e.length} numbers, got ${Array.isArray(a) ? a.length : typeof a}` };
            }
            for (let s = 0; s < e.length; s += 16) {
                let big = 1;
                for (let j = s; j < s + 16 && j < e.length; j++) big = Math.max(big, Math.abs(e[j]));
                const tol = REL_TOL * big;
                for (let j = s; j < s + 16 && j < e.length; j++) {
                    const x = a[j];
                    if (typeof x !== "number" || !Number.isFinite(x) || !(Math.abs(x - e[j]) <= tol)) {
                        return {
                            ok: false,
                            why: `results[${r}].${key} slot ${s / 16} m[${j - s}]: expected ${e[j]}, got ${x} (diff ${typeof x === "number" ? Math.abs(x - e[j]) : "n/a"}, tolerance ${tol})`,
                        };
                    }
                    if (exact && !Object.is(Math.fround(x), Math.fround(e[j]))) {
                        exact = false;
                        firstClose = `results[${r}].${key} slot ${s / 16} m[${j - s}]: expected ${e[j]}, got ${x}: close (within ${tol}) but not bit for bit`;
                    }
                }
            }
        }
    }
    return exact ? { ok: true, exact } : { ok: false, exact, why: firstClose };
}

function main(argv) {
    let maxReport = 20;
    const files = [];
    for (let i = 0; i < argv.length; i++) {
        if (argv[i] === "--max-report") maxReport = Number(argv[++i]);
        else files.push(argv[i]);
    }
    if (files.length !== 2 || !Number.isInteger(maxReport)) {
        console.error("usage: compare.mjs [--max-report N] EXPECTED ACTUAL");
        return 2;
    }
    let expected;
    try {
        expected = parseDoc(readFileSync(files[0], "utf8")).map(unwrapExpected);
    } catch (e) {
        console.error(`compare: cannot read ${files[0]}: ${e.message}`);
        return 2;
    }
    let actual;
    try {
        actual = loadActual(files[1], expected.length);
    } catch (e) {
        console.error(`compare: cannot read ${files[1]}: ${e.message}`);
        return 2;
    }
    let passed = 0;
    let failed = 0;
    let exact = 0;
    expected.forEach(({ name, value }, k) => {
        const act = actual[k];
        const res = act.missing !== undefined && !isErr(value) ? { ok: false, why: act.missing } : compareResult(value, act.value);
        if (res.ok) {
            passed++;
            if (res.exact) exact++;
        } else {
            failed++;
            if (failed <= maxReport) console.log(`FAIL ${name}: ${res.why}`);
        }
    });
    if (actual.length > expected.length) {
        console.log(`FAIL ${files[1]} has ${actual.length - expected.length} more results than ${files[0]}`);
        failed++;
    }
    if (failed > maxReport) console.log(`... ${failed - maxReport} more failures not shown`);
    console.log(`conformance: ${passed} passed, ${failed} failed (${exact} bit-exact)`);
    return failed ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
    process.exitCode = main(process.argv.slice(2));
}
