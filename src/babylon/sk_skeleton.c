#include "sk_skeleton.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_hash.h"
#include "sk_mat.h"

/* ---- local transforms: Babylon's Bone setters ---------------------------- */

static void local_decompose(sk_local *l) {
  if (!l->need_decompose)
    return;
  l->need_decompose = false;
  sk_mat_decompose(l->matrix, l->scaling, l->rotation, l->position);
}

static void local_compose(sk_local *l) {
  sk_mat_compose(l->scaling, l->rotation, l->position, l->matrix);
}

void sk_local_set_matrix(sk_local *l, const float m[16]) {
  if (l->matrix != m)
    memcpy(l->matrix, m, sizeof l->matrix);
  l->need_decompose = true;
}

void sk_local_set_position(sk_local *l, const double p[3]) {
  local_decompose(l);
  memcpy(l->position, p, sizeof l->position);
  local_compose(l);
}

void sk_local_set_rotation_quaternion(sk_local *l, const double q[4]) {
  local_decompose(l);
  memcpy(l->rotation, q, sizeof l->rotation);
  local_compose(l);
}

void sk_local_set_rotation_euler(sk_local *l, const double r[3]) {
  double q[4];
  sk_quat_from_yaw_pitch_roll(r[1], r[0], r[2], q);
  sk_local_set_rotation_quaternion(l, q);
}

void sk_local_set_scaling(sk_local *l, const double s[3]) {
  local_decompose(l);
  memcpy(l->scaling, s, sizeof l->scaling);
  local_compose(l);
}

/* The setters in the order matrix, position, rotation, scaling. After the
 * first TRS setter nothing needs decomposing, and a compose writes only
 * the matrix, which no later setter reads: the last compose alone decides
 * it, so one compose gives the same bits as one per setter. */
void sk_local_apply(sk_local *l, const sk_override *o) {
  if (o->mask & SK_OVERRIDE_MATRIX)
    sk_local_set_matrix(l, o->matrix);
  if (!(o->mask & (SK_OVERRIDE_POSITION | SK_OVERRIDE_ROTATION | SK_OVERRIDE_SCALING)))
    return;
  local_decompose(l);
  sk_override_fields(o, l->position, l->rotation, l->scaling);
  local_compose(l);
}

void sk_override_fields(const sk_override *o, double position[3], double rotation[4], double scaling[3]) {
  if (o->mask & SK_OVERRIDE_POSITION)
    memcpy(position, o->position, sizeof o->position);
  if (o->mask & SK_OVERRIDE_ROTATION)
    memcpy(rotation, o->rotation, sizeof o->rotation);
  if (o->mask & SK_OVERRIDE_SCALING)
    memcpy(scaling, o->scaling, sizeof o->scaling);
}

/* ---- name index ------------------------------------------------------------ */

static uint32_t name_hash(const char *s) { return sk_hash_fnv32_str(SK_HASH_FNV32_INIT, s); }

static size_t hash_capacity(size_t count) {
  size_t cap = 16;
  while (cap < 2 * count)
    cap <<= 1;
  return cap;
}

/* Inserts position `pos` under `names[pos]`; returns the position already
 * there under the same name, or -1. */
static int32_t hash_insert(uint32_t *table, size_t mask, const char *const *names, int32_t pos) {
  size_t at = name_hash(names[pos]) & mask;
  for (;;) {
    if (table[at] == 0) {
      table[at] = (uint32_t)pos + 1;
      return -1;
    }
    int32_t other = (int32_t)table[at] - 1;
    if (strcmp(names[other], names[pos]) == 0)
      return other;
    at = (at + 1) & mask;
  }
}

int32_t sk_skeleton_find(const sk_skeleton *s, const char *name) {
  size_t at = name_hash(name) & s->hash_mask;
  for (;;) {
    uint32_t v = s->hash[at];
    if (v == 0)
      return -1;
    if (strcmp(s->bones[v - 1].name, name) == 0)
      return (int32_t)v - 1;
    at = (at + 1) & s->hash_mask;
  }
}

/* Indexes every bone name of `s` into its (zeroed) hash table. */
static void fill_hash(sk_skeleton *s) {
  for (size_t k = 0; k < s->count; k++) {
    size_t h = name_hash(s->bones[k].name) & s->hash_mask;
    while (s->hash[h] != 0)
      h = (h + 1) & s->hash_mask;
    s->hash[h] = (uint32_t)k + 1;
  }
}

/* ---- build ----------------------------------------------------------------- */

static bool all_finite(const float *m, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(m[i]))
      return false;
  return true;
}

static void field_pointer(char *buf, size_t cap, const char *prefix, size_t pos, const char *field) {
  snprintf(buf, cap, "%s", prefix != NULL ? prefix : "");
  sk_pointer_push_index(buf, cap, pos);
  if (field != NULL)
    sk_pointer_push(buf, cap, field);
}

/* Recomputes absolute binds for bones [from, count): a pure function of each
 * bone's bind and its parent's absolute bind, so recomputing bones outside
 * the changed subtree rewrites the values they already hold. */
static void update_abs_binds(sk_skeleton *s, size_t from) {
  for (size_t i = from; i < s->count; i++) {
    sk_bone *b = &s->bones[i];
    if (b->parent >= 0)
      sk_mat_mul(b->bind, s->bones[b->parent].abs_bind, b->abs_bind);
    else
      memcpy(b->abs_bind, b->bind, sizeof b->abs_bind);
    sk_mat_invert(b->abs_bind, b->abs_inv_bind);
  }
}

/* What sk_skeleton_create works with: the descriptions, where errors
 * point, and scratch arrays indexed by input position. */
typedef struct build {
  const sk_bone_desc *d;
  size_t n;
  const char *prefix; /* JSON pointer prefix of the bone array */
  sk_error *err;
  const char **names;
  int32_t *parent, *order, *stack, *slot;
  uint8_t *state, *used;
  uint32_t *table; /* name index over input positions */
  size_t cap, names_size;
} build;

/* Records `code` at <prefix>/<pos>/<field>; returns it. */
__attribute__((format(printf, 5, 6))) static int fail_at(const build *b, int code, size_t pos, const char *field,
                                                          const char *fmt, ...) {
  char ptr[SK_ERROR_POINTER_MAX], text[SK_ERROR_TEXT_MAX];
  field_pointer(ptr, sizeof ptr, b->prefix, pos, field);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  return sk_error_set(b->err, code, ptr, "%s", text);
}

static int build_alloc(build *b) {
  const size_t n = b->n ? b->n : 1;
  b->cap = hash_capacity(b->n);
  b->names = malloc(n * sizeof *b->names);
  b->parent = malloc(n * sizeof *b->parent);
  b->order = malloc(n * sizeof *b->order);
  b->stack = malloc(n * sizeof *b->stack);
  b->slot = malloc(n * sizeof *b->slot);
  b->state = calloc(n, 1);
  b->used = calloc(n, 1);
  b->table = calloc(b->cap, sizeof *b->table);
  if (!b->names || !b->parent || !b->order || !b->stack || !b->slot || !b->state || !b->used || !b->table)
    return sk_error_set(b->err, SK_ENOMEM, "", "out of memory building %zu bones", b->n);
  return 0;
}

static void build_free(build *b) {
  free(b->names);
  free(b->parent);
  free(b->order);
  free(b->stack);
  free(b->slot);
  free(b->state);
  free(b->used);
  free(b->table);
}

/* Every name present and unique; indexes them and sums their bytes. */
static int check_names(build *b) {
  for (size_t i = 0; i < b->n; i++) {
    const sk_bone_desc *d = &b->d[i];
    b->names[i] = d->name;
    if (d->name == NULL || d->name[0] == '\0')
      return fail_at(b, SK_EMISSING, i, "name", "bone %zu has an empty name", i);
    int32_t dup = hash_insert(b->table, b->cap - 1, b->names, (int32_t)i);
    if (dup >= 0)
      return fail_at(b, SK_EDUPLICATE, i, "name", "bone name \"%s\" is used by bones %d and %zu", d->name, dup, i);
    b->names_size += strlen(d->name) + 1;
  }
  return 0;
}

/* Bone i's parent by name (the index is probed, not inserted), or -1. */
static int find_parent(const build *b, size_t i, int32_t *out) {
  const sk_bone_desc *d = &b->d[i];
  *out = -1;
  if (d->parent == NULL)
    return 0;
  for (size_t at = name_hash(d->parent) & (b->cap - 1);; at = (at + 1) & (b->cap - 1)) {
    uint32_t v = b->table[at];
    if (v == 0)
      return fail_at(b, SK_EUNKNOWN, i, "parent", "bone \"%s\" names an unknown parent \"%s\"", d->name, d->parent);
    if (strcmp(b->names[v - 1], d->parent) == 0) {
      *out = (int32_t)v - 1;
      return 0;
    }
  }
}

/* Each bone's numbers finite, its parent known, its output slot in range
 * and unused. */
static int check_bones(build *b) {
  for (size_t i = 0; i < b->n; i++) {
    const sk_bone_desc *d = &b->d[i];
    int rc;
    if (!all_finite(d->local, 16))
      return fail_at(b, SK_ENOTFINITE, i, d->local_from_matrix ? "matrix" : NULL,
                     "bone \"%s\" has a non-finite local transform", d->name);
    if (d->bind != NULL && !all_finite(d->bind, 16))
      return fail_at(b, SK_ENOTFINITE, i, "bind", "bone \"%s\" has a non-finite bind matrix", d->name);
    if (d->rest != NULL && !all_finite(d->rest, 16))
      return fail_at(b, SK_ENOTFINITE, i, "rest", "bone \"%s\" has a non-finite rest matrix", d->name);
    if (d->has_length && !isfinite(d->length))
      return fail_at(b, SK_ENOTFINITE, i, "length", "bone \"%s\" has a non-finite length", d->name);
    if ((rc = find_parent(b, i, &b->parent[i])) != 0)
      return rc;
    int64_t idx = d->has_index ? d->index : (int64_t)i;
    if (idx < -1 || idx >= (int64_t)b->n)
      return fail_at(b, SK_ERANGE, i, "index", "bone \"%s\" has index %lld; it must be -1 or in [0, %zu)", d->name,
                     (long long)idx, b->n);
    if (idx >= 0) {
      if (b->used[idx])
        return fail_at(b, SK_EDUPLICATE, i, "index", "output index %lld is used by two bones", (long long)idx);
      b->used[idx] = 1;
    }
    b->slot[i] = (int32_t)idx;
  }
  return 0;
}

/* Babylon's sortBones order into b->order: for each bone in input order,
 * its unplaced ancestors root first, then itself. An explicit stack, not
 * recursion: a 100 000-bone chain must not overflow the C stack. */
static int sort_bones(build *b) {
  size_t placed = 0;
  for (size_t i = 0; i < b->n; i++) {
    size_t depth = 0;
    int32_t j = (int32_t)i;
    while (j >= 0 && b->state[j] == 0) {
      b->state[j] = 1;
      b->stack[depth++] = j;
      j = b->parent[j];
    }
    if (j >= 0 && b->state[j] == 1)
      return fail_at(b, SK_ECYCLE, (size_t)b->stack[depth - 1], "parent", "bone \"%s\" is its own ancestor",
                     b->d[j].name);
    while (depth > 0) {
      int32_t k = b->stack[--depth];
      b->state[k] = 2;
      b->order[placed++] = k;
    }
  }
  return 0;
}

/* The skeleton in b->order: names in one block, parents renumbered,
 * locals, binds and rests copied, the name index, absolute binds. */
static int make_skeleton(build *b, sk_skeleton **out) {
  const size_t n = b->n;
  sk_skeleton *s = calloc(1, sizeof *s);
  if (s == NULL)
    return sk_error_set(b->err, SK_ENOMEM, "", "out of memory");
  *out = s;
  s->count = n;
  s->bones = calloc(n ? n : 1, sizeof *s->bones);
  s->names = malloc(b->names_size ? b->names_size : 1);
  s->hash = calloc(b->cap, sizeof *s->hash);
  s->hash_mask = b->cap - 1;
  s->names_size = b->names_size;
  if (!s->bones || !s->names || !s->hash)
    return sk_error_set(b->err, SK_ENOMEM, "", "out of memory");
  int32_t *newpos = b->stack; /* input position -> new position */
  for (size_t k = 0; k < n; k++)
    newpos[b->order[k]] = (int32_t)k;
  size_t at = 0;
  for (size_t k = 0; k < n; k++) {
    const int32_t from = b->order[k];
    const sk_bone_desc *src = &b->d[from];
    sk_bone *bone = &s->bones[k];
    size_t len = strlen(src->name) + 1;
    memcpy(s->names + at, src->name, len);
    bone->name = s->names + at;
    at += len;
    bone->parent = b->parent[from] >= 0 ? newpos[b->parent[from]] : -1;
    bone->index = b->slot[from];
    bone->input_pos = from;
    bone->has_length = src->has_length;
    bone->length = src->length;
    sk_local_set_matrix(&bone->local, src->local);
    memcpy(bone->bind, src->bind != NULL ? src->bind : src->local, sizeof bone->bind);
    memcpy(bone->rest, src->rest != NULL ? src->rest : src->local, sizeof bone->rest);
  }
  fill_hash(s);
  update_abs_binds(s, 0);
  return 0;
}

/* Every absolute bind invertible. */
static int check_binds(const build *b, const sk_skeleton *s) {
  for (size_t k = 0; k < s->count; k++) {
    if (sk_mat_det(s->bones[k].abs_bind) != 0)
      continue;
    const sk_bone_desc *src = &b->d[b->order[k]];
    return fail_at(b, SK_ESINGULAR, (size_t)b->order[k],
                   src->bind != NULL ? "bind" : (src->local_from_matrix ? "matrix" : NULL),
                   "bone \"%s\": absolute bind matrix is not invertible (determinant 0)", src->name);
  }
  return 0;
}

int sk_skeleton_create(const sk_bone_desc *d, size_t n, const char *pointer_prefix, sk_skeleton **out,
                       sk_error *err) {
  *out = NULL;
  if (n > SK_SKELETON_MAX_BONES) {
    char ptr[SK_ERROR_POINTER_MAX];
    snprintf(ptr, sizeof ptr, "%s", pointer_prefix != NULL ? pointer_prefix : "");
    return sk_error_set(err, SK_ETOOBIG, ptr, "%zu bones; at most %d", n, SK_SKELETON_MAX_BONES);
  }
  build b = {.d = d, .n = n, .prefix = pointer_prefix, .err = err};
  sk_skeleton *s = NULL;
  int rc = build_alloc(&b);
  if (!rc)
    rc = check_names(&b);
  if (!rc)
    rc = check_bones(&b);
  if (!rc)
    rc = sort_bones(&b);
  if (!rc)
    rc = make_skeleton(&b, &s);
  if (!rc)
    rc = check_binds(&b, s);
  build_free(&b);
  if (rc) {
    sk_skeleton_destroy(s);
    return rc;
  }
  *out = s;
  return 0;
}

/* src's bones, names and hash into s, whose arrays have src's sizes; the
 * names rebased into s's own block. */
static void copy_contents(sk_skeleton *s, const sk_skeleton *src) {
  memcpy(s->bones, src->bones, src->count * sizeof *s->bones);
  memcpy(s->names, src->names, src->names_size);
  memcpy(s->hash, src->hash, (src->hash_mask + 1) * sizeof *s->hash);
  for (size_t k = 0; k < s->count; k++)
    s->bones[k].name = s->names + (src->bones[k].name - src->names);
}

int sk_skeleton_clone(const sk_skeleton *src, sk_skeleton **out) {
  *out = NULL;
  sk_skeleton *s = calloc(1, sizeof *s);
  if (s == NULL)
    return SK_ENOMEM;
  s->count = src->count;
  s->names_size = src->names_size;
  s->hash_mask = src->hash_mask;
  s->bones = malloc((src->count ? src->count : 1) * sizeof *s->bones);
  s->names = malloc(src->names_size ? src->names_size : 1);
  s->hash = malloc((src->hash_mask + 1) * sizeof *s->hash);
  if (!s->bones || !s->names || !s->hash) {
    sk_skeleton_destroy(s);
    return SK_ENOMEM;
  }
  copy_contents(s, src);
  *out = s;
  return 0;
}

int sk_skeleton_clone_into(const sk_skeleton *src, sk_skeleton **dst) {
  sk_skeleton *s = *dst;
  if (s == NULL || s->count != src->count || s->names_size != src->names_size || s->hash_mask != src->hash_mask) {
    sk_skeleton_destroy(s);
    return sk_skeleton_clone(src, dst);
  }
  copy_contents(s, src);
  return 0;
}

void sk_skeleton_destroy(sk_skeleton *s) {
  if (s == NULL)
    return;
  free(s->bones);
  free(s->names);
  free(s->hash);
  free(s);
}

/* ---- Babylon operations --------------------------------------------------- */

void sk_skeleton_apply(sk_skeleton *s, const sk_override *o, size_t count) {
  for (size_t i = 0; i < count; i++)
    sk_local_apply(&s->bones[o[i].bone].local, &o[i]);
}

int sk_skeleton_set_bind(sk_skeleton *s, int32_t bone, const float m[16], bool keep_local) {
  sk_bone *b = &s->bones[bone];
  float abs_bind[16];
  if (b->parent >= 0)
    sk_mat_mul(m, s->bones[b->parent].abs_bind, abs_bind);
  else
    memcpy(abs_bind, m, sizeof abs_bind);
  if (sk_mat_det(abs_bind) == 0)
    return SK_ESINGULAR;
  memcpy(b->bind, m, sizeof b->bind);
  update_abs_binds(s, (size_t)bone);
  if (!keep_local)
    sk_local_set_matrix(&b->local, m);
  return 0;
}

void sk_skeleton_set_rest(sk_skeleton *s, int32_t bone, const float m[16]) {
  memcpy(s->bones[bone].rest, m, sizeof s->bones[bone].rest);
}

void sk_skeleton_bone_return_to_rest(sk_skeleton *s, int32_t bone) {
  sk_local_set_matrix(&s->bones[bone].local, s->bones[bone].rest);
}

void sk_skeleton_return_to_rest(sk_skeleton *s) {
  for (size_t i = 0; i < s->count; i++)
    if (s->bones[i].index != -1)
      sk_skeleton_bone_return_to_rest(s, (int32_t)i);
}

void sk_skeleton_compute_absolute(sk_skeleton *s) {
  for (size_t i = 0; i < s->count; i++) {
    sk_bone *b = &s->bones[i];
    if (b->parent >= 0)
      sk_mat_mul(b->local.matrix, s->bones[b->parent].absolute, b->absolute);
    else
      memcpy(b->absolute, b->local.matrix, sizeof b->absolute);
  }
}

void sk_skeleton_compute_transforms(sk_skeleton *s, const float *initial_skin, float *dest) {
  memset(dest, 0, 16 * s->count * sizeof *dest);
  for (size_t i = 0; i < s->count; i++) {
    sk_bone *b = &s->bones[i];
    if (b->parent >= 0)
      sk_mat_mul(b->local.matrix, s->bones[b->parent].world, b->world);
    else if (initial_skin != NULL)
      sk_mat_mul(b->local.matrix, initial_skin, b->world);
    else
      memcpy(b->world, b->local.matrix, sizeof b->world);
    if (b->index >= 0)
      sk_mat_mul(b->abs_inv_bind, b->world, dest + 16 * (size_t)b->index);
  }
  sk_mat_identity(dest + 16 * s->count);
}

/* scratch[i] = local[i] · scratch[parent] (a root: local · `root`, or the
 * local alone), bones parent-first, so one forward pass suffices. */
static void world_pass(const sk_skeleton *s, const float *locals, const float *root, float *scratch) {
  for (size_t i = 0; i < s->count; i++) {
    const sk_bone *b = &s->bones[i];
    const float *l = locals != NULL ? locals + 16 * i : b->local.matrix;
    float *w = scratch + 16 * i;
    if (b->parent >= 0)
      sk_mat_mul(l, scratch + 16 * (size_t)b->parent, w);
    else if (root != NULL)
      sk_mat_mul(l, root, w);
    else
      memcpy(w, l, 16 * sizeof *w);
  }
}

void sk_skeleton_evaluate(const sk_skeleton *s, const float *locals, const float *initial_skin, float *scratch,
                          float *final, float *absolute, float *local_out) {
  const size_t n = s->count;
  if (final != NULL) {
    world_pass(s, locals, initial_skin, scratch);
    memset(final, 0, 16 * n * sizeof *final);
    for (size_t i = 0; i < n; i++)
      if (s->bones[i].index >= 0)
        sk_mat_mul(s->bones[i].abs_inv_bind, scratch + 16 * i, final + 16 * (size_t)s->bones[i].index);
    sk_mat_identity(final + 16 * n);
  }
  if (absolute != NULL) {
    world_pass(s, locals, NULL, scratch); /* absolute never includes the initial skin matrix */
    memset(absolute, 0, 16 * n * sizeof *absolute);
    for (size_t i = 0; i < n; i++)
      if (s->bones[i].index >= 0)
        memcpy(absolute + 16 * (size_t)s->bones[i].index, scratch + 16 * i, 16 * sizeof *absolute);
  }
  if (local_out != NULL) {
    memset(local_out, 0, 16 * n * sizeof *local_out);
    for (size_t i = 0; i < n; i++) {
      const sk_bone *b = &s->bones[i];
      if (b->index >= 0)
        memcpy(local_out + 16 * (size_t)b->index, locals != NULL ? locals + 16 * i : b->local.matrix,
               16 * sizeof *local_out);
    }
  }
}

void sk_skeleton_evaluate_base(const sk_skeleton *s, float *world, float *final) {
  sk_skeleton_evaluate(s, NULL, NULL, world, final, NULL, NULL); /* its scratch ends as the worlds */
}

void sk_skeleton_evaluate_changed(const sk_skeleton *s, const float *locals, uint8_t *changed,
                                  const float *base_world, const float *base_final, float *scratch, float *final) {
  const size_t n = s->count;
  memcpy(final, base_final, 16 * (n + 1) * sizeof *final);
  for (size_t i = 0; i < n; i++) {
    const sk_bone *b = &s->bones[i];
    /* Parents come first, so the parent's flag is already final. */
    const bool dirty_parent = b->parent >= 0 && changed[b->parent];
    if (!changed[i] && !dirty_parent)
      continue;
    const float *l = changed[i] ? locals + 16 * i : b->local.matrix;
    changed[i] = 1;
    float *w = scratch + 16 * i;
    if (b->parent >= 0)
      sk_mat_mul(l, (dirty_parent ? scratch : base_world) + 16 * (size_t)b->parent, w);
    else
      memcpy(w, l, 16 * sizeof *w);
    if (b->index >= 0)
      sk_mat_mul(b->abs_inv_bind, w, final + 16 * (size_t)b->index);
  }
}

void sk_skeleton_pose_overrides(const sk_skeleton *s, const sk_override *o, size_t count, float *locals,
                                uint8_t *changed) {
  for (size_t k = 0; k < count; k++) {
    sk_local tmp = s->bones[o[k].bone].local;
    sk_local_apply(&tmp, &o[k]);
    memcpy(locals + 16 * (size_t)o[k].bone, tmp.matrix, sizeof tmp.matrix);
    if (changed != NULL)
      changed[o[k].bone] = 1;
  }
}

void sk_skeleton_pose_locals(const sk_skeleton *s, const sk_override *o, size_t count, float *locals) {
  for (size_t i = 0; i < s->count; i++)
    memcpy(locals + 16 * i, s->bones[i].local.matrix, 16 * sizeof *locals);
  sk_skeleton_pose_overrides(s, o, count, locals, NULL);
}

void sk_skeleton_prepare(sk_skeleton *s) {
  for (size_t i = 0; i < s->count; i++)
    local_decompose(&s->bones[i].local);
}

/* ---- assembly from decoded parts (sk_record) ------------------------------- */

int sk_skeleton_assemble(sk_bone *bones, const uint32_t *name_off, size_t n, const char *names, size_t names_size,
                         sk_skeleton **out) {
  *out = NULL;
  if (n > SK_SKELETON_MAX_BONES) {
    free(bones);
    return SK_EFORMAT;
  }
  sk_skeleton *s = calloc(1, sizeof *s);
  if (s == NULL) {
    free(bones);
    return SK_ENOMEM;
  }
  size_t cap = hash_capacity(n);
  s->count = n;
  s->bones = bones;
  s->names_size = names_size;
  s->hash_mask = cap - 1;
  s->names = malloc(names_size ? names_size : 1);
  s->hash = calloc(cap, sizeof *s->hash);
  if (s->bones == NULL || s->names == NULL || s->hash == NULL) {
    sk_skeleton_destroy(s);
    return SK_ENOMEM;
  }
  memcpy(s->names, names, names_size);
  int bad = names_size == 0 ? n > 0 : s->names[names_size - 1] != '\0';
  uint8_t *slot_used = calloc(n ? n : 1, 1);
  bad |= slot_used == NULL;
  for (size_t i = 0; i < n && !bad; i++) {
    sk_bone *b = &s->bones[i];
    bad |= name_off[i] >= names_size || s->names[name_off[i]] == '\0' || b->parent < -1 ||
           b->parent >= (int32_t)i || b->index < -1 || b->index >= (int32_t)n;
    if (!bad && b->index >= 0) {
      bad |= slot_used[b->index];
      slot_used[b->index] = 1;
    }
  }
  for (size_t i = 0; i < n; i++) /* pointers for every bone: destroy never reads them, find does */
    s->bones[i].name = bad ? NULL : s->names + name_off[i];
  free(slot_used);
  if (bad) {
    sk_skeleton_destroy(s);
    return SK_EFORMAT;
  }
  fill_hash(s);
  for (size_t i = 0; i < n; i++)
    if (sk_skeleton_find(s, s->bones[i].name) != (int32_t)i) { /* duplicate names */
      sk_skeleton_destroy(s);
      return SK_EFORMAT;
    }
  *out = s;
  return 0;
}
