/* sk_threads: jobs take spare threads up to their own bound and the
 * process's, give them back, and never hold more between them than the
 * process has spare, however many run at once; a started pool runs each
 * part of a job once, on its workers; the mesh writer takes its
 * vertex-range threads from it (same bytes with or without them). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sk_answer.h"
#include "sk_meshout.h"
#include "sk_threads.h"
#include "sk_testutil.h"

START_TEST(takes_up_to_the_job_and_the_spare_bounds) {
  sk_threads t;
  sk_threads_init(&t, 4, 5);
  ck_assert_uint_eq(sk_threads_take(&t, 10), 3); /* per_job - 1 */
  ck_assert_uint_eq(sk_threads_take(&t, 1), 1);
  ck_assert_uint_eq(sk_threads_take(&t, 3), 1); /* what is left */
  ck_assert_uint_eq(sk_threads_take(&t, 3), 0);
  ck_assert_uint_eq(sk_threads_high(&t), 5);
  sk_threads_give(&t, 3);
  ck_assert_uint_eq(sk_threads_take(&t, 2), 2);
  ck_assert_uint_eq(sk_threads_take(&t, 0), 0);
  sk_threads_init(&t, 0, 8); /* jobs of one thread: nothing to take */
  ck_assert_uint_eq(sk_threads_take(&t, 2), 0);
  ck_assert_uint_eq(sk_threads_take(NULL, 2), 0);
  sk_threads_give(NULL, 2);
  ck_assert_uint_eq(sk_threads_high(NULL), 0);
}
END_TEST

static void *take_give(void *arg) {
  sk_threads *t = arg;
  for (int i = 0; i < 20000; i++)
    sk_threads_give(t, sk_threads_take(t, 1 + (unsigned)i % 3));
  return NULL;
}

START_TEST(concurrent_jobs_never_hold_more_than_the_spare) {
  sk_threads t;
  sk_threads_init(&t, 4, 2);
  pthread_t th[8];
  for (int i = 0; i < 8; i++)
    ck_assert_int_eq(pthread_create(&th[i], NULL, take_give, &t), 0);
  for (int i = 0; i < 8; i++)
    pthread_join(th[i], NULL);
  ck_assert_uint_le(sk_threads_high(&t), 2);
  ck_assert_uint_eq(sk_threads_take(&t, 3), 2); /* every one given back */
}
END_TEST

/* The parts of a job: which thread ran each, and how often. */
typedef struct parts {
  pthread_t by[8];
  int runs[8];
  sk_threads *nested; /* part 1 runs a job of its own on it */
  int nested_runs[3];
  unsigned wait_for; /* part 0 waits (10 s at most) for this many others to have run */
  unsigned others;
} parts;

static void nested_part(void *arg, unsigned i) { __atomic_add_fetch(&((int *)arg)[i], 1, __ATOMIC_RELAXED); }

static void record_part(void *arg, unsigned i) {
  parts *p = arg;
  p->by[i] = pthread_self();
  p->runs[i]++;
  if (i > 0)
    __atomic_add_fetch(&p->others, 1, __ATOMIC_RELEASE);
  for (int k = 0; i == 0 && k < 10000 && __atomic_load_n(&p->others, __ATOMIC_ACQUIRE) < p->wait_for; k++)
    nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
  if (p->nested != NULL && i == 1) {
    const unsigned more = sk_threads_take(p->nested, 2);
    sk_threads_run(p->nested, 1 + more, nested_part, p->nested_runs);
    sk_threads_give(p->nested, more);
  }
}

START_TEST(a_started_pool_runs_the_parts_on_its_workers_once) {
  sk_threads t;
  sk_threads_init(&t, 4, 3);
  parts p = {0};
  sk_threads_run(&t, 3, record_part, &p); /* not started: the caller's thread, in order */
  ck_assert(p.runs[0] == 1 && p.runs[1] == 1 && p.runs[2] == 1);
  ck_assert(pthread_equal(p.by[1], pthread_self()) && pthread_equal(p.by[2], pthread_self()));
  ck_assert_uint_eq(sk_threads_workers(&t), 0);
  ck_assert_int_eq(sk_threads_start(&t), 0);
  ck_assert_int_eq(sk_threads_start(&t), 0); /* once */
  ck_assert_uint_eq(sk_threads_workers(&t), 3);
  for (int round = 0; round < 400; round++) {
    memset(&p, 0, sizeof p);
    /* half the rounds, the caller busy in its part until the others ran:
     * on the workers; the other half, the caller may take parts no worker
     * claimed yet */
    p.wait_for = round % 2 ? 3 : 0;
    const unsigned more = sk_threads_take(&t, 3);
    ck_assert_uint_eq(more, 3);
    sk_threads_run(&t, 1 + more, record_part, &p);
    sk_threads_give(&t, more);
    for (int i = 0; i < 4; i++)
      ck_assert_int_eq(p.runs[i], 1);
    ck_assert(pthread_equal(p.by[0], pthread_self()));
    for (int i = 1; i < 4 && p.wait_for; i++)
      ck_assert(!pthread_equal(p.by[i], pthread_self()));
  }
  /* a part that splits again: the threads it takes are workers not busy */
  memset(&p, 0, sizeof p);
  p.nested = &t;
  const unsigned more = sk_threads_take(&t, 1);
  sk_threads_run(&t, 1 + more, record_part, &p);
  sk_threads_give(&t, more);
  ck_assert(p.runs[0] == 1 && p.runs[1] == 1);
  ck_assert(p.nested_runs[0] == 1 && p.nested_runs[1] == 1 && p.nested_runs[2] == 1);
  sk_threads_stop(&t);
  ck_assert_uint_eq(sk_threads_workers(&t), 0);
  ck_assert_uint_eq(sk_threads_take(&t, 3), 0); /* stopped: none spare */
  sk_threads_stop(&t);                          /* idempotent */
  sk_threads_stop(NULL);
  sk_threads_init(&t, 2, 0); /* nothing to start */
  ck_assert_int_eq(sk_threads_start(&t), 0);
  ck_assert_uint_eq(sk_threads_workers(&t), 0);
}
END_TEST

static void count_part(void *arg, unsigned i) {
  (void)i;
  __atomic_add_fetch((unsigned *)arg, 1, __ATOMIC_RELAXED);
}

typedef struct job_loop {
  sk_threads *t;
  unsigned parts; /* every part run, this requester's */
  unsigned asked;
} job_loop;

static void *take_run_give(void *arg) {
  job_loop *j = arg;
  for (unsigned i = 0; i < 3000; i++) {
    const unsigned more = sk_threads_take(j->t, 1 + i % 3);
    sk_threads_run(j->t, 1 + more, count_part, &j->parts);
    j->asked += 1 + more;
    sk_threads_give(j->t, more);
  }
  return NULL;
}

START_TEST(concurrent_jobs_share_the_workers_and_every_part_runs) {
  sk_threads t;
  sk_threads_init(&t, 4, 2);
  ck_assert_int_eq(sk_threads_start(&t), 0);
  job_loop j[6];
  pthread_t th[6];
  for (int i = 0; i < 6; i++) {
    j[i] = (job_loop){.t = &t};
    ck_assert_int_eq(pthread_create(&th[i], NULL, take_run_give, &j[i]), 0);
  }
  for (int i = 0; i < 6; i++) {
    pthread_join(th[i], NULL);
    ck_assert_uint_eq(j[i].parts, j[i].asked);
  }
  ck_assert_uint_le(sk_threads_high(&t), 2);
  ck_assert_uint_eq(sk_threads_take(&t, 3), 2); /* every one given back */
  sk_threads_give(&t, 2);
  sk_threads_stop(&t);
}
END_TEST

/* A primitive the mesh writer splits (SK_MESH_THREADS_MIN vertices). */
typedef struct big_mesh {
  sk_geom_prim p;
  sk_geom g;
  float final[3 * 16];
} big_mesh;

static void big_mesh_make(big_mesh *m) {
  const uint32_t n = SK_MESH_THREADS_MIN + 1000;
  memset(m, 0, sizeof *m);
  m->p = (sk_geom_prim){.count = n, .influences = 4};
  m->p.pos = malloc((size_t)n * 3 * sizeof(float));
  m->p.joints = calloc((size_t)n * 4, sizeof(uint32_t));
  m->p.weights = calloc((size_t)n * 4, sizeof(float));
  ck_assert(m->p.pos != NULL && m->p.joints != NULL && m->p.weights != NULL);
  for (size_t i = 0; i < (size_t)n * 3; i++)
    m->p.pos[i] = (float)(i % 97) * 0.25f - 12;
  for (size_t v = 0; v < n; v++) {
    m->p.joints[4 * v] = (uint32_t)(v % 3);
    m->p.joints[4 * v + 1] = (uint32_t)((v + 1) % 3);
    m->p.weights[4 * v] = v % 2 ? 1.0f : 0.75f;
    m->p.weights[4 * v + 1] = v % 2 ? 0.0f : 0.25f;
  }
  for (int k = 0; k < 3; k++)
    for (int c = 0; c < 16; c++)
      m->final[16 * k + c] = c % 5 == 0 ? 1.0f + 0.5f * (float)k : c == 12 ? (float)k : 0.0f;
  m->g = (sk_geom){.refs = 1, .nprims = 1, .prims = &m->p, .vertices = n};
}

static void big_mesh_free(big_mesh *m) {
  free(m->p.pos);
  free(m->p.joints);
  free(m->p.weights);
}

typedef struct writer_arg {
  const big_mesh *m;
  sk_threads *t;
  sk_strbuf out;
  int rc;
} writer_arg;

static void *write_mesh(void *arg) {
  writer_arg *w = arg;
  w->rc = sk_meshout_write_f32(&w->m->g, SK_OUT_VERTICES | SK_OUT_BOUNDS, w->m->final, 3, NULL, 0, false, w->t,
                               &w->out);
  return NULL;
}

START_TEST(the_mesh_writer_takes_its_threads_from_the_process_count) {
  static big_mesh m;
  big_mesh_make(&m);
  writer_arg ref = {.m = &m};
  write_mesh(&ref); /* NULL: the caller's thread only */
  ck_assert_int_eq(ref.rc, 0);
  sk_threads t;
  sk_threads_init(&t, 4, 3);
  ck_assert_int_eq(sk_threads_start(&t), 0);
  writer_arg one = {.m = &m, .t = &t};
  write_mesh(&one); /* alone: all three spare ones */
  ck_assert_int_eq(one.rc, 0);
  ck_assert_uint_eq(sk_threads_high(&t), 3);
  ck_assert_mem_eq(one.out.data, ref.out.data, ref.out.len);
  sk_threads_stop(&t);
  sk_threads_init(&t, 4, 1); /* four requests at once, one spare thread between them */
  ck_assert_int_eq(sk_threads_start(&t), 0);
  writer_arg w[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (writer_arg){.m = &m, .t = &t};
    ck_assert_int_eq(pthread_create(&th[i], NULL, write_mesh, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(w[i].rc, 0);
    ck_assert_uint_eq(w[i].out.len, ref.out.len);
    ck_assert_mem_eq(w[i].out.data, ref.out.data, ref.out.len);
    sk_strbuf_free(&w[i].out);
  }
  ck_assert_uint_le(sk_threads_high(&t), 1);
  ck_assert_uint_eq(sk_threads_take(&t, 3), 1); /* given back */
  sk_threads_give(&t, 1);
  sk_threads_stop(&t);
  sk_strbuf_free(&ref.out);
  sk_strbuf_free(&one.out);
  big_mesh_free(&m);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_threads");
  TCase *tc = tcase_create("lifecycle");
  tcase_add_test(tc, takes_up_to_the_job_and_the_spare_bounds);
  tcase_add_test(tc, concurrent_jobs_never_hold_more_than_the_spare);
  suite_add_tcase(s, tc);
  TCase *pool = tcase_create("pool");
  tcase_set_timeout(pool, 60);
  tcase_add_test(pool, a_started_pool_runs_the_parts_on_its_workers_once);
  tcase_add_test(pool, concurrent_jobs_share_the_workers_and_every_part_runs);
  suite_add_tcase(s, pool);
  TCase *mw = tcase_create("mesh_writer");
  tcase_set_timeout(mw, 60);
  tcase_add_test(mw, the_mesh_writer_takes_its_threads_from_the_process_count);
  suite_add_tcase(s, mw);
  return sk_test_run(s);
}
