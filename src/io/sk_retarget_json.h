/* sk_retarget_json: the "retarget" object of a retargeting request, in
 * Babylon's IRetargetOptions names (mapNodeNames as an object of source
 * name -> target name), and the nodes above a glTF skeleton taken from its
 * default mesh chain (sk_gltf_default_mesh), both for sk_retarget. */
#ifndef SK_RETARGET_JSON_H
#define SK_RETARGET_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "sk_error.h"
#include "sk_retarget.h"

typedef struct sk_retarget_json {
  sk_retarget_opts o; /* names borrowed from the JSON given to parse */
  const char **from, **to; /* owned arrays (o.map_from / o.map_to) */
} sk_retarget_json;

/* Options from `j` (NULL: Babylon's defaults). Pointers under "/retarget":
 * not an object or a member of the wrong type (SK_ETYPE), an unknown member
 * (SK_EUNKNOWN), groundReferenceVerticalAxis other than "X", "Y", "Z"
 * (SK_ERANGE); SK_ENOMEM. On success free with sk_retarget_json_free; `j`
 * must outlive the options. */
int sk_retarget_json_parse(const json_t *j, sk_retarget_json *out, sk_error *err);
void sk_retarget_json_free(sk_retarget_json *r);


#endif
