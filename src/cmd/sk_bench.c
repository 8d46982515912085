/* `skinner bench`: bone matrices per second for the scalar core, the
 * single-pose path and the exact batch kernel on every SIMD path this CPU
 * has (plus the opt-in float32 kernel on the best path), against the
 * machine's own copy bandwidth measured in the same run: a memcpy of a
 * buffer the size of the output moves the same kind of traffic (reads and
 * writes) the kernel does, so "of copy" = the kernel's (bytes read + bytes
 * written) per second over the copy's. The "bound" rows (input "mix") time
 * the exact kernel's own instructions without their dependencies
 * (sk_bench_mix.h): the most any schedule of them can do on this CPU, which
 * says when a rate target is out of reach. Not a test: figures depend on
 * the machine.
 *
 * Every figure is the median of several timed repetitions; small sizes
 * repeat inside one repetition until it lasts a few milliseconds. The run
 * is time-boxed (about 30 s on a 2-core machine). */
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "sk_bench.h"

#include "sk_bench_mix.h"
#include "sk_kernel.h"
#include "sk_mat.h"
#include "sk_skeleton.h"
#include "sk_bench_time.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* xorshift64*: the same skeletons and poses every run. */
typedef struct {
  uint64_t s;
} bench_rng;
static double rng_unit(bench_rng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return (double)((r->s * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}
static double rng_range(bench_rng *r, double lo, double hi) { return lo + (hi - lo) * rng_unit(r); }

static void rand_trs(bench_rng *r, double s[3], double q[4], double t[3]) {
  double n = 0;
  for (int k = 0; k < 4; k++) {
    q[k] = rng_range(r, -1, 1);
    n += q[k] * q[k];
  }
  n = sqrt(n);
  for (int k = 0; k < 4; k++)
    q[k] /= n;
  for (int k = 0; k < 3; k++) {
    s[k] = rng_range(r, 0.9, 1.1);
    t[k] = rng_range(r, -1, 1);
  }
}

/* A humanoid-like tree: each bone hangs off one of the few bones before it. */
static sk_skeleton *bench_skeleton(size_t nb, bench_rng *r) {
  sk_bone_desc *d = calloc(nb, sizeof *d);
  char(*names)[24] = calloc(nb, sizeof *names);
  sk_skeleton *s = NULL;
  if (d == NULL || names == NULL)
    goto done;
  for (size_t i = 0; i < nb; i++) {
    snprintf(names[i], sizeof names[i], "b%zu", i);
    d[i].name = names[i];
    if (i > 0) {
      const size_t back = 1 + (size_t)(rng_unit(r) * (i < 4 ? (double)i : 4.0));
      d[i].parent = names[i - (back > i ? i : back)];
    }
    double sc[3], q[4], t[3];
    rand_trs(r, sc, q, t);
    sk_mat_compose(sc, q, t, d[i].local);
  }
  sk_error e = {0};
  if (sk_skeleton_create(d, nb, "/bones", &s, &e) != 0)
    s = NULL;
done:
  free(d);
  free(names);
  return s;
}

/* One (bones, poses) configuration: TRS input for every bone, SoA. */
typedef struct bench_case {
  size_t nb, np, stride, block; /* the job's pose_stride and block_stride */
  sk_skeleton *s;
  sk_rig *rig;
  uint8_t *mode;
  size_t *offset;
  float *input;      /* TRS rows, blocked (or row) layout */
  float *final;      /* np * (nb+1) * 16, 64-byte aligned */
  float *copy_src;   /* as large as final: the copy bandwidth's source */
  float *locals;     /* nloc poses of precomposed locals, for the matrix-input paths */
  size_t nloc;
  float *scratch;
  sk_kernel_job job;
} bench_case;

/* 2 MB-aligned and huge-page backed where the kernel allows it, as a
 * server would allocate batch buffers: with 4 KB pages, 650 input rows
 * per group of poses cost a TLB miss each. */
static void *alloc_big(size_t bytes) {
  const size_t huge = (size_t)2 << 20;
  bytes = (bytes + huge - 1) / huge * huge;
  void *p = aligned_alloc(huge, bytes);
#ifdef MADV_HUGEPAGE
  if (p != NULL)
    (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

/* Where bone `bone`'s row 0 holds pose p, in either layout. */
static float *trs_at(const bench_case *c, size_t bone, size_t p) {
  return c->input + c->offset[bone] + (c->block != 0 ? p / 16 * c->block + p % 16 : p);
}

static void pose_trs(const bench_case *c, size_t bone, size_t p, double s[3], double q[4], double t[3]) {
  const float *in = trs_at(c, bone, p);
  const size_t st = c->stride;
  for (int k = 0; k < 3; k++) {
    t[k] = in[k * st];
    s[k] = in[(7 + k) * st];
  }
  for (int k = 0; k < 4; k++)
    q[k] = in[(3 + k) * st];
}

static int case_init(bench_case *c, sk_skeleton *s, sk_rig *rig, size_t np, bool rows, bench_rng *r) {
  memset(c, 0, sizeof *c);
  c->nb = s->count;
  c->np = np;
  c->s = s;
  c->rig = rig;
  c->nloc = np < 256 ? np : 256;
  c->mode = malloc(c->nb);
  c->offset = malloc(c->nb * sizeof *c->offset);
  if (c->mode == NULL || c->offset == NULL)
    return SK_ENOMEM;
  memset(c->mode, SK_KERNEL_TRS, c->nb);
  size_t floats;
  if (rows) {
    c->stride = sk_kernel_pose_stride(np);
    floats = 10 * c->stride * c->nb;
    for (size_t b = 0; b < c->nb; b++)
      c->offset[b] = 10 * c->stride * b;
  } else
    floats = sk_kernel_blocked_layout(c->mode, c->nb, np, c->offset, &c->stride, &c->block);
  c->input = alloc_big(floats * sizeof(float));
  c->final = alloc_big(np * (c->nb + 1) * 16 * sizeof(float));
  c->copy_src = alloc_big(np * (c->nb + 1) * 16 * sizeof(float));
  c->locals = malloc(c->nloc * c->nb * 16 * sizeof(float));
  c->scratch = malloc(c->nb * 16 * sizeof(float));
  if (c->mode == NULL || c->offset == NULL || c->input == NULL || c->final == NULL || c->copy_src == NULL ||
      c->locals == NULL || c->scratch == NULL)
    return SK_ENOMEM;
  const size_t lanes = (np + 15) / 16 * 16;
  for (size_t b = 0; b < c->nb; b++)
    for (size_t p = 0; p < lanes; p++) {
      double sc[3], q[4], t[3];
      rand_trs(r, sc, q, t);
      const double v[10] = {t[0], t[1], t[2], q[0], q[1], q[2], q[3], sc[0], sc[1], sc[2]};
      float *in = trs_at(c, b, p);
      for (int k = 0; k < 10; k++)
        in[k * c->stride] = (float)v[k];
    }
  for (size_t p = 0; p < c->nloc; p++)
    for (size_t b = 0; b < c->nb; b++) {
      double sc[3], q[4], t[3];
      pose_trs(c, b, p, sc, q, t);
      sk_mat_compose(sc, q, t, c->locals + (p * c->nb + b) * 16);
    }
  memset(c->final, 0x3c, np * (c->nb + 1) * 16 * sizeof(float)); /* fault the pages in once */
  memset(c->copy_src, 0x3d, np * (c->nb + 1) * 16 * sizeof(float));
  sk_kernel_job *j = &c->job;
  j->rig = rig;
  j->poses = np;
  j->pose_stride = c->stride;
  j->block_stride = c->block;
  j->mode = c->mode;
  j->offset = c->offset;
  j->input = c->input;
  j->input_floats = floats;
  j->final = c->final;
  return sk_kernel_validate(j, NULL);
}

static void case_close(bench_case *c) {
  free(c->mode);
  free(c->offset);
  free(c->input);
  free(c->final);
  free(c->copy_src);
  free(c->locals);
  free(c->scratch);
}

/* ---- what gets timed --------------------------------------------------------- */

typedef enum { W_CORE_TRS, W_CORE_MATRIX, W_SINGLE, W_KERNEL, W_MIX, W_COPY } work_kind;

typedef struct work {
  work_kind kind;
  bench_case *c;
  const char *path;
  unsigned threads;
  int precision; /* SK_KERNEL_PRECISION_* for W_KERNEL */
  size_t poses;  /* poses per call for the per-pose paths (they cover a prefix of the batch) */
} work;

typedef struct copy_part {
  float *dst;
  const float *src;
  size_t floats;
} copy_part;

static void copy_part_run(void *arg) {
  const copy_part *c = arg;
  memcpy(c->dst, c->src, c->floats * sizeof *c->dst);
}

/* The copy limit: memcpy (glibc streams large copies past the caches, as
 * the kernel streams large outputs) of a buffer the size of the output,
 * split across `n` threads by line-aligned ranges and started per call
 * like sk_kernel_run_threads. It reads and writes the buffer's size each. */
static void copy_threads(float *dst, const float *src, size_t floats, unsigned n) {
  enum { MAX = 8 };
  if (n > MAX)
    n = MAX;
  if (n <= 1) {
    memcpy(dst, src, floats * sizeof *dst);
    return;
  }
  uv_thread_t tid[MAX];
  bool started[MAX] = {false};
  copy_part part[MAX];
  const size_t chunk = (floats / n + 15) & ~(size_t)15;
  for (unsigned i = 0; i < n; i++) {
    const size_t b = (size_t)i * chunk < floats ? (size_t)i * chunk : floats;
    part[i] = (copy_part){dst + b, src + b, (i + 1 == n || b + chunk > floats) ? floats - b : chunk};
  }
  for (unsigned i = 1; i < n; i++)
    started[i] = uv_thread_create(&tid[i], copy_part_run, &part[i]) == 0;
  copy_part_run(&part[0]);
  for (unsigned i = 1; i < n; i++) {
    if (started[i])
      uv_thread_join(&tid[i]);
    else
      copy_part_run(&part[i]);
  }
}

static void run_work(const work *w) {
  bench_case *c = w->c;
  const size_t nb = c->nb, fs = 16 * (nb + 1);
  switch (w->kind) {
  case W_CORE_TRS: /* the scalar core end to end: Babylon-exact compose, then evaluate */
    for (size_t p = 0; p < w->poses; p++) {
      float *loc = c->locals + (p % c->nloc) * nb * 16;
      for (size_t b = 0; b < nb; b++) {
        double sc[3], q[4], t[3];
        pose_trs(c, b, p, sc, q, t);
        sk_mat_compose(sc, q, t, loc + 16 * b);
      }
      sk_skeleton_evaluate(c->s, loc, NULL, c->scratch, c->final + p * fs, NULL, NULL);
    }
    break;
  case W_CORE_MATRIX:
    for (size_t p = 0; p < w->poses; p++)
      sk_skeleton_evaluate(c->s, c->locals + (p % c->nloc) * nb * 16, NULL, c->scratch, c->final + p * fs, NULL,
                           NULL);
    break;
  case W_SINGLE:
    for (size_t p = 0; p < w->poses; p++)
      sk_kernel_single(c->rig, c->locals + (p % c->nloc) * nb * 16, NULL, c->final + p * fs, NULL);
    break;
  case W_KERNEL:
    c->job.path = w->path;
    c->job.precision = w->precision;
    if (w->threads > 1)
      sk_kernel_run_threads(&c->job, w->threads);
    else
      sk_kernel_run(&c->job, 0, c->np);
    break;
  case W_MIX: /* the exact kernel's instructions for the batch's bone matrices, without dependencies */
    sk_bench_mix_run((c->np * nb + SK_BENCH_MIX_LANES - 1) / SK_BENCH_MIX_LANES);
    break;
  case W_COPY:
    copy_threads(c->final, c->copy_src, c->np * fs, w->threads);
    break;
  }
}

/* Median seconds per call of `w`, by the wall clock and by the process's
 * CPU time (all threads): one warm-up call, then repetitions of `inner`
 * calls each (inner makes a repetition last >= 2 ms) until `budget`
 * seconds are spent, at least 3 and at most 31 repetitions. On a shared
 * machine the wall clock also counts time other processes had the core;
 * CPU time does not, so the two together say how busy the machine was. */
typedef struct timing {
  double wall, cpu;
} timing;

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, sk_bench_cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Times n works (up to 8) in alternation, repetition by repetition: works
 * compared with each other (the paths at one size, the kernel and the copy
 * limit) then see the same drift of the machine's speed (tens of percent
 * within a second on this shared VM); timing them one after another once
 * made the AVX2 row of one size half the SSE2 one. */
#define SK_BENCH_MAX_WORKS 8
static void time_works(const work *const *w, int n, double budget, timing *out) {
  size_t inner[SK_BENCH_MAX_WORKS];
  for (int k = 0; k < n; k++) {
    double t0 = now_s();
    run_work(w[k]);
    const double one = now_s() - t0;
    inner[k] = one > 0.002 ? 1 : (size_t)(0.002 / (one > 1e-8 ? one : 1e-8)) + 1;
  }
  double wall[SK_BENCH_MAX_WORKS][31], cpu[SK_BENCH_MAX_WORKS][31];
  int reps = 0;
  const double start = now_s();
  while (reps < 31 && (reps < 3 || now_s() - start < n * budget)) {
    for (int k = 0; k < n; k++) {
      const double c0 = sk_bench_cpu_s(), t0 = now_s();
      for (size_t i = 0; i < inner[k]; i++)
        run_work(w[k]);
      wall[k][reps] = (now_s() - t0) / (double)inner[k];
      cpu[k][reps] = (sk_bench_cpu_s() - c0) / (double)inner[k];
    }
    reps++;
  }
  for (int k = 0; k < n; k++)
    out[k] = (timing){median(wall[k], reps), median(cpu[k], reps)};
}

/* ---- the run ------------------------------------------------------------------ */

/* Rates in bone matrices per second. *_cpu: per CPU-second, i.e. per core
 * while it was ours. `limit` is the copy bandwidth of this run (with as
 * many threads as the row) in bone matrices per second: the copy's bytes
 * per second over the kernel's bytes per bone matrix (SK_BENCH_BYTES). */
typedef struct row {
  size_t bones, poses;
  const char *path, *input, *precision;
  unsigned threads;
  double rate, limit, scalar;
  double rate_cpu, limit_cpu, scalar_cpu;
} row;

/* What the kernel moves per bone matrix with TRS input: 10 floats read,
 * one 64-byte matrix written, plus each pose's trailing identity. */
static double bench_bytes(size_t bones) { return 40.0 + 64.0 * (double)(bones + 1) / (double)bones; }

static void cpu_name(char *buf, size_t cap) {
  snprintf(buf, cap, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f == NULL)
    return;
  char line[512];
  while (fgets(line, sizeof line, f) != NULL)
    if (strncmp(line, "model name", 10) == 0) {
      const char *v = strchr(line, ':');
      if (v != NULL) {
        v++;
        while (*v == ' ' || *v == '\t')
          v++;
        snprintf(buf, cap, "%.*s", (int)strcspn(v, "\n"), v);
      }
      break;
    }
  fclose(f);
}

static const row *find_row(const row *rows, size_t n, size_t bones, size_t poses, const char *path,
                           unsigned threads, const char *precision) {
  for (size_t i = 0; i < n; i++)
    if (rows[i].bones == bones && rows[i].poses == poses && strcmp(rows[i].path, path) == 0 &&
        rows[i].threads == threads && strcmp(rows[i].precision, precision) == 0)
      return &rows[i];
  return NULL;
}

static void usage(void) {
  fprintf(stderr, "usage: skinner bench [--json] [--quick] [--bones N] [--poses N] [--layout blocked|rows]\n"
                  "  --json     end with one line: a JSON object holding every row and target\n"
                  "  --quick    no 65536-pose batches, short timing (a smoke run, not figures)\n"
                  "  --bones N  only skeletons of N bones (24, 65 or 256)\n"
                  "  --poses N  only batches of N poses (1, 64, 4096 or 65536)\n"
                  "  --layout   the kernel's input layout: blocked (default; what skinnerd uses)\n"
                  "             or rows (each TRS component a row over the whole batch)\n");
}

static double loadavg1(void) {
  double l[1];
  return getloadavg(l, 1) == 1 ? l[0] : -1;
}

/* One benchmark target: a ratio (or rate) from this run's rows, by the
 * wall clock and by CPU time. */
typedef struct target {
  const char *name;
  double goal, wall, cpu;
  bool known;
} target;

static void print_target(const target *t) {
  if (!t->known) {
    printf("  %-74s    n/a (goal >= %g) SKIP\n", t->name, t->goal);
    return;
  }
  printf("  %-74s %7.2f %s  [cpu-time %7.2f %s]  (goal >= %g)\n", t->name, t->wall, t->wall >= t->goal ? "PASS" : "MISS",
         t->cpu, t->cpu >= t->goal ? "PASS" : "MISS", t->goal);
}

static const char *const bench_paths[] = {"avx512", "avx2", "sse2", "scalar"}; /* widest first */

/* Every size of one skeleton: rows appended to rows[*nrows]. The kernel
 * paths of a size, its copy limit and the fast-precision row are timed in
 * alternation (time_works), so they see the same machine. */
static int bench_sizes(sk_skeleton *s, sk_rig *rig, const size_t *pose_counts, size_t npose_counts, size_t only_poses,
                       bool rows_layout, double budget, unsigned threads, bench_rng *rng, row *rows, size_t *nrows) {
  const char *best = sk_kernel_path();
  for (size_t pi = 0; pi < npose_counts; pi++) {
    const size_t np = pose_counts[pi];
    if (only_poses != 0 && only_poses != np)
      continue;
    bench_case c;
    int rc = case_init(&c, s, rig, np, rows_layout, rng);
    if (rc != 0) {
      case_close(&c);
      return rc;
    }
    const size_t nb = c.nb;
    const double mats = (double)np * (double)nb, per = bench_bytes(nb);
    const size_t first = *nrows;
    work w = {.c = &c, .poses = np < 64 ? np : 64};
    const double slice = (double)w.poses * (double)nb;
    /* The scalar core and the single-pose path, on the same 64-pose slice. */
    work wt = w, wm = w, ws = w;
    wt.kind = W_CORE_TRS;
    wm.kind = W_CORE_MATRIX;
    ws.kind = W_SINGLE;
    const work *const cores[3] = {&wt, &wm, &ws};
    timing ct[3];
    time_works(cores, 3, budget, ct);
    /* Kernel paths (exact), the best path in float32, and the copy. */
    work kw[SK_BENCH_MAX_WORKS];
    const work *kp[SK_BENCH_MAX_WORKS];
    int nk = 0;
    for (size_t k = 0; k < 4; k++)
      if (sk_kernel_path_check(bench_paths[k]) == 0)
        kw[nk++] = (work){.kind = W_KERNEL, .c = &c, .path = bench_paths[k], .threads = 1};
    const int nexact = nk;
    kw[nk++] = (work){.kind = W_KERNEL, .c = &c, .path = best, .threads = 1, .precision = SK_KERNEL_PRECISION_FAST};
    const int mix = sk_bench_mix_supported() && np >= SK_BENCH_MIX_LANES ? nk : -1;
    if (mix >= 0)
      kw[nk++] = (work){.kind = W_MIX, .c = &c, .threads = 1};
    kw[nk++] = (work){.kind = W_COPY, .c = &c, .threads = 1};
    for (int k = 0; k < nk; k++)
      kp[k] = &kw[k];
    timing kt[SK_BENCH_MAX_WORKS];
    time_works(kp, nk, budget, kt);
    const timing copy1 = kt[nk - 1];
    const double lim = np * (nb + 1) * 128.0 / copy1.wall / per, lim_cpu = np * (nb + 1) * 128.0 / copy1.cpu / per;
    const double cr = slice / ct[0].wall, crc = slice / ct[0].cpu;
    rows[(*nrows)++] = (row){nb, np, "core", "trs", "exact", 1, cr, lim, cr, crc, lim_cpu, crc};
    rows[(*nrows)++] = (row){nb, np, "core", "matrix", "exact", 1, slice / ct[1].wall, lim, cr,
                             slice / ct[1].cpu, lim_cpu, crc};
    rows[(*nrows)++] = (row){nb, np, "single", "matrix", "exact", 1, slice / ct[2].wall, lim, cr,
                             slice / ct[2].cpu, lim_cpu, crc};
    for (int k = 0; k < nk - 1; k++)
      if (k != mix)
        rows[(*nrows)++] = (row){nb, np, kw[k].path, "trs", k < nexact ? "exact" : "fast", 1, mats / kt[k].wall,
                                 lim, cr, mats / kt[k].cpu, lim_cpu, crc};
    if (mix >= 0) /* input "mix": not a kernel row for scripts that pick the fastest TRS row */
      rows[(*nrows)++] = (row){nb, np, "bound", "mix", "exact", 1, mats / kt[mix].wall, lim, cr,
                               mats / kt[mix].cpu, lim_cpu, crc};
    /* Two threads against the two-thread copy (small batches measure
     * thread start-up, not bandwidth). */
    if (threads > 1 && np >= 4096) {
      work k2 = {.kind = W_KERNEL, .c = &c, .path = best, .threads = threads};
      work c2 = {.kind = W_COPY, .c = &c, .threads = threads};
      const work *const pair[2] = {&k2, &c2};
      timing t2[2];
      time_works(pair, 2, budget, t2);
      const double lim2 = np * (nb + 1) * 128.0 / t2[1].wall / per;
      /* Per core: CPU seconds already add up both threads' time. */
      rows[(*nrows)++] = (row){nb, np, best, "trs", "exact", threads, mats / t2[0].wall, lim2, cr,
                               mats / t2[0].cpu, np * (nb + 1) * 128.0 / t2[1].cpu / per, crc};
    }
    for (size_t i = first; i < *nrows; i++)
      printf("%6zu %6zu %-7s %-6s %-5s %3u %9.1f %9.1f %9.1f %7.2f %7.1fx\n", rows[i].bones, rows[i].poses,
             rows[i].path, rows[i].input, rows[i].precision, rows[i].threads, rows[i].rate / 1e6,
             rows[i].rate_cpu / 1e6, rows[i].limit / 1e6, rows[i].rate / rows[i].limit, rows[i].rate / rows[i].scalar);
    fflush(stdout);
    case_close(&c);
  }
  return 0;
}

/* The slowest wider-over-narrower ratio of the exact paths over every size
 * of this run (1 or more: every wider path at least as fast), by the wall
 * clock or by CPU time; *worst names the pair. Batches smaller than the
 * widest group (the 1-pose rows) are left out: there every path hands the
 * poses down to the narrower paths (SKK_TAIL in sk_kernel_lanes.h) and runs
 * the same code as the scalar one, so the ratio is 1 plus timing noise. */
static double wider_ratio(const row *rows, size_t n, bool by_cpu, char *worst, size_t cap) {
  double r = INFINITY;
  for (size_t i = 0; i < n; i++) {
    const row *a = &rows[i];
    if (a->threads != 1 || a->poses < 8 || strcmp(a->precision, "exact") != 0 || strcmp(a->input, "trs") != 0 ||
        strcmp(a->path, "core") == 0)
      continue;
    for (size_t k = 0; k + 1 < 4; k++) {
      if (strcmp(a->path, bench_paths[k]) != 0)
        continue;
      for (size_t m = k + 1; m < 4; m++) {
        const row *b = find_row(rows, n, a->bones, a->poses, bench_paths[m], 1, "exact");
        if (b == NULL)
          continue;
        const double q = by_cpu ? a->rate_cpu / b->rate_cpu : a->rate / b->rate;
        if (q < r) {
          r = q;
          if (worst != NULL)
            snprintf(worst, cap, "%s/%s at %zu x %zu", bench_paths[k], bench_paths[m], a->bones, a->poses);
        }
      }
    }
  }
  return r;
}

typedef struct bench_opts {
  bool json, quick, rows_layout;
  size_t only_bones, only_poses;
} bench_opts;

/* Returns 0, or 2 after printing the usage. */
static int parse_bench_args(int argc, char **argv, bench_opts *o) {
  memset(o, 0, sizeof *o);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0)
      o->json = true;
    else if (strcmp(argv[i], "--quick") == 0)
      o->quick = true;
    else if ((strcmp(argv[i], "--bones") == 0 || strcmp(argv[i], "--poses") == 0) && i + 1 < argc) {
      char *end;
      const unsigned long long v = strtoull(argv[i + 1], &end, 10);
      if (*end != '\0' || v == 0) {
        usage();
        return 2;
      }
      *(argv[i][2] == 'b' ? &o->only_bones : &o->only_poses) = (size_t)v;
      i++;
    } else if (strcmp(argv[i], "--layout") == 0 && i + 1 < argc &&
               (strcmp(argv[i + 1], "rows") == 0 || strcmp(argv[i + 1], "blocked") == 0)) {
      o->rows_layout = strcmp(argv[++i], "rows") == 0;
    } else {
      usage();
      return 2;
    }
  }
  return 0;
}

static void print_header(const char *cpu, long ncpu, const char *best, double load_before, bool rows_layout) {
  printf("skinner bench: CPU %s, %ld online, best kernel path %s, load average %.2f\n"
         "M/s = million bone matrices per second, median of repetitions, by the wall clock and per CPU-second\n"
         "(\"cpu\": what a core did while it was ours; equal to the wall figure on an idle machine).\n"
         "Every kernel row is the exact kernel (Babylon's bits) unless its precision says fast (float32, opt-in).\n"
         "copy M/s = this run's memcpy bandwidth (as many threads as the row) over the kernel's %.0f-%.0f bytes\n"
         "read + written per bone matrix; of copy = the kernel's bytes moved per second over the copy's.\n"
         "core/single rows time 64-pose slices; kernel rows compose every bone from TRS (%s input layout).\n",
         cpu, ncpu, best, load_before, bench_bytes(256), bench_bytes(24), rows_layout ? "row" : "blocked");
  printf("%6s %6s %-7s %-6s %-5s %3s %9s %9s %9s %7s %8s\n", "bones", "poses", "path", "input", "prec", "thr", "M/s",
         "cpu M/s", "copy M/s", "of copy", "vs core");
  fflush(stdout);
}

/* Every skeleton size of the run; rows[] gets one row per size and path. */
static int run_sizes(const bench_opts *o, const size_t *pose_counts, size_t npose_counts, double budget,
                     unsigned threads, row *rows, size_t *nrows) {
  static const size_t bone_counts[] = {24, 65, 256};
  bench_rng rng = {0x5EED5EED5EEDull};
  int rc = 0;
  for (size_t bi = 0; bi < 3 && rc == 0; bi++) {
    if (o->only_bones != 0 && o->only_bones != bone_counts[bi])
      continue;
    sk_skeleton *s = bench_skeleton(bone_counts[bi], &rng);
    sk_rig *rig = NULL;
    if (s == NULL || sk_rig_create(s, &rig) != 0) {
      sk_skeleton_destroy(s);
      return SK_ENOMEM;
    }
    rc = bench_sizes(s, rig, pose_counts, npose_counts, o->only_poses, o->rows_layout, budget, threads, &rng, rows,
                     nrows);
    sk_rig_destroy(rig);
    sk_skeleton_destroy(s);
  }
  return rc;
}

/* The kernel targets, from fixed rows of this run; names[] holds their
 * text. The first four are fixed goals; the last two stand beside its two
 * rate goals as shares of what this CPU can do with the kernel's
 * instructions (the mix bound) rather than fixed rates (docs/kernel.md). */
#define SK_BENCH_TARGETS 6
static void kernel_targets(const row *rows, size_t nrows, const char *best, size_t big, unsigned threads,
                           char names[SK_BENCH_TARGETS][160], char *worst_cpu, size_t worst_cap, target *t) {
  const row *k64 = find_row(rows, nrows, 65, 64, best, 1, "exact");
  const row *kbig = find_row(rows, nrows, 65, big, best, 1, "exact");
  const row *kbig2 = find_row(rows, nrows, 65, big, best, threads, "exact");
  const row *b64 = find_row(rows, nrows, 65, 64, "bound", 1, "exact");
  const row *bbig = find_row(rows, nrows, 65, big, "bound", 1, "exact");
  char worst[96] = "";
  snprintf(names[0], 160, "exact kernel, cache-resident (65 x 64), M bone matrices/s per core");
  snprintf(names[1], 160, "exact kernel bytes read+written / copy bandwidth, 65 x %zu, 1 core", big);
  snprintf(names[2], 160, "exact kernel bytes read+written / %u-thread copy bandwidth, 65 x %zu, %u cores", threads,
           big, threads);
  const double wr = wider_ratio(rows, nrows, false, worst, sizeof worst);
  const double wrc = wider_ratio(rows, nrows, true, worst_cpu, worst_cap);
  snprintf(names[3], 160, "slowest wider/narrower exact path, every size >= 8 poses (%s)", worst);
  snprintf(names[4], 160, "proposed: exact kernel / its instruction-mix bound, 65 x 64, 1 core");
  snprintf(names[5], 160, "proposed: exact kernel / min(copy, mix bound), 65 x %zu, 1 core", big);
  const target init[SK_BENCH_TARGETS] = {
      {names[0], 150, 0, 0, k64 != NULL},
      {names[1], 0.8, 0, 0, kbig != NULL},
      {names[2], 0.85, 0, 0, kbig2 != NULL && threads > 1},
      {names[3], 1.0, wr, wrc, isfinite(wr)},
      {names[4], 0.8, 0, 0, k64 != NULL && b64 != NULL},
      {names[5], 0.8, 0, 0, kbig != NULL && bbig != NULL},
  };
  memcpy(t, init, sizeof init);
  if (t[0].known)
    t[0].wall = k64->rate / 1e6, t[0].cpu = k64->rate_cpu / 1e6;
  if (t[1].known)
    t[1].wall = kbig->rate / kbig->limit, t[1].cpu = kbig->rate_cpu / kbig->limit_cpu;
  /* By CPU time: the kernel's rate per CPU-second times the threads, over
   * the copy's (what two cores would give if both were ours throughout). */
  if (t[2].known)
    t[2].wall = kbig2->rate / kbig2->limit, t[2].cpu = kbig2->rate_cpu / kbig2->limit_cpu;
  if (t[4].known)
    t[4].wall = k64->rate / b64->rate, t[4].cpu = k64->rate_cpu / b64->rate_cpu;
  if (t[5].known)
    t[5].wall = kbig->rate / fmin(kbig->limit, bbig->rate),
    t[5].cpu = kbig->rate_cpu / fmin(kbig->limit_cpu, bbig->rate_cpu);
}

/* What the rate targets ask of the kernel against the mix bound
 * of this run: the share of the bound they need (above 1: unreachable with
 * these instructions on this CPU, whatever the schedule). */
static void print_reach(const row *rows, size_t nrows, const char *best, size_t big, unsigned threads) {
  const row *b64 = find_row(rows, nrows, 65, 64, "bound", 1, "exact");
  const row *bbig = find_row(rows, nrows, 65, big, "bound", 1, "exact");
  const row *kbig2 = threads > 1 ? find_row(rows, nrows, 65, big, best, threads, "exact") : NULL;
  if (b64 != NULL)
    printf("  context: the exact kernel's instruction-mix bound (its AVX-512 instructions without their\n"
           "           dependencies, sk_bench_mix.c) made %.1f M/s at 65 x 64 by CPU time; 150 M/s needs %.2f of it\n",
           b64->rate_cpu / 1e6, 150e6 / b64->rate_cpu);
  if (bbig != NULL)
    printf("  context: 0.8 of copy at 65 x %zu is %.1f M/s: %.2f of the bound's %.1f M/s (the bound is %.2f of copy)\n",
           big, 0.8 * bbig->limit_cpu / 1e6, 0.8 * bbig->limit_cpu / bbig->rate_cpu, bbig->rate_cpu / 1e6,
           bbig->rate_cpu / bbig->limit_cpu);
  /* Each thread can at best run at the one-core bound: by the wall clock,
   * as the 2-core target itself. */
  if (bbig != NULL && kbig2 != NULL)
    printf("  context: 0.85 of the %u-thread copy at 65 x %zu is %.1f M/s: %.2f of %u x the one-core bound's %.1f M/s\n",
           threads, big, 0.85 * kbig2->limit / 1e6, 0.85 * kbig2->limit / (threads * bbig->rate), threads,
           bbig->rate / 1e6);
}

/* The --json line: every row and target. 0, or 1 when out of memory. */
static int print_json(const char *cpu, const char *best, double load_before, double load_after, const row *rows,
                      size_t nrows, const target *t, int ntargets) {
  json_t *o = json_object(), *arr = json_array(), *tg = json_array();
  if (o == NULL || arr == NULL || tg == NULL) {
    json_decref(o);
    json_decref(arr);
    json_decref(tg);
    return 1;
  }
  json_object_set_new(o, "cpu", json_string(cpu));
  json_object_set_new(o, "best_path", json_string(best));
  json_object_set_new(o, "load_average_before", json_real(load_before));
  json_object_set_new(o, "load_average_after", json_real(load_after));
  for (size_t i = 0; i < nrows; i++) {
    const row *r = &rows[i];
    json_array_append_new(
        arr, json_pack("{s:I, s:I, s:s, s:s, s:s, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "bones",
                       (json_int_t)r->bones, "poses", (json_int_t)r->poses, "path", r->path, "input", r->input,
                       "precision", r->precision, "threads", (int)r->threads, "bone_matrices_per_s", r->rate,
                       "bandwidth_limit_per_s", r->limit, "scalar_per_s", r->scalar, "cpu_bone_matrices_per_s",
                       r->rate_cpu, "cpu_bandwidth_limit_per_s", r->limit_cpu, "cpu_scalar_per_s", r->scalar_cpu,
                       "bytes_per_s", r->rate * bench_bytes(r->bones)));
  }
  for (int i = 0; i < ntargets; i++)
    json_array_append_new(tg, json_pack("{s:s, s:f, s:f, s:f, s:b, s:b}", "target", t[i].name, "goal", t[i].goal,
                                        "value", t[i].known ? t[i].wall : 0.0, "cpu_value",
                                        t[i].known ? t[i].cpu : 0.0, "pass", t[i].known && t[i].wall >= t[i].goal,
                                        "cpu_pass", t[i].known && t[i].cpu >= t[i].goal));
  json_object_set_new(o, "rows", arr);
  json_object_set_new(o, "targets", tg);
  char *text = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  if (text == NULL)
    return 1;
  printf("%s\n", text);
  free(text);
  return 0;
}

int sk_bench_main(int argc, char **argv) {
  bench_opts o;
  if (parse_bench_args(argc, argv, &o) != 0)
    return 2;
  static const size_t pose_counts[] = {1, 64, 4096, 65536};
  const size_t npose_counts = o.quick ? 3 : 4;
  const double budget = o.quick ? 0.02 : 0.25;
  const char *best = sk_kernel_path();
  char cpu[256];
  cpu_name(cpu, sizeof cpu);
  const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  const unsigned threads = ncpu >= 2 ? 2 : 1;
  const double load_before = loadavg1();
  print_header(cpu, ncpu, best, load_before, o.rows_layout);

  row rows[256];
  size_t nrows = 0;
  int rc = run_sizes(&o, pose_counts, npose_counts, budget, threads, rows, &nrows);
  if (rc != 0) {
    fprintf(stderr, "skinner bench: %s\n", sk_strerror(rc));
    return 1;
  }
  char names[SK_BENCH_TARGETS][160], worst_cpu[96] = "";
  target t[SK_BENCH_TARGETS];
  kernel_targets(rows, nrows, best, pose_counts[npose_counts - 1], threads, names, worst_cpu, sizeof worst_cpu, t);
  const double load_after = loadavg1();
  printf("\ntargets, by the wall clock [and by CPU time]; load average %.2f before, %.2f after:\n", load_before,
         load_after);
  for (int i = 0; i < SK_BENCH_TARGETS; i++)
    print_target(&t[i]);
  print_reach(rows, nrows, best, pose_counts[npose_counts - 1], threads);
  if (isfinite(t[3].cpu) && worst_cpu[0] != '\0')
    printf("  context: by CPU time the slowest wider/narrower pair is %s\n", worst_cpu);
  const row *k64 = find_row(rows, nrows, 65, 64, best, 1, "exact");
  const row *f64 = find_row(rows, nrows, 65, 64, best, 1, "fast");
  if (k64 != NULL && f64 != NULL)
    printf("  context: the opt-in float32 kernel (precision fast, not Babylon-exact) made %.1f M/s at 65 x 64,\n"
           "           %.2fx the exact kernel\n",
           f64->rate / 1e6, f64->rate / k64->rate);
  return o.json ? print_json(cpu, best, load_before, load_after, rows, nrows, t, SK_BENCH_TARGETS) : 0;
}
