/* sk_anim's nodes (sk_anim.h: sk_anim_nodes): the glTF scene's nodes kept
 * with the clips for retargeting, one block each. */
#include <stdlib.h>
#include <string.h>

#include "sk_anim.h"

/* Layout: the struct, names[count], parents[count], of_bone[bone_count],
 * then the text: pointers first keeps every part aligned. */
static size_t nodes_head(size_t count, size_t bone_count) {
  return sizeof(sk_anim_nodes) + count * sizeof(const char *) + (count + bone_count) * sizeof(int32_t);
}

sk_anim_nodes *sk_anim_nodes_new(size_t count, size_t bone_count, size_t text) {
  const size_t per = sizeof(const char *) + sizeof(int32_t);
  if (count > (SIZE_MAX - sizeof(sk_anim_nodes)) / (2 * per) || bone_count > SIZE_MAX / 8 / sizeof(int32_t) ||
      text > SIZE_MAX / 4)
    return NULL;
  const size_t bytes = nodes_head(count, bone_count) + text;
  sk_anim_nodes *n = malloc(bytes);
  if (n == NULL)
    return NULL;
  n->count = count, n->bone_count = bone_count, n->bytes = bytes;
  n->names = (const char **)(n + 1);
  n->parents = (int32_t *)(n->names + count);
  n->of_bone = n->parents + count;
  for (size_t i = 0; i < count; i++)
    n->names[i] = NULL, n->parents[i] = -1;
  for (size_t b = 0; b < bone_count; b++)
    n->of_bone[b] = -1;
  return n;
}

char *sk_anim_nodes_text(sk_anim_nodes *n) { return (char *)n + nodes_head(n->count, n->bone_count); }

int sk_anim_nodes_copy(const sk_anim_nodes *n, sk_anim_nodes **out) {
  *out = NULL;
  if (n == NULL)
    return 0;
  sk_anim_nodes *c = malloc(n->bytes);
  if (c == NULL)
    return SK_ENOMEM;
  memcpy(c, n, n->bytes);
  c->names = (const char **)(c + 1);
  c->parents = (int32_t *)(c->names + c->count);
  c->of_bone = c->parents + c->count;
  for (size_t i = 0; i < c->count; i++)
    if (n->names[i] != NULL)
      c->names[i] = (const char *)c + (n->names[i] - (const char *)n);
  *out = c;
  return 0;
}
