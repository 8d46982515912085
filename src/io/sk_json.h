/* sk_json: the JSON codec for skeletons, overrides and results.
 *
 * Parsing is strict: every number must be finite as a float, every array
 * has its exact length, unknown fields are rejected (a typo such as
 * "postion" must not silently do nothing), and each error carries the JSON
 * pointer of the offending field. Output floats are printed as the shortest
 * decimal that reads back to the same float32 (sk_numfmt). */
#ifndef SK_JSON_H
#define SK_JSON_H

#include <jansson.h>

#include "sk_answer.h"
#include "sk_budget.h"
#include "sk_error.h"
#include "sk_numfmt.h"
#include "sk_skeleton.h"

typedef struct sk_anim sk_anim;

/* Parses text into a new json_t (*out, caller decrefs). Rejects duplicate
 * object keys; syntax errors set line and column. */
int sk_json_load(const char *text, size_t len, json_t **out, sk_error *err);

/* An upper bound of the bytes sk_json_load's tree of `text` takes (jansson
 * 2.14 on 64-bit glibc), from one pass over the bytes: what could start an
 * object, an array, a member or element, a string, plus the text itself.
 * A 4 MB body of "{}," builds a ~230 MB tree: this is what lets a server
 * count the tree against a memory budget before building it. */
size_t sk_json_tree_bound(const char *text, size_t len);

/* sk_json_load with the tree's bound reserved in `budget` first (NULL:
 * not counted): SK_EBUSY, the text naming --memory-mb, when it does not
 * fit now; else sk_json_load's answer. *reserved is what stays reserved
 * (the bound once reserved, 0 before): the caller releases it when the
 * tree is gone, on failure too. */
int sk_json_load_budgeted(sk_budget *budget, const char *text, size_t len, json_t **out, size_t *reserved,
                          sk_error *err);

/* The value `v` found under `key` of the object at JSON pointer `ptr`, as a
 * finite number (SK_ETYPE, SK_ENOTFINITE) or a boolean (SK_ETYPE); errors
 * point at ptr/key. */
int sk_json_member_number(const json_t *v, const char *ptr, const char *key, double *out, sk_error *err);
int sk_json_member_bool(const json_t *v, const char *ptr, const char *key, bool *out, sk_error *err);

/* Reads exactly n finite numbers (as float) from a JSON array. */
int sk_json_floats(const json_t *j, size_t n, const char *ptr, float *dest, sk_error *err);
/* Reads exactly n finite numbers (as double, range-checked as float). */
int sk_json_doubles(const json_t *j, size_t n, const char *ptr, double *dest, sk_error *err);

/* Builds a skeleton from the `skeleton` object of the case format, or from
 * Babylon's Skeleton.serialize() output (bones with "parentBoneIndex").
 * `ptr` is the pointer of `j` itself ("/skeleton", or "" for an HTTP body).
 * `max_bones` bounds the count (0: SK_SKELETON_MAX_BONES). *out is new. */
int sk_json_parse_skeleton(const json_t *j, const char *ptr, size_t max_bones, sk_skeleton **out, sk_error *err);

/* sk_json_parse_skeleton, and for Babylon's Skeleton.serialize() format the
 * bones' "animation"/"animations" and the skeleton's "ranges" as clips
 * (sk_banim): *anim is new, or NULL when there are none (and always NULL
 * for the case format). On failure both are NULL. */
int sk_json_parse_skeleton_anim(const json_t *j, const char *ptr, size_t max_bones, sk_skeleton **out, sk_anim **anim,
                                sk_error *err);

/* A matrix of a Babylon skeleton: 16 numbers, or the {"0": .., "15": ..}
 * object JSON.stringify makes of a Float32Array. */
int sk_json_babylon_matrix(const json_t *v, const char *ptr, float *dest, sk_error *err);

/* Parses {"<bone name>": {"position"?, "rotation"? | "rotationQuaternion"?,
 * "scaling"?, "matrix"?}} against `s`. Unknown bone: SK_ENOTFOUND.
 * *out is new (free()), *count entries, one per bone, in key order. */
int sk_json_parse_overrides(const sk_skeleton *s, const json_t *j, const char *ptr, sk_override **out,
                            size_t *count, sk_error *err);

/* Parses the CORE kinds of sk_answer's table (["final", "absolute",
 * "local"], any subset, no repeats) into a mask; NULL gives SK_OUT_FINAL.
 * Any other name is refused (the Bone API kinds are taken out before, by
 * the callers that compute them). */
/* Refuses a member of the object `obj` (at pointer `ptr`) named in neither
 * `allowed` nor `also` (NULL-terminated lists; `also` may be NULL):
 * SK_EUNKNOWN, "unknown field \"name\"", pointing at the member, with
 * '; did you mean "x"?' when an allowed name is close (sk_near). 0 when
 * every member is known. */
int sk_json_check_keys(const json_t *obj, const char *ptr, const char *const *allowed, const char *const *also,
                       sk_error *err);

/* The 404 of a bone name `s` lacks, at `ptr`: 'no bone named "x"', with
 * '; did you mean "y"?' when a bone's name is close (sk_near). Returns
 * SK_ENOTFOUND. */
int sk_json_no_bone(const sk_skeleton *s, const char *name, const char *ptr, sk_error *err);

int sk_json_parse_output(const json_t *j, const char *ptr, unsigned *mask, sk_error *err);

/* Appends {"final": [...], "absolute": [...], "local": [...]} with the
 * members whose arrays are non-NULL. `slots` = bone count: final has
 * 16*(slots+1) floats, the others 16*slots. */
int sk_json_write_result(sk_strbuf *b, size_t slots, const float *final, const float *absolute, const float *local);
/* sk_json_write_result, with final's text copied from final_ref (NULL: none)
 * wherever final equals its reference (sk_strbuf_append_f32_array_ref). */
int sk_json_write_result_ref(sk_strbuf *b, size_t slots, const float *final, const sk_f32_text *final_ref,
                             const float *absolute, const float *local);
/* Appends a JSON string literal (quoted, escaped). */
int sk_json_write_string(sk_strbuf *b, const char *s);
/* Appends ["name", ...] of s->bones[] in their order. 0 or SK_ENOMEM. */
int sk_json_write_order(const sk_skeleton *s, sk_strbuf *out);

#endif
