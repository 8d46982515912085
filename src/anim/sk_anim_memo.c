/* sk_anim_memo: additive keys kept per (clip, reference) (sk_anim_memo.h). */
#include "sk_anim_memo.h"

#include <stdlib.h>
#include <string.h>

#include "sk_banim_add.h"

/* One (clip, reference) made additive: a glTF clip's channel keys (dv) or
 * a Babylon-format clip's layer. */
typedef struct sk_anim_memo {
  size_t clip;
  double ref; /* glTF: the reference frame; Babylon: the reference in seconds */
  bool babylon;
  size_t bytes;
  sk_budget *budget; /* borrowed: where `bytes` is reserved, or NULL */
  double **dv; /* glTF: one per channel, NULL where none */
  size_t ndv;
  sk_banim_add_layer layer; /* Babylon */
} sk_anim_memo;

static void memo_close(sk_anim_memo *m) {
  if (m == NULL)
    return;
  for (size_t k = 0; m->dv != NULL && k < m->ndv; k++)
    free(m->dv[k]);
  free(m->dv);
  sk_banim_add_layer_close(&m->layer);
  free(m);
}

static bool gltf_channel(const sk_anim_channel *ch) { return ch->path != SK_ANIM_MATRIX && ch->values != NULL; }

/* The clip's keys, or 0 past SK_ANIM_MEMO_KEYS (not kept: checked before
 * any work). */
static size_t clip_keys(const sk_anim_clip *c) {
  size_t keys = 0;
  for (size_t k = 0; k < c->channel_count; k++)
    if ((keys += c->channels[k].count) > SK_ANIM_MEMO_KEYS)
      return 0;
  return keys;
}

/* What an entry of clip `clip` holds, known before it is made. */
static size_t entry_bytes(const sk_anim *a, size_t clip, bool babylon) {
  const sk_anim_clip *c = &a->clips[clip];
  if (babylon)
    return sizeof(sk_anim_memo) + sk_banim_add_layer_bound(a, clip);
  size_t n = sizeof(sk_anim_memo) + c->channel_count * sizeof(double *);
  for (size_t k = 0; k < c->channel_count; k++) {
    const sk_anim_channel *ch = &c->channels[k];
    if (gltf_channel(ch))
      n += ch->count * (ch->path == SK_ANIM_ROTATION ? 4u : 3u) * (ch->interp == SK_ANIM_CUBICSPLINE ? 3u : 1u) *
           sizeof(double);
  }
  return n;
}

static sk_anim_memo *make_gltf(const sk_anim *a, size_t clip, double ref_frame) {
  const sk_anim_clip *c = &a->clips[clip];
  sk_anim_memo *m = calloc(1, sizeof *m);
  if (m == NULL || (m->dv = calloc(c->channel_count ? c->channel_count : 1, sizeof *m->dv)) == NULL) {
    memo_close(m);
    return NULL;
  }
  *m = (sk_anim_memo){.clip = clip, .ref = ref_frame, .dv = m->dv, .ndv = c->channel_count};
  for (size_t k = 0; k < c->channel_count; k++)
    if (gltf_channel(&c->channels[k]) && sk_anim__additive_values(&c->channels[k], ref_frame, &m->dv[k]) != 0) {
      memo_close(m);
      return NULL;
    }
  return m;
}

static sk_anim_memo *make_babylon(const sk_anim *a, size_t clip, double reference) {
  sk_anim_memo *m = calloc(1, sizeof *m);
  if (m == NULL)
    return NULL;
  *m = (sk_anim_memo){.clip = clip, .ref = reference, .babylon = true};
  if (sk_banim_add_layer_make(a, clip, reference, NULL, &m->layer) != 0) {
    memo_close(m);
    return NULL;
  }
  return m;
}

/* Reserves `bytes` in `b` where it has room, without counting a refusal
 * when it plainly has none (the caller then makes its keys as before, and
 * sk_budget's refusals count answers refused). */
static bool has_room(const sk_budget *b, size_t bytes) {
  sk_budget_stats st;
  if (b == NULL)
    return true;
  sk_budget_get_stats(b, &st);
  return st.limit == 0 || (bytes <= st.limit && st.used <= st.limit - bytes);
}

static bool reserve(sk_budget *b, size_t bytes) { return has_room(b, bytes) && sk_budget_reserve(b, bytes) == 0; }

static bool same_key(const sk_anim_memo *m, size_t clip, double ref, bool babylon) {
  return m->clip == clip && m->ref == ref && m->babylon == babylon;
}

/* The published entry of (clip, ref) or NULL; *slot: the first free slot
 * (SK_ANIM_MEMO_SLOTS when none), *held: the bytes the entries before it hold. */
static const sk_anim_memo *memo_find(const sk_anim *a, size_t clip, double ref, bool babylon, size_t *slot,
                                     size_t *held) {
  size_t k = 0, h = 0;
  const sk_anim_memo *found = NULL;
  for (; k < SK_ANIM_MEMO_SLOTS && found == NULL; k++) {
    const sk_anim_memo *m = __atomic_load_n(&a->memo[k], __ATOMIC_ACQUIRE);
    if (m == NULL)
      break;
    if (same_key(m, clip, ref, babylon))
      found = m;
    else
      h += m->bytes;
  }
  *slot = k, *held = h;
  return found;
}

/* Whether an entry of `bytes` fits the entries' cap next to `held`. */
static bool fits(size_t held, size_t bytes) {
  return bytes <= SK_ANIM_MEMO_MAX - (held < SK_ANIM_MEMO_MAX ? held : SK_ANIM_MEMO_MAX);
}

/* The entry of (clip, ref), made and published here at the first call;
 * NULL where nothing is kept. */
static const sk_anim_memo *memo_get(const sk_anim *ca, size_t clip, double ref, bool babylon) {
  sk_anim *a = (sk_anim *)ca; /* the slots are the one mutable, atomic part of published clips */
  if (a == NULL || clip >= a->clip_count || __atomic_load_n(&a->memo_off, __ATOMIC_RELAXED))
    return NULL;
  size_t k, held;
  const sk_anim_memo *found = memo_find(a, clip, ref, babylon, &k, &held);
  if (found != NULL)
    return found;
  if (k == SK_ANIM_MEMO_SLOTS || clip_keys(&a->clips[clip]) == 0)
    return NULL;
  sk_budget *b = __atomic_load_n(&a->memo_budget, __ATOMIC_ACQUIRE);
  const size_t bytes = entry_bytes(a, clip, babylon);
  if (!fits(held, bytes) || !reserve(b, bytes))
    return NULL;
  sk_anim_memo *made = babylon ? make_babylon(a, clip, ref) : make_gltf(a, clip, ref);
  if (made == NULL) {
    sk_budget_release(b, bytes);
    return NULL;
  }
  made->bytes = bytes, made->budget = b;
  const sk_anim_memo *won = NULL;
  for (; k < SK_ANIM_MEMO_SLOTS && won == NULL; k++) {
    sk_anim_memo *seen = NULL;
    if (__atomic_compare_exchange_n(&a->memo[k], &seen, made, false, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
      return made;
    if (same_key(seen, clip, ref, babylon)) /* another thread published it first */
      won = seen;
  }
  sk_budget_release(b, made->bytes);
  memo_close(made);
  return won;
}

const double *const *sk_anim_memo_gltf(const sk_anim *a, size_t clip, double ref_frame) {
  if (a == NULL || a->babylon)
    return NULL;
  const sk_anim_memo *m = memo_get(a, clip, ref_frame, false);
  return m != NULL ? (const double *const *)m->dv : NULL;
}

const sk_banim_add_layer *sk_anim_memo_babylon(const sk_anim *a, size_t clip, double reference) {
  if (a == NULL || !a->babylon)
    return NULL;
  const sk_anim_memo *m = memo_get(a, clip, reference, true);
  return m != NULL ? &m->layer : NULL;
}

/* memo_get's checks, without making or reserving anything. */
static sk_anim_keys_source source_of(const sk_anim *a, size_t clip, double ref, bool babylon,
                                     sk_anim_memo_pending *p) {
  if (__atomic_load_n(&a->memo_off, __ATOMIC_RELAXED))
    return SK_ANIM_KEYS_MADE;
  size_t k, held;
  if (memo_find(a, clip, ref, babylon, &k, &held) != NULL)
    return SK_ANIM_KEYS_KEPT;
  if (p->slots >= SK_ANIM_MEMO_SLOTS - k || clip_keys(&a->clips[clip]) == 0)
    return SK_ANIM_KEYS_MADE;
  const size_t bytes = entry_bytes(a, clip, babylon);
  const sk_budget *b = __atomic_load_n(&a->memo_budget, __ATOMIC_ACQUIRE);
  if (p->bytes > SK_ANIM_MEMO_MAX || !fits(held + p->bytes, bytes) || !has_room(b, p->bytes + bytes))
    return SK_ANIM_KEYS_MADE;
  p->slots++, p->bytes += bytes;
  return SK_ANIM_KEYS_ROOM;
}

sk_anim_keys_source sk_anim_memo_source(const sk_anim *a, size_t clip, double reference, sk_anim_memo_pending *p) {
  if (a == NULL || clip >= a->clip_count)
    return SK_ANIM_KEYS_MADE;
  if (a->babylon) /* sk_pose_anim's babylon_adds_make: kept at upload, else the memo */
    return reference == 0 ? (sk_banim_add_kept_layer(a, clip) != NULL ? SK_ANIM_KEYS_KEPT : SK_ANIM_KEYS_MADE)
                          : source_of(a, clip, reference, true, p);
  /* sk_layers' kept_keys: the frame sk_anim__reference_frame makes of it */
  const sk_anim_layer_ext x = {.reference = reference};
  const double ref = sk_anim__reference_frame(&x);
  if (ref == 0)
    return sk_anim_additive_memory(a) != 0 ? SK_ANIM_KEYS_KEPT : SK_ANIM_KEYS_MADE;
  return source_of(a, clip, ref, false, p);
}

void sk_anim_memo_set_budget(sk_anim *a, sk_budget *b) {
  if (a != NULL)
    __atomic_store_n(&a->memo_budget, b, __ATOMIC_RELEASE);
}

void sk_anim_memo_set_off(sk_anim *a, bool off) {
  if (a != NULL)
    __atomic_store_n(&a->memo_off, off, __ATOMIC_RELAXED);
}

size_t sk_anim_memo_memory(const sk_anim *a) {
  size_t n = 0;
  for (size_t k = 0; a != NULL && k < SK_ANIM_MEMO_SLOTS; k++) {
    const sk_anim_memo *m = __atomic_load_n(&a->memo[k], __ATOMIC_ACQUIRE);
    n += m != NULL ? m->bytes : 0;
  }
  return n;
}

void sk_anim__memo_free(sk_anim *a) {
  for (size_t k = 0; k < SK_ANIM_MEMO_SLOTS; k++) {
    if (a->memo[k] != NULL)
      sk_budget_release(a->memo[k]->budget, a->memo[k]->bytes);
    memo_close(a->memo[k]);
    a->memo[k] = NULL;
  }
}
