/* The "rays" of a pose (sk_geom.h): parsed and priced here, below the
 * engine that reads pose objects and the mesh wing that answers them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_geom.h"
#include "sk_json.h"

/* The index of the primitive "/meshes/M/primitives/P" names, or -1. */
static int64_t prim_named(const sk_geom *geom, const char *s) {
  unsigned m, p;
  int end = 0;
  if (sscanf(s, "/meshes/%u/primitives/%u%n", &m, &p, &end) != 2 || s[end] != '\0')
    return -1;
  char canon[64]; /* no leading zeros, signs or spaces: the name as answers print it */
  snprintf(canon, sizeof canon, "/meshes/%u/primitives/%u", m, p);
  if (strcmp(canon, s) != 0)
    return -1;
  for (uint32_t i = 0; i < geom->nprims; i++)
    if (geom->prims[i].mesh == m && geom->prims[i].prim == p)
      return i;
  return -1;
}

static int parse_ray(const sk_geom *geom, const json_t *r, const char *ptr, sk_geom_ray *ray, sk_error *err) {
  static const char *const keys[] = {"origin", "direction", "maxDistance", "primitive", NULL};
  char p[SK_ERROR_POINTER_MAX];
  if (!json_is_object(r))
    return sk_error_set(err, SK_ETYPE, ptr, "expected {\"origin\": [x, y, z], \"direction\": [x, y, z]}");
  int rc = sk_json_check_keys(r, ptr, keys, NULL, err);
  if (rc)
    return rc;
  const char *names[2] = {"origin", "direction"};
  double *dest[2] = {ray->origin, ray->dir};
  for (int k = 0; k < 2; k++) {
    const json_t *v = json_object_get(r, names[k]);
    sk_pointer_child(p, sizeof p, ptr, names[k]);
    if (v == NULL)
      return sk_error_set(err, SK_EMISSING, p, "a ray needs \"%s\": [x, y, z]", names[k]);
    if ((rc = sk_json_doubles(v, 3, p, dest[k], err)) != 0)
      return rc;
  }
  if (ray->dir[0] == 0 && ray->dir[1] == 0 && ray->dir[2] == 0) {
    sk_pointer_child(p, sizeof p, ptr, "direction");
    return sk_error_set(err, SK_ERANGE, p, "a direction must not be zero");
  }
  ray->max_distance = INFINITY;
  const json_t *md = json_object_get(r, "maxDistance");
  if (md != NULL) {
    if ((rc = sk_json_member_number(md, ptr, "maxDistance", &ray->max_distance, err)) != 0)
      return rc;
    if (!(ray->max_distance >= 0)) {
      sk_pointer_child(p, sizeof p, ptr, "maxDistance");
      return sk_error_set(err, SK_ERANGE, p, "maxDistance must be 0 or more");
    }
  }
  ray->prim = -1;
  const json_t *pj = json_object_get(r, "primitive");
  if (pj != NULL) {
    sk_pointer_child(p, sizeof p, ptr, "primitive");
    if (!json_is_string(pj))
      return sk_error_set(err, SK_ETYPE, p, "expected \"/meshes/M/primitives/P\"");
    if ((ray->prim = prim_named(geom, json_string_value(pj))) < 0)
      return sk_error_set(err, SK_EUNKNOWN, p, "\"%.100s\" is none of the skin's skinned primitives",
                          json_string_value(pj));
  }
  return 0;
}

int sk_geom_parse_rays(const sk_geom *geom, const json_t *j, const char *ptr, sk_geom_ray **out, size_t *n,
                       uint64_t *tests, sk_error *err) {
  *out = NULL;
  *n = 0;
  *tests = 0;
  if (!json_is_array(j))
    return sk_error_set(err, SK_ETYPE, ptr, "expected [{\"origin\": [x, y, z], \"direction\": [x, y, z]}, ...]");
  const size_t count = json_array_size(j);
  if (count > SK_GEOM_MAX_RAYS)
    return sk_error_set(err, SK_ETOOBIG, ptr, "%zu rays; a pose takes at most %d", count, SK_GEOM_MAX_RAYS);
  if (count == 0)
    return 0;
  sk_geom_ray *rays = calloc(count, sizeof *rays);
  if (rays == NULL)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  uint64_t all = 0;
  for (uint32_t i = 0; i < geom->nprims; i++)
    all += geom->prims[i].ntris;
  for (size_t i = 0; i < count; i++) {
    char p[SK_ERROR_POINTER_MAX];
    snprintf(p, sizeof p, "%s", ptr);
    sk_pointer_push_index(p, sizeof p, i);
    int rc = parse_ray(geom, json_array_get(j, i), p, &rays[i], err);
    if (rc) {
      free(rays);
      return rc;
    }
    *tests += rays[i].prim < 0 ? all : geom->prims[rays[i].prim].ntris;
  }
  *out = rays;
  *n = count;
  return 0;
}
