/* sk_skeleton: a skeleton with Babylon.js Bone/Skeleton semantics.
 *
 * This is the scalar source of truth: every other path (the SIMD batch
 * kernel, the daemon) is tested against it, and it is tested against
 * Babylon.js itself (tests/conformance). Matrices are 16 floats in Babylon
 * `Matrix.m` order = glTF order; see sk_mat.h.
 *
 * Bones are stored parent-first (Babylon's sortBones order over the input),
 * so one forward pass computes every world matrix. A bone keeps its output
 * slot (`index`, Babylon's `_index`; -1 = no slot) whatever its position. */
#ifndef SK_SKELETON_H
#define SK_SKELETON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_error.h"
#include "sk_buf.h"

/* A bone's local transform with Babylon's lazily decomposed TRS cache.
 * Babylon re-composes lazily; composing eagerly after each setter gives the
 * same matrix, so `matrix` is always current here. The cache (scaling,
 * rotation quaternion, position, in double) is what a partial set keeps:
 * it is re-filled from the float matrix only when `need_decompose` is set,
 * i.e. after the matrix was replaced as a whole. */
typedef struct sk_local {
  float matrix[16];
  double scaling[3];
  double rotation[4]; /* x, y, z, w; never normalised */
  double position[3];
  bool need_decompose;
} sk_local;

/* Replaces the matrix (Babylon's `bone._matrix = m`): the TRS cache goes stale. */
void sk_local_set_matrix(sk_local *l, const float m[16]);
void sk_local_set_position(sk_local *l, const double p[3]);
void sk_local_set_rotation_quaternion(sk_local *l, const double q[4]);
/* Euler angles as Babylon's `bone.rotation = (x, y, z)`: setYawPitchRoll(y, x, z). */
void sk_local_set_rotation_euler(sk_local *l, const double r[3]);
void sk_local_set_scaling(sk_local *l, const double s[3]);

/* What one "set"/"pose" entry changes on one bone, applied in the order of
 * the fields: matrix, position, rotation, scaling. */
enum {
  SK_OVERRIDE_MATRIX = 1u << 0,
  SK_OVERRIDE_POSITION = 1u << 1,
  SK_OVERRIDE_ROTATION = 1u << 2, /* quaternion; Euler is converted at parse */
  SK_OVERRIDE_SCALING = 1u << 3,
};
typedef struct sk_override {
  int32_t bone; /* position in sk_skeleton.bones */
  unsigned mask;
  float matrix[16];
  double position[3], rotation[4], scaling[3];
} sk_override;

/* Applies one override to a local transform, Babylon setter by setter. */
void sk_local_apply(sk_local *l, const sk_override *o);
/* The override's position, rotation and scaling fields (those its mask
 * sets; a matrix is not a field) copied over the given arrays. */
void sk_override_fields(const sk_override *o, double position[3], double rotation[4], double scaling[3]);

typedef struct sk_bone {
  const char *name;  /* into the skeleton's name block */
  int32_t parent;    /* position in bones[] (always lower), -1 for a root */
  int32_t index;     /* output slot in [0, count), or -1 for none */
  int32_t input_pos; /* position in the array the skeleton was created from */
  bool has_length;
  double length;
  sk_local local;
  float bind[16], rest[16];
  float abs_bind[16], abs_inv_bind[16];
  float absolute[16]; /* local · parent absolute; no initial skin matrix */
  float world[16];    /* Babylon's `_finalMatrix`: world incl. initial skin matrix */
} sk_bone;

/* Read-only outside sk_skeleton.c: mutate through the functions below so the
 * absolute binds stay consistent. */
typedef struct sk_skeleton {
  size_t count;
  sk_bone *bones;
  char *names;        /* owned; every bone name, NUL-terminated */
  size_t names_size;
  uint32_t *hash;     /* owned; open addressing, position + 1, 0 = empty */
  size_t hash_mask;
} sk_skeleton;

/* Raw description of one bone, as parsed from JSON or glTF. */
typedef struct sk_bone_desc {
  const char *name;   /* borrowed; non-empty */
  const char *parent; /* borrowed name of the parent, or NULL for a root */
  float local[16];    /* initial local matrix */
  const float *bind;  /* borrowed, or NULL: the initial local */
  const float *rest;  /* borrowed, or NULL: the initial local */
  bool has_length;
  double length;
  bool has_index;
  int64_t index;      /* output slot, -1 = none; default: position in the array */
  bool local_from_matrix; /* names the field errors about `local` point at */
} sk_bone_desc;

#define SK_SKELETON_MAX_BONES 1000000

/* Validates `descs` (duplicate or empty names, unknown parents, cycles,
 * index outside [-1, count) or used twice, non-finite numbers, a bind pose
 * whose absolute bind is not invertible) and builds a new skeleton, bones
 * sorted parent-first without recursion. Errors name the field as
 * `pointer_prefix`/<array position>/<field>.
 * On success *out is new (free with sk_skeleton_destroy). */
int sk_skeleton_create(const sk_bone_desc *descs, size_t count, const char *pointer_prefix,
                       sk_skeleton **out, sk_error *err);
/* Deep copy. On success *out is new. */
int sk_skeleton_clone(const sk_skeleton *src, sk_skeleton **out);
/* The same into *dst (NULL, or a skeleton of the caller's to overwrite):
 * its storage is reused when its bone count and name and hash sizes are
 * src's, else it is replaced by a new clone. On failure *dst is NULL (the
 * old one freed). For a scratch copy remade pose after pose. */
int sk_skeleton_clone_into(const sk_skeleton *src, sk_skeleton **dst);
void sk_skeleton_destroy(sk_skeleton *s);

/* Decomposes every local whose TRS cache is stale, as Babylon does lazily
 * on a bone's first partial setter. The cache then holds exactly what the
 * lazy path would compute, so results do not change; a stored skeleton that
 * many poses partially set (the daemon) pays the decomposition once. */
void sk_skeleton_prepare(sk_skeleton *s);

/* Builds a skeleton from parts a decoder read (sk_record): `bones` (n of
 * them, malloc'ed; stolen, on failure too) with `name` unset, bone i named
 * by the NUL-terminated string at names[name_off[i]] (`names`, borrowed, is
 * copied). Checks what sk_skeleton_create guarantees and the evaluators
 * trust: parents before children, slots in [-1, n) and unique, non-empty
 * unique names inside the block; it does not recompute any matrix, so the
 * result answers bit for bit as the skeleton that was encoded. SK_EFORMAT
 * when an invariant is broken, SK_ENOMEM. *out is new. */
int sk_skeleton_assemble(sk_bone *bones, const uint32_t *name_off, size_t n, const char *names, size_t names_size,
                         sk_skeleton **out);

/* Position of the bone called `name` in bones[], or -1. */
int32_t sk_skeleton_find(const sk_skeleton *s, const char *name);

/* Applies overrides in order (Babylon setters; the "set" op). */
void sk_skeleton_apply(sk_skeleton *s, const sk_override *o, size_t count);

/* Babylon's setBindMatrix (keep_local false: the local matrix becomes `m`
 * too) or updateMatrix(m, true, false) (keep_local true). Absolute binds of
 * the bone and its descendants are recomputed. Fails with SK_ESINGULAR,
 * changing nothing, when the bone's new absolute bind is not invertible. */
int sk_skeleton_set_bind(sk_skeleton *s, int32_t bone, const float m[16], bool keep_local);
void sk_skeleton_set_rest(sk_skeleton *s, int32_t bone, const float m[16]);
/* Bone.returnToRest(): local := rest. */
void sk_skeleton_bone_return_to_rest(sk_skeleton *s, int32_t bone);
/* Skeleton.returnToRest(): every bone with a slot (index -1 is skipped). */
void sk_skeleton_return_to_rest(sk_skeleton *s);

/* Babylon's Bone.computeAbsoluteMatrices() on every root. */
void sk_skeleton_compute_absolute(sk_skeleton *s);
/* Babylon's Skeleton._computeTransformMatrices(dest, initial_skin) into a
 * fresh array: updates every bone's world matrix and writes 16*(count+1)
 * floats: absInvBind · world at each bone's slot, zeros in slots no bone
 * writes, then one identity. `initial_skin` may be NULL. */
void sk_skeleton_compute_transforms(sk_skeleton *s, const float *initial_skin, float *dest);

/* Stateless evaluation for concurrent readers: the same numbers as
 * compute_transforms/compute_absolute, without touching `s`.
 *   locals:   count*16 floats in bones[] order, or NULL for the current locals
 *   scratch:  count*16 floats, clobbered
 *   final:    16*(count+1) floats, or NULL
 *   absolute: 16*count floats in slot order (zeros where no bone), or NULL
 *   local_out:16*count floats in slot order (zeros where no bone), or NULL */
void sk_skeleton_evaluate(const sk_skeleton *s, const float *locals, const float *initial_skin,
                          float *scratch, float *final, float *absolute, float *local_out);

/* The evaluation of the stored locals with no initial skin, for
 * sk_skeleton_evaluate_changed: `world` count*16 floats (bones[] order),
 * `final` 16*(count+1) floats, exactly sk_skeleton_evaluate's. */
void sk_skeleton_evaluate_base(const sk_skeleton *s, float *world, float *final);

/* sk_skeleton_evaluate(s, locals, NULL, scratch, final, NULL, NULL) for a
 * pose that changes only some bones, bit for bit: bones with no changed
 * ancestor-or-self keep their base world and final (the same products of
 * the same inputs), the rest are recomputed. It costs the changed
 * subtrees instead of the whole skeleton, which is most of a small pose.
 *   changed:  count flags, nonzero for each bone whose local is in
 *             `locals`; overwritten with the flags of every recomputed bone
 *   locals:   count*16 floats, read only where changed (others use the
 *             stored local, as sk_skeleton_pose_locals would copy it)
 *   base_world, base_final: from sk_skeleton_evaluate_base
 *   scratch:  count*16 floats, clobbered; final: 16*(count+1) floats */
void sk_skeleton_evaluate_changed(const sk_skeleton *s, const float *locals, uint8_t *changed,
                                  const float *base_world, const float *base_final, float *scratch, float *final);

/* Fills `locals` (count*16, bones[] order) with the current locals changed
 * by `o` as a "pose" op would, without changing `s`. */
void sk_skeleton_pose_locals(const sk_skeleton *s, const sk_override *o, size_t count, float *locals);

/* The part of sk_skeleton_pose_locals that applies `o`: writes only the
 * locals of the bones it sets (each override applied to the stored local),
 * and sets changed[bone] = 1 for them when `changed` is not NULL. */
void sk_skeleton_pose_overrides(const sk_skeleton *s, const sk_override *o, size_t count, float *locals,
                                uint8_t *changed);

#endif
