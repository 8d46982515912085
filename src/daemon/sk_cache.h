/* sk_cache: the daemon's skeleton store, keyed by id.
 *
 * Entries are immutable once published and reference-counted: a request (or
 * a thread-pool job) holds a reference for as long as it reads the skeleton,
 * so replacing, patching, deleting or evicting an id never frees what a
 * reader uses, and a reader never sees a half-updated skeleton. Updates are
 * copy-on-write: clone the current entry's skeleton, change the clone, then
 * publish it with sk_cache_put(), which swaps it in atomically from the
 * point of view of every later reader.
 *
 * With a store attached (--data-dir), every put is written through to disk
 * before it returns (so before the client hears 2xx), a delete removes the
 * record, and eviction only drops the memory: the id stays listed as a
 * "stored" entry and the next get reloads it from its record, bit for bit
 * the skeleton that was evicted (sk_record), with its glTF clips
 * rebuilt from the original file kept in the record.
 *
 * The table itself (lookup, LRU order, byte accounting) belongs to the loop
 * thread and is not locked. Only sk_cache_entry_ref/unref may run on other
 * threads; they are atomic. */
#ifndef SK_CACHE_H
#define SK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_anim.h"
#include "sk_budget.h"
#include "sk_list.h"
#include "sk_model.h"
#include "sk_skeleton.h"
#include "sk_store.h"

#define SK_CACHE_ID_MAX 128

/* A published version of one id: its model (what the pipeline takes) and
 * the cache's own bookkeeping. */
typedef struct sk_cache_entry {
  char id[SK_CACHE_ID_MAX + 1];
  sk_model *model;   /* a reference; NULL for an entry only stored (evicted, on disk) and for a tombstone */
  size_t bone_count; /* model->bone_count, kept when the model is evicted */
  size_t bytes;      /* what this entry counts against --cache-mb */
  uint64_t version;  /* increases on every put of any id; kept across an eviction and reload */
  /* Private below. */
  int refs;          /* atomic */
  struct sk_cache_entry *hnext;
  sk_list lru; /* the LRU list's node; a tombstone's links the tombstone list */
  bool linked;
  bool tombstone;    /* evicted without a store: only the id is left, for a clear 404 */
} sk_cache_entry;

typedef struct sk_cache sk_cache;

/* Creates an empty cache holding at most `max_bytes` (0: unlimited). *out is new. */
int sk_cache_create(size_t max_bytes, sk_cache **out);
/* Drops the cache's references; entries still referenced live on. */
void sk_cache_destroy(sk_cache *c);

/* True when `id` (`len` bytes, NUL included) is a valid id:
 * sk_store_id_valid, the one rule with or without a store. */
bool sk_cache_id_valid(const char *id, size_t len);

/* The entry for `id` as a new reference (release with sk_cache_entry_unref),
 * marked most recently used; NULL when absent. */
sk_cache_entry *sk_cache_get(sk_cache *c, const char *id);

/* Publishes `skel` (stolen, on failure too) under `id` with its batch-kernel
 * rig (built here, once per stored version), replacing any
 * previous entry. Evicts least recently used entries while the total is
 * over the limit; the new entry itself is never evicted by its own put.
 * *replaced (may be NULL) says whether `id` existed. *out (may be NULL)
 * receives a new reference to the published entry. SK_EINVAL for a bad id,
 * SK_ENOMEM. */
int sk_cache_put(sk_cache *c, const char *id, sk_skeleton *skel, bool *replaced, sk_cache_entry **out);

/* Where a skeleton came from, kept in its record so a reload can rebuild
 * what the snapshot does not hold (glTF clips). */
typedef struct sk_cache_source {
  const void *gltf;     /* the glTF/GLB body, or NULL for JSON skeletons */
  size_t gltf_len;
  const char *skin;     /* the ?skin= selector used, or NULL */
  /* What the entry shows besides the skeleton (borrowed, copied): the
   * default mesh chain as JSON (NULL: none; recorded for JSON skeletons,
   * recomputed from the file for glTF ones) and, for glTF, the skins list
   * and the selected skin's index. */
  const char *mesh_json;
  const char *skins_json;
  int32_t skin_index;
  bool json;            /* `gltf` holds Babylon skeleton JSON text: its clips are re-parsed on load */
  sk_geom *geom;        /* borrowed (the entry takes a reference), or NULL: the skinned primitives */
  /* The record, already written by sk_cache_stage (borrowed; NULL or not
   * ready: the put writes it). The put commits it, or leaves it ready for
   * the caller's sk_cache_discard when it fails before the store. */
  sk_store_staged *staged;
  /* Appended: the retargeted clips' bytes (sk_retarget_clips_encode; NULL:
   * none), kept in the record and appended to the file's clips at a reload;
   * with `keep`, the source, mesh and skins are the replaced entry's (as a
   * NULL source keeps them) and only the clips are new. */
  const void *clips;
  size_t clips_len;
  bool keep;
} sk_cache_source;

/* Writes the record that sk_cache_put_full(c, id, skel, ..., src) would
 * write, under a temporary name (sk_store_stage): the encoding, its CRC,
 * the write and its fsync, which took the loop thread 10-25 ms for a
 * 1.9 MB glTF upload. Any thread: reads only the cache's store, which is
 * set before serving; prepares `skel` (sk_skeleton_prepare), as the put
 * would. Without a store: 0, nothing staged. */
int sk_cache_stage(const sk_cache *c, const char *id, sk_skeleton *skel, const sk_cache_source *src,
                   sk_store_staged *out);
/* Removes a staged record that was not committed (NULL or not ready:
 * nothing). Loop thread. */
void sk_cache_discard(sk_cache *c, sk_store_staged *st);

/* sk_cache_put with glTF clips (`anim` stolen, may be NULL) and the source
 * to record. `src` NULL keeps the source of the record being replaced (a
 * PATCH publishes a changed copy of a glTF skeleton), and the default mesh
 * and skins list of the entry being replaced. With a store, fails
 * with SK_EIO (nothing changed) when the record cannot be made durable. */
int sk_cache_put_full(sk_cache *c, const char *id, sk_skeleton *skel, sk_anim *anim, const sk_cache_source *src,
                      bool *replaced, sk_cache_entry **out);

/* Attaches a store (borrowed; outlives the cache) and loads every intact
 * record into the cache (evicting past the limit as usual; evicted ones stay
 * stored; past sk_cache_set_eager_load's time, or when a record's parse does
 * not fit the budget, listed stored only). `skipped(arg, file, why)` hears about damaged records. Returns
 * the number loaded, or a negative SK_E* code. */
int sk_cache_attach_store(sk_cache *c, sk_store *store, void (*skipped)(void *arg, const char *file, const char *why),
                          void *arg);

/* How long sk_cache_attach_store imports records (a glTF one is re-imported
 * from its file: 2-30 ms each) before it lists the rest as stored only
 * (their skeleton part decoded and checked, read back on first use, as if
 * evicted), so that start-up with thousands of records stays inside a
 * service manager's start timeout. Default SK_CACHE_EAGER_LOAD_S; 0: list
 * every record stored only. Call before attaching. */
#define SK_CACHE_EAGER_LOAD_S 2.0
void sk_cache_set_eager_load(sk_cache *c, double seconds);
/* A reload in two steps, so the slow part (reading the record, rebuilding
 * a glTF skeleton's clips: ~350 ms for a 3 MB file) runs off the loop
 * thread: sk_cache_stored_only says `id` was evicted but is on disk (the
 * next sk_cache_get would reload it where it is called);
 * sk_cache_load_stored reads and decodes its record into a new *out
 * without touching the cache (any thread: the store's files are replaced
 * by rename); sk_cache_adopt_stored (loop thread; steals all of *in)
 * publishes it as the entry of `id`, or drops it when a put, delete or
 * another reload came first. */
typedef struct sk_cache_loaded {
  sk_skeleton *skel;
  sk_anim *anim;
  char *mesh_json, *skins_json; /* as in sk_cache_entry */
  int32_t skin;
  sk_geom *geom; /* a reference, or NULL */
} sk_cache_loaded;
/* sk_cache_load_stored's codes: 0; SK_ENOTFOUND (no record); SK_EBUSY (its
 * parse, reserved in the cache's budget first, does not fit now: a 503);
 * SK_ENOMEM; SK_EFORMAT (the record is damaged: hand the id to
 * sk_cache_drop_damaged on the loop thread). */
bool sk_cache_stored_only(sk_cache *c, const char *id);
int sk_cache_load_stored(sk_cache *c, const char *id, sk_cache_loaded *out);
int sk_cache_adopt_stored(sk_cache *c, const char *id, sk_cache_loaded *in);
/* A stored-only `id` whose record turned out damaged: drops it from the
 * table (so listings agree with the 404 of its GET), counts it in
 * `damaged` and tells the attach's `skipped` callback (the log). The file
 * stays for inspection. Nothing when `id` is no longer stored-only. Loop
 * thread. */
void sk_cache_drop_damaged(sk_cache *c, const char *id);
/* Frees what `l` owns and zeroes it. */
void sk_cache_loaded_clear(sk_cache_loaded *l);

/* Removes `id`. 0 or SK_ENOTFOUND; with a store, SK_EIO or SK_ENOSPACE
 * (read-only) when the record cannot be removed (nothing changed). */
int sk_cache_delete(sk_cache *c, const char *id);

/* Calls `fn` on every entry, in memory or only stored (then `model` is
 * NULL; `id` and `bone_count` are set). Borrowed references,
 * valid during the call. */
void sk_cache_foreach(sk_cache *c, void (*fn)(void *arg, const sk_cache_entry *e), void *arg);

typedef struct sk_cache_stats {
  size_t count;  /* skeletons in memory */
  size_t stored; /* ids known: in memory, or evicted but on disk */
  size_t bytes, max_bytes;
  uint64_t evictions, reloads;
  size_t tombstones, tombstone_bytes; /* evicted without a store, remembered (not in `bytes`) */
  uint64_t damaged; /* records skipped at start-up or dropped at a read-back as damaged */
} sk_cache_stats;
void sk_cache_get_stats(const sk_cache *c, sk_cache_stats *st);

/* Adds a reference (any thread). */
void sk_cache_entry_ref(sk_cache_entry *e);
/* Drops a reference (any thread); the last one frees the entry. NULL is fine. */
void sk_cache_entry_unref(sk_cache_entry *e);

/* Counts the cache in `budget` (borrowed, outlives the cache; NULL: none)
 * from now on: what is cached now and every later change, tombstones
 * included. --cache-mb stays the cache's own cap inside the budget. */
void sk_cache_set_budget(sk_cache *c, sk_budget *budget);

/* Honest eviction without a store: an evicted id leaves a tombstone (its id,
 * about 300 bytes, counted) so later requests for it can say it was evicted
 * and must be sent again, instead of a plain "no such id". The newest
 * SK_CACHE_TOMBSTONES_MAX are kept; a PUT or DELETE of the id clears it. */
#define SK_CACHE_TOMBSTONES_MAX 4096
/* True when `id` was evicted (without a store) and not stored since. */
bool sk_cache_evicted(const sk_cache *c, const char *id);
/* Ids the last put evicted without a store: how many in all, and the
 * first `max` of them into ids[] (borrowed, valid until the next put). */
size_t sk_cache_last_evicted(const sk_cache *c, const char **ids, size_t max);
#define SK_CACHE_EVICTED_LIST 8
/* True when the attached store ran out of room on its last failed put and
 * no put succeeded since (sk_store_full); false without a store. */
bool sk_cache_store_full(const sk_cache *c);

/* Bytes a skeleton occupies, as counted against the limit. */
size_t sk_cache_skeleton_bytes(const sk_skeleton *s);

#endif
