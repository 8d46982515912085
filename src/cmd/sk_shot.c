#include "sk_shot.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sk_gltf.h"
#include "sk_gltf_mesh.h"
#include "sk_outfile.h"
#include "sk_shot_int.h"
#include "sk_skin.h"
#include "sk_skinv.h"
#include "sk_usda.h"
#include "sk_frames.h"
#include "sk_shot_events.h"
#include "sk_shot_root.h"

/* The format is little-endian; a big-endian host swaps before writing. */
static bool host_big_endian(void) {
  const uint16_t one = 1;
  uint8_t b;
  memcpy(&b, &one, 1);
  return b == 0;
}

static void swap32(void *p, size_t n) {
  uint8_t *b = p;
  for (size_t i = 0; i < n; i++, b += 4) {
    uint8_t t = b[0];
    b[0] = b[3];
    b[3] = t;
    t = b[1];
    b[1] = b[2];
    b[2] = t;
  }
}

static void put_u32(uint8_t *d, uint32_t v) {
  for (int i = 0; i < 4; i++)
    d[i] = (uint8_t)(v >> (8 * i));
}

static int write_header(const sk_shot *sh, FILE *out) {
  uint8_t h[SK_SHOT_HEADER_BYTES] = {0};
  memcpy(h, SK_FRAMES_MAGIC, 8);
  put_u32(h + 8, (uint32_t)sh->floats_per_matrix);
  put_u32(h + 12, (uint32_t)(sh->skel->count + 1));
  put_u32(h + 16, (uint32_t)sh->characters);
  put_u32(h + 20, (uint32_t)sh->frames);
  float fps = (float)sh->fps;
  uint32_t fb;
  memcpy(&fb, &fps, 4);
  put_u32(h + 24, fb);
  /* bytes 28..31: zero, reserved */
  return fwrite(h, 1, sizeof h, out) == sizeof h ? 0 : SK_EIO;
}

/* Writing overlaps computing: a writer thread writes one buffer while the
 * caller fills the other, so a file in page cache costs the copy into the
 * cache on another core instead of on the computing one. */
typedef struct writer {
  FILE *out;
  float *buf[2];
  size_t floats[2]; /* SIZE_MAX: stop */
  sem_t full, empty;
  int rc;
  bool running;
  pthread_t th;
} writer;

static void *writer_main(void *arg) {
  writer *w = arg;
  for (int i = 0;; i ^= 1) {
    while (sem_wait(&w->full) != 0)
      ;
    if (w->floats[i] == SIZE_MAX)
      break;
    if (w->rc == 0 && fwrite(w->buf[i], sizeof(float), w->floats[i], w->out) != w->floats[i])
      w->rc = SK_EIO;
    sem_post(&w->empty);
  }
  return NULL;
}

static void put_u64(uint8_t *d, uint64_t v) {
  for (int i = 0; i < 8; i++)
    d[i] = (uint8_t)(v >> (8 * i));
}

static void put_f64(uint8_t *d, double v) {
  uint64_t b;
  memcpy(&b, &v, 8);
  put_u64(d, b);
}

/* Floats primitive `p` takes in a frame of the point cache. */
static size_t prim_floats(const sk_shot *sh, const sk_geom_prim *p) {
  if (sh->output == SK_SHOT_BOUNDS)
    return 6;
  return (size_t)p->count * (sh->normals && p->nrm != NULL ? 6 : 3);
}

/* Floats a frame of the point cache takes. */
static size_t mesh_row_floats(const sk_shot *sh) {
  size_t n = 0;
  for (uint32_t i = 0; i < sh->geom->nprims; i++)
    n += prim_floats(sh, &sh->geom->prims[i]);
  return n;
}

/* The point cache header of proto/mesh.md: what a reader needs to find
 * every primitive of every frame without the glTF file. */
static int write_points_header(const sk_shot *sh, size_t row_floats, FILE *out) {
  const sk_geom *g = sh->geom;
  const size_t bytes = SK_POINTS_HEADER_BYTES + 16 * (size_t)g->nprims;
  uint8_t *h = calloc(1, bytes);
  if (h == NULL)
    return SK_ENOMEM;
  memcpy(h, SK_POINTS_MAGIC, 8);
  put_u32(h + 8, (uint32_t)bytes);
  put_u32(h + 12, (uint32_t)sh->output);
  put_u32(h + 16, (sh->normals && sh->output == SK_SHOT_VERTICES ? 1u : 0u) | (sh->by_index ? 2u : 0u));
  put_u32(h + 20, g->nprims);
  put_u32(h + 24, (uint32_t)sh->frames);
  put_u32(h + 28, (uint32_t)row_floats);
  put_f64(h + 32, sh->fps);
  put_f64(h + 40, sh->by_index ? 0.0 : sh->from);
  put_u64(h + 48, sh->by_index ? sh->first : 0);
  for (uint32_t i = 0; i < g->nprims; i++) {
    const sk_geom_prim *p = &g->prims[i];
    uint8_t *e = h + SK_POINTS_HEADER_BYTES + 16 * (size_t)i;
    put_u32(e, p->mesh);
    put_u32(e + 4, p->prim);
    put_u32(e + 8, p->count);
    put_u32(e + 12, (uint32_t)prim_floats(sh, p));
  }
  int rc = fwrite(h, 1, bytes, out) == bytes ? 0 : SK_EIO;
  free(h);
  return rc;
}

void sk_shot__close(sk_shot__state *st, size_t nctx) {
  for (size_t c = 0; st->ctx != NULL && c < nctx; c++)
    sk_sample_ctx_destroy(st->ctx[c]);
  free(st->ctx);
  free(st->finals);
  free(st->outbuf[0]);
  free(st->outbuf[1]);
  free(st->times);
  for (int t = 0; t < SK_SKINV_MAX_THREADS; t++)
    free(st->scratch[t]);
  sk_clips_runner_close(&st->runner);
  sk_threads_stop(&st->own_pool);
}

int sk_shot__open(const sk_shot *sh, sk_shot__state *st) {
  memset(st, 0, sizeof *st);
  st->mats = sh->skel->count + 1;
  st->row_floats = sh->output != SK_SHOT_MATRICES ? mesh_row_floats(sh) : st->mats * (size_t)sh->floats_per_matrix;
  /* About 4096 poses in flight whatever N is: a few MB for 65 bones. */
  st->chunk = 4096 / sh->characters;
  st->chunk = st->chunk < 16 ? 16 : st->chunk > 256 ? 256 : st->chunk;
  if (sh->output != SK_SHOT_MATRICES) /* about 4 MB of points in flight */
    st->chunk = st->row_floats > (1u << 20) / 16 ? 1 : st->chunk < (1u << 20) / st->row_floats ? st->chunk : (1u << 20) / st->row_floats;
  /* With threads a chunk's frames go to them whole (one hand-over per
   * chunk, not per frame), one frame a thread, up to 32 MB of
   * points in each of the two buffers; past that, one frame at a time
   * split into vertex ranges (sk_skinv_run). One frame, not more: the
   * buffers are fresh memory whose first touch faults its pages in, and
   * with 4 frames a thread a 110k-vertex shot of 48 frames on 2 threads
   * took 1.28x the CPU time of 1 thread, against 1.11x with one frame
   * (medians of 4, make bench-mesh's CPU row), more than the thread
   * starts it saves (some 60 us a chunk on a VM). */
  const unsigned want = sh->threads > SK_SKINV_MAX_THREADS ? SK_SKINV_MAX_THREADS : sh->threads;
  st->frame_threads = 1;
  if (sh->output != SK_SHOT_MATRICES && want > 1 && st->row_floats <= (1u << 23) / (2 * want)) {
    const size_t most = (1u << 23) / st->row_floats, per = want;
    st->chunk = st->chunk > per ? st->chunk : per < most ? per : most;
    st->frame_threads = want;
  }
  int rc = sk_clips_runner_init(&st->runner, sh->skel, sh->rig, sh->engine, st->chunk);
  if (rc)
    return rc;
  st->ctx = calloc(sh->characters, sizeof *st->ctx);
  size_t fbytes = (st->chunk * st->mats * 16 * sizeof(float) + 63) / 64 * 64;
  st->finals = aligned_alloc(64, fbytes);
  size_t obytes = (st->chunk * sh->characters * st->row_floats * sizeof(float) + 63) / 64 * 64;
  st->outbuf[0] = aligned_alloc(64, obytes);
  st->outbuf[1] = aligned_alloc(64, obytes);
  st->times = malloc(st->chunk * sizeof *st->times);
  if (st->ctx == NULL || st->finals == NULL || st->outbuf[0] == NULL || st->outbuf[1] == NULL || st->times == NULL)
    return SK_ENOMEM;
  /* Without the caller's pool, one for this shot: its threads start once. */
  st->pool = sh->pool;
  if (st->pool == NULL && sh->output != SK_SHOT_MATRICES && want > 1) {
    sk_threads_init(&st->own_pool, want, want - 1);
    if (sk_threads_start(&st->own_pool) == 0)
      st->pool = &st->own_pool;
  }
  if (sh->output != SK_SHOT_MATRICES) {
    size_t most = 1;
    for (uint32_t i = 0; i < sh->geom->nprims; i++)
      most = sh->geom->prims[i].count > most ? sh->geom->prims[i].count : most;
    for (unsigned t = 0; t < st->frame_threads || t == 0; t++)
      if ((st->scratch[t] = malloc(most * 3 * sizeof *st->scratch[t])) == NULL)
        return SK_ENOMEM;
  }
  sk_anim_layer l[SK_FRAMES_MAX_LAYERS];
  for (size_t c = 0; c < sh->characters; c++) {
    double shift = (double)c * sh->stagger;
    for (size_t i = 0; i < sh->layer_count; i++) {
      l[i] = sh->layers[i];
      l[i].time = sk_sample_layer_time(shift, sh->layers[i].time);
    }
    if ((rc = sk_sample_ctx_create(sh->sampler, l, sh->layer_count, &st->ctx[c])))
      return rc;
  }
  return 0;
}

static void chunk_times(const sk_shot *sh, sk_shot__state *st, size_t f0, size_t n) {
  for (size_t k = 0; k < n; k++)
    st->times[k] = sh->by_index ? (double)(sh->first + f0 + k) / sh->fps : sh->from + (double)(f0 + k) / sh->fps;
}

int sk_shot__finals(const sk_shot *sh, sk_shot__state *st, size_t f0, size_t n) {
  chunk_times(sh, st, f0, n);
  return sk_clips_finals(&st->runner, st->ctx[0], st->times, n, NULL, st->finals);
}

/* sk_skin with the morph weights of the layer's clip at the frame's time,
 * as the daemon answers the same range; a big primitive over `vthreads`
 * vertex ranges. */
static void skin_one(const sk_shot *sh, const sk_shot__state *st, size_t k, uint32_t prim, float *pos, float *nrm,
                     float *box, float *scratch, unsigned vthreads) {
  const sk_geom *g = sh->geom;
  const sk_geom_prim *p = &g->prims[prim];
  const sk_anim_layer *l = &sh->layers[0];
  double infl[SK_GEOM_MAX_TARGETS + 1];
  const double frame =
      sk_anim__clip_frame(&sh->anim->clips[l->clip], sk_sample_layer_time(l->time, st->times[k]), l->loop);
  sk_skin_influences(g, p->mesh, p->ntargets, (long)l->clip, frame, p->influence, infl);
  sk_skin_job job = {.prim = p, .final = st->finals + k * st->mats * 16, .slots = st->mats, .influence = infl,
                     .pos = pos != NULL ? pos : scratch, .nrm = p->nrm != NULL ? nrm : NULL, .bounds = box != NULL};
  sk_skinv_run(&job, NULL, st->pool, p->count >= SK_SHOT_THREADS_FROM ? vthreads : 1);
  if (box != NULL) {
    memcpy(box, job.min, sizeof job.min);
    memcpy(box + 3, job.max, sizeof job.max);
  }
}

void sk_shot__skin(const sk_shot *sh, sk_shot__state *st, size_t k, uint32_t prim, float *pos, float *nrm,
                   float *box) {
  skin_one(sh, st, k, prim, pos, nrm, box, st->scratch[0], sh->threads);
}

/* Frames [k0, k1) of a chunk, on one thread: `scratch` its own, `vthreads`
 * the vertex ranges of a big primitive (1 when frames are split). */
typedef struct frame_range {
  const sk_shot *sh;
  const sk_shot__state *st;
  size_t k0, k1;
  float *dst, *scratch;
  unsigned vthreads;
} frame_range;

static void mesh_frames(void *arg, unsigned t) {
  const frame_range *r = (const frame_range *)arg + t;
  const sk_shot *sh = r->sh;
  for (size_t k = r->k0; k < r->k1; k++) {
    float *d = r->dst + k * r->st->row_floats;
    for (uint32_t i = 0; i < sh->geom->nprims; i++) {
      const sk_geom_prim *p = &sh->geom->prims[i];
      if (sh->output == SK_SHOT_BOUNDS) {
        skin_one(sh, r->st, k, i, NULL, NULL, d, r->scratch, r->vthreads);
      } else {
        const bool nrm = sh->normals && p->nrm != NULL;
        skin_one(sh, r->st, k, i, d, nrm ? d + (size_t)p->count * 3 : NULL, NULL, r->scratch, r->vthreads);
      }
      d += prim_floats(sh, p);
    }
  }
}

/* The point cache of the chunk's frames [0, n) from their skin matrices in
 * st->finals: split into up to st->frame_threads runs of whole frames (the
 * caller's thread the first, the pool's the others), or one run whose big
 * primitives take sh->threads vertex ranges. Every frame is the same job
 * either way: the same bytes. */
static void mesh_chunk(const sk_shot *sh, sk_shot__state *st, size_t n, float *dst) {
  const unsigned want = st->frame_threads < n ? st->frame_threads : (unsigned)n;
  const unsigned more = want > 1 ? sk_threads_take(st->pool, want - 1) : 0, used = 1 + more;
  frame_range r[SK_SKINV_MAX_THREADS];
  for (unsigned t = 0; t < used; t++)
    r[t] = (frame_range){.sh = sh, .st = st, .k0 = n * t / used, .k1 = n * (t + 1) / used, .dst = dst,
                         .scratch = st->scratch[t], .vthreads = used > 1 ? 1 : sh->threads};
  sk_threads_run(more > 0 ? st->pool : NULL, used, mesh_frames, r);
  sk_threads_give(st->pool, more);
}

/* Frames [f0, f0 + n) of every character into `dst`, frame-major. */
static int compute_chunk(const sk_shot *sh, sk_shot__state *st, size_t f0, size_t n, float *dst) {
  if (sh->output != SK_SHOT_MATRICES) {
    int rc = sk_shot__finals(sh, st, f0, n);
    if (!rc)
      mesh_chunk(sh, st, n, dst);
    return rc;
  }
  chunk_times(sh, st, f0, n);
  /* One character of 4x4 matrices is the kernel's own output layout. */
  if (sh->characters == 1 && sh->floats_per_matrix == 16)
    return sk_clips_finals(&st->runner, st->ctx[0], st->times, n, NULL, dst);
  for (size_t c = 0; c < sh->characters; c++) {
    int rc = sk_clips_finals(&st->runner, st->ctx[c], st->times, n, NULL, st->finals);
    if (rc)
      return rc;
    /* Frame-major: frame f holds characters 0..N-1 back to back. */
    for (size_t k = 0; k < n; k++) {
      const float *src = st->finals + k * st->mats * 16;
      float *d = dst + (k * sh->characters + c) * st->row_floats;
      if (sh->floats_per_matrix == 16)
        memcpy(d, src, st->mats * 16 * sizeof *d);
      else
        for (size_t m = 0; m < st->mats; m++)
          sk_frames_mat3x4(src + 16 * m, d + 12 * m);
    }
  }
  return 0;
}

int sk_shot_write(const sk_shot *sh, FILE *out) {
  if (sh == NULL || sh->skel == NULL || sh->sampler == NULL || sh->layer_count == 0 ||
      sh->layer_count > SK_FRAMES_MAX_LAYERS || sh->characters == 0 || sh->characters > 4096 ||
      (sh->floats_per_matrix != 16 && sh->floats_per_matrix != 12) || !(sh->fps > 0) ||
      sh->frames > UINT32_MAX || sh->skel->count + 1 > UINT32_MAX)
    return SK_EINVAL;
  if (sh->output != SK_SHOT_MATRICES &&
      (sh->geom == NULL || sh->anim == NULL || sh->characters != 1 || sh->layer_count != 1))
    return SK_EINVAL;
  sk_shot__state st;
  int rc = sk_shot__open(sh, &st);
  if (!rc && sh->output != SK_SHOT_MATRICES && st.row_floats > UINT32_MAX)
    rc = SK_EINVAL;
  if (!rc && out != NULL && sh->header)
    rc = sh->output != SK_SHOT_MATRICES ? write_points_header(sh, st.row_floats, out) : write_header(sh, out);
  const bool swap = host_big_endian();
  writer w;
  memset(&w, 0, sizeof w);
  w.out = out;
  w.buf[0] = st.outbuf[0];
  w.buf[1] = st.outbuf[1];
  if (!rc && out != NULL) {
    /* Without a thread (or semaphores) the chunks are written inline. */
    bool full_ok = sem_init(&w.full, 0, 0) == 0, empty_ok = full_ok && sem_init(&w.empty, 0, 2) == 0;
    w.running = empty_ok && pthread_create(&w.th, NULL, writer_main, &w) == 0;
    if (!w.running && empty_ok)
      sem_destroy(&w.empty);
    if (!w.running && full_ok)
      sem_destroy(&w.full);
  }
  int slot = 0;
  for (size_t f0 = 0; !rc && f0 < sh->frames; f0 += st.chunk) {
    size_t n = sh->frames - f0 < st.chunk ? sh->frames - f0 : st.chunk;
    if (w.running)
      while (sem_wait(&w.empty) != 0)
        ;
    float *dst = st.outbuf[slot];
    rc = compute_chunk(sh, &st, f0, n, dst);
    size_t floats = n * sh->characters * st.row_floats;
    if (!rc && swap)
      swap32(dst, floats);
    if (!rc && w.running) {
      w.floats[slot] = floats;
      sem_post(&w.full);
      slot ^= 1;
    } else if (!rc && out != NULL && fwrite(dst, sizeof(float), floats, out) != floats) {
      rc = SK_EIO;
    }
    if (rc && w.running)
      sem_post(&w.empty); /* the slot taken above was not handed over */
  }
  if (w.running) {
    while (sem_wait(&w.empty) != 0)
      ;
    w.floats[slot] = SIZE_MAX;
    sem_post(&w.full);
    pthread_join(w.th, NULL);
    sem_destroy(&w.full);
    sem_destroy(&w.empty);
    rc = rc ? rc : w.rc;
  }
  sk_shot__close(&st, sh->characters);
  return rc;
}

/* ---- the command line ---------------------------------------------------- */

static void frames_usage(FILE *f) {
  fprintf(f,
          "usage: skinner frames FILE.glb|FILE.gltf [options]\n"
          "  --skin S             skin index or name (default: the first)\n"
          "  --clip NAME[@OFF][*W]  clip name or index, time offset OFF seconds, weight W (default: clip 0);\n"
          "                       repeat to blend layers (at most %d)\n"
          "  --loop               wrap every layer's time into the clip\n"
          "  --from S --to S --fps R   frames from..to inclusive (default 0, the first clip's duration, 60)\n"
          "  --frames START:END   frames START..END-1 instead, frame k at k / fps: chunks and resumed\n"
          "                       shots give the bytes of one whole shot\n"
          "  --characters N       N characters per frame (default 1); character c is offset c * --stagger\n"
          "  --stagger S          seconds between characters (default 0)\n"
          "  --format f32|f32x12|usda  16 floats per matrix, or 12 (3x4, as application/x-skinner-mat3x4);\n"
          "                       usda: with --output vertices, USD ASCII with time-sampled points (docs/mesh.md)\n"
          "  --header             start with the header of proto/frames.md (matrices) or proto/mesh.md (points)\n"
          "  --engine kernel|exact  kernel: the exact batch kernel (default); exact: the scalar core;\n"
          "                       both give Babylon's bits, the same bytes\n"
          "  --output matrices|vertices|bounds  matrices (default); or a point cache of the skin's skinned\n"
          "                       primitives per frame, float32: positions (count x 3 each) or min xyz max xyz\n"
          "                       (docs/mesh.md; one --clip, one character)\n"
          "  --events FILE        the clip's animation events fired at each frame, JSON lines (docs/animation.md)\n"
          "  --root-motion FILE   with --frames: the clip played in place (the frames) and the character's motion\n"
          "                       per frame in FILE, JSON lines, as skinnerd answers \"rootMotion\" (proto/rootmotion.md)\n"
          "  --root-motion-options JSON  Babylon's RootMotionClip options for it (default {})\n"
          "  --normals            with --output vertices: each primitive's normals after its positions\n"
          "  --threads N          point caches on N threads (default 1, at most %d): whole frames each, or one\n"
          "                       frame's primitive of %u vertices or more split when frames are too big\n"
          "  -o FILE              write to FILE (default: stdout)\n",
          SK_FRAMES_MAX_LAYERS, SK_SKINV_MAX_THREADS, SK_SHOT_THREADS_FROM);
}

static int parse_num(const char *opt, const char *v, double *out) {
  char *end;
  errno = 0;
  *out = v != NULL ? strtod(v, &end) : NAN;
  if (v == NULL || *v == '\0' || *end != '\0' || errno != 0 || !isfinite(*out)) {
    fprintf(stderr, "skinner frames: %s needs a finite number\n", opt);
    return 2;
  }
  return 0;
}

/* START:END, integers 0 <= START < END <= 2^53 (frame indices exact as
 * doubles). */
static int parse_frames(const char *v, uint64_t *first, uint64_t *end) {
  const uint64_t max = UINT64_C(1) << 53;
  char *colon, *tail;
  errno = 0;
  unsigned long long a = v != NULL && *v >= '0' && *v <= '9' ? strtoull(v, &colon, 10) : max + 1;
  bool ok = a <= max && errno == 0 && *colon == ':' && colon[1] >= '0' && colon[1] <= '9';
  unsigned long long b = ok ? strtoull(colon + 1, &tail, 10) : 0;
  ok = ok && errno == 0 && *tail == '\0' && b <= max;
  if (!ok)
    return fprintf(stderr, "skinner frames: --frames needs START:END, two integer frame indices (END excluded)\n"), 2;
  if (b <= a)
    return fprintf(stderr, "skinner frames: --frames %s: END must be after START (END is excluded)\n", v), 2;
  *first = a;
  *end = b;
  return 0;
}

/* NAME[@OFFSET][*WEIGHT], parsed from the end so names keep other marks. */
static int parse_clip(const sk_anim *an, const char *spec, sk_anim_layer *l) {
  char name[512];
  if (snprintf(name, sizeof name, "%s", spec) >= (int)sizeof name) {
    fprintf(stderr, "skinner frames: --clip %s: too long\n", spec);
    return 2;
  }
  l->weight = 1;
  l->time = 0;
  char *star = strrchr(name, '*');
  if (star != NULL) {
    *star = '\0';
    if (parse_num("--clip ...*WEIGHT", star + 1, &l->weight))
      return 2;
    if (!(l->weight > 0))
      return fprintf(stderr, "skinner frames: --clip %s: the weight must be positive\n", spec), 2;
  }
  char *at = strrchr(name, '@');
  if (at != NULL) {
    *at = '\0';
    if (parse_num("--clip ...@OFFSET", at + 1, &l->time))
      return 2;
  }
  if (sk_anim_find_clip(an, name, &l->clip) != 0) {
    fprintf(stderr, "skinner frames: --clip %s: no animation named \"%s\" (the file has %zu)\n", spec, name,
            an->clip_count);
    return 2;
  }
  return 0;
}

/* The file's bytes stay in *data (the USD writer reads the faces again). */
static int load_file(const char *path, const char *skin, sk_strbuf *data, sk_skeleton **s, sk_anim **an,
                     sk_geom **geom, char **mesh_json) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "skinner frames: %s: %s\n", path, strerror(errno));
    return 2;
  }
  char chunk[65536];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
    if (sk_strbuf_append(data, chunk, got))
      break;
  bool bad = ferror(f) != 0 || data->failed;
  fclose(f);
  if (bad) {
    fprintf(stderr, "skinner frames: cannot read %s\n", path);
    return 1;
  }
  sk_error err;
  sk_error_clear(&err);
  sk_gltf_extra x;
  size_t est;
  int rc = sk_gltf_import_extra(data->data != NULL ? data->data : "", data->len, skin, 0, 0, &est, false, s, an, &x, &err);
  if (!rc) {
    *geom = sk_geom_ref(x.geom);
    /* the default mesh chain, as an upload stores it: root motion's character space */
    *mesh_json = x.mesh_json != NULL ? strdup(x.mesh_json) : NULL;
    bool short_of_memory = x.mesh_json != NULL && *mesh_json == NULL;
    sk_gltf_extra_clear(&x);
    if (short_of_memory) {
      fprintf(stderr, "skinner frames: out of memory\n");
      sk_skeleton_destroy(*s);
      sk_geom_unref(*geom);
      *geom = NULL;
      sk_anim_destroy(*an);
      return 1;
    }
  }
  if (rc) {
    fprintf(stderr, "skinner frames: %s at \"%s\": %s\n", path, err.pointer, err.text);
    return 2;
  }
  if (*an == NULL || (*an)->clip_count == 0) {
    fprintf(stderr, "skinner frames: %s has no animations\n", path);
    sk_skeleton_destroy(*s);
    sk_geom_unref(*geom);
    *geom = NULL;
    sk_anim_destroy(*an);
    return 2;
  }
  return 0;
}

typedef struct frames_args {
  const char *file, *skin, *out, *events, *root, *root_opts, *clips[SK_FRAMES_MAX_LAYERS];
  size_t nclips;
  bool loop, header, has_to, has_from, has_frames, usda, normals;
  double from, to, fps, characters, stagger, threads;
  uint64_t first, end; /* --frames START:END */
  int fpm, engine, output;
} frames_args;

static int parse_args(int argc, char **argv, frames_args *a) {
  memset(a, 0, sizeof *a);
  a->fps = SK_ANIM_FPS;
  a->characters = 1;
  a->threads = 1;
  a->fpm = 16;
  /* the exact kernel gives the scalar core's bytes at about three times its rate; exact stays for cross-checks */
  a->engine = SK_CLIPS_KERNEL;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int rc = 0;
    bool val = true;
    if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
      frames_usage(stdout);
      return -1;
    } else if (strcmp(o, "--loop") == 0 || strcmp(o, "--header") == 0 || strcmp(o, "--normals") == 0) {
      *(o[2] == 'l' ? &a->loop : o[2] == 'h' ? &a->header : &a->normals) = true;
      val = false;
    } else if (strcmp(o, "--skin") == 0 && v != NULL) {
      a->skin = v;
    } else if (strcmp(o, "-o") == 0 && v != NULL) {
      a->out = v;
    } else if (strcmp(o, "--events") == 0 && v != NULL) {
      a->events = v;
    } else if (strcmp(o, "--root-motion") == 0 && v != NULL) {
      a->root = v;
    } else if (strcmp(o, "--root-motion-options") == 0 && v != NULL) {
      a->root_opts = v;
    } else if (strcmp(o, "--clip") == 0 && v != NULL) {
      if (a->nclips == SK_FRAMES_MAX_LAYERS)
        return fprintf(stderr, "skinner frames: at most %d --clip layers\n", SK_FRAMES_MAX_LAYERS), 2;
      a->clips[a->nclips++] = v;
    } else if (strcmp(o, "--from") == 0) {
      rc = parse_num(o, v, &a->from);
      a->has_from = true;
    } else if (strcmp(o, "--frames") == 0) {
      rc = parse_frames(v, &a->first, &a->end);
      a->has_frames = true;
    } else if (strcmp(o, "--to") == 0) {
      rc = parse_num(o, v, &a->to);
      a->has_to = true;
    } else if (strcmp(o, "--fps") == 0) {
      rc = parse_num(o, v, &a->fps);
    } else if (strcmp(o, "--characters") == 0) {
      rc = parse_num(o, v, &a->characters);
    } else if (strcmp(o, "--stagger") == 0) {
      rc = parse_num(o, v, &a->stagger);
    } else if (strcmp(o, "--format") == 0 && v != NULL &&
               (!strcmp(v, "f32") || !strcmp(v, "f32x12") || !strcmp(v, "usda"))) {
      a->fpm = strcmp(v, "f32x12") == 0 ? 12 : 16;
      a->usda = strcmp(v, "usda") == 0;
    } else if (strcmp(o, "--threads") == 0) {
      rc = parse_num(o, v, &a->threads);
    } else if (strcmp(o, "--engine") == 0 && v != NULL && (!strcmp(v, "exact") || !strcmp(v, "kernel"))) {
      a->engine = strcmp(v, "exact") == 0 ? SK_CLIPS_EXACT : SK_CLIPS_KERNEL;
    } else if (strcmp(o, "--output") == 0 && v != NULL &&
               (!strcmp(v, "matrices") || !strcmp(v, "vertices") || !strcmp(v, "bounds"))) {
      a->output = v[0] == 'm' ? SK_SHOT_MATRICES : v[0] == 'v' ? SK_SHOT_VERTICES : SK_SHOT_BOUNDS;
    } else if (o[0] != '-' && a->file == NULL) {
      a->file = o;
      val = false;
    } else {
      fprintf(stderr, "skinner frames: bad or incomplete option %s (see skinner frames --help)\n", o);
      return 2;
    }
    if (rc)
      return rc;
    i += val ? 1 : 0;
  }
  if (a->file == NULL)
    return fprintf(stderr, "skinner frames: which glTF file? (see skinner frames --help)\n"), 2;
  if (!(a->fps > 0))
    return fprintf(stderr, "skinner frames: --fps must be positive\n"), 2;
  if (a->has_frames && (a->has_from || a->has_to))
    return fprintf(stderr, "skinner frames: --frames replaces --from and --to; give one or the other\n"), 2;
  if (!(a->characters >= 1 && a->characters <= 4096 && a->characters == floor(a->characters)))
    return fprintf(stderr, "skinner frames: --characters must be an integer in 1..4096\n"), 2;
  if (a->output != SK_SHOT_MATRICES && (a->characters != 1 || a->nclips > 1))
    return fprintf(stderr, "skinner frames: --output vertices|bounds takes one --clip, one character\n"), 2;
  if (!(a->threads >= 1 && a->threads <= SK_SKINV_MAX_THREADS && a->threads == floor(a->threads)))
    return fprintf(stderr, "skinner frames: --threads must be an integer in 1..%d\n", SK_SKINV_MAX_THREADS), 2;
  if (a->events != NULL && (a->characters != 1 || a->nclips > 1))
    return fprintf(stderr, "skinner frames: --events takes one --clip, one character\n"), 2;
  if (a->root_opts != NULL && a->root == NULL)
    return fprintf(stderr, "skinner frames: --root-motion-options goes with --root-motion\n"), 2;
  if (a->root != NULL && (a->characters != 1 || a->nclips > 1 || a->output != SK_SHOT_MATRICES || a->usda))
    return fprintf(stderr, "skinner frames: --root-motion takes one --clip, one character, matrices\n"), 2;
  if (a->root != NULL && !a->has_frames)
    return fprintf(stderr, "skinner frames: --root-motion takes --frames START:END (a \"frames\" range: chunks join)\n"),
           2;
  if (a->normals && a->output != SK_SHOT_VERTICES)
    return fprintf(stderr, "skinner frames: --normals goes with --output vertices\n"), 2;
  if (a->usda && (a->output != SK_SHOT_VERTICES || a->header))
    return fprintf(stderr, "skinner frames: --format usda takes --output vertices and no --header\n"), 2;
  return 0;
}

/* --events FILE: the clip's events per frame, written whole or not at all. */
static int write_events(const frames_args *a, const sk_shot *sh, double to) {
  const sk_anim_layer *l = &sh->layers[0];
  if (l->time != 0 || l->weight != 1)
    return fprintf(stderr, "skinner frames: --events takes a --clip without @OFFSET or *WEIGHT\n"), 2;
  sk_shot_events e = {.clip = (long)l->clip, .loop = a->loop, .by_index = a->has_frames, .from = a->from,
                      .to = to, .fps = a->fps, .first = a->first, .frames = sh->frames};
  sk_outfile of = {0};
  sk_error err;
  sk_error_clear(&err);
  int rc = sk_outfile_open(&of, a->events, &err);
  if (!rc && (rc = sk_shot_events_write(sh->anim, &e, of.f, &err)) == 0)
    rc = sk_outfile_commit(&of, &err);
  else if (of.f != NULL)
    sk_outfile_abort(&of);
  if (rc)
    fprintf(stderr, "skinner frames: --events: %s\n", err.code ? err.text : sk_strerror(rc));
  return rc == 0 ? 0 : rc == SK_ENOMEM || rc == SK_EIO ? 1 : 2;
}

/* --root-motion FILE: the frames in place to -o and the motion to FILE,
 * each whole or not at all. */
static int write_root(const frames_args *a, const sk_shot *sh) {
  const sk_anim_layer *l = &sh->layers[0];
  if (l->time != 0 || l->weight != 1)
    return fprintf(stderr, "skinner frames: --root-motion takes a --clip without @OFFSET or *WEIGHT\n"), 2;
  sk_shot_root r = {.clip = l->clip, .loop = a->loop, .fps = a->fps, .first = a->first, .frames = sh->frames,
                    .floats_per_matrix = a->fpm, .options = a->root_opts, .mesh_json = sh->mesh_json};
  sk_outfile of = {0}, om = {0};
  sk_error err;
  sk_error_clear(&err);
  int rc = sk_outfile_open(&of, a->out, &err);
  if (!rc && (rc = sk_outfile_open(&om, a->root, &err)) != 0)
    sk_outfile_abort(&of);
  if (!rc && sh->header && write_header(sh, of.f) != 0)
    rc = sk_error_set(&err, SK_EIO, "", "cannot write the frames");
  if (!rc)
    rc = sk_shot_root_write(sh->skel, (sk_anim *)sh->anim, &r, of.f, om.f, &err);
  if (!rc && (rc = sk_outfile_commit(&of, &err)) == 0)
    rc = sk_outfile_commit(&om, &err);
  if (rc) { /* both closed or safe to abort again */
    sk_outfile_abort(&om);
    sk_outfile_abort(&of);
  }
  if (rc && err.code)
    fprintf(stderr, "skinner frames: --root-motion: %s%s%s\n", err.pointer[0] ? err.pointer : "",
            err.pointer[0] ? ": " : "", err.text);
  else if (rc)
    fprintf(stderr, "skinner frames: --root-motion: %s\n", sk_strerror(rc));
  return rc == 0 ? 0 : rc == SK_ENOMEM || rc == SK_EIO ? 1 : 2;
}

static int run_shot_faces(const frames_args *a, sk_shot *sh, const sk_usda_faces *faces) {
  const sk_anim *an = sh->anim;
  for (size_t i = 0; i < (a->nclips ? a->nclips : 1); i++) {
    if (a->nclips == 0)
      sh->layers[0] = (sk_anim_layer){.clip = 0, .weight = 1};
    else if (parse_clip(an, a->clips[i], &sh->layers[i]))
      return 2;
    sh->layers[i].loop = a->loop;
  }
  sh->layer_count = a->nclips ? a->nclips : 1;
  double to = a->has_to ? a->to : sk_anim_clip_duration(an, sh->layers[0].clip);
  if (!a->has_frames && to < a->from)
    return fprintf(stderr, "skinner frames: --to is before --from\n"), 2;
  /* The frame count of a pose request's from/to/fps (sk_pose_frames.c). */
  double frames = a->has_frames ? (double)(a->end - a->first) : floor((to - a->from) * a->fps + 1e-9) + 1;
  if (!(frames <= UINT32_MAX))
    return fprintf(stderr, "skinner frames: %.0f frames; the limit is %u\n", frames, UINT32_MAX), 2;
  sh->from = a->from;
  sh->fps = a->fps;
  sh->by_index = a->has_frames;
  sh->first = a->first;
  sh->frames = (size_t)frames;
  sh->characters = (size_t)a->characters;
  sh->stagger = a->stagger;
  sh->floats_per_matrix = a->fpm;
  sh->header = a->header;
  sh->engine = a->engine;
  /* events first: a refused clip leaves no frames behind either */
  if (a->events != NULL && write_events(a, sh, to) != 0)
    return 2;
  if (a->root != NULL)
    return write_root(a, sh);
  sk_sampler *sp = NULL;
  sk_rig *rig = NULL;
  int rc = sk_sampler_create(an, &sp);
  if (!rc && a->engine == SK_CLIPS_KERNEL)
    rc = sk_rig_create(sh->skel, &rig);
  /* -o FILE appears whole or not at all (sk_outfile) */
  sk_outfile of = {0};
  sk_error err;
  sk_error_clear(&err);
  if (!rc && sk_outfile_open(&of, a->out, &err) != 0) {
    fprintf(stderr, "skinner frames: %s\n", err.text);
    sk_sampler_destroy(sp);
    sk_rig_destroy(rig);
    return 1;
  }
  sh->sampler = sp;
  sh->rig = rig;
  if (!rc)
    rc = faces != NULL ? sk_usda_write(sh, faces, of.f) : sk_shot_write(sh, of.f);
  if (!rc)
    rc = sk_outfile_commit(&of, &err);
  else
    sk_outfile_abort(&of);
  sk_sampler_destroy(sp);
  sk_rig_destroy(rig);
  if (rc == SK_ENOTFINITE)
    fprintf(stderr, "skinner frames: a posed number is not finite (float32 overflow); nothing written\n");
  else if (rc)
    fprintf(stderr, "skinner frames: %s\n", err.code ? err.text : sk_strerror(rc));
  return rc ? 1 : 0;
}

static int run_shot(const frames_args *a, const sk_strbuf *data, sk_skeleton *s, sk_anim *an, const sk_geom *geom,
                    const char *mesh_json) {
  sk_shot sh;
  memset(&sh, 0, sizeof sh);
  sh.mesh_json = mesh_json;
  sh.skel = s;
  sh.output = a->output;
  sh.geom = geom;
  sh.anim = an;
  sh.normals = a->normals;
  sh.threads = (unsigned)a->threads;
  if (a->output != SK_SHOT_MATRICES && geom == NULL)
    return fprintf(stderr, "skinner frames: %s: no node with this skin has a mesh\n", a->file), 2;
  sk_usda_faces faces = {0};
  sk_error ferr;
  sk_error_clear(&ferr);
  if (a->usda && sk_usda_faces_read(data->data, data->len, geom, &faces, &ferr) != 0) {
    fprintf(stderr, "skinner frames: %s at \"%s\": %s\n", a->file, ferr.pointer, ferr.text);
    sk_usda_faces_close(&faces);
    return ferr.code == SK_ENOMEM ? 1 : 2;
  }
  /* The shot's threads, started once for every chunk and frame (a
   * refused start leaves the caller's thread alone: the same bytes). */
  sk_threads pool;
  sk_threads_init(&pool, sh.threads, sh.threads - 1);
  if (sk_threads_start(&pool) == 0)
    sh.pool = &pool;
  int rc = run_shot_faces(a, &sh, a->usda ? &faces : NULL);
  sk_threads_stop(&pool);
  sk_usda_faces_close(&faces);
  return rc;
}

int sk_shot_main(int argc, char **argv) {
  frames_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc)
    return rc < 0 ? 0 : rc;
  sk_skeleton *s = NULL;
  sk_anim *an = NULL;
  sk_geom *geom = NULL;
  sk_strbuf data = {0};
  char *mesh_json = NULL;
  if ((rc = load_file(a.file, a.skin, &data, &s, &an, &geom, &mesh_json))) {
    sk_strbuf_free(&data);
    return rc;
  }
  rc = run_shot(&a, &data, s, an, geom, mesh_json);
  free(mesh_json);
  sk_strbuf_free(&data);
  sk_geom_unref(geom);
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
  return rc;
}
