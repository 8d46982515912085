#include "sk_cache.h"

#include <stdlib.h>
#include <string.h>

#include "sk_error.h"
#include "sk_mat.h"

struct sk_cache {
  sk_cache_entry **buckets;
  size_t nbuckets; /* power of two */
  size_t count, bytes, max_bytes;
  uint64_t evictions, next_version;
  sk_cache_entry *lru_head, *lru_tail; /* head = most recently used */
};

static uint64_t hash_id(const char *id) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *id; id++)
    h = (h ^ (unsigned char)*id) * 1099511628211ull;
  return h;
}

bool sk_cache_id_valid(const char *id, size_t len) {
  if (len < 1 || len > SK_CACHE_ID_MAX)
    return false;
  for (size_t i = 0; i < len; i++) {
    char ch = id[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
          ch == '_' || ch == '-'))
      return false;
  }
  return true;
}

size_t sk_cache_skeleton_bytes(const sk_skeleton *s) {
  /* + about 96 bytes per bone for the kernel rig (opaque; inverse bind + step) */
  return sizeof(sk_cache_entry) + sizeof *s + s->count * (sizeof *s->bones + 96) + s->names_size +
         (s->hash_mask + 1) * sizeof *s->hash;
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
  *out = c;
  return 0;
}

void sk_cache_entry_ref(sk_cache_entry *e) { __atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED); }

void sk_cache_entry_unref(sk_cache_entry *e) {
  if (e == NULL)
    return;
  /* acq_rel: the thread that frees must see every other holder's reads done. */
  if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    sk_rig_destroy(e->rig);
    sk_skeleton_destroy(e->skel);
    free(e);
  }
}

static void lru_unlink(sk_cache *c, sk_cache_entry *e) {
  if (e->lru_prev)
    e->lru_prev->lru_next = e->lru_next;
  else
    c->lru_head = e->lru_next;
  if (e->lru_next)
    e->lru_next->lru_prev = e->lru_prev;
  else
    c->lru_tail = e->lru_prev;
  e->lru_prev = e->lru_next = NULL;
}

static void lru_push_front(sk_cache *c, sk_cache_entry *e) {
  e->lru_prev = NULL;
  e->lru_next = c->lru_head;
  if (c->lru_head)
    c->lru_head->lru_prev = e;
  c->lru_head = e;
  if (c->lru_tail == NULL)
    c->lru_tail = e;
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
  lru_unlink(c, e);
  e->linked = false;
  c->count--;
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

sk_cache_entry *sk_cache_get(sk_cache *c, const char *id) {
  sk_cache_entry *e = *find_slot(c, id);
  if (e == NULL)
    return NULL;
  if (c->lru_head != e) {
    lru_unlink(c, e);
    lru_push_front(c, e);
  }
  sk_cache_entry_ref(e);
  return e;
}

/* Does once, at publication, the TRS decomposition Babylon does lazily on
 * a bone's first partial setter (sk_skeleton.c's local_decompose, the same
 * sk_mat_decompose call): every pose that sets a rotation would otherwise
 * decompose the same stored matrix again (perf: ~40 % of a batch). The
 * values are those the lazy path computes, so results do not change.
 * TODO(core): an sk_skeleton_prepare() in sk_skeleton.c would keep this
 * write inside the module that owns the struct. */
static void warm_decompose(sk_skeleton *s) {
  for (size_t i = 0; i < s->count; i++) {
    sk_local *l = &s->bones[i].local;
    if (l->need_decompose) {
      l->need_decompose = false;
      sk_mat_decompose(l->matrix, l->scaling, l->rotation, l->position);
    }
  }
}

int sk_cache_put(sk_cache *c, const char *id, sk_skeleton *skel, bool *replaced, sk_cache_entry **out) {
  if (replaced)
    *replaced = false;
  if (out)
    *out = NULL;
  size_t len = strlen(id);
  if (!sk_cache_id_valid(id, len)) {
    sk_skeleton_destroy(skel);
    return SK_EINVAL;
  }
  sk_cache_entry *e = calloc(1, sizeof *e);
  if (e == NULL) {
    sk_skeleton_destroy(skel);
    return SK_ENOMEM;
  }
  memcpy(e->id, id, len + 1);
  warm_decompose(skel);
  e->skel = skel;
  if (sk_rig_create(skel, &e->rig) != 0) {
    sk_skeleton_destroy(skel);
    free(e);
    return SK_ENOMEM;
  }
  e->bytes = sk_cache_skeleton_bytes(skel);
  e->version = ++c->next_version;
  e->refs = 1; /* the table's */
  sk_cache_entry **slot = find_slot(c, id);
  if (*slot != NULL) {
    if (replaced)
      *replaced = true;
    remove_entry(c, slot);
    slot = find_slot(c, id);
  }
  *slot = e;
  e->linked = true;
  lru_push_front(c, e);
  c->count++;
  c->bytes += e->bytes;
  if (out) {
    sk_cache_entry_ref(e);
    *out = e;
  }
  while (c->max_bytes > 0 && c->bytes > c->max_bytes && c->lru_tail != e) {
    remove_entry(c, find_slot(c, c->lru_tail->id));
    c->evictions++;
  }
  if (c->count > c->nbuckets)
    grow(c);
  return 0;
}

int sk_cache_delete(sk_cache *c, const char *id) {
  sk_cache_entry **slot = find_slot(c, id);
  if (*slot == NULL)
    return SK_ENOTFOUND;
  remove_entry(c, slot);
  return 0;
}

void sk_cache_foreach(sk_cache *c, void (*fn)(void *arg, const sk_cache_entry *e), void *arg) {
  for (sk_cache_entry *e = c->lru_head; e != NULL; e = e->lru_next)
    fn(arg, e);
}

void sk_cache_get_stats(const sk_cache *c, sk_cache_stats *st) {
  st->count = c->count;
  st->bytes = c->bytes;
  st->max_bytes = c->max_bytes;
  st->evictions = c->evictions;
}
