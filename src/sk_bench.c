/* `skinner bench`: bone matrices per second for the scalar core, the
 * single-pose cglm path and the batch kernel on every SIMD path this CPU
 * has, against the single-core write-bandwidth limit for the same output,
 * plus the two-thread speed-up. Not a test: figures depend on the machine.
 *
 * Every figure is the median of several timed repetitions; small sizes
 * repeat inside one repetition until it lasts a few milliseconds. The run
 * is time-boxed (about two minutes on a 2-core machine). */
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

#include "sk_kernel.h"
#include "sk_mat.h"
#include "sk_skeleton.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SK_BENCH_X86 1
#endif

int sk_bench_main(int argc, char **argv);

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
  c->locals = malloc(c->nloc * c->nb * 16 * sizeof(float));
  c->scratch = malloc(c->nb * 16 * sizeof(float));
  if (c->mode == NULL || c->offset == NULL || c->input == NULL || c->final == NULL || c->locals == NULL ||
      c->scratch == NULL)
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
  free(c->locals);
  free(c->scratch);
}

/* ---- what gets timed --------------------------------------------------------- */

typedef enum { W_CORE_TRS, W_CORE_MATRIX, W_SINGLE, W_KERNEL, W_MEMSET, W_STREAM } work_kind;

typedef struct work {
  work_kind kind;
  bench_case *c;
  const char *path;
  unsigned threads;
  size_t poses; /* poses per call for the per-pose paths (they cover a prefix of the batch) */
} work;

#ifdef SK_BENCH_X86
/* The fills write non-zero data: this VM wrote zeros up to twice as fast
 * as other values, which no kernel output would see. */
__attribute__((target("avx512f"))) static void stream_fill_avx512(float *dst, size_t floats) {
  const __m512 z = _mm512_set1_ps(0.0115f);
  for (size_t i = 0; i + 16 <= floats; i += 16)
    _mm512_stream_ps(dst + i, z);
  _mm_sfence();
}
static void stream_fill_sse2(float *dst, size_t floats) {
  const __m128 z = _mm_set1_ps(0.0115f);
  for (size_t i = 0; i + 4 <= floats; i += 4)
    _mm_stream_ps(dst + i, z);
  _mm_sfence();
}
#endif

/* The write-bandwidth limit: memset, or streaming stores. */
static void fill(bool stream, float *dst, size_t floats) {
  if (!stream) {
    memset(dst, 0x3c, floats * sizeof *dst);
    return;
  }
#ifdef SK_BENCH_X86
  if (__builtin_cpu_supports("avx512f"))
    stream_fill_avx512(dst, floats);
  else
    stream_fill_sse2(dst, floats);
#else
  memset(dst, 0x3c, floats * sizeof *dst);
#endif
}

typedef struct fill_part {
  bool stream;
  float *dst;
  size_t floats;
} fill_part;

static void fill_part_run(void *arg) {
  const fill_part *f = arg;
  fill(f->stream, f->dst, f->floats);
}

/* The same fill split across `n` threads by line-aligned ranges, started
 * per call like sk_kernel_run_threads: the limit of the threaded rows. */
static void fill_threads(bool stream, float *dst, size_t floats, unsigned n) {
  enum { MAX = 8 };
  if (n > MAX)
    n = MAX;
  uv_thread_t tid[MAX];
  bool started[MAX] = {false};
  fill_part part[MAX];
  const size_t chunk = (floats / n + 15) & ~(size_t)15;
  for (unsigned i = 0; i < n; i++) {
    const size_t b = (size_t)i * chunk < floats ? (size_t)i * chunk : floats;
    part[i] = (fill_part){stream, dst + b, (i + 1 == n || b + chunk > floats) ? floats - b : chunk};
  }
  for (unsigned i = 1; i < n; i++)
    started[i] = uv_thread_create(&tid[i], fill_part_run, &part[i]) == 0;
  fill_part_run(&part[0]);
  for (unsigned i = 1; i < n; i++) {
    if (started[i])
      uv_thread_join(&tid[i]);
    else
      fill_part_run(&part[i]);
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
    if (w->threads > 1)
      sk_kernel_run_threads(&c->job, w->threads);
    else
      sk_kernel_run(&c->job, 0, c->np);
    break;
  case W_MEMSET:
  case W_STREAM:
    if (w->threads > 1)
      fill_threads(w->kind == W_STREAM, c->final, c->np * fs, w->threads);
    else
      fill(w->kind == W_STREAM, c->final, c->np * fs);
    break;
  }
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
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

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Times n works (1 or 2) in alternation, repetition by repetition: two
 * works compared with each other then see the same drift of the machine's
 * speed (tens of percent within a second on this VM). */
static void time_works(const work *const *w, int n, double budget, timing *out) {
  size_t inner[2];
  for (int k = 0; k < n; k++) {
    double t0 = now_s();
    run_work(w[k]);
    const double one = now_s() - t0;
    inner[k] = one > 0.002 ? 1 : (size_t)(0.002 / (one > 1e-8 ? one : 1e-8)) + 1;
  }
  double wall[2][31], cpu[2][31];
  int reps = 0;
  const double start = now_s();
  while (reps < 31 && (reps < 3 || now_s() - start < n * budget)) {
    for (int k = 0; k < n; k++) {
      const double c0 = cpu_s(), t0 = now_s();
      for (size_t i = 0; i < inner[k]; i++)
        run_work(w[k]);
      wall[k][reps] = (now_s() - t0) / (double)inner[k];
      cpu[k][reps] = (cpu_s() - c0) / (double)inner[k];
    }
    reps++;
  }
  for (int k = 0; k < n; k++)
    out[k] = (timing){median(wall[k], reps), median(cpu[k], reps)};
}

static timing time_work(const work *w, double budget) {
  timing t;
  time_works(&w, 1, budget, &t);
  return t;
}

/* ---- the run ------------------------------------------------------------------ */

/* Rates in bone matrices per second. *_cpu: per CPU-second, i.e. per core
 * while it was ours. */
typedef struct row {
  size_t bones, poses;
  const char *path, *input;
  unsigned threads;
  double rate, limit, scalar;
  double rate_cpu, limit_cpu, scalar_cpu;
  double limit_threads; /* the write limit with `threads` threads (threaded rows; else = limit) */
} row;

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
                           unsigned threads) {
  for (size_t i = 0; i < n; i++)
    if (rows[i].bones == bones && rows[i].poses == poses && strcmp(rows[i].path, path) == 0 &&
        rows[i].threads == threads)
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

/* One target of issue 3: a ratio (or rate) from this run's rows, by the
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

int sk_bench_main(int argc, char **argv) {
  bool json = false, quick = false, rows_layout = false;
  size_t only_bones = 0, only_poses = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0)
      json = true;
    else if (strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if ((strcmp(argv[i], "--bones") == 0 || strcmp(argv[i], "--poses") == 0) && i + 1 < argc) {
      char *end;
      const unsigned long long v = strtoull(argv[i + 1], &end, 10);
      if (*end != '\0' || v == 0) {
        usage();
        return 2;
      }
      *(argv[i][2] == 'b' ? &only_bones : &only_poses) = (size_t)v;
      i++;
    } else if (strcmp(argv[i], "--layout") == 0 && i + 1 < argc &&
               (strcmp(argv[i + 1], "rows") == 0 || strcmp(argv[i + 1], "blocked") == 0)) {
      rows_layout = strcmp(argv[++i], "rows") == 0;
    } else {
      usage();
      return 2;
    }
  }
  static const size_t bone_counts[] = {24, 65, 256};
  static const size_t pose_counts[] = {1, 64, 4096, 65536};
  static const char *const paths[] = {"avx512", "avx2", "sse2", "scalar"};
  const size_t npose_counts = quick ? 3 : 4;
  const double budget = quick ? 0.02 : 0.25;
  const char *best = sk_kernel_path();
  char cpu[256];
  cpu_name(cpu, sizeof cpu);
  const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  const unsigned threads = ncpu >= 2 ? 2 : 1;
  const double load_before = loadavg1();

  printf("skinner bench: CPU %s, %ld online, best kernel path %s, load average %.2f\n"
         "M/s = million bone matrices per second, median of repetitions, by the wall clock and per CPU-second\n"
         "(\"cpu\": what a core did while it was ours; equal to the wall figure on an idle machine).\n"
         "limit = the faster of memset and streaming stores writing the same output (threaded rows: with as\n"
         "many threads); core/single rows time 64-pose slices of the batch; kernel rows compose every bone\n"
         "from TRS (%s input layout).\n",
         cpu, ncpu, best, load_before, rows_layout ? "row" : "blocked");
  printf("%6s %6s %-7s %-6s %3s %9s %9s %9s %7s %8s\n", "bones", "poses", "path", "input", "thr", "M/s", "cpu M/s",
         "limit M/s", "of lim", "vs core");
  fflush(stdout);

  row rows[256];
  size_t nrows = 0;
  bench_rng rng = {0x5EED5EED5EEDull};
  int rc = 0;
  for (size_t bi = 0; bi < 3 && rc == 0; bi++) {
    if (only_bones != 0 && only_bones != bone_counts[bi])
      continue;
    sk_skeleton *s = bench_skeleton(bone_counts[bi], &rng);
    sk_rig *rig = NULL;
    if (s == NULL || sk_rig_create(s, &rig) != 0) {
      sk_skeleton_destroy(s);
      rc = SK_ENOMEM;
      break;
    }
    for (size_t pi = 0; pi < npose_counts && rc == 0; pi++) {
      const size_t np = pose_counts[pi];
      if (only_poses != 0 && only_poses != np)
        continue;
      bench_case c;
      if ((rc = case_init(&c, s, rig, np, rows_layout, &rng)) != 0) {
        case_close(&c);
        break;
      }
      const size_t nb = c.nb;
      const double mats = (double)np * (double)nb;
      work w = {.c = &c, .poses = np < 64 ? np : 64};
      w.kind = W_MEMSET;
      const timing t_memset = time_work(&w, budget);
      w.kind = W_STREAM;
      const timing t_stream = time_work(&w, budget);
      const double limit = mats / (t_memset.wall < t_stream.wall ? t_memset.wall : t_stream.wall);
      const double limit_cpu = mats / (t_memset.cpu < t_stream.cpu ? t_memset.cpu : t_stream.cpu);
      /* The machine's own two-thread write bandwidth, to read the
       * two-thread kernel row against: on a VM it varies with the host. */
      double limit_t = limit;
      if (threads > 1 && np >= 4096) { /* smaller fills measure thread start-up, not bandwidth */
        w.threads = threads;
        w.kind = W_MEMSET;
        const timing m2 = time_work(&w, budget);
        w.kind = W_STREAM;
        const timing s2 = time_work(&w, budget);
        limit_t = mats / (m2.wall < s2.wall ? m2.wall : s2.wall);
        w.threads = 1;
      }
      const double slice = (double)w.poses * (double)nb;
      w.kind = W_CORE_TRS;
      const timing core_trs = time_work(&w, budget);
      /* The single-pose path is compared with the core on the same input. */
      work wm = w, ws = w;
      wm.kind = W_CORE_MATRIX;
      ws.kind = W_SINGLE;
      const work *const pair[2] = {&wm, &ws};
      timing pt[2];
      time_works(pair, 2, budget, pt);
      const timing core_mat = pt[0], single = pt[1];
      const size_t first = nrows;
      const double ct = slice / core_trs.wall, ctc = slice / core_trs.cpu;
      const double cm = slice / core_mat.wall, cmc = slice / core_mat.cpu;
      rows[nrows++] = (row){nb, np, "core", "trs", 1, ct, limit, ct, ctc, limit_cpu, ctc, limit};
      rows[nrows++] = (row){nb, np, "core", "matrix", 1, cm, limit, cm, cmc, limit_cpu, cmc, limit};
      rows[nrows++] =
          (row){nb, np, "single", "matrix", 1, slice / single.wall, limit, cm, slice / single.cpu, limit_cpu, cmc, limit};
      for (size_t k = 0; k < 4 + (threads > 1); k++) {
        const char *path = k < 4 ? paths[k] : best;
        if (sk_kernel_path_check(path) != 0)
          continue;
        w = (work){.kind = W_KERNEL, .c = &c, .path = path, .threads = k < 4 ? 1 : threads};
        const timing t = time_work(&w, budget);
        /* Per core: CPU seconds already add up both threads' time. */
        rows[nrows++] = (row){nb, np, path, "trs", w.threads, mats / t.wall, limit, ct, mats / t.cpu, limit_cpu, ctc,
                              w.threads > 1 ? limit_t : limit};
      }
      for (size_t i = first; i < nrows; i++)
        printf("%6zu %6zu %-7s %-6s %3u %9.1f %9.1f %9.1f %7.2f %7.1fx\n", rows[i].bones, rows[i].poses,
               rows[i].path, rows[i].input, rows[i].threads, rows[i].rate / 1e6, rows[i].rate_cpu / 1e6,
               rows[i].limit_threads / 1e6, rows[i].rate / rows[i].limit_threads, rows[i].rate / rows[i].scalar);
      fflush(stdout);
      case_close(&c);
    }
    sk_rig_destroy(rig);
    sk_skeleton_destroy(s);
  }
  if (rc != 0) {
    fprintf(stderr, "skinner bench: %s\n", sk_strerror(rc));
    return 1;
  }

  /* The five targets of issue 3, from fixed rows of this run. */
  const size_t big = pose_counts[npose_counts - 1];
  const row *k64 = find_row(rows, nrows, 65, 64, best, 1), *c64 = find_row(rows, nrows, 65, 64, "core", 1);
  const row *kbig = find_row(rows, nrows, 65, big, best, 1), *kbig2 = find_row(rows, nrows, 65, big, best, threads);
  const row *s1 = find_row(rows, nrows, 65, 1, "single", 1);
  const row *a512 = find_row(rows, nrows, 65, 64, "avx512", 1); /* 270 KB of output: inside L2 */
  char name2[96], name5[96];
  snprintf(name2, sizeof name2, "batch kernel / write-bandwidth limit, 65 bones x %zu poses, 1 core", big);
  snprintf(name5, sizeof name5, "two cores / one core, 65 bones x %zu poses", big);
  target t[5] = {
      {"batch kernel / scalar core, 65 bones x 64 poses, 1 core (TRS in)", 7, 0, 0, k64 && c64},
      {name2, 0.6, 0, 0, kbig != NULL},
      {"AVX-512 kernel, cache-resident (65 x 64), M bone-matrices/s per core", 250, 0, 0, a512 != NULL},
      {"single-pose path / scalar core, 65 bones x 1 pose (matrix in)", 3, 0, 0, s1 != NULL},
      {name5, 1.7, 0, 0, kbig && kbig2 && threads > 1},
  };
  if (t[0].known)
    t[0].wall = k64->rate / c64->rate, t[0].cpu = k64->rate_cpu / c64->rate_cpu;
  if (t[1].known)
    t[1].wall = kbig->rate / kbig->limit, t[1].cpu = kbig->rate_cpu / kbig->limit_cpu;
  if (t[2].known)
    t[2].wall = a512->rate / 1e6, t[2].cpu = a512->rate_cpu / 1e6;
  if (t[3].known)
    t[3].wall = s1->rate / s1->scalar, t[3].cpu = s1->rate_cpu / s1->scalar_cpu;
  /* By CPU time: what two cores would give if both were ours throughout. */
  if (t[4].known)
    t[4].wall = kbig2->rate / kbig->rate, t[4].cpu = (double)threads * kbig2->rate_cpu / kbig->rate_cpu;
  const double load_after = loadavg1();
  printf("\ntargets (issue 3), by the wall clock [and by CPU time]; load average %.2f before, %.2f after:\n",
         load_before, load_after);
  for (int i = 0; i < 5; i++)
    print_target(&t[i]);
  /* What the two memory-bound ratios are up against, from the same run. */
  if (kbig != NULL) {
    const double in_b = 40, out_b = 64 * (65.0 + 1) / 65; /* TRS read; finals written, trailing identity included */
    printf("  context: the kernel reads %.0f B of TRS and writes %.0f B per bone matrix: at 65 x %zu it moved %.1f GB/s,\n"
           "           %.2f of the %.1f GB/s the write limit moved (the target counts the written bytes only)\n",
           in_b, out_b, big, kbig->rate * (in_b + out_b) / 1e9, (in_b + out_b) / out_b * kbig->rate / kbig->limit,
           kbig->limit * out_b / 1e9);
  }
  if (kbig != NULL && kbig2 != NULL && threads > 1)
    printf("  context: this machine's own write bandwidth, %u threads / 1, in this run: %.2f; the %u-thread kernel\n"
           "           reached %.2f of the %u-thread write limit\n",
           threads, kbig2->limit_threads / kbig->limit, threads, kbig2->rate / kbig2->limit_threads, threads);

  if (json) {
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
          arr, json_pack("{s:I, s:I, s:s, s:s, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "bones", (json_int_t)r->bones,
                         "poses", (json_int_t)r->poses, "path", r->path, "input", r->input, "threads", (int)r->threads,
                         "bone_matrices_per_s", r->rate, "bandwidth_limit_per_s", r->limit, "scalar_per_s", r->scalar,
                         "cpu_bone_matrices_per_s", r->rate_cpu, "cpu_bandwidth_limit_per_s", r->limit_cpu,
                         "cpu_scalar_per_s", r->scalar_cpu, "bandwidth_limit_threads_per_s", r->limit_threads));
    }
    for (int i = 0; i < 5; i++)
      json_array_append_new(tg, json_pack("{s:s, s:f, s:f, s:f, s:b, s:b}", "target", t[i].name, "goal", t[i].goal,
                                          "value", t[i].wall, "cpu_value", t[i].cpu, "pass",
                                          t[i].known && t[i].wall >= t[i].goal, "cpu_pass",
                                          t[i].known && t[i].cpu >= t[i].goal));
    json_object_set_new(o, "rows", arr);
    json_object_set_new(o, "targets", tg);
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (text == NULL)
      return 1;
    printf("%s\n", text);
    free(text);
  }
  return 0;
}
