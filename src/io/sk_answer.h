/* sk_answer: what an answer can hold, once for every wing that parses,
 * costs, plans or writes one.
 *
 * The answer formats are one enum: JSON ("results" entries), float32
 * ((B+1) x 16 per pose, little-endian as in memory) and mat3x4 ((B+1) x 12
 * per pose). The output kinds a pose's "output" list can name are one
 * table, SK_OUTPUT_MAP (the X-macro way of libuv's UV_ERRNO_MAP): each row
 * gives the kind's bit, its name, its family (who computes and writes it)
 * and the matrices it adds per pose beyond one per bone. The parsers, the
 * cost model, the planner and the messages read the table, so a new output
 * kind is one row plus its writer in its family's wing.
 *
 * It lives in io/, the lowest wing that parses a request, so that io/'s
 * parsers can read it as the engine and the daemon do. */
#ifndef SK_ANSWER_H
#define SK_ANSWER_H

#include <stddef.h>
#include <stdint.h>

/* Answer formats. */
enum { SK_FMT_JSON = 0, SK_FMT_F32 = 1, SK_FMT_MAT3X4 = 2 };

/* Who computes and writes an output kind. */
enum {
  SK_OUTPUT_CORE = 0,  /* matrices of the exact core or the kernel (sk_pose, sk_frames) */
  SK_OUTPUT_BONES = 1, /* read back through Babylon's Bone API on a scratch copy (sk_poseops, sk_ops) */
  SK_OUTPUT_MESH = 2,  /* the skinned mesh (mesh/, through sk_model's sk_mesh_hook, on sk_poseops' path) */
};

/* X(KIND, "name", family, extra): `extra` matrices per pose beyond one per
 * bone for CORE kinds (final carries the trailing identity slot). */
#define SK_OUTPUT_MAP(X)                     \
  X(FINAL, "final", SK_OUTPUT_CORE, 1)       \
  X(ABSOLUTE, "absolute", SK_OUTPUT_CORE, 0) \
  X(LOCAL, "local", SK_OUTPUT_CORE, 0)       \
  X(WORLD, "world", SK_OUTPUT_BONES, 0)      \
  X(POSITIONS, "positions", SK_OUTPUT_BONES, 0) \
  X(VERTICES, "vertices", SK_OUTPUT_MESH, 0)     \
  X(NORMALS, "normals", SK_OUTPUT_MESH, 0)       \
  X(BOUNDS, "bounds", SK_OUTPUT_MESH, 0)         \
  X(MORPH_WEIGHTS, "morphWeights", SK_OUTPUT_MESH, 0) \
  X(BOUNDS_CONSERVATIVE, "boundsConservative", SK_OUTPUT_MESH, 0) \
  X(HITS, "hits", SK_OUTPUT_MESH, 0)

enum {
#define SK_OUTPUT_INDEX(kind, name, family, extra) SK_OUT_INDEX_##kind,
  SK_OUTPUT_MAP(SK_OUTPUT_INDEX)
#undef SK_OUTPUT_INDEX
      SK_OUT_KINDS
};

/* An output mask's bits, one per row. */
enum {
#define SK_OUTPUT_BIT(kind, name, family, extra) SK_OUT_##kind = 1u << SK_OUT_INDEX_##kind,
  SK_OUTPUT_MAP(SK_OUTPUT_BIT)
#undef SK_OUTPUT_BIT
};

typedef struct sk_output_kind {
  const char *name;
  unsigned bit;
  int family;
  unsigned extra;
} sk_output_kind;

/* The table, SK_OUT_KINDS rows in SK_OUTPUT_MAP's order. */
extern const sk_output_kind sk_answer_outputs[SK_OUT_KINDS];

/* The bits of every kind of `family`. */
unsigned sk_answer_family_mask(int family);

/* The bit of the kind named by name[0..len), or 0 when no kind has it. */
unsigned sk_answer_output_bit(const char *name, size_t len);

/* Matrices a pose asking for the CORE kinds of `mask` answers with, for a
 * skeleton of `bones` bones. */
uint64_t sk_answer_core_matrices(unsigned mask, uint64_t bones);

/* Writes every skeleton kind's name (the CORE and BONES families; the
 * MESH kinds are refused on their own path, sk_poseops) quoted and joined,
 * the last two by `last` (", " or " or "), as refusals of an unknown
 * output list them ("final", "absolute", ... "positions"), into dest[0..size) (truncated,
 * NUL-terminated when size > 0). Returns the length of the whole text:
 * SK_ANSWER_NAMES_MAX is enough. */
#define SK_ANSWER_NAMES_MAX 128
size_t sk_answer_output_names(char *dest, size_t size, const char *last);

#endif
