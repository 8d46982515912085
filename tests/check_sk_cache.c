/* sk_cache: lookup, replace, delete, LRU eviction by bytes, and references
 * that keep a replaced or evicted version alive for its readers. */
#include "sk_cache.h"
#include "sk_gltf_mesh.h"
#include "sk_json.h"
#include "sk_sample.h"
#include "sk_testasset.h"
#include "sk_testutil.h"

/* A chain of `n` bones. */
static sk_skeleton *chain(int n) { return sk_test_chain(n); }

START_TEST(ids_follow_the_id_syntax) {
  ck_assert(sk_cache_id_valid("a", 1));
  ck_assert(sk_cache_id_valid("Hero_01.v2-x", 12));
  ck_assert(!sk_cache_id_valid("", 0));
  ck_assert(!sk_cache_id_valid("a b", 3));
  ck_assert(!sk_cache_id_valid("a/b", 3));
  char long_id[130];
  memset(long_id, 'x', 129);
  long_id[129] = 0;
  ck_assert(sk_cache_id_valid(long_id, 128));
  ck_assert(!sk_cache_id_valid(long_id, 129));
  sk_cache *c;
  ck_assert_int_eq(sk_cache_create(0, &c), 0);
  ck_assert_int_eq(sk_cache_put(c, "no way", chain(1), NULL, NULL), SK_EINVAL);
  sk_cache_destroy(c);
}
END_TEST

START_TEST(put_get_replace_delete) {
  sk_cache *c;
  ck_assert_int_eq(sk_cache_create(0, &c), 0);
  ck_assert_ptr_null(sk_cache_get(c, "a"));
  bool replaced = true;
  ck_assert_int_eq(sk_cache_put(c, "a", chain(2), &replaced, NULL), 0);
  ck_assert(!replaced);
  sk_cache_entry *old = sk_cache_get(c, "a");
  ck_assert_ptr_nonnull(old);
  ck_assert_uint_eq(old->model->skel->count, 2);
  ck_assert_ptr_nonnull(old->model->rig);
  ck_assert_int_eq(sk_cache_put(c, "a", chain(3), &replaced, NULL), 0);
  ck_assert(replaced);
  /* the old version lives on for its reader, unchanged */
  ck_assert_uint_eq(old->model->skel->count, 2);
  sk_cache_entry *cur = sk_cache_get(c, "a");
  ck_assert_uint_eq(cur->model->skel->count, 3);
  ck_assert(cur->version > old->version);
  /* The stored pose's final matrices, evaluated and printed once at put:
   * the text answers copy for bones a pose leaves alone, counted in bytes. */
  ck_assert_ptr_nonnull(cur->model->base_final);
  ck_assert_ptr_eq(cur->model->base_final_text.values, cur->model->base_final);
  ck_assert_uint_eq(cur->model->base_final_text.count, 16 * 4);
  ck_assert_uint_eq(cur->model->base_final_text.group, 16);
  sk_strbuf plain = {0}, copied = {0};
  ck_assert_int_eq(sk_strbuf_append_f32_array(&plain, cur->model->base_final, 16 * 4), 0);
  ck_assert_int_eq(
      sk_strbuf_append_f32_array_ref(&copied, cur->model->base_final, 16 * 4, &cur->model->base_final_text), 0);
  ck_assert_str_eq(copied.data, plain.data);
  sk_strbuf_free(&plain);
  sk_strbuf_free(&copied);
  ck_assert_uint_ge(cur->bytes,
                    sk_cache_skeleton_bytes(cur->model->skel) + sk_f32_text_bytes(&cur->model->base_final_text));
  ck_assert_uint_gt(sk_f32_text_bytes(&cur->model->base_final_text), 0);
  sk_cache_entry_unref(old);
  sk_cache_stats st;
  sk_cache_get_stats(c, &st);
  ck_assert_uint_eq(st.count, 1);
  ck_assert_uint_eq(st.bytes, cur->bytes);
  ck_assert_int_eq(sk_cache_delete(c, "a"), 0);
  ck_assert_int_eq(sk_cache_delete(c, "a"), SK_ENOTFOUND);
  ck_assert_ptr_null(sk_cache_get(c, "a"));
  ck_assert_uint_eq(cur->model->skel->count, 3); /* still readable */
  sk_cache_entry_unref(cur);
  sk_cache_get_stats(c, &st);
  ck_assert_uint_eq(st.count, 0);
  ck_assert_uint_eq(st.bytes, 0);
  sk_cache_destroy(c);
}
END_TEST

static void count_ids(void *arg, const sk_cache_entry *e) {
  (void)e;
  (*(int *)arg)++;
}

START_TEST(many_ids_grow_the_table) {
  sk_cache *c;
  ck_assert_int_eq(sk_cache_create(0, &c), 0);
  for (int i = 0; i < 500; i++) {
    char id[16];
    snprintf(id, sizeof id, "s%d", i);
    ck_assert_int_eq(sk_cache_put(c, id, chain(1 + i % 4), NULL, NULL), 0);
  }
  for (int i = 0; i < 500; i++) {
    char id[16];
    snprintf(id, sizeof id, "s%d", i);
    sk_cache_entry *e = sk_cache_get(c, id);
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->model->skel->count, (size_t)(1 + i % 4));
    sk_cache_entry_unref(e);
  }
  int n = 0;
  sk_cache_foreach(c, count_ids, &n);
  ck_assert_int_eq(n, 500);
  sk_cache_destroy(c);
}
END_TEST

START_TEST(least_recently_used_is_evicted_past_the_byte_limit) {
  sk_skeleton *probe = chain(10);
  size_t one = sk_cache_skeleton_bytes(probe);
  sk_skeleton_destroy(probe);
  sk_cache *c;
  ck_assert_int_eq(sk_cache_create(3 * one + one / 2, &c), 0);
  ck_assert_int_eq(sk_cache_put(c, "a", chain(10), NULL, NULL), 0);
  ck_assert_int_eq(sk_cache_put(c, "b", chain(10), NULL, NULL), 0);
  ck_assert_int_eq(sk_cache_put(c, "c", chain(10), NULL, NULL), 0);
  sk_cache_entry_unref(sk_cache_get(c, "a")); /* a is now the most recent */
  sk_cache_entry *held = sk_cache_get(c, "b");
  sk_cache_entry_unref(sk_cache_get(c, "a"));
  sk_cache_entry_unref(sk_cache_get(c, "c"));
  ck_assert_int_eq(sk_cache_put(c, "d", chain(10), NULL, NULL), 0); /* evicts b */
  sk_cache_stats st;
  sk_cache_get_stats(c, &st);
  ck_assert_uint_eq(st.count, 3);
  ck_assert_uint_eq(st.evictions, 1);
  ck_assert(st.bytes <= st.max_bytes);
  ck_assert_ptr_null(sk_cache_get(c, "b"));
  ck_assert_uint_eq(held->model->skel->count, 10); /* a reader of b is unaffected */
  sk_cache_entry_unref(held);
  /* one entry bigger than the whole limit still goes in, alone */
  ck_assert_int_eq(sk_cache_put(c, "huge", chain(100), NULL, NULL), 0);
  sk_cache_get_stats(c, &st);
  ck_assert_uint_eq(st.count, 1);
  ck_assert_uint_eq(st.evictions, 4);
  sk_cache_destroy(c);
}
END_TEST

START_TEST(stored_locals_are_decomposed_once_at_put) {
  sk_cache *c;
  ck_assert_int_eq(sk_cache_create(0, &c), 0);
  json_t *j = json_loads("{\"bones\":[{\"name\":\"a\",\"matrix\":[0,1,0,0,-1,0,0,0,0,0,1,0,1,2,3,1]}]}", 0, NULL);
  sk_skeleton *s;
  ck_assert_int_eq(sk_json_parse_skeleton(j, "", 0, &s, NULL), 0);
  json_decref(j);
  sk_cache_entry *e;
  ck_assert_int_eq(sk_cache_put(c, "m", s, NULL, &e), 0);
  ck_assert(!e->model->skel->bones[0].local.need_decompose);
  ck_assert(fabs(e->model->skel->bones[0].local.position[2] - 3) < 1e-12);
  sk_cache_entry_unref(e);
  sk_cache_destroy(c);
}
END_TEST

static size_t count_listed(sk_cache *c) {
  size_t n = 0;
  sk_cache_foreach(c, count_ids, &n);
  return n;
}

/* Without a store, an evicted id leaves a counted tombstone: get still
 * answers NULL, but the id is known as evicted, named by the put that
 * evicted it, not listed, and cleared by a new put or a delete. */
START_TEST(eviction_without_a_store_leaves_a_tombstone) {
  sk_skeleton *probe = chain(10);
  size_t one = sk_cache_skeleton_bytes(probe);
  sk_skeleton_destroy(probe);
  sk_cache *c;
  ck_assert_int_eq(sk_cache_create(2 * one + one / 2, &c), 0);
  ck_assert_int_eq(sk_cache_put(c, "a", chain(10), NULL, NULL), 0);
  const char *ids[SK_CACHE_EVICTED_LIST];
  ck_assert_uint_eq(sk_cache_last_evicted(c, ids, SK_CACHE_EVICTED_LIST), 0);
  ck_assert_int_eq(sk_cache_put(c, "b", chain(10), NULL, NULL), 0);
  ck_assert_int_eq(sk_cache_put(c, "c", chain(10), NULL, NULL), 0); /* evicts a */
  ck_assert_uint_eq(sk_cache_last_evicted(c, ids, SK_CACHE_EVICTED_LIST), 1);
  ck_assert_str_eq(ids[0], "a");
  ck_assert_ptr_null(sk_cache_get(c, "a"));
  ck_assert(sk_cache_evicted(c, "a"));
  ck_assert(!sk_cache_evicted(c, "b"));
  ck_assert(!sk_cache_evicted(c, "zzz"));
  ck_assert_uint_eq(count_listed(c), 2);
  sk_cache_stats st;
  sk_cache_get_stats(c, &st);
  ck_assert_uint_eq(st.tombstones, 1);
  ck_assert_uint_eq(st.stored, 2);
  ck_assert(st.tombstone_bytes > 0 && st.tombstone_bytes < 1024);
  /* a put of the evicted id is a create, not a replace */
  bool replaced = true;
  ck_assert_int_eq(sk_cache_put(c, "a", chain(10), &replaced, NULL), 0); /* evicts b */
  ck_assert(!replaced);
  ck_assert(!sk_cache_evicted(c, "a"));
  ck_assert(sk_cache_evicted(c, "b"));
  ck_assert_int_eq(sk_cache_delete(c, "b"), 0); /* clears the tombstone */
  ck_assert(!sk_cache_evicted(c, "b"));
  ck_assert_int_eq(sk_cache_delete(c, "b"), SK_ENOTFOUND);
  sk_cache_get_stats(c, &st);
  ck_assert_uint_eq(st.tombstones, 0);
  sk_cache_destroy(c);
}
END_TEST

/* The newest SK_CACHE_TOMBSTONES_MAX tombstones are kept, no more. */
START_TEST(tombstones_are_capped) {
  sk_cache *c;
  ck_assert_int_eq(sk_cache_create(1, &c), 0); /* every put evicts the one before */
  char id[32];
  for (int i = 0; i < SK_CACHE_TOMBSTONES_MAX + 10; i++) {
    snprintf(id, sizeof id, "t%d", i);
    ck_assert_int_eq(sk_cache_put(c, id, chain(2), NULL, NULL), 0);
  }
  sk_cache_stats st;
  sk_cache_get_stats(c, &st);
  ck_assert_uint_eq(st.tombstones, SK_CACHE_TOMBSTONES_MAX);
  ck_assert(!sk_cache_evicted(c, "t0"));
  snprintf(id, sizeof id, "t%d", SK_CACHE_TOMBSTONES_MAX + 8);
  ck_assert(sk_cache_evicted(c, id));
  sk_cache_destroy(c);
}
END_TEST

/* The cache is charged to a budget: what it holds, tombstones included,
 * and every change; destroying it gives everything back. */
START_TEST(the_cache_is_charged_to_the_budget) {
  sk_budget b;
  sk_budget_init(&b, 1u << 30);
  sk_skeleton *probe = chain(10);
  size_t one = sk_cache_skeleton_bytes(probe);
  sk_skeleton_destroy(probe);
  sk_cache *c;
  ck_assert_int_eq(sk_cache_create(2 * one + one / 2, &c), 0);
  ck_assert_int_eq(sk_cache_put(c, "a", chain(10), NULL, NULL), 0);
  sk_cache_set_budget(c, &b); /* what is cached already is charged now */
  sk_cache_stats st;
  sk_budget_stats bs;
  sk_cache_get_stats(c, &st);
  sk_budget_get_stats(&b, &bs);
  ck_assert_uint_eq(bs.used, st.bytes);
  ck_assert_int_eq(sk_cache_put(c, "b", chain(10), NULL, NULL), 0);
  ck_assert_int_eq(sk_cache_put(c, "c", chain(10), NULL, NULL), 0); /* evicts a: a tombstone */
  sk_cache_get_stats(c, &st);
  sk_budget_get_stats(&b, &bs);
  ck_assert_uint_eq(bs.used, st.bytes + st.tombstone_bytes);
  ck_assert_int_eq(sk_cache_delete(c, "b"), 0);
  sk_cache_get_stats(c, &st);
  sk_budget_get_stats(&b, &bs);
  ck_assert_uint_eq(bs.used, st.bytes + st.tombstone_bytes);
  sk_cache_destroy(c);
  sk_budget_get_stats(&b, &bs);
  ck_assert_uint_eq(bs.used, 0);
}
END_TEST

/* An entry's clips carry their shared sampler, counted in its bytes: built
 * at put for small clips (Fox: 69 KB), not for large ones (mannequiny: 0.9
 * MB), whose upload builds it on the pool beforehand (then put keeps it). */
START_TEST(entries_keep_their_clips_shared_sampler) {
  sk_cache *c;
  ck_assert_int_eq(sk_cache_create(0, &c), 0);
  sk_skeleton *s;
  sk_anim *an;
  sk_test_import_asset("Fox.glb", NULL, &s, &an);
  bool replaced;
  sk_cache_entry *e;
  ck_assert_int_eq(sk_cache_put_full(c, "fox", s, an, NULL, &replaced, &e), 0);
  sk_sampler *h = sk_sampler_hold_shared(e->model->anim);
  ck_assert_ptr_nonnull(h);
  ck_assert_uint_ge(e->bytes, sk_anim_memory(e->model->anim) + sk_sampler_memory(h));
  sk_sampler_destroy(h);
  sk_cache_entry_unref(e);
  sk_test_import_asset("mannequiny-0.3.0.glb", NULL, &s, &an);
  ck_assert_uint_gt(sk_anim_memory(an), 256u << 10);
  ck_assert_int_eq(sk_cache_put_full(c, "big", s, an, NULL, &replaced, &e), 0);
  ck_assert_ptr_null(sk_sampler_hold_shared(e->model->anim)); /* not built on the caller's (the loop's) time */
  const size_t plain = e->bytes;
  sk_cache_entry_unref(e);
  sk_test_import_asset("mannequiny-0.3.0.glb", NULL, &s, &an);
  ck_assert_int_eq(sk_sampler_share(an, SK_SAMPLER_SHARE_MAX), 0); /* as the upload's pool job does */
  ck_assert_int_eq(sk_cache_put_full(c, "big", s, an, NULL, &replaced, &e), 0);
  h = sk_sampler_hold_shared(e->model->anim);
  ck_assert_ptr_nonnull(h);
  ck_assert_uint_eq(e->bytes, plain + sk_sampler_memory(h));
  sk_sampler_destroy(h);
  sk_cache_entry_unref(e);
  sk_cache_destroy(c);
}
END_TEST

/* ---- a store: read-backs inside the budget, damaged records ------------------------ */

static const char k_gltf[] = "{\"asset\":{\"version\":\"2.0\"},\"nodes\":[{\"name\":\"j0\",\"children\":[1]},"
                             "{\"name\":\"j1\",\"translation\":[0,1,0]}],\"skins\":[{\"joints\":[0,1]}]}";

static void put_gltf(sk_cache *c, const char *id) {
  sk_skeleton *s;
  sk_anim *a;
  sk_gltf_extra x;
  size_t est;
  ck_assert_int_eq(sk_gltf_import_extra(k_gltf, strlen(k_gltf), NULL, 0, 0, &est, true, &s, &a, &x, NULL), 0);
  sk_cache_source src = {.gltf = k_gltf, .gltf_len = strlen(k_gltf), .skins_json = x.skins_json, .skin_index = 0};
  ck_assert_int_eq(sk_cache_put_full(c, id, s, a, &src, NULL, NULL), 0);
  sk_gltf_extra_clear(&x);
}

typedef struct skip_log {
  int calls;
  char file[64], why[160];
} skip_log;

static void on_skip(void *arg, const char *file, const char *why) {
  skip_log *l = arg;
  l->calls++;
  snprintf(l->file, sizeof l->file, "%s", file);
  snprintf(l->why, sizeof l->why, "%s", why);
}

/* Issue 31: a read-back parsed the stored glTF before reserving anything,
 * and a record damaged while evicted stayed listed with nothing logged. */
START_TEST(read_backs_reserve_their_parse_and_damaged_records_are_dropped_counted_and_told) {
  char dir[] = "/tmp/sk_cache_test.XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  sk_store *st;
  ck_assert_int_eq(sk_store_open(dir, &st, NULL), 0);
  sk_cache *c;
  ck_assert_int_eq(sk_cache_create(1, &c), 0); /* every put evicts the one before */
  skip_log log = {0};
  ck_assert_int_eq(sk_cache_attach_store(c, st, on_skip, &log), 0);
  put_gltf(c, "a");
  put_gltf(c, "b");
  ck_assert(sk_cache_stored_only(c, "a"));
  /* A budget with no room left for the parse: SK_EBUSY, nothing built. */
  sk_budget full;
  sk_budget_init(&full, 1);
  sk_cache_set_budget(c, &full);
  sk_cache_loaded l;
  ck_assert_int_eq(sk_cache_load_stored(c, "a", &l), SK_EBUSY);
  ck_assert_ptr_null(l.skel);
  sk_budget_stats bs;
  sk_cache_set_budget(c, NULL);
  sk_budget_get_stats(&full, &bs);
  ck_assert_uint_eq(bs.used, 0); /* nothing held after the refusal */
  ck_assert_uint_ge(bs.refused, 1);
  /* Room again: it reads back. */
  ck_assert_int_eq(sk_cache_load_stored(c, "a", &l), 0);
  ck_assert_uint_eq(l.skel->count, 2);
  sk_cache_loaded_clear(&l);
  /* Damaged on disk while evicted: SK_EFORMAT, then dropped, counted, told. */
  char p[96];
  snprintf(p, sizeof p, "%s/a.rec", dir);
  FILE *f = fopen(p, "r+b");
  ck_assert_ptr_nonnull(f);
  fseek(f, 40, SEEK_SET);
  fputc('#', f);
  fclose(f);
  ck_assert_int_eq(sk_cache_load_stored(c, "a", &l), SK_EFORMAT);
  int n = 0;
  sk_cache_foreach(c, count_ids, &n);
  ck_assert_int_eq(n, 2);
  sk_cache_drop_damaged(c, "a");
  sk_cache_drop_damaged(c, "b"); /* resident: not a stored-only id, nothing happens */
  n = 0;
  sk_cache_foreach(c, count_ids, &n);
  ck_assert_int_eq(n, 1);
  ck_assert_ptr_null(sk_cache_get(c, "a"));
  sk_cache_stats cs;
  sk_cache_get_stats(c, &cs);
  ck_assert_uint_eq(cs.damaged, 1);
  ck_assert_int_eq(log.calls, 1);
  ck_assert_str_eq(log.file, "a.rec");
  ck_assert_ptr_nonnull(strstr(log.why, "damaged while its skeleton was evicted"));
  sk_cache_destroy(c);
  /* With no time for eager imports, start-up lists the intact record as
   * stored only, counts the damaged one, and the first get reads it back. */
  ck_assert_int_eq(sk_cache_create(0, &c), 0);
  sk_cache_set_eager_load(c, 0);
  ck_assert_int_eq(sk_cache_attach_store(c, st, on_skip, &log), 0);
  ck_assert(sk_cache_stored_only(c, "b"));
  sk_cache_get_stats(c, &cs);
  ck_assert_uint_eq(cs.stored, 1);
  ck_assert_uint_eq(cs.count, 0);
  ck_assert_uint_eq(cs.damaged, 1);
  ck_assert_int_eq(log.calls, 2);
  ck_assert_str_eq(log.why, "checksum mismatch");
  sk_cache_entry *e = sk_cache_get(c, "b");
  ck_assert_ptr_nonnull(e);
  ck_assert_uint_eq(e->model->skel->count, 2);
  ck_assert_ptr_nonnull(e->model->anim);
  sk_cache_entry_unref(e);
  sk_cache_destroy(c);
  sk_store_close(st);
  snprintf(p, sizeof p, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(p), 0);
}
END_TEST

static Suite *cache_suite(void) {
  Suite *s = suite_create("sk_cache");
  TCase *t = tcase_create("validity");
  tcase_add_test(t, ids_follow_the_id_syntax);
  suite_add_tcase(s, t);
  t = tcase_create("lifecycle");
  tcase_add_test(t, put_get_replace_delete);
  tcase_add_test(t, many_ids_grow_the_table);
  tcase_add_test(t, least_recently_used_is_evicted_past_the_byte_limit);
  tcase_add_test(t, stored_locals_are_decomposed_once_at_put);
  tcase_add_test(t, eviction_without_a_store_leaves_a_tombstone);
  tcase_add_test(t, tombstones_are_capped);
  tcase_add_test(t, the_cache_is_charged_to_the_budget);
  tcase_add_test(t, entries_keep_their_clips_shared_sampler);
  suite_add_tcase(s, t);
  t = tcase_create("store");
  tcase_add_test(t, read_backs_reserve_their_parse_and_damaged_records_are_dropped_counted_and_told);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(cache_suite()); }
