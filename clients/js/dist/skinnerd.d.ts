import type { components, operations } from "./openapi.js";
type Schemas = components["schemas"];
type NoDefs<T> = T extends unknown ? Omit<T, "$defs"> : never;
export type BoneOp = NoDefs<Schemas["bone-op"]>;
export type Pose = Omit<NoDefs<Schemas["pose"]>, "ops"> & {
    ops?: BoneOp[];
};
export type PoseResult = NoDefs<Schemas["result"]>;
export type BatchResult = Schemas["batch-result"];
export type OpsResult = Schemas["ops-result"];
export type Problem = Schemas["problem"];
export type SkeletonInfo = Schemas["skeleton-info"];
export type SkeletonCreated = Schemas["skeleton-created"];
export type SkeletonList = Schemas["skeleton-list"];
export type Clip = Schemas["clip"];
export type Health = Schemas["health"];
export type BonesPatch = NoDefs<Schemas["bones-patch"]>;
type Json = operations["evaluatePose"]["responses"][200]["content"]["application/json"];
export declare const VERSION = "1.0.0";
export declare const MAT4 = "application/octet-stream";
export declare const MAT3X4 = "application/x-skinner-mat3x4";
export declare const JSON_TYPE = "application/json";
export declare const GLB = "model/gltf-binary";
export declare const GLTF = "model/gltf+json";
export type Format = "json" | "mat4" | "mat3x4";
/** A problem+json answer (RFC 9457). `kind` is the last segment of its type
 * (`wrong-type`, `not-found`, ...), `pointer` the RFC 6901 pointer of the
 * field in the request body ("" = the body as a whole), `field` its last
 * segment. */
export declare class SkinnerdError extends Error {
    readonly status: number;
    readonly problem: Partial<Problem> & Record<string, unknown>;
    readonly kind: string | null;
    readonly detail: string | null;
    readonly pointer: string | null;
    readonly field: string | null;
    readonly retryAfter: number | null;
    readonly headers: Headers | null;
    constructor(status: number, problem: Record<string, unknown> | null, headers?: Headers | null);
}
/** 400: malformed JSON, a bad id, an unknown query parameter. */
export declare class BadRequest extends SkinnerdError {
}
/** 401: no token, or not a bearer token. */
export declare class Unauthorized extends SkinnerdError {
}
/** 403: the token's scope is below the route's. */
export declare class Forbidden extends SkinnerdError {
}
/** 404: route, skeleton, bone or clip. */
export declare class NotFound extends SkinnerdError {
}
export declare class MethodNotAllowed extends SkinnerdError {
}
export declare class NotAcceptable extends SkinnerdError {
}
/** 412: If-Match names a version that is no longer the stored one. */
export declare class PreconditionFailed extends SkinnerdError {
}
/** 413: a body, batch, range or answer over one of the daemon's limits. */
export declare class TooLarge extends SkinnerdError {
}
export declare class UnsupportedMediaType extends SkinnerdError {
}
/** 422: semantically invalid (a wrong type, an unknown field, a cycle, ...). */
export declare class Unprocessable extends SkinnerdError {
}
/** 503: overloaded or out of memory; `retryAfter` in seconds when given. */
export declare class Overloaded extends SkinnerdError {
}
/** An answer that does not have the shape the API promises. */
export declare class ProtocolError extends Error {
}
/** The error class of a problem answer with `status`. */
export declare function errorFor(status: number, problem: Record<string, unknown> | null, headers?: Headers | null): SkinnerdError;
/** An upload's or GET's answer: `order` (bone names, parent first) and
 * `slots` (slots[k] is the matrix slot of bone order[k], -1 for none). */
export declare class Skeleton {
    readonly id: string;
    readonly order: string[];
    readonly slots: number[];
    readonly info: Record<string, unknown>;
    private readonly slotByName;
    private readonly boneBySlot;
    constructor(info: SkeletonCreated | SkeletonInfo | Record<string, unknown>);
    /** B: the matrices of a pose before the trailing identity. */
    get boneCount(): number;
    /** The matrix slot of `bone` (throws when unknown, null when it has none). */
    slotOf(bone: string): number | null;
    /** The bone whose matrix is `slot`, or null (a slot no bone writes, the trailing identity). */
    boneOf(slot: number): string | null;
    animations(): string[];
}
/** little-endian float32 bytes as a Float32Array (a view when the host is little-endian and aligned). */
export declare function floats(bytes: ArrayBuffer | Uint8Array, offset?: number, length?: number): Float32Array;
/** A binary pose answer: `poseCount` poses back to back, each of `matrices`
 * final matrices (B + 1, the last the identity) of `floatsPerMatrix` floats
 * (16 for mat4, 12 for mat3x4), plus world matrices and positions when the
 * request's output asked for them (`extraFloats` per pose). */
export declare class Frames {
    readonly poseCount: number;
    readonly matrices: number;
    readonly floatsPerMatrix: number;
    readonly extraFloats: number;
    readonly data: Float32Array;
    readonly floatsPerPose: number;
    constructor(data: Float32Array, poseCount: number, matrices: number, floatsPerMatrix: number, extraFloats?: number);
    get boneCount(): number;
    get length(): number;
    /** Pose i's floats (a view): its final matrices, then world and positions if asked. */
    pose(i: number): Float32Array;
    /** Final matrix `slot` of pose `pose` (16 or 12 floats, a view). */
    matrix(pose: number, slot: number): Float32Array;
    /** The little-endian bytes, as the daemon sent them (one copy on a big-endian host). */
    bytes(): Uint8Array;
    static concat(parts: Frames[]): Frames;
}
/** The frames of a from/to/fps range: floor((to - from) * fps + 1e-9) + 1, as the daemon counts them. */
export declare function rangeFrameCount(from: number, to: number, fps: number): number;
/** Times of frames [start, end) of a range from `from`: from + i / fps, the daemon's doubles. */
export declare function frameTimes(from: number, fps: number, start: number, end: number): number[];
/** A Bone-API op: op("rotate", "b_Head_05", { axis: [0, 1, 0], amount: 0.5, space: "world" }). */
export declare function op(name: string, bone?: string | null, fields?: Record<string, unknown>): BoneOp;
/** Babylon's BoneIKController on `bone` (the chain end's parent), aimed at `target`. */
export declare function ik(bone: string, target: number[], fields?: {
    poleTarget?: number[];
    poleAngle?: number;
} & Record<string, unknown>): BoneOp;
/** Babylon's BoneLookController on `bone`, towards `target`. */
export declare function lookAt(bone: string, target: number[], fields?: Record<string, unknown>): BoneOp;
/** A read-back (`absolutePosition`, `rotation`, ...): answered in the result's "queries". */
export declare function query(bone: string, get: string, fields?: Record<string, unknown>): BoneOp;
export type UploadData = Record<string, unknown> | string | ArrayBuffer | Uint8Array;
type WsCtor = new (url: string, opts?: unknown) => WebSocket;
export interface ClientOptions {
    /** A bearer token (--tokens). */
    token?: string | null;
    /** How many times a 503 carrying Retry-After is retried (sleeping what it says, at most maxRetryWait s). */
    retries?: number;
    maxRetryWait?: number;
    /** The daemon's --max-frames / --max-batch when below 1024; a 413 also teaches them. */
    maxFrames?: number;
    maxBatch?: number;
    headers?: Record<string, string>;
    fetch?: typeof fetch;
    /** The WebSocket constructor for streams (default globalThis.WebSocket). */
    WebSocket?: WsCtor;
}
export interface Answer {
    status: number;
    headers: Headers;
    body: ArrayBuffer;
}
export interface RequestOptions {
    body?: unknown;
    contentType?: string;
    accept?: string;
    query?: Record<string, string>;
    headers?: Record<string, string>;
}
export declare class Client {
    readonly url: string;
    token: string | null;
    retries: number;
    maxRetryWait: number;
    maxFrames: number;
    maxBatch: number;
    readonly extraHeaders: Record<string, string>;
    /** Requests sent (each retry counts). */
    sent: number;
    private readonly fetchFn;
    private readonly WebSocketCtor;
    private framesIndex;
    constructor(url?: string, opts?: ClientOptions);
    /** One request; resolves with a 2xx answer, rejects with a SkinnerdError for a problem. */
    request(method: string, path: string, o?: RequestOptions): Promise<Answer>;
    private json;
    static skelPath(id: string): string;
    /** The body and content type of an upload, chosen from the bytes (GLB magic, glTF's "asset") unless given. */
    static uploadBody(data: UploadData, contentType?: string): {
        body: unknown;
        type: string;
    };
    /** PUT /v1/skeletons/{id}: a skeleton object (case format or Babylon's
     * Skeleton.serialize()), glTF JSON or GLB bytes. `skin`: the glTF skin. */
    upload(id: string, data: UploadData, o?: {
        contentType?: string;
        skin?: number | string;
        dryRun?: boolean;
    }): Promise<Skeleton>;
    /** POST /v1/skeletons: stored under the body's content id. */
    create(data: UploadData, o?: {
        contentType?: string;
        skin?: number | string;
    }): Promise<Skeleton>;
    skeletons(): Promise<SkeletonList["skeletons"]>;
    skeleton(id: string): Promise<Skeleton>;
    delete(id: string): Promise<void>;
    patchBones(id: string, bones: BonesPatch["bones"]): Promise<Skeleton>;
    rest(id: string, bones?: string[]): Promise<Skeleton>;
    /** POST .../ops: Bone-API ops applied to the stored skeleton, all or nothing. */
    applyOps(id: string, ops: BoneOp[], fields?: Record<string, unknown>): Promise<OpsResult>;
    animation(id: string, clip: string | number): Promise<Clip>;
    addAnimations(id: string, body: Record<string, unknown>): Promise<unknown>;
    healthz(): Promise<Health>;
    readyz(): Promise<Record<string, unknown>>;
    /** /metrics as {"name{labels}": value}. */
    metrics(): Promise<Record<string, number>>;
    private decode;
    private post;
    /** POST .../pose, one request as given: JSON (a result, or {"results"} for a range) or Frames. */
    pose(id: string, body: Pose, format: "json"): Promise<Json>;
    pose(id: string, body: Pose, format: "mat4" | "mat3x4"): Promise<Frames>;
    pose(id: string, body?: Pose): Promise<Json>;
    /** POST .../poses, split into batches the daemon takes (--max-batch). */
    poses(id: string, poses: Pose[], format: "json"): Promise<BatchResult>;
    poses(id: string, poses: Pose[], format: "mat4" | "mat3x4"): Promise<Frames>;
    poses(id: string, poses: Pose[]): Promise<BatchResult>;
    /** After a 413 for `asked` items: lowers the limit to the daemon's stated one (or half); false when no retry helps. */
    private learn;
    /** Every frame of `animation` from `from` to `to` seconds at `fps` (frame i at
     * from + i / fps), chunked under --max-frames: the same bytes as one whole request. */
    range(id: string, animation: string | number, from: number, to: number, fps: number, format?: Format, fields?: Pose): Promise<Json | Frames>;
    /** Frames [start, end) of `animation` at `fps` (frame k at k / fps s) by
     * "frames": [start, end] chunks under --max-frames. */
    frames(id: string, animation: string | number, fps: number, start: number, end: number, format?: Format, fields?: Pose): Promise<Json | Frames>;
    private chunks;
    /** A WebSocket session on `id`'s stream (proto/stream.md). The token goes
     * as the subprotocol base64url.bearer.skinner.<base64url token> beside
     * skinner.v1, which every WebSocket can send (a browser's cannot set
     * Authorization); extra headers go where the WebSocket takes them (Node's). */
    stream(id: string, o?: {
        format?: "mat4" | "mat3x4";
    }): Promise<StreamSession>;
    /** The event-stream playback of `id` (proto/stream.md, "Server-Sent
     * Events"): the clip's frames [s, e) pushed at fps × speed over a plain
     * GET (no upgrade: through proxies that drop it), read with fetch, so it
     * runs where EventSource is missing (Node) and sends Authorization where
     * EventSource cannot. Each frame goes to onFrame as a StreamFrame (id
     * null); resolves with e once played, with -1 when `signal` aborts it;
     * rejects with the problem for a refusal or a failed frame, and with a
     * StreamEnded naming the last frame received when the connection drops
     * (pass it back as lastEventId to resume). */
    events(id: string, p: EventsOptions, onFrame: (f: StreamFrame) => void): Promise<number>;
}
/** An event-stream playback (proto/stream.md): frames [s, e) of a clip at
 * `fps`, pushed every 1/(fps·speed) s; resumed after `lastEventId`. */
export interface EventsOptions {
    animation: string | number;
    fps: number;
    frames: [number, number];
    speed?: number;
    format?: "mat4" | "mat3x4";
    /** The last frame received: the playback resumes after it (Last-Event-ID). */
    lastEventId?: number | null;
    /** Aborting it stops the playback (the promise resolves with -1). */
    signal?: AbortSignal;
}
/** An event stream that ended without its end event: `lastEventId` is the last frame received (null: none). */
export declare class StreamEnded extends ProtocolError {
    readonly lastEventId: number | null;
    constructor(message: string, lastEventId: number | null);
}
/** The stream's subprotocol; with a token, the one that carries it. */
export declare const STREAM_PROTOCOL = "skinner.v1";
export declare const TOKEN_PROTOCOL_PREFIX = "base64url.bearer.skinner.";
/** The Sec-WebSocket-Protocol list a stream offers (proto/stream.md):
 * skinner.v1, and the token in base64url without padding. */
export declare function streamProtocols(token: string | null): string[];
/** One binary answer of a stream: the header of proto/stream.md and the bytes /pose answers. */
export interface StreamFrame {
    /** The session's answers before this one, or the clip frame k of a playback. */
    index: number;
    /** The request's "id" (null without one). */
    id: string | number | null;
    frames: Frames;
}
/** Parses one binary stream message (proto/stream.md's header, then /pose's bytes). */
export declare function parseStreamFrame(buf: ArrayBuffer, floatsPerMatrix?: number, output?: unknown): StreamFrame;
/** A playback (proto/stream.md): frames [s, e) at fps, pushed every 1/(fps·speed) s, with the ops, mesh and loop of every frame's /pose. */
export interface PlayOptions {
    animation: string | number;
    fps: number;
    frames: [number, number];
    speed?: number;
    loop?: boolean;
    ops?: unknown[];
    mesh?: unknown;
}
/** A WebSocket session: `send` a pose request (any /pose body, ops
 * included) and get its answer; `play` a clip pushed at its fps. Each
 * request gets an integer id; answers are matched by it. */
export declare class StreamSession {
    readonly ws: WebSocket;
    readonly floatsPerMatrix: number;
    /** Every binary frame as it arrives (requests and playback). */
    onframe: ((f: StreamFrame) => void) | null;
    /** The close event's code and reason once the session has ended. */
    closed: {
        code: number;
        reason: string;
    } | null;
    /** Frames received. */
    received: number;
    private next;
    private readonly pending;
    private play_;
    private constructor();
    static open(url: string, Ctor: WsCtor, floatsPerMatrix: number, protocols: string[], headers: Record<string, string> | null): Promise<StreamSession>;
    get open(): boolean;
    /** Sends one pose request; resolves with its answer, rejects with the problem /pose would answer. */
    send(pose: Pose): Promise<StreamFrame>;
    /** Pushes frames [s, e) of a clip at `fps`; each frame goes to onFrame; resolves with e when played. */
    play(p: PlayOptions, onFrame: (f: StreamFrame) => void): Promise<number>;
    /** Stops the clip being played (its promise resolves with -1). */
    stopPlay(): void;
    close(code?: number): void;
    private message;
    private ended;
}
export {};
