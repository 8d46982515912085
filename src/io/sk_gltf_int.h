/* sk_gltf's private half, shared by sk_gltf.c (container, buffers, nodes,
 * accessors, memory estimate, import) and sk_gltf_skin.c (skins to bones,
 * animations to clips). Not installed; sk_gltf__ names are internal. */
#ifndef SK_GLTF_INT_H
#define SK_GLTF_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "sk_anim.h"
#include "sk_gltf.h"

typedef struct {
  bool resolved;
  uint8_t *data; /* owned */
  size_t len;    /* bytes usable: min(decoded or chunk size, byteLength) */
} gltf_buffer;

struct sk_gltf {
  json_t *root;
  uint8_t *bin; /* owned copy of the GLB BIN chunk, or NULL */
  size_t bin_len;
  bool is_glb;
  size_t buffer_count;
  gltf_buffer *buffers;
  size_t node_count;
  int32_t *parent; /* node_count; -1 for scene roots */
  uint64_t budget; /* values accessor reads may still produce (SK_GLTF_READ_BUDGET) */
};

/* A JSON pointer under construction. */
typedef struct {
  char buf[SK_ERROR_POINTER_MAX];
} ptr_t;

/* Format errors point at the offending field. */
#define FAIL(ptr, ...) sk_error_set(err, SK_EFORMAT, (ptr), __VA_ARGS__)

const char *sk_gltf__mkptr(ptr_t *p, const char *a, size_t i, const char *field, long j);
void sk_gltf__joinp(char dest[SK_ERROR_POINTER_MAX], const char *base, const char *field);
int sk_gltf__get_item(const sk_gltf *g, const char *name, size_t i, const char *from_ptr, const json_t **out,
                      sk_error *err);
int sk_gltf__get_uint(const json_t *obj, const char *key, const char *ptr_base, bool required, uint64_t dflt,
                      uint64_t max, uint64_t *out, bool *present, sk_error *err);
int sk_gltf__get_numbers(const json_t *obj, const char *key, const char *ptr_base, size_t n, double *dest, bool *present,
                         sk_error *err);
int sk_gltf__read_accessor(sk_gltf *g, size_t index, const char *from_ptr, float **out, size_t *count_out,
                           size_t *ncomp_out, sk_error *err);

/* The skeleton root node of skin `skin` as Babylon's _loadBones picks it:
 * skin.skeleton, else the joints' nearest common ancestor; -1 without one,
 * -2 on a bad index or no memory. */
int32_t sk_gltf__skin_root(const sk_gltf *g, size_t skin);

/* The nodes Babylon's loader puts below `__root__` for the default scene
 * (sk_anim_nodes), with of_bone[b] the transform node of glTF node
 * bone_node[b]. *out is new (free()). 0 or SK_ENOMEM. */
int sk_gltf__scene_nodes(const sk_gltf *g, const int32_t *bone_node, size_t bone_count, sk_anim_nodes **out);
/* What sk_gltf__scene_nodes allocates at most, whatever the scene. */
uint64_t sk_gltf__scene_nodes_bytes(const sk_gltf *g);

#endif
