#include "sk_cache.h"

#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "sk_error.h"
#include "sk_gltf.h"
#include "sk_hash.h"
#include "sk_gltf_mesh.h"
#include "sk_ops.h"
#include "sk_json.h"
#include "sk_list.h"
#include "sk_meshout.h"
#include "sk_record.h"
#include "sk_retarget.h"
#include "sk_sample.h"

struct sk_cache {
  sk_cache_entry **buckets;
  size_t nbuckets; /* power of two */
  size_t count;    /* entries in the table, stored-only ones included */
  size_t resident, bytes, max_bytes;
  uint64_t evictions, reloads, next_version;
  sk_list lru;                         /* first = most recently used; resident entries only */
  sk_store *store;                     /* borrowed, or NULL */
  sk_budget *budget;                   /* borrowed, or NULL */
  sk_list tombs;                       /* tombstones, oldest first */
  size_t tombstones;
  size_t evicted_n;                    /* ids the last put evicted without a store */
  char evicted[SK_CACHE_EVICTED_LIST][SK_CACHE_ID_MAX + 1];
  uint64_t damaged;                    /* records skipped or dropped as damaged */
  void (*skipped)(void *arg, const char *file, const char *why); /* from attach; may be NULL */
  void *skipped_arg;
  uint64_t eager_ns;                   /* start-up imports records for this long, then lists them stored-only */
};

static uint64_t hash_id(const char *id) { return sk_hash_fnv64_str(SK_HASH_FNV64_INIT, id); }

/* One rule with the store: with and without --data-dir alike. */
bool sk_cache_id_valid(const char *id, size_t len) { return sk_store_id_valid(id, len) != 0; }

size_t sk_cache_skeleton_bytes(const sk_skeleton *s) {
  /* + about 96 bytes per bone for the kernel rig (opaque; inverse bind + step)
   * + the base evaluation: a world per bone and a final per slot */
  return sizeof(sk_cache_entry) + sizeof(sk_model) + sizeof *s + s->count * (sizeof *s->bones + 96) + s->names_size +
         (s->hash_mask + 1) * sizeof *s->hash + 16 * (2 * s->count + 1) * sizeof(float);
}

int sk_cache_create(size_t max_bytes, sk_cache **out) {
  sk_cache *c = calloc(1, sizeof *c);
  if (c == NULL)
    return SK_ENOMEM;
  c->nbuckets = 64;
  c->buckets = calloc(c->nbuckets, sizeof *c->buckets);
  if (c->buckets == NULL) {
    free(c);
    return SK_ENOMEM;
  }
  c->max_bytes = max_bytes;
  sk_list_init(&c->lru);
  sk_list_init(&c->tombs);
  c->eager_ns = (uint64_t)(SK_CACHE_EAGER_LOAD_S * 1e9);
  *out = c;
  return 0;
}

void sk_cache_entry_ref(sk_cache_entry *e) { __atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED); }

void sk_cache_entry_unref(sk_cache_entry *e) {
  if (e == NULL)
    return;
  /* acq_rel: the thread that frees must see every other holder's reads done. */
  if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    sk_model_unref(e->model);
    free(e);
  }
}

void sk_cache_loaded_clear(sk_cache_loaded *l) {
  sk_skeleton_destroy(l->skel);
  sk_anim_destroy(l->anim);
  free(l->mesh_json);
  free(l->skins_json);
  sk_geom_unref(l->geom);
  memset(l, 0, sizeof *l);
}

static void lru_unlink(sk_cache_entry *e) {
  if (e->model == NULL)
    return; /* stored-only entries are not in the LRU list */
  sk_list_remove(&e->lru);
}

static sk_cache_entry *lru_last(const sk_cache *c) {
  return sk_list_empty(&c->lru) ? NULL : sk_list_data(sk_list_tail(&c->lru), sk_cache_entry, lru);
}

static sk_cache_entry **find_slot(sk_cache *c, const char *id) {
  sk_cache_entry **pp = &c->buckets[hash_id(id) & (c->nbuckets - 1)];
  while (*pp != NULL && strcmp((*pp)->id, id) != 0)
    pp = &(*pp)->hnext;
  return pp;
}

/* Unlinks `e` from table and LRU and drops the table's reference. */
static void remove_entry(sk_cache *c, sk_cache_entry **slot) {
  sk_cache_entry *e = *slot;
  *slot = e->hnext;
  e->hnext = NULL;
  e->linked = false;
  sk_budget_release(c->budget, e->bytes);
  if (e->tombstone) { /* not counted in `count`, `bytes` or the LRU */
    sk_list_remove(&e->lru);
    c->tombstones--;
    sk_cache_entry_unref(e);
    return;
  }
  lru_unlink(e);
  c->count--;
  if (e->model != NULL)
    c->resident--;
  c->bytes -= e->bytes;
  sk_cache_entry_unref(e);
}

static void grow(sk_cache *c) {
  size_t n = c->nbuckets * 2;
  sk_cache_entry **b = calloc(n, sizeof *b);
  if (b == NULL)
    return; /* a longer chain is slower, not wrong */
  for (size_t i = 0; i < c->nbuckets; i++) {
    sk_cache_entry *e = c->buckets[i];
    while (e) {
      sk_cache_entry *next = e->hnext;
      size_t k = hash_id(e->id) & (n - 1);
      e->hnext = b[k];
      b[k] = e;
      e = next;
    }
  }
  free(c->buckets);
  c->buckets = b;
  c->nbuckets = n;
}

void sk_cache_destroy(sk_cache *c) {
  if (c == NULL)
    return;
  for (size_t i = 0; i < c->nbuckets; i++)
    while (c->buckets[i] != NULL)
      remove_entry(c, &c->buckets[i]);
  free(c->buckets);
  free(c);
}

static int reload(sk_cache *c, const char *id, sk_cache_entry **out);

/* Clips up to this size get their shared sampler built at put (about a
 * millisecond of work at most); larger ones where they are parsed. */

sk_cache_entry *sk_cache_get(sk_cache *c, const char *id) {
  sk_cache_entry *e = *find_slot(c, id);
  if (e == NULL || e->tombstone)
    return NULL;
  if (e->model == NULL) { /* evicted but stored: bring it back */
    sk_cache_entry *loaded = NULL;
    if (reload(c, id, &loaded) != 0)
      return NULL;
    c->reloads++;
    return loaded;
  }
  if (sk_list_head(&c->lru) != &e->lru) {
    lru_unlink(e);
    sk_list_insert_head(&c->lru, &e->lru);
  }
  sk_cache_entry_ref(e);
  return e;
}


/* Replaces the table slot of `id` with `e` (which holds the table's
 * reference) and fixes the counters. */
static void link_entry(sk_cache *c, sk_cache_entry *e, bool *replaced) {
  sk_cache_entry **slot = find_slot(c, e->id);
  if (*slot != NULL) {
    if (replaced && !(*slot)->tombstone)
      *replaced = true;
    remove_entry(c, slot);
    slot = find_slot(c, e->id);
  }
  *slot = e;
  e->linked = true;
  sk_budget_charge(c->budget, e->bytes);
  if (e->tombstone) { /* newest last; the oldest go past the cap */
    sk_list_insert_tail(&c->tombs, &e->lru);
    if (++c->tombstones > SK_CACHE_TOMBSTONES_MAX)
      remove_entry(c, find_slot(c, sk_list_data(sk_list_head(&c->tombs), sk_cache_entry, lru)->id));
    return;
  }
  c->count++;
  c->bytes += e->bytes;
  if (e->model != NULL) {
    c->resident++;
    sk_list_insert_head(&c->lru, &e->lru);
  }
}

/* Evicts least recently used entries (never `keep`) while over the limit.
 * With a store, an evicted entry leaves a stored-only entry behind; without
 * one, a tombstone, and its id is noted for the put's answer. */
static void evict(sk_cache *c, const sk_cache_entry *keep) {
  sk_cache_entry *victim;
  while (c->max_bytes > 0 && c->bytes > c->max_bytes && (victim = lru_last(c)) != NULL && victim != keep) {
    c->evictions++;
    if (c->store == NULL) {
      if (c->evicted_n < SK_CACHE_EVICTED_LIST)
        memcpy(c->evicted[c->evicted_n], victim->id, sizeof c->evicted[0]);
      c->evicted_n++;
    }
    sk_cache_entry *ghost = calloc(1, sizeof *ghost);
    if (ghost == NULL) { /* no tombstone: the id answers a plain 404 */
      remove_entry(c, find_slot(c, victim->id));
      continue;
    }
    sk_list_init(&ghost->lru);
    memcpy(ghost->id, victim->id, sizeof ghost->id);
    ghost->bone_count = victim->bone_count;
    ghost->bytes = sizeof *ghost;
    ghost->version = victim->version;
    ghost->refs = 1;
    ghost->tombstone = c->store == NULL;
    link_entry(c, ghost, NULL);
  }
}

/* `mesh_json` and `skins_json` are copied (may be NULL), `geom` gets a
 * reference (may be NULL). */
static int new_entry(sk_cache *c, const char *id, sk_skeleton *skel, sk_anim *anim, const char *mesh_json,
                     const char *skins_json, int32_t skin, sk_geom *geom, sk_cache_entry **out) {
  *out = NULL;
  sk_cache_entry *e = calloc(1, sizeof *e);
  if (e == NULL) {
    sk_skeleton_destroy(skel);
    sk_anim_destroy(anim);
    return SK_ENOMEM;
  }
  sk_list_init(&e->lru);
  int rc = sk_model_create(skel, anim, mesh_json, skins_json, skin, &e->model);
  if (rc != 0) {
    free(e);
    return rc;
  }
  sk_model_set_geom(e->model, geom, &sk_mesh_hook_json);
  sk_model_set_budget(e->model, c->budget);
  const sk_model *m = e->model;
  e->bone_count = m->bone_count;
  snprintf(e->id, sizeof e->id, "%s", id);
  sk_sampler *shared = sk_sampler_hold_shared(anim);
  const size_t shared_bytes = sk_sampler_memory(shared);
  sk_sampler_destroy(shared);
  e->bytes = sk_cache_skeleton_bytes(skel) + sk_f32_text_bytes(&m->base_final_text) + shared_bytes +
             sk_anim_additive_memory(anim) +
             (anim ? sk_anim_memory(anim) : 0) + (m->mesh_json ? strlen(m->mesh_json) + 1 : 0) +
             (m->skins_json ? strlen(m->skins_json) + 1 : 0) + (geom != NULL ? geom->bytes : 0);
  e->version = ++c->next_version;
  e->refs = 1; /* the table's */
  *out = e;
  return 0;
}

/* The record of `skel` with the source `src` (a given one: not a PATCH's). */
static int encode_record(const sk_skeleton *skel, const sk_cache_source *src, const char *mesh_json, sk_strbuf *b) {
  int rc = sk_record_encode_clips(skel, src->gltf, src->gltf_len, src->skin, src->json,
                                  src->gltf == NULL || src->json ? mesh_json : NULL, src->clips, src->clips_len, b);
  return !rc && b->failed ? SK_ENOMEM : rc;
}

int sk_cache_stage(const sk_cache *c, const char *id, sk_skeleton *skel, const sk_cache_source *src,
                   sk_store_staged *out) {
  memset(out, 0, sizeof *out);
  if (c->store == NULL)
    return 0;
  sk_skeleton_prepare(skel); /* as new_entry does before persist: the same bytes */
  sk_strbuf b = {0};
  int rc = encode_record(skel, src, src->mesh_json, &b);
  if (!rc)
    rc = sk_store_stage(c->store, id, b.data, b.len, out);
  sk_strbuf_free(&b);
  return rc;
}

void sk_cache_discard(sk_cache *c, sk_store_staged *st) {
  if (c->store != NULL)
    sk_store_discard(c->store, st);
}

/* Writes `skel` with `src` (or the previous record's source) to the store,
 * as a record of the current version (sk_record); commits the record
 * `src` staged instead, when it did. */
static int persist(sk_cache *c, const char *id, const sk_skeleton *skel, const sk_cache_source *src,
                   const char *mesh_json) {
  if (src != NULL && src->staged != NULL && (src->staged->ready || src->staged->err != 0))
    return sk_store_commit(c->store, id, src->staged);
  void *old = NULL;
  size_t old_len = 0;
  sk_record prev = {0};
  sk_cache_source kept = {0};
  if (src == NULL || src->keep) {
    /* A PATCH: the source is the record's being replaced, whatever its
     * version; its retargeted clips too, unless `keep` brings new ones. */
    if (sk_store_get(c->store, id, &old, &old_len) == 0 && sk_record_decode(old, old_len, &prev) == 0) {
      kept.gltf = prev.gltf;
      kept.gltf_len = prev.gltf_len;
      kept.skin = prev.skin;
      kept.json = prev.json;
      kept.clips = prev.clips;
      kept.clips_len = prev.clips_len;
    }
    if (src != NULL)
      kept.clips = src->clips, kept.clips_len = src->clips_len;
    src = &kept;
  }
  sk_strbuf b = {0};
  int rc = encode_record(skel, src, mesh_json, &b);
  if (!rc)
    rc = sk_store_put(c->store, id, b.data, b.len);
  sk_strbuf_free(&b);
  sk_record_clear(&prev);
  free(old);
  return rc;
}

/* The clips of a record's Babylon skeleton JSON text, parsed as the upload
 * parsed it, keeping the text (a later retarget or PATCH needs it). */
static int babylon_clips(sk_budget *budget, const void *text, size_t len, sk_skeleton **fresh, sk_anim **anim) {
  json_t *j;
  size_t bound;
  /* the tree's bound first, as an upload's body reserves it */
  int lrc = sk_json_load_budgeted(budget, text, len, &j, &bound, NULL);
  if (lrc != 0) {
    sk_budget_release(budget, bound);
    return lrc == SK_EBUSY ? SK_EBUSY : SK_EFORMAT;
  }
  json_object_del(j, "mesh"); /* the default mesh: the record's own part */
  int rc = sk_json_parse_skeleton_anim(j, "", 0, fresh, anim, NULL);
  json_decref(j);
  sk_budget_release(budget, bound);
  if (!rc && *anim == NULL) /* a Babylon skeleton kept for its text alone (a later retarget) */
    rc = sk_anim_create_babylon_empty((*fresh)->count, anim);
  if (!rc && ((*anim)->source = malloc(len)) == NULL)
    rc = SK_ENOMEM;
  if (rc) {
    sk_skeleton_destroy(*fresh);
    sk_anim_destroy(*anim);
    *fresh = NULL;
    *anim = NULL;
    return rc;
  }
  memcpy((*anim)->source, text, len);
  (*anim)->source_len = len;
  return 0;
}

/* A record's bytes back to the skeleton and: for a glTF one, its clips,
 * default mesh and skins list (rebuilt from the file kept in the record);
 * for a Babylon JSON text, its clips; a JSON one's mesh is in the record.
 * Touches no cache state. Each parse is reserved in `budget` first (NULL:
 * not counted): SK_EBUSY when it does not fit now, SK_ENOMEM, or SK_EFORMAT
 * for a record this build cannot read back (damaged). */
static int decode_record(sk_budget *budget, const void *data, size_t len, sk_cache_loaded *out) {
  sk_record rec;
  memset(out, 0, sizeof *out);
  out->skin = -1;
  int rc = sk_record_decode(data, len, &rec);
  if (rc)
    return rc;
  out->skel = rec.skel;
  rec.skel = NULL;
  if (rec.gltf != NULL && rec.json) {
    /* A Babylon text: the record is the skeleton, the text gives the clips. */
    sk_skeleton *fresh = NULL;
    rc = babylon_clips(budget, rec.gltf, rec.gltf_len, &fresh, &out->anim);
    if (!rc && (fresh->count != out->skel->count || out->anim->bone_count != out->skel->count))
      rc = SK_EFORMAT;
    sk_skeleton_destroy(fresh);
  }
  if (rec.gltf != NULL && !rec.json) {
    /* The record is the skeleton (PATCHes included); the file only gives
     * back the clips, mesh and skins, which never change. */
    sk_skeleton *fresh = NULL;
    size_t estimate;
    sk_gltf_extra x;
    rc = sk_gltf_import_budgeted(budget, rec.gltf, rec.gltf_len, rec.skin, 0, 0, &estimate, true, &fresh,
                                 &out->anim, &x, NULL);
    if (!rc && (fresh->count != out->skel->count || out->anim->bone_count != out->skel->count))
      rc = SK_EFORMAT;
    sk_skeleton_destroy(fresh);
    sk_anim *more = NULL;
    if (!rc && rec.clips != NULL && (rc = sk_retarget_clips_decode(out->anim, rec.clips, rec.clips_len, &more)) == 0) {
      sk_anim_destroy(out->anim); /* the file's clips, then the retargeted ones */
      out->anim = more;
    }
    if (!rc) {
      out->mesh_json = x.mesh_json;
      out->skins_json = x.skins_json;
      out->skin = (int32_t)x.skin;
      out->geom = x.geom;
    } else {
      sk_gltf_extra_clear(&x);
    }
  } else if (!rc) {
    out->mesh_json = rec.mesh_json;
    rec.mesh_json = NULL;
    /* written by a PUT that parsed it; anything else is not this record */
    json_t *j = out->mesh_json ? json_loads(out->mesh_json, 0, NULL) : NULL;
    bool has;
    sk_mesh m;
    if (out->mesh_json != NULL && (j == NULL || sk_ops_parse_mesh(j, "/mesh", &has, &m, NULL) != 0))
      rc = SK_EFORMAT;
    json_decref(j);
  }
  sk_record_clear(&rec);
  if (rc)
    sk_cache_loaded_clear(out);
  return rc == 0 || rc == SK_EBUSY || rc == SK_ENOMEM ? rc : SK_EFORMAT;
}

/* Builds an entry from loaded parts (all stolen). */
static int entry_from_loaded(sk_cache *c, const char *id, sk_cache_loaded *l, sk_cache_entry **out) {
  int rc = new_entry(c, id, l->skel, l->anim, l->mesh_json, l->skins_json, l->skin, l->geom, out);
  l->skel = NULL;
  l->anim = NULL;
  sk_cache_loaded_clear(l);
  return rc;
}

/* Builds an entry from a record's bytes. */
static int entry_from_record(sk_cache *c, const char *id, const void *data, size_t len, sk_cache_entry **out) {
  sk_cache_loaded l;
  *out = NULL;
  int rc = decode_record(c->budget, data, len, &l);
  return rc ? rc : entry_from_loaded(c, id, &l, out);
}

bool sk_cache_stored_only(sk_cache *c, const char *id) {
  const sk_cache_entry *e = *find_slot(c, id);
  return c->store != NULL && e != NULL && !e->tombstone && e->model == NULL;
}

int sk_cache_load_stored(sk_cache *c, const char *id, sk_cache_loaded *out) {
  void *data;
  size_t len;
  memset(out, 0, sizeof *out);
  if (c->store == NULL)
    return SK_ENOTFOUND;
  int rc = sk_store_get(c->store, id, &data, &len);
  if (rc) /* a file that fails its checks is damaged; one that is gone is not */
    return rc == SK_EFORMAT ? SK_EFORMAT : SK_ENOTFOUND;
  rc = decode_record(c->budget, data, len, out);
  free(data);
  if (rc == 0) { /* here, where the record is decoded (the routes' pool), not where it is adopted */
    sk_sampler_share(out->anim, SK_SAMPLER_SHARE_MAX);
    sk_anim_additive_share(out->anim, out->skel, SK_ANIM_ADDITIVE_SHARE_MAX);
  }
  return rc;
}

int sk_cache_adopt_stored(sk_cache *c, const char *id, sk_cache_loaded *in) {
  if (!sk_cache_stored_only(c, id)) { /* a PUT, DELETE or another reload won meanwhile */
    sk_cache_loaded_clear(in);
    return 0;
  }
  /* The evicted version comes back under its number: the skeleton did not
   * change, so its ETag (sk_etag) must not either. */
  const uint64_t version = (*find_slot(c, id))->version;
  sk_cache_entry *e;
  int rc = entry_from_loaded(c, id, in, &e);
  if (rc)
    return rc;
  e->version = version;
  link_entry(c, e, NULL);
  c->reloads++;
  evict(c, e);
  if (c->count > c->nbuckets)
    grow(c);
  return 0;
}

static int reload(sk_cache *c, const char *id, sk_cache_entry **out) {
  void *data;
  size_t len;
  *out = NULL;
  if (c->store == NULL)
    return SK_ENOTFOUND;
  int rc = sk_store_get(c->store, id, &data, &len);
  if (rc) {
    if (rc == SK_EFORMAT)
      sk_cache_drop_damaged(c, id);
    return SK_ENOTFOUND;
  }
  const sk_cache_entry *ghost = *find_slot(c, id);
  const uint64_t version = ghost != NULL ? ghost->version : 0;
  sk_cache_entry *e;
  rc = entry_from_record(c, id, data, len, &e);
  free(data);
  if (rc == SK_EFORMAT)
    sk_cache_drop_damaged(c, id);
  if (rc)
    return rc;
  if (version != 0) /* as in sk_cache_adopt_stored */
    e->version = version;
  link_entry(c, e, NULL);
  sk_cache_entry_ref(e);
  *out = e;
  evict(c, e);
  if (c->count > c->nbuckets)
    grow(c);
  return 0;
}

int sk_cache_put_full(sk_cache *c, const char *id, sk_skeleton *skel, sk_anim *anim, const sk_cache_source *src,
                      bool *replaced, sk_cache_entry **out) {
  if (replaced)
    *replaced = false;
  if (out)
    *out = NULL;
  size_t len = strlen(id);
  if (!sk_cache_id_valid(id, len)) {
    sk_skeleton_destroy(skel);
    sk_anim_destroy(anim);
    return SK_EINVAL;
  }
  c->evicted_n = 0;
  sk_cache_entry *e;
  int rc;
  if (src != NULL && !src->keep) {
    rc = new_entry(c, id, skel, anim, src->mesh_json, src->skins_json, src->skins_json ? src->skin_index : -1,
                   src->geom, &e);
  } else {
    /* A changed copy (PATCH, /rest): same mesh and skins as the entry it
     * replaces, which the caller just read (resident unless evicted since:
     * then its record says, at the cost of a reload). */
    sk_cache_entry *old = *find_slot(c, id);
    sk_cache_loaded l = {0};
    l.skin = -1;
    if (old != NULL && !old->tombstone && old->model != NULL) {
      rc = new_entry(c, id, skel, anim, old->model->mesh_json, old->model->skins_json, old->model->skin, old->model->geom, &e);
    } else {
      if (sk_cache_load_stored(c, id, &l) != 0) {
        memset(&l, 0, sizeof l);
        l.skin = -1;
      }
      rc = new_entry(c, id, skel, anim, l.mesh_json, l.skins_json, l.skin, l.geom, &e);
      sk_cache_loaded_clear(&l);
    }
  }
  if (rc)
    return rc;
  /* Durable before anyone can see it: the client hears 2xx only after this. */
  if (c->store != NULL && (rc = persist(c, id, e->model->skel, src, e->model->mesh_json)) != 0) {
    sk_cache_entry_unref(e);
    return rc;
  }
  link_entry(c, e, replaced);
  if (out) {
    sk_cache_entry_ref(e);
    *out = e;
  }
  evict(c, e);
  if (c->count > c->nbuckets)
    grow(c);
  return 0;
}

int sk_cache_put(sk_cache *c, const char *id, sk_skeleton *skel, bool *replaced, sk_cache_entry **out) {
  static const sk_cache_source json_source = {0};
  return sk_cache_put_full(c, id, skel, NULL, &json_source, replaced, out);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void sk_cache_set_eager_load(sk_cache *c, double seconds) {
  c->eager_ns = seconds > 0 ? (uint64_t)(seconds * 1e9) : 0;
}

typedef struct {
  sk_cache *c;
  uint64_t until; /* now_ns() past which records are listed stored-only */
  int loaded;
  void (*skipped)(void *arg, const char *file, const char *why);
  void *arg;
} load_ctx;

/* A damaged record: counted, and told to the attach's callback (the log). */
static void count_skipped(sk_cache *c, const char *file, const char *why) {
  c->damaged++;
  if (c->skipped != NULL)
    c->skipped(c->skipped_arg, file, why);
}

static void store_skipped(void *arg, const char *file, const char *why) {
  load_ctx *l = arg;
  count_skipped(l->c, file, why);
}

/* Lists a record whose read-back does not fit the budget at start-up as
 * stored only (as if evicted), from its skeleton part alone. */
static int stored_only_entry(sk_cache *c, const char *key, const void *data, size_t len) {
  sk_record rec;
  int rc = sk_record_decode(data, len, &rec);
  if (rc) {
    count_skipped(c, key, "not a skeleton record of this build");
    return rc == SK_ENOMEM ? rc : 0;
  }
  sk_cache_entry *ghost = calloc(1, sizeof *ghost);
  if (ghost == NULL) {
    sk_record_clear(&rec);
    return SK_ENOMEM;
  }
  sk_list_init(&ghost->lru);
  snprintf(ghost->id, sizeof ghost->id, "%s", key);
  ghost->bone_count = rec.skel->count;
  ghost->bytes = sizeof *ghost;
  ghost->version = ++c->next_version;
  ghost->refs = 1;
  sk_record_clear(&rec);
  link_entry(c, ghost, NULL);
  if (c->count > c->nbuckets)
    grow(c);
  return 0;
}

void sk_cache_drop_damaged(sk_cache *c, const char *id) {
  sk_cache_entry **slot = find_slot(c, id);
  if (c->store == NULL || *slot == NULL || (*slot)->tombstone || (*slot)->model != NULL)
    return; /* a put, delete or reload came first */
  char file[SK_CACHE_ID_MAX + 8];
  snprintf(file, sizeof file, "%s.rec", id);
  remove_entry(c, slot);
  count_skipped(c, file, "damaged while its skeleton was evicted: dropped from the listing, the file kept");
}

static int load_one(void *arg, const char *key, const void *data, size_t len) {
  load_ctx *l = arg;
  sk_cache_entry *e;
  if (now_ns() >= l->until) /* read back on first use, on the pool: start-up stays bounded */
    return stored_only_entry(l->c, key, data, len);
  int rc = entry_from_record(l->c, key, data, len, &e);
  if (rc == SK_ENOMEM)
    return rc;
  if (rc == SK_EBUSY) /* its parse does not fit the budget now: read back on first use */
    return stored_only_entry(l->c, key, data, len);
  if (rc) {
    count_skipped(l->c, key, "not a skeleton record of this build");
    return 0;
  }
  link_entry(l->c, e, NULL);
  evict(l->c, NULL);
  if (l->c->count > l->c->nbuckets)
    grow(l->c);
  l->loaded++;
  return 0;
}

int sk_cache_attach_store(sk_cache *c, sk_store *store, void (*skipped)(void *arg, const char *file, const char *why),
                          void *arg) {
  c->store = store;
  c->skipped = skipped;
  c->skipped_arg = arg;
  load_ctx l = {c, now_ns() + c->eager_ns, 0, skipped, arg};
  int rc = sk_store_load_all(store, load_one, store_skipped, &l);
  return rc < 0 ? rc : l.loaded;
}

int sk_cache_delete(sk_cache *c, const char *id) {
  sk_cache_entry **slot = find_slot(c, id);
  if (*slot == NULL)
    return SK_ENOTFOUND;
  if ((*slot)->tombstone) { /* already gone; the client says it is done with it */
    remove_entry(c, slot);
    return 0;
  }
  int rc = c->store != NULL ? sk_store_delete(c->store, id) : 0;
  if (rc != 0)
    return rc; /* SK_EIO, or SK_ENOSPACE on a read-only file system */
  remove_entry(c, slot);
  return 0;
}

void sk_cache_foreach(sk_cache *c, void (*fn)(void *arg, const sk_cache_entry *e), void *arg) {
  for (size_t i = 0; i < c->nbuckets; i++)
    for (sk_cache_entry *e = c->buckets[i]; e != NULL; e = e->hnext)
      if (!e->tombstone)
        fn(arg, e);
}

void sk_cache_get_stats(const sk_cache *c, sk_cache_stats *st) {
  st->count = c->resident;
  st->stored = c->count;
  st->reloads = c->reloads;
  st->bytes = c->bytes;
  st->max_bytes = c->max_bytes;
  st->evictions = c->evictions;
  st->tombstones = c->tombstones;
  st->damaged = c->damaged;
  st->tombstone_bytes = c->tombstones * sizeof(sk_cache_entry);
}

void sk_cache_set_budget(sk_cache *c, sk_budget *budget) {
  size_t now = c->bytes + c->tombstones * sizeof(sk_cache_entry);
  sk_budget_release(c->budget, now);
  c->budget = budget;
  sk_budget_charge(budget, now);
}

bool sk_cache_evicted(const sk_cache *c, const char *id) {
  const sk_cache_entry *e = *find_slot((sk_cache *)c, id);
  return e != NULL && e->tombstone;
}

size_t sk_cache_last_evicted(const sk_cache *c, const char **ids, size_t max) {
  for (size_t i = 0; i < max && i < c->evicted_n && i < SK_CACHE_EVICTED_LIST; i++)
    ids[i] = c->evicted[i];
  return c->evicted_n;
}

bool sk_cache_store_full(const sk_cache *c) { return c->store != NULL && sk_store_full(c->store); }
