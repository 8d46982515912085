// The daemon's API v1, as any client calls it. Every call records itself as
// a curl line (the numbers panel shows the last one) and turns a 4xx/5xx
// into an ApiError carrying the problem+json detail and pointer.

export class ApiError extends Error {
  constructor(status, problem, what) {
    const detail = problem?.detail || problem?.title || `HTTP ${status}`;
    super(`${what}: ${status} ${detail}${problem?.pointer ? ` (at ${problem.pointer})` : ""}`);
    this.status = status;
    this.problem = problem;
  }
}

function shellQuote(s) {
  return "'" + String(s).replace(/'/g, "'\\''") + "'";
}

export class Api {
  constructor(base = "") {
    this.base = base;
    this.lastCurl = "";
    this.onRequest = null; // (curl line) => void
    this.sent = 0; // requests sent (the tests check playback is not one per frame)
    // id → the ETag of the version this page last read or wrote: what its
    // uploads replacing that skeleton send as If-Match.
    this.etags = new Map();
  }

  async call(method, path, { body, type, accept, what, headers: extra } = {}) {
    const headers = { ...extra };
    if (type) headers["Content-Type"] = type;
    if (accept) headers["Accept"] = accept;
    const url = this.base + path;
    const parts = ["curl", "-sS", "-X", method];
    for (const [k, v] of Object.entries(headers)) parts.push("-H", shellQuote(`${k}: ${v}`));
    if (body instanceof ArrayBuffer || ArrayBuffer.isView(body) || body instanceof Blob) parts.push("--data-binary", "@FILE.glb");
    else if (body !== undefined) parts.push("--data-binary", shellQuote(body));
    parts.push(shellQuote(new URL(url, location.href).href));
    if (accept && accept !== "application/json") parts.push("-o", "frames.bin");
    this.lastCurl = parts.join(" ");
    this.sent++;
    if (this.onRequest) this.onRequest(this.lastCurl);
    let res;
    try {
      res = await fetch(url, { method, headers, body });
    } catch (e) {
      throw new ApiError(0, { detail: `the daemon did not answer (${e.message})` }, what || `${method} ${path}`);
    }
    if (!res.ok) {
      let problem = null;
      try { problem = await res.json(); } catch { problem = { detail: res.statusText }; }
      throw new ApiError(res.status, problem, what || `${method} ${path}`);
    }
    return res;
  }

  async list() {
    return (await (await this.call("GET", "/v1/skeletons")).json()).skeletons;
  }

  async skeleton(id) {
    const res = await this.call("GET", `/v1/skeletons/${encodeURIComponent(id)}`);
    const info = await res.json();
    if (res.headers.get("ETag")) this.etags.set(id, res.headers.get("ETag"));
    return info;
  }

  // Replaces skeleton `id` only at the version this page read (If-Match), or
  // creates it only if nobody has meanwhile (If-None-Match: *, when `exists`
  // is false). A skeleton listed but never read is read first (HEAD) so the
  // replace is at least against what is stored now. A 412 becomes a message
  // saying what happened and what to do.
  async upload(id, glb, exists) {
    const path = `/v1/skeletons/${encodeURIComponent(id)}`;
    if (exists && !this.etags.has(id)) {
      const head = await this.call("HEAD", path, { what: "upload" });
      if (head.headers.get("ETag")) this.etags.set(id, head.headers.get("ETag"));
    }
    const headers = exists ? { "If-Match": this.etags.get(id) || "*" } : { "If-None-Match": "*" };
    let res;
    try {
      res = await this.call("PUT", path, { body: glb, type: "model/gltf-binary", what: "upload", headers });
    } catch (e) {
      if (e.status !== 412) throw e;
      const why = exists ? `"${id}" was changed by someone else since this page read it` : `"${id}" was created by someone else meanwhile`;
      const err = new ApiError(412, { detail: `${why}: reload it (the reload button), then upload again`, pointer: e.problem?.pointer }, "upload");
      err.reload = id;
      throw err;
    }
    if (res.headers.get("ETag")) this.etags.set(id, res.headers.get("ETag"));
    return res.json();
  }

  // Final matrices as mat3x4 (12 floats per matrix, B+1 per pose, poses back
  // to back) with the answer's counts and the server's time for the call.
  async framesMat3x4(id, pose) {
    const t0 = performance.now();
    const res = await this.call("POST", `/v1/skeletons/${encodeURIComponent(id)}/pose`,
      { body: JSON.stringify(pose), type: "application/json", accept: "application/x-skinner-mat3x4", what: "pose" });
    const data = new Float32Array(await res.arrayBuffer());
    const ms = performance.now() - t0;
    const poses = Number(res.headers.get("Skinner-Pose-Count")) || 1;
    const mats = Number(res.headers.get("Skinner-Matrix-Count")) || data.length / 12 / poses;
    if (data.length !== poses * mats * 12) throw new Error(`pose answer has ${data.length} floats, expected ${poses * mats * 12}`);
    return { data, poses, mats, ms };
  }

  async poseJson(id, pose) {
    const res = await this.call("POST", `/v1/skeletons/${encodeURIComponent(id)}/pose`,
      { body: JSON.stringify(pose), type: "application/json", what: "pose" });
    return res.json();
  }
}
