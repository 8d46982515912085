export const VERSION = "1.0.0";
export const MAT4 = "application/octet-stream";
export const MAT3X4 = "application/x-skinner-mat3x4";
export const JSON_TYPE = "application/json";
export const GLB = "model/gltf-binary";
export const GLTF = "model/gltf+json";
const FORMATS = { json: JSON_TYPE, mat4: MAT4, mat3x4: MAT3X4 };
// ---- errors ----------------------------------------------------------------------
/** A problem+json answer (RFC 9457). `kind` is the last segment of its type
 * (`wrong-type`, `not-found`, ...), `pointer` the RFC 6901 pointer of the
 * field in the request body ("" = the body as a whole), `field` its last
 * segment. */
export class SkinnerdError extends Error {
    constructor(status, problem, headers = null) {
        const p = (problem && typeof problem === "object" ? problem : {});
        const kind = typeof p.type === "string" ? p.type.split("/").pop() || null : null;
        const pointer = typeof p.pointer === "string" ? p.pointer : null;
        const detail = typeof p.detail === "string" ? p.detail : typeof p.title === "string" ? p.title : null;
        super(`${status} ${kind || "error"}${pointer ? ` at ${pointer}` : ""}: ${detail || ""}`);
        this.name = new.target.name;
        this.status = status;
        this.problem = p;
        this.kind = kind;
        this.detail = detail;
        this.pointer = pointer;
        this.field = pointer ? decodeURIComponent(pointer.split("/").pop().replace(/~1/g, "/").replace(/~0/g, "~")) : null;
        this.headers = headers;
        const ra = headers?.get("Retry-After")?.trim();
        this.retryAfter = ra && /^\d+(\.\d+)?$/.test(ra) ? Number(ra) : null;
    }
}
/** 400: malformed JSON, a bad id, an unknown query parameter. */
export class BadRequest extends SkinnerdError {
}
/** 401: no token, or not a bearer token. */
export class Unauthorized extends SkinnerdError {
}
/** 403: the token's scope is below the route's. */
export class Forbidden extends SkinnerdError {
}
/** 404: route, skeleton, bone or clip. */
export class NotFound extends SkinnerdError {
}
export class MethodNotAllowed extends SkinnerdError {
}
export class NotAcceptable extends SkinnerdError {
}
/** 412: If-Match names a version that is no longer the stored one. */
export class PreconditionFailed extends SkinnerdError {
}
/** 413: a body, batch, range or answer over one of the daemon's limits. */
export class TooLarge extends SkinnerdError {
}
export class UnsupportedMediaType extends SkinnerdError {
}
/** 422: semantically invalid (a wrong type, an unknown field, a cycle, ...). */
export class Unprocessable extends SkinnerdError {
}
/** 503: overloaded or out of memory; `retryAfter` in seconds when given. */
export class Overloaded extends SkinnerdError {
}
/** An answer that does not have the shape the API promises. */
export class ProtocolError extends Error {
}
const BY_STATUS = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 405: MethodNotAllowed, 406: NotAcceptable,
    412: PreconditionFailed, 413: TooLarge, 415: UnsupportedMediaType, 422: Unprocessable, 503: Overloaded,
};
/** The error class of a problem answer with `status`. */
export function errorFor(status, problem, headers = null) {
    return new (BY_STATUS[status] || SkinnerdError)(status, problem, headers);
}
// ---- skeletons and frames --------------------------------------------------------
/** An upload's or GET's answer: `order` (bone names, parent first) and
 * `slots` (slots[k] is the matrix slot of bone order[k], -1 for none). */
export class Skeleton {
    constructor(info) {
        this.slotByName = new Map();
        this.boneBySlot = new Map();
        const i = info;
        this.info = i;
        this.id = String(i.id ?? "");
        this.order = Array.isArray(i.order) ? i.order.slice() : [];
        let slots = Array.isArray(i.slots) ? i.slots : null;
        if (!slots && Array.isArray(i.bones))
            slots = i.bones.map((b) => b.index ?? -1);
        this.slots = (slots || []).slice();
        this.order.forEach((n, k) => {
            const s = this.slots[k] ?? -1;
            this.slotByName.set(n, s);
            if (s >= 0)
                this.boneBySlot.set(s, n);
        });
    }
    /** B: the matrices of a pose before the trailing identity. */
    get boneCount() { return this.slots.length ? Math.max(...this.slots) + 1 : 0; }
    /** The matrix slot of `bone` (throws when unknown, null when it has none). */
    slotOf(bone) {
        const s = this.slotByName.get(bone);
        if (s === undefined)
            throw new RangeError(`no bone "${bone}" in skeleton "${this.id}"`);
        return s >= 0 ? s : null;
    }
    /** The bone whose matrix is `slot`, or null (a slot no bone writes, the trailing identity). */
    boneOf(slot) { return this.boneBySlot.get(slot) ?? null; }
    animations() {
        const a = this.info.animations;
        return Array.isArray(a) ? a.map((x) => String(x.name)) : [];
    }
}
const LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
/** little-endian float32 bytes as a Float32Array (a view when the host is little-endian and aligned). */
export function floats(bytes, offset = 0, length) {
    const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    const n = length ?? (u8.byteLength - offset) >> 2;
    const at = u8.byteOffset + offset;
    if (LITTLE && at % 4 === 0)
        return new Float32Array(u8.buffer, at, n);
    const dv = new DataView(u8.buffer, at, n * 4), out = new Float32Array(n);
    for (let i = 0; i < n; i++)
        out[i] = dv.getFloat32(i * 4, true);
    return out;
}
/** A binary pose answer: `poseCount` poses back to back, each of `matrices`
 * final matrices (B + 1, the last the identity) of `floatsPerMatrix` floats
 * (16 for mat4, 12 for mat3x4), plus world matrices and positions when the
 * request's output asked for them (`extraFloats` per pose). */
export class Frames {
    constructor(data, poseCount, matrices, floatsPerMatrix, extraFloats = 0) {
        this.poseCount = poseCount;
        this.matrices = matrices;
        this.floatsPerMatrix = floatsPerMatrix;
        this.extraFloats = extraFloats;
        this.floatsPerPose = matrices * floatsPerMatrix + extraFloats;
        if (data.length !== this.floatsPerPose * poseCount)
            throw new ProtocolError(`binary answer of ${data.length * 4} bytes; ${poseCount} poses x ${this.floatsPerPose} floats expected`);
        this.data = data;
    }
    get boneCount() { return this.matrices - 1; }
    get length() { return this.poseCount; }
    /** Pose i's floats (a view): its final matrices, then world and positions if asked. */
    pose(i) {
        if (!(i >= 0 && i < this.poseCount))
            throw new RangeError(`pose ${i} of ${this.poseCount}`);
        return this.data.subarray(i * this.floatsPerPose, (i + 1) * this.floatsPerPose);
    }
    /** Final matrix `slot` of pose `pose` (16 or 12 floats, a view). */
    matrix(pose, slot) {
        if (!(slot >= 0 && slot < this.matrices))
            throw new RangeError(`slot ${slot} of ${this.matrices}`);
        const at = slot * this.floatsPerMatrix;
        return this.pose(pose).subarray(at, at + this.floatsPerMatrix);
    }
    /** The little-endian bytes, as the daemon sent them (one copy on a big-endian host). */
    bytes() {
        if (LITTLE)
            return new Uint8Array(this.data.buffer, this.data.byteOffset, this.data.byteLength);
        const out = new Uint8Array(this.data.byteLength), dv = new DataView(out.buffer);
        this.data.forEach((v, i) => dv.setFloat32(i * 4, v, true));
        return out;
    }
    static concat(parts) {
        if (parts.length === 1)
            return parts[0];
        const p0 = parts[0], all = new Float32Array(parts.reduce((n, p) => n + p.data.length, 0));
        let at = 0;
        for (const p of parts) {
            all.set(p.data, at);
            at += p.data.length;
        }
        return new Frames(all, parts.reduce((n, p) => n + p.poseCount, 0), p0.matrices, p0.floatsPerMatrix, p0.extraFloats);
    }
}
function extraFloats(output, mats, fpm) {
    const o = Array.isArray(output) ? output : [];
    return (o.includes("world") ? fpm * (mats - 1) : 0) + (o.includes("positions") ? 3 * (mats - 1) : 0);
}
// ---- frame times, as the daemon computes them ------------------------------------
/** The frames of a from/to/fps range: floor((to - from) * fps + 1e-9) + 1, as the daemon counts them. */
export function rangeFrameCount(from, to, fps) {
    if (!(fps > 0) || to < from)
        throw new RangeError("a range needs fps > 0 and to >= from");
    return Math.floor((to - from) * fps + 1e-9) + 1;
}
/** Times of frames [start, end) of a range from `from`: from + i / fps, the daemon's doubles. */
export function frameTimes(from, fps, start, end) {
    const out = [];
    for (let i = start; i < end; i++)
        out.push(from + i / fps);
    return out;
}
// ---- ops -------------------------------------------------------------------------
/** A Bone-API op: op("rotate", "b_Head_05", { axis: [0, 1, 0], amount: 0.5, space: "world" }). */
export function op(name, bone, fields = {}) {
    const o = { op: name };
    if (bone != null)
        o.bone = bone;
    for (const [k, v] of Object.entries(fields))
        if (v !== undefined && v !== null)
            o[k] = v;
    return o;
}
/** Babylon's BoneIKController on `bone` (the chain end's parent), aimed at `target`. */
export function ik(bone, target, fields = {}) {
    return op("ik", bone, { target: target.slice(), ...fields });
}
/** Babylon's BoneLookController on `bone`, towards `target`. */
export function lookAt(bone, target, fields = {}) {
    return op("lookAt", bone, { target: target.slice(), ...fields });
}
/** A read-back (`absolutePosition`, `rotation`, ...): answered in the result's "queries". */
export function query(bone, get, fields = {}) {
    return op("query", bone, { get, ...fields });
}
const sleep = (s) => new Promise((r) => setTimeout(r, s * 1000));
const enc = (s) => encodeURIComponent(s);
export class Client {
    constructor(url = "http://127.0.0.1:8080", opts = {}) {
        /** Requests sent (each retry counts). */
        this.sent = 0;
        this.framesIndex = null;
        this.url = url.replace(/\/+$/, "");
        this.token = opts.token ?? null;
        this.retries = opts.retries ?? 4;
        this.maxRetryWait = opts.maxRetryWait ?? 10;
        this.maxFrames = opts.maxFrames ?? 1024;
        this.maxBatch = opts.maxBatch ?? 1024;
        this.extraHeaders = { ...(opts.headers || {}) };
        this.fetchFn = opts.fetch || ((input, init) => globalThis.fetch(input, init));
        this.WebSocketCtor = opts.WebSocket || globalThis.WebSocket;
    }
    /** One request; resolves with a 2xx answer, rejects with a SkinnerdError for a problem. */
    async request(method, path, o = {}) {
        let body = o.body, type = o.contentType;
        if (body !== undefined && !(typeof body === "string" || body instanceof ArrayBuffer || ArrayBuffer.isView(body) ||
            (typeof Blob !== "undefined" && body instanceof Blob))) {
            body = JSON.stringify(body);
            type = type || JSON_TYPE;
        }
        let url = this.url + path;
        if (o.query && Object.keys(o.query).length)
            url += "?" + new URLSearchParams(o.query).toString();
        const h = { ...this.extraHeaders, ...(o.headers || {}) };
        if (this.token)
            h.Authorization = `Bearer ${this.token}`;
        if (body !== undefined)
            h["Content-Type"] = type || JSON_TYPE;
        if (o.accept)
            h.Accept = o.accept;
        for (let attempt = 0;; attempt++) {
            this.sent++;
            const res = await this.fetchFn(url, { method, headers: h, body });
            const data = await res.arrayBuffer();
            if (res.ok)
                return { status: res.status, headers: res.headers, body: data };
            let problem;
            try {
                problem = JSON.parse(new TextDecoder().decode(data));
            }
            catch {
                problem = { detail: new TextDecoder().decode(data).slice(0, 200) };
            }
            const err = errorFor(res.status, problem, res.headers);
            if (res.status === 503 && err.retryAfter !== null && attempt < this.retries) {
                await sleep(Math.min(err.retryAfter, this.maxRetryWait));
                continue;
            }
            throw err;
        }
    }
    async json(method, path, body, o = {}) {
        const a = await this.request(method, path, { ...o, body });
        return (a.body.byteLength ? JSON.parse(new TextDecoder().decode(a.body)) : null);
    }
    static skelPath(id) { return `/v1/skeletons/${enc(id)}`; }
    /** The body and content type of an upload, chosen from the bytes (GLB magic, glTF's "asset") unless given. */
    static uploadBody(data, contentType) {
        if (typeof data === "string")
            data = new TextEncoder().encode(data);
        if (data instanceof ArrayBuffer || data instanceof Uint8Array) {
            const u8 = data instanceof Uint8Array ? data : new Uint8Array(data);
            if (contentType)
                return { body: u8, type: contentType };
            if (u8[0] === 0x67 && u8[1] === 0x6c && u8[2] === 0x54 && u8[3] === 0x46)
                return { body: u8, type: GLB };
            let j = null;
            try {
                j = JSON.parse(new TextDecoder().decode(u8));
            }
            catch { /* not JSON: the daemon says so */ }
            return { body: u8, type: j && typeof j === "object" && "asset" in j ? GLTF : JSON_TYPE };
        }
        if (data && typeof data === "object")
            return { body: data, type: contentType || ("asset" in data ? GLTF : JSON_TYPE) };
        throw new TypeError("upload takes an object, bytes or a JSON string");
    }
    /** PUT /v1/skeletons/{id}: a skeleton object (case format or Babylon's
     * Skeleton.serialize()), glTF JSON or GLB bytes. `skin`: the glTF skin. */
    async upload(id, data, o = {}) {
        const { body, type } = Client.uploadBody(data, o.contentType);
        const q = {};
        if (o.skin !== undefined)
            q.skin = String(o.skin);
        if (o.dryRun)
            q.dryRun = "true";
        return new Skeleton(await this.json("PUT", Client.skelPath(id), body, { contentType: type, query: q }));
    }
    /** POST /v1/skeletons: stored under the body's content id. */
    async create(data, o = {}) {
        const { body, type } = Client.uploadBody(data, o.contentType);
        return new Skeleton(await this.json("POST", "/v1/skeletons", body, { contentType: type, query: o.skin !== undefined ? { skin: String(o.skin) } : undefined }));
    }
    async skeletons() {
        return (await this.json("GET", "/v1/skeletons")).skeletons;
    }
    async skeleton(id) { return new Skeleton(await this.json("GET", Client.skelPath(id))); }
    async delete(id) { await this.request("DELETE", Client.skelPath(id)); }
    async patchBones(id, bones) {
        return new Skeleton(await this.json("PATCH", Client.skelPath(id) + "/bones", { bones }));
    }
    async rest(id, bones) {
        return new Skeleton(await this.json("POST", Client.skelPath(id) + "/rest", bones ? { bones } : {}));
    }
    /** POST .../ops: Bone-API ops applied to the stored skeleton, all or nothing. */
    async applyOps(id, ops, fields = {}) {
        return this.json("POST", Client.skelPath(id) + "/ops", { ...fields, ops });
    }
    async animation(id, clip) {
        return this.json("GET", `${Client.skelPath(id)}/animations/${enc(String(clip))}`);
    }
    async addAnimations(id, body) {
        return this.json("POST", Client.skelPath(id) + "/animations", body);
    }
    async healthz() { return this.json("GET", "/healthz"); }
    async readyz() { return this.json("GET", "/readyz"); }
    /** /metrics as {"name{labels}": value}. */
    async metrics() {
        const text = new TextDecoder().decode((await this.request("GET", "/metrics")).body), out = {};
        for (const line of text.split("\n")) {
            if (!line || line.startsWith("#"))
                continue;
            const at = line.lastIndexOf(" ");
            out[line.slice(0, at)] = Number(line.slice(at + 1));
        }
        return out;
    }
    // -- poses --
    decode(a, fmt, output) {
        if (fmt === JSON_TYPE)
            return JSON.parse(new TextDecoder().decode(a.body));
        const poses = Number(a.headers.get("Skinner-Pose-Count")), mats = Number(a.headers.get("Skinner-Matrix-Count"));
        if (!(poses >= 0 && mats > 0))
            throw new ProtocolError("binary answer without Skinner-Pose-Count/Skinner-Matrix-Count");
        const fpm = fmt === MAT3X4 ? 12 : 16;
        return new Frames(floats(a.body), poses, mats, fpm, extraFloats(output, mats, fpm));
    }
    async post(id, route, body, fmt, output) {
        return this.decode(await this.request("POST", Client.skelPath(id) + route, { body, accept: fmt }), fmt, output);
    }
    async pose(id, body = {}, format = "json") {
        return this.post(id, "/pose", body, FORMATS[format], body.output);
    }
    async poses(id, poses, format = "json") {
        const fmt = FORMATS[format];
        const outs = new Set(poses.map((p) => JSON.stringify(p.output || [])));
        if (fmt !== JSON_TYPE && outs.size > 1)
            throw new TypeError("a binary batch is decoded by one output list: give every pose the same one");
        const output = poses[0]?.output;
        const parts = [];
        for (let i = 0; i < poses.length;) {
            const n = Math.max(1, this.maxBatch);
            try {
                parts.push(await this.post(id, "/poses", { poses: poses.slice(i, i + n) }, fmt, output));
            }
            catch (e) {
                if (!(e instanceof TooLarge) || n === 1 || !this.learn(e, "maxBatch", n))
                    throw e;
                continue;
            }
            i += n;
        }
        return merge(parts, fmt);
    }
    /** After a 413 for `asked` items: lowers the limit to the daemon's stated one (or half); false when no retry helps. */
    learn(e, what, asked) {
        const m = /the limit is (\d+)/.exec(e.detail || "");
        let limit = m ? Number(m[1]) : Math.floor(asked / 2);
        if (!(limit >= 1 && limit < asked))
            limit = Math.floor(asked / 2);
        if (limit < 1)
            return false;
        this[what] = limit;
        return true;
    }
    /** Every frame of `animation` from `from` to `to` seconds at `fps` (frame i at
     * from + i / fps), chunked under --max-frames: the same bytes as one whole request. */
    async range(id, animation, from, to, fps, format = "json", fields = {}) {
        const n = rangeFrameCount(from, to, fps), fmt = FORMATS[format];
        const body = { ...fields, animation };
        if (n <= this.maxFrames) {
            try {
                return await this.post(id, "/pose", { ...body, from, to, fps }, fmt, body.output);
            }
            catch (e) {
                if (!(e instanceof TooLarge) || !this.learn(e, "maxFrames", n))
                    throw e;
            }
        }
        return this.chunks(id, body, fmt, n, (s, e) => ({ times: frameTimes(from, fps, s, e) }));
    }
    /** Frames [start, end) of `animation` at `fps` (frame k at k / fps s) by
     * "frames": [start, end] chunks under --max-frames. */
    async frames(id, animation, fps, start, end, format = "json", fields = {}) {
        if (!(Number.isInteger(start) && Number.isInteger(end) && start >= 0 && start <= end) || !(fps > 0))
            throw new RangeError("frames need integers 0 <= start <= end and fps > 0");
        const fmt = FORMATS[format], body = { ...fields, animation, fps };
        if (this.framesIndex === null && end > start) {
            try {
                const k = Math.min(end, start + this.maxFrames);
                const first = await this.post(id, "/pose", { ...body, frames: [start, k] }, fmt, body.output);
                this.framesIndex = true;
                if (k === end)
                    return first;
                return merge([first, await this.frames(id, animation, fps, k, end, format, fields)], fmt);
            }
            catch (e) {
                if (e instanceof Unprocessable && e.pointer === "/frames" && /unknown field/.test(e.detail || ""))
                    this.framesIndex = false;
                else if (e instanceof TooLarge && this.learn(e, "maxFrames", Math.min(end - start, this.maxFrames)))
                    this.framesIndex = true;
                else
                    throw e;
            }
        }
        if (this.framesIndex !== false)
            return this.chunks(id, body, fmt, end - start, (s, e) => ({ frames: [start + s, start + e] }));
        delete body.fps; // a daemon before frame indices: the same times
        return this.chunks(id, body, fmt, end - start, (s, e) => ({ times: frameTimes(0, fps, start + s, start + e) }));
    }
    async chunks(id, body, fmt, n, part) {
        const parts = [];
        for (let i = 0; i < n;) {
            const k = Math.min(n, i + Math.max(1, this.maxFrames));
            let a;
            try {
                a = await this.post(id, "/pose", { ...body, ...part(i, k) }, fmt, body.output);
            }
            catch (e) {
                if (!(e instanceof TooLarge) || k - i === 1 || !this.learn(e, "maxFrames", k - i))
                    throw e;
                continue;
            }
            if (fmt === JSON_TYPE && !("results" in a))
                a = { results: [a] };
            parts.push(a);
            i = k;
        }
        return merge(parts, fmt);
    }
    /** A WebSocket session on `id`'s stream (proto/stream.md). The token goes
     * as the subprotocol base64url.bearer.skinner.<base64url token> beside
     * skinner.v1, which every WebSocket can send (a browser's cannot set
     * Authorization); extra headers go where the WebSocket takes them (Node's). */
    stream(id, o = {}) {
        const u = new URL(this.url + Client.skelPath(id) + "/stream");
        u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
        if (o.format === "mat3x4")
            u.searchParams.set("format", "mat3x4");
        const Ctor = this.WebSocketCtor;
        if (!Ctor)
            return Promise.reject(new TypeError("no WebSocket: pass { WebSocket } to the Client (Node 20: --experimental-websocket)"));
        const protocols = streamProtocols(this.token);
        const headers = Object.keys(this.extraHeaders).length ? { ...this.extraHeaders } : null;
        return StreamSession.open(u.href, Ctor, o.format === "mat3x4" ? 12 : 16, protocols, headers);
    }
    /** The event-stream playback of `id` (proto/stream.md, "Server-Sent
     * Events"): the clip's frames [s, e) pushed at fps × speed over a plain
     * GET (no upgrade: through proxies that drop it), read with fetch, so it
     * runs where EventSource is missing (Node) and sends Authorization where
     * EventSource cannot. Each frame goes to onFrame as a StreamFrame (id
     * null); resolves with e once played, with -1 when `signal` aborts it;
     * rejects with the problem for a refusal or a failed frame, and with a
     * StreamEnded naming the last frame received when the connection drops
     * (pass it back as lastEventId to resume). */
    async events(id, p, onFrame) {
        const q = new URLSearchParams({ animation: String(p.animation), fps: String(p.fps), frames: `${p.frames[0]},${p.frames[1]}` });
        if (p.speed !== undefined)
            q.set("speed", String(p.speed));
        if (p.format === "mat3x4")
            q.set("format", "mat3x4");
        const h = { ...this.extraHeaders, Accept: "text/event-stream" };
        if (this.token)
            h.Authorization = `Bearer ${this.token}`;
        if (p.lastEventId !== undefined && p.lastEventId !== null)
            h["Last-Event-ID"] = String(p.lastEventId);
        const url = `${this.url}${Client.skelPath(id)}/stream?${q}`, fpm = p.format === "mat3x4" ? 12 : 16;
        let last = p.lastEventId ?? null;
        this.sent++;
        try {
            const res = await this.fetchFn(url, { method: "GET", headers: h, signal: p.signal });
            if (!res.ok) {
                const text = await res.text();
                let problem;
                try {
                    problem = JSON.parse(text);
                }
                catch {
                    problem = { detail: text.slice(0, 200) };
                }
                throw errorFor(res.status, problem, res.headers);
            }
            if (!res.body)
                throw new ProtocolError("the event stream has no readable body in this fetch");
            const out = await readEvents(res.body.getReader(), (ev) => {
                if (ev.event === "end")
                    return Number(JSON.parse(ev.data).played);
                if (ev.event === "problem") {
                    const pr = JSON.parse(ev.data);
                    throw errorFor(Number(pr.status) || 0, pr);
                }
                if (ev.event !== "" || ev.id === null)
                    return undefined;
                const bytes = base64Bytes(ev.data), mats = bytes.byteLength / (4 * fpm);
                if (!Number.isInteger(mats))
                    throw new ProtocolError(`an event of ${bytes.byteLength} bytes is not whole ${fpm}-float matrices`);
                last = Number(ev.id);
                onFrame({ index: last, id: null, frames: new Frames(floats(bytes), 1, mats, fpm) });
                return undefined;
            });
            if (out !== undefined)
                return out;
        }
        catch (e) {
            if (p.signal?.aborted)
                return -1;
            throw e;
        }
        if (p.signal?.aborted)
            return -1;
        throw new StreamEnded(`the event stream ended before its end event (last frame ${last})`, last);
    }
}
/** An event stream that ended without its end event: `lastEventId` is the last frame received (null: none). */
export class StreamEnded extends ProtocolError {
    constructor(message, lastEventId) {
        super(message);
        this.lastEventId = lastEventId;
    }
}
function base64Bytes(s) {
    const bin = atob(s), out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++)
        out[i] = bin.charCodeAt(i);
    return out;
}
/** Reads text/event-stream (the WHATWG format: fields, CRLF or LF, comments)
 * and hands each event to `on` until it returns a value, which is returned
 * (the reader cancelled); undefined when the body ends first. */
async function readEvents(reader, on) {
    const dec = new TextDecoder();
    let buf = "", id = null, event = "", data = [];
    try {
        for (;;) {
            const { value, done } = await reader.read();
            if (done)
                return undefined;
            buf += dec.decode(value, { stream: true });
            let at = 0;
            for (let nl = buf.indexOf("\n", at); nl >= 0; at = nl + 1, nl = buf.indexOf("\n", at)) {
                const line = buf.charCodeAt(nl - 1) === 13 && nl > at ? buf.slice(at, nl - 1) : buf.slice(at, nl);
                if (line === "") {
                    if (data.length || event) {
                        const r = on({ id, event, data: data.join("\n") });
                        if (r !== undefined)
                            return r;
                    }
                    id = null, event = "", data = [];
                    continue;
                }
                if (line[0] === ":")
                    continue;
                const c = line.indexOf(":"), field = c < 0 ? line : line.slice(0, c);
                const v = c < 0 ? "" : line.slice(line[c + 1] === " " ? c + 2 : c + 1);
                if (field === "data")
                    data.push(v);
                else if (field === "event")
                    event = v;
                else if (field === "id")
                    id = v;
            }
            buf = buf.slice(at);
        }
    }
    finally {
        reader.cancel().catch(() => { });
    }
}
/** The stream's subprotocol; with a token, the one that carries it. */
export const STREAM_PROTOCOL = "skinner.v1";
export const TOKEN_PROTOCOL_PREFIX = "base64url.bearer.skinner.";
/** The Sec-WebSocket-Protocol list a stream offers (proto/stream.md):
 * skinner.v1, and the token in base64url without padding. */
export function streamProtocols(token) {
    if (!token)
        return [STREAM_PROTOCOL];
    const bytes = new TextEncoder().encode(token);
    let bin = "";
    for (const b of bytes)
        bin += String.fromCharCode(b);
    const t = btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    return [STREAM_PROTOCOL, TOKEN_PROTOCOL_PREFIX + t];
}
function merge(parts, fmt) {
    if (fmt !== JSON_TYPE)
        return parts.length ? Frames.concat(parts) : new Frames(new Float32Array(0), 0, 1, fmt === MAT3X4 ? 12 : 16);
    return { results: parts.flatMap((p) => p.results) };
}
/** Parses one binary stream message (proto/stream.md's header, then /pose's bytes). */
export function parseStreamFrame(buf, floatsPerMatrix = 16, output) {
    if (buf.byteLength < 16)
        throw new ProtocolError(`stream message of ${buf.byteLength} bytes: no header`);
    const dv = new DataView(buf), off = dv.getUint32(0, true), index = dv.getUint32(4, true);
    const poses = dv.getUint32(8, true), mats = dv.getUint32(12, true);
    if (off < 16 || off > buf.byteLength || off % 4)
        throw new ProtocolError(`stream header: matrices at ${off} of ${buf.byteLength} bytes`);
    const idBytes = new Uint8Array(buf, 16, off - 16), nul = idBytes.indexOf(0);
    const idText = new TextDecoder().decode(nul < 0 ? idBytes : idBytes.subarray(0, nul));
    const id = idText ? JSON.parse(idText) : null;
    return { index, id, frames: new Frames(floats(buf, off), poses, mats, floatsPerMatrix, extraFloats(output, mats, floatsPerMatrix)) };
}
/** A WebSocket session: `send` a pose request (any /pose body, ops
 * included) and get its answer; `play` a clip pushed at its fps. Each
 * request gets an integer id; answers are matched by it. */
export class StreamSession {
    constructor(ws, floatsPerMatrix) {
        this.ws = ws;
        this.floatsPerMatrix = floatsPerMatrix;
        /** Every binary frame as it arrives (requests and playback). */
        this.onframe = null;
        /** The close event's code and reason once the session has ended. */
        this.closed = null;
        /** Frames received. */
        this.received = 0;
        this.next = 1;
        this.pending = new Map();
        this.play_ = null;
        ws.binaryType = "arraybuffer";
        ws.onmessage = (ev) => this.message(ev.data);
        ws.onclose = (ev) => this.ended(ev.code, ev.reason);
    }
    static open(url, Ctor, floatsPerMatrix, protocols, headers) {
        return new Promise((resolve, reject) => {
            let ws;
            try {
                /* Node's WebSocket (undici) takes {protocols, headers}; a browser's only the list */
                ws = headers ? new Ctor(url, { protocols, headers }) : new Ctor(url, protocols);
            }
            catch (e) {
                reject(e);
                return;
            }
            const fail = () => reject(new ProtocolError(`the stream ${url} did not open (refused or no upgrade)`));
            ws.onerror = fail;
            ws.onclose = fail;
            ws.onopen = () => { ws.onerror = null; resolve(new StreamSession(ws, floatsPerMatrix)); };
        });
    }
    get open() { return this.closed === null && this.ws.readyState === 1; }
    /** Sends one pose request; resolves with its answer, rejects with the problem /pose would answer. */
    send(pose) {
        if (!this.open)
            return Promise.reject(new ProtocolError("the stream is closed"));
        const id = this.next++;
        return new Promise((resolve, reject) => {
            this.pending.set(String(id), { resolve, reject, output: pose.output });
            this.ws.send(JSON.stringify({ ...pose, id }));
        });
    }
    /** Pushes frames [s, e) of a clip at `fps`; each frame goes to onFrame; resolves with e when played. */
    play(p, onFrame) {
        if (!this.open)
            return Promise.reject(new ProtocolError("the stream is closed"));
        this.stopPlay();
        const id = `play${this.next++}`;
        return new Promise((resolve, reject) => {
            this.play_ = { id, onFrame, resolve, reject };
            this.ws.send(JSON.stringify({ play: p, id }));
        });
    }
    /** Stops the clip being played (its promise resolves with -1). */
    stopPlay() {
        if (!this.play_)
            return;
        const p = this.play_;
        this.play_ = null;
        if (this.open)
            this.ws.send(JSON.stringify({ play: null }));
        p.resolve(-1);
    }
    close(code = 1000) { if (this.ws.readyState <= 1)
        this.ws.close(code); }
    message(data) {
        if (typeof data === "string") {
            let m;
            try {
                m = JSON.parse(data);
            }
            catch {
                return;
            }
            const key = String(m.id ?? "");
            if (this.play_ && key === this.play_.id) {
                const p = this.play_;
                this.play_ = null;
                if (m.problem)
                    p.reject(errorFor(Number(m.problem.status) || 0, m.problem));
                else
                    p.resolve(Number(m.played));
                return;
            }
            const w = this.pending.get(key);
            if (w && m.problem) {
                this.pending.delete(key);
                w.reject(errorFor(Number(m.problem.status) || 0, m.problem));
            }
            return;
        }
        if (!(data instanceof ArrayBuffer))
            return;
        const head = data.byteLength >= 16 ? new DataView(data).getUint32(0, true) : 0;
        let key = "";
        if (head > 16 && head <= data.byteLength) {
            const b = new Uint8Array(data, 16, head - 16), nul = b.indexOf(0);
            key = String(JSON.parse(new TextDecoder().decode(nul < 0 ? b : b.subarray(0, nul))));
        }
        const w = this.pending.get(key);
        const f = parseStreamFrame(data, this.floatsPerMatrix, w?.output);
        this.received++;
        if (this.onframe)
            this.onframe(f);
        if (w) {
            this.pending.delete(key);
            w.resolve(f);
        }
        else if (this.play_ && key === this.play_.id)
            this.play_.onFrame(f);
    }
    ended(code, reason) {
        this.closed = { code, reason };
        const e = new ProtocolError(`the stream closed (${code}${reason ? ` ${reason}` : ""})`);
        for (const w of this.pending.values())
            w.reject(e);
        this.pending.clear();
        if (this.play_) {
            this.play_.reject(e);
            this.play_ = null;
        }
    }
}
