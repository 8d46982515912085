// CORS in a real browser: a page served from another origin (a small
// server started here) calls skinnerd, started here with --cors-origin set
// to that page's origin, through fetch() in headless Debian chromium. The
// browser itself enforces CORS, so this checks what unit tests cannot: the
// preflights pass, the page can read every header it needs (ETag,
// Skinner-*) and the problem+json of errors, and a page of an origin not
// in the list gets nothing.
//
// env: SKINNERD (./skinnerd), CHROMIUM (/usr/bin/chromium)
// Prints "cors_browser: N passed, N failed"; exit 0 when all passed.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import puppeteer from "puppeteer-core";

const SKINNERD = process.env.SKINNERD || "./skinnerd";
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const SKEL = { bones: [{ name: "hips" }, { name: "spine", parent: "hips", position: [0, 1, 0] }] };

let passed = 0, failed = 0;
function check(ok, what, got) {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? "PASS" : "FAIL"}: ${what}${ok ? "" : ` (got ${JSON.stringify(got)})`}`);
}

// A blank page on 127.0.0.1 and a free port: the tool's origin.
function startOrigin() {
  const srv = createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/html" });
    res.end("<!doctype html><title>tool</title>");
  });
  return new Promise((r) => srv.listen(0, "127.0.0.1", () => r({ srv, base: `http://127.0.0.1:${srv.address().port}` })));
}

function startDaemon(origin) {
  return new Promise((res, rej) => {
    const p = spawn(SKINNERD, ["--listen", "127.0.0.1:0", "--cors-origin", origin], { stdio: ["ignore", "pipe", "inherit"] });
    process.on("exit", () => p.kill("SIGKILL")); // never outlive the test
    let buf = "";
    const t = setTimeout(() => rej(new Error("skinnerd did not print its address in 10 s")), 10000);
    p.stdout.on("data", (d) => {
      buf += d;
      const m = /listening on ([0-9.]+):(\d+)/.exec(buf);
      if (m) { clearTimeout(t); res({ proc: p, base: `http://${m[1]}:${m[2]}` }); }
    });
    p.on("exit", (code) => rej(new Error(`skinnerd exited ${code}`)));
  });
}

// Runs in the tool's page: an editing session through fetch().
async function session(api, skel) {
  const out = {};
  const json = { "Content-Type": "application/json" };
  let r = await fetch(`${api}/v1/skeletons/b`, { method: "PUT", headers: { ...json, "If-None-Match": "*" }, body: JSON.stringify(skel) });
  out.put = r.status;
  out.etag1 = r.headers.get("ETag");
  r = await fetch(`${api}/v1/skeletons/b`, { cache: "no-store" });
  out.getEtag = r.headers.get("ETag");
  r = await fetch(`${api}/v1/skeletons/b/bones`, {
    method: "PATCH", headers: { ...json, "If-Match": out.etag1 },
    body: JSON.stringify({ bones: { spine: { position: [0, 2, 0] } } }),
  });
  out.patch = r.status;
  out.etag2 = r.headers.get("ETag");
  r = await fetch(`${api}/v1/skeletons/b/bones`, {
    method: "PATCH", headers: { ...json, "If-Match": out.etag1 },
    body: JSON.stringify({ bones: { hips: { position: [5, 0, 0] } } }),
  });
  out.stale = r.status;
  out.staleEtag = r.headers.get("ETag");
  out.staleType = r.headers.get("Content-Type");
  out.staleDetail = (await r.json()).detail;
  r = await fetch(`${api}/v1/skeletons/b/pose`, { method: "POST", headers: { ...json, Accept: "application/octet-stream" }, body: "{}" });
  out.pose = r.status;
  out.boneCount = r.headers.get("Skinner-Bone-Count");
  out.poseEtag = r.headers.get("Skinner-Skeleton-ETag");
  out.poseBytes = (await r.arrayBuffer()).byteLength;
  r = await fetch(`${api}/v1/skeletons/none`);
  out.missing = r.status;
  out.missingDetail = (await r.json()).detail;
  r = await fetch(`${api}/v1/skeletons/b`, { method: "DELETE", headers: { "If-Match": out.etag2 } });
  out.del = r.status;
  try {
    await fetch(`${api}/v1/skeletons`, { headers: { "X-Debug": "1" } }); // not in Allow-Headers
    out.badHeader = "answered";
  } catch (e) {
    out.badHeader = e.name;
  }
  return out;
}

async function foreign(api) {
  try {
    await fetch(`${api}/v1/skeletons`);
    return "answered";
  } catch (e) {
    return e.name;
  }
}

async function main() {
  const tool = await startOrigin(), other = await startOrigin();
  const daemon = await startDaemon(tool.base);
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--no-first-run"] });
  try {
    const page = await browser.newPage();
    await page.goto(`${tool.base}/`);
    const o = await page.evaluate(session, daemon.base, SKEL);
    check(o.put === 201, "a preflighted PUT with If-None-Match: * creates", o.put);
    check(/^"[0-9a-f]{8}-\d+"$/.test(o.etag1 || ""), "the page reads the PUT's ETag", o.etag1);
    check(o.getEtag === o.etag1, "GET names the same version", o.getEtag);
    check(o.patch === 200 && o.etag2 && o.etag2 !== o.etag1, "PATCH with the current If-Match: 200 and a new ETag", [o.patch, o.etag2]);
    check(o.stale === 412 && o.staleEtag === o.etag2, "the second editor's PATCH on the old version: 412 naming the current one", [o.stale, o.staleEtag]);
    check(o.staleType === "application/problem+json" && /now at version/.test(o.staleDetail || ""), "the page reads the 412's problem+json", o.staleDetail);
    check(o.pose === 200 && o.boneCount === "2" && o.poseEtag === o.etag2 && o.poseBytes === 4 * 16 * 3, "a binary pose: the page reads Skinner-Bone-Count and Skinner-Skeleton-ETag", o);
    check(o.missing === 404 && /no skeleton/.test(o.missingDetail || ""), "the page reads a 404's detail", o.missingDetail);
    check(o.del === 204, "DELETE with If-Match: 204", o.del);
    check(o.badHeader === "TypeError", "a request header outside Allow-Headers fails its preflight", o.badHeader);
    const page2 = await browser.newPage();
    await page2.goto(`${other.base}/`);
    const f = await page2.evaluate(foreign, daemon.base);
    check(f === "TypeError", "a page of an origin not in --cors-origin cannot read the API", f);
  } finally {
    await browser.close();
    daemon.proc.kill("SIGTERM");
    tool.srv.close();
    other.srv.close();
  }
  console.log(`cors_browser: ${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

main().catch((e) => {
  console.log(`FAIL: ${e.stack || e}`);
  console.log(`cors_browser: ${passed} passed, ${failed + 1} failed`);
  process.exit(1);
});
