/* sk_anim_memo: additive layers' keys made once per (clip, reference) and
 * kept with the clips.
 *
 * An additive layer plays its clip's keys made relative to its reference
 * frame. Reference 0, the default, is made for every clip where the clips
 * are published (sk_anim_additive_share). Any other reference is made here
 * the first time a request plays it and kept with the clips, so the next
 * request of the same (clip, reference), on any version that shares the
 * clips, reads the same keys instead of making them again: ozz-animation's
 * AdditiveAnimationBuilder builds additive clips once, offline, in the same
 * spirit. The keys are the same doubles the per-call path makes
 * (sk_anim__additive_values, sk_banim_add_layer_make), so the answers keep
 * their bytes.
 *
 * At most SK_ANIM_MEMO_SLOTS entries, each published once by a
 * compare-and-swap and read with acquire loads, never changed, freed with
 * the clips. An entry's bytes are reserved in the budget the publisher
 * named (sk_anim_memo_set_budget) and released when the clips are freed;
 * where the budget refuses, the slots are full, an entry would make more
 * than SK_ANIM_MEMO_KEYS keys or the entries would hold more than
 * SK_ANIM_MEMO_MAX bytes together, nothing is kept and the caller makes its
 * keys as before (so requests naming many references cannot hold the
 * budget that answers need). */
#ifndef SK_ANIM_MEMO_H
#define SK_ANIM_MEMO_H

#include <stdbool.h>
#include <stddef.h>

#include "sk_anim.h"
#include "sk_budget.h"

struct sk_banim_add_layer;

/* Keys an entry may be made of: what one request may make additive for its
 * own use (sk_layers.h's SK_LAYERS_KEEP_KEYS, SK_BANIM_ADD_KEEP_KEYS). */
#define SK_ANIM_MEMO_KEYS (1u << 18)
/* Bytes the entries of one clips hold together at most: what the clips
 * keep for reference 0 at most (SK_ANIM_ADDITIVE_SHARE_MAX). */
#define SK_ANIM_MEMO_MAX SK_ANIM_ADDITIVE_SHARE_MAX

/* The channels of glTF clip `clip` of `a` made additive against frame
 * `ref_frame` (> 0; sk_anim__reference_frame): dv[k] for channel k, NULL
 * where k is not a glTF channel (a matrix or no values). Borrowed, lives
 * with `a`; made and kept at the first call. NULL: not kept (the caller
 * makes its own). Any thread. */
const double *const *sk_anim_memo_gltf(const sk_anim *a, size_t clip, double ref_frame);

/* Babylon-format clip `clip` of `a` made additive against `reference`
 * seconds with no mask, as sk_banim_add_layer_make makes it; the clip must
 * pass sk_banim_add_check at `reference`. Borrowed, kept as above; NULL:
 * not kept. Any thread. */
const struct sk_banim_add_layer *sk_anim_memo_babylon(const sk_anim *a, size_t clip, double reference);

/* Where an additive layer's keys for (clip, `reference` seconds, as the
 * layer's "reference") come from, known without making any: KEPT already
 * (at upload for reference 0, or in an entry), ROOM (the first use would
 * keep them: a free slot, within the caps, room in the budget now) or MADE
 * by each use. `pending` is the room earlier ROOM answers of the same
 * request will take (start from zeros): a ROOM answer adds its entry to
 * it. For costing a request before it runs; ROOM may be MADE by the time
 * it runs, as other requests take the room. Any thread. */
typedef enum { SK_ANIM_KEYS_MADE, SK_ANIM_KEYS_ROOM, SK_ANIM_KEYS_KEPT } sk_anim_keys_source;
typedef struct sk_anim_memo_pending {
  size_t slots, bytes;
} sk_anim_memo_pending;
sk_anim_keys_source sk_anim_memo_source(const sk_anim *a, size_t clip, double reference, sk_anim_memo_pending *pending);

/* The budget entries are counted in (borrowed, must outlive `a`; NULL:
 * none), as the publisher of the clips sets it. Any thread. */
void sk_anim_memo_set_budget(sk_anim *a, sk_budget *b);
/* Off: every call answers NULL (a benchmark's per-call baseline). */
void sk_anim_memo_set_off(sk_anim *a, bool off);
/* Bytes the entries hold. */
size_t sk_anim_memo_memory(const sk_anim *a);
/* Frees the entries and releases their bytes (sk_anim_destroy). */
void sk_anim__memo_free(sk_anim *a);

#endif
