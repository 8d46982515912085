#include "sk_ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_json.h"
#include "sk_mat.h"
#include "sk_near.h"

/* ---- op table ------------------------------------------------------------------ */

/* What each op reads: a vector field (name, length), a scalar, a space and a mesh. */
typedef struct op_spec {
  const char *name;
  sk_op_kind kind;
  const char *vec; /* field read into v, or NULL */
  int vec_len;
  const char *num; /* field read into amount, or NULL */
  bool spaced;     /* takes "space" and "mesh" */
  bool axis;       /* `vec` is an axis that must not be zero */
} op_spec;

static const op_spec k_specs[] = {
    {"translate", SK_OP_TRANSLATE, "vector", 3, NULL, true, false},
    {"setPosition", SK_OP_SET_POSITION, "position", 3, NULL, true, false},
    {"setAbsolutePosition", SK_OP_SET_ABSOLUTE_POSITION, "position", 3, NULL, true, false},
    {"scale", SK_OP_SCALE, "scale", 3, NULL, false, false},
    {"setScale", SK_OP_SET_SCALE, "scale", 3, NULL, false, false},
    {"setYawPitchRoll", SK_OP_SET_YAW_PITCH_ROLL, NULL, 0, NULL, true, false},
    {"rotate", SK_OP_ROTATE, "axis", 3, "amount", true, true},
    {"setAxisAngle", SK_OP_SET_AXIS_ANGLE, "axis", 3, "angle", true, true},
    {"setRotation", SK_OP_SET_ROTATION, "rotation", 3, NULL, true, false},
    {"setRotationQuaternion", SK_OP_SET_ROTATION_QUATERNION, "quaternion", 4, NULL, true, false},
    {"setRotationMatrix", SK_OP_SET_ROTATION_MATRIX, NULL, 0, NULL, true, false},
    {"setCurrentPoseAsRest", SK_OP_SET_CURRENT_POSE_AS_REST, NULL, 0, NULL, false, false},
    {"query", SK_OP_QUERY, NULL, 0, NULL, true, false},
    {"ik", SK_OP_IK, "target", 3, NULL, false, false},
    {"lookAt", SK_OP_LOOK_AT, "target", 3, NULL, false, false},
};

static const char *const k_queries[] = {
    "position", "absolutePosition", "direction", "rotation", "rotationQuaternion", "rotationMatrix", "scale",
    "absolutePositionFromLocal", "localPositionFromAbsolute",
};

static const op_spec *find_spec(const char *name) {
  for (size_t i = 0; i < sizeof k_specs / sizeof k_specs[0]; i++)
    if (strcmp(k_specs[i].name, name) == 0)
      return &k_specs[i];
  return NULL;
}

bool sk_ops_known(const char *name) { return name != NULL && find_spec(name) != NULL; }

static int number(const json_t *v, const char *ptr, const char *key, double *out, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  sk_pointer_child(p, sizeof p, ptr, key);
  if (v == NULL)
    return sk_error_set(err, SK_EMISSING, p, "this op needs \"%s\"", key);
  if (!json_is_number(v))
    return sk_error_set(err, SK_ETYPE, p, "expected a number");
  *out = json_number_value(v);
  if (!isfinite(*out))
    return sk_error_set(err, SK_ENOTFINITE, p, "expected a finite number");
  return 0;
}

static int vector(const json_t *o, const char *ptr, const char *key, size_t n, double *out, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  sk_pointer_child(p, sizeof p, ptr, key);
  const json_t *v = json_object_get(o, key);
  if (v == NULL)
    return sk_error_set(err, SK_EMISSING, p, "this op needs \"%s\"", key);
  return sk_json_doubles(v, n, p, out, err);
}

static int check_keys(const json_t *o, const char *ptr, const char *const *allowed, sk_error *err) {
  return sk_json_check_keys(o, ptr, allowed, NULL, err);
}

/* ---- mesh ------------------------------------------------------------------------ */

static int mesh_node(const json_t *j, const char *ptr, sk_mesh_node *n, sk_error *err) {
  static const char *const keys[] = {"position", "rotation", "rotationQuaternion", "scaling", "parent", NULL};
  if (!json_is_object(j))
    return sk_error_set(err, SK_ETYPE, ptr, "expected a mesh node {\"position\", \"rotation\", \"scaling\", \"parent\"}");
  int rc = check_keys(j, ptr, keys, err);
  if (rc)
    return rc;
  *n = (sk_mesh_node){{0, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}};
  if (json_object_get(j, "position") && (rc = vector(j, ptr, "position", 3, n->position, err)))
    return rc;
  if (json_object_get(j, "scaling") && (rc = vector(j, ptr, "scaling", 3, n->scaling, err)))
    return rc;
  bool euler = json_object_get(j, "rotation") != NULL, quat = json_object_get(j, "rotationQuaternion") != NULL;
  if (euler && quat) {
    char p[SK_ERROR_POINTER_MAX];
    sk_pointer_child(p, sizeof p, ptr, "rotation");
    return sk_error_set(err, SK_ETYPE, p, "give \"rotation\" or \"rotationQuaternion\", not both");
  }
  if (quat)
    return vector(j, ptr, "rotationQuaternion", 4, n->rotation, err);
  if (euler) {
    double r[3];
    if ((rc = vector(j, ptr, "rotation", 3, r, err)))
      return rc;
    sk_quat_from_yaw_pitch_roll(r[1], r[0], r[2], n->rotation);
  }
  return 0;
}

int sk_ops_parse_mesh(const json_t *j, const char *ptr, bool *has, sk_mesh *mesh, sk_error *err) {
  *has = false;
  if (j == NULL || json_is_null(j))
    return 0;
  sk_mesh_node nodes[SK_MESH_MAX_DEPTH];
  char p[SK_ERROR_POINTER_MAX];
  snprintf(p, sizeof p, "%s", ptr);
  size_t n = 0;
  for (const json_t *at = j; at != NULL && !json_is_null(at); at = json_object_get(at, "parent")) {
    if (n == SK_MESH_MAX_DEPTH)
      return sk_error_set(err, SK_ERANGE, p, "mesh parent chains are limited to %d nodes", SK_MESH_MAX_DEPTH);
    int rc = mesh_node(at, p, &nodes[n++], err);
    if (rc)
      return rc;
    sk_pointer_push(p, sizeof p, "parent");
  }
  if (sk_mesh_compose(nodes, n, mesh) != 0)
    return sk_error_set(err, SK_ESINGULAR, ptr, "the mesh's world matrix is singular or not finite");
  *has = true;
  return 0;
}

/* ---- ops -------------------------------------------------------------------------- */

static int parse_query(const json_t *j, const char *ptr, sk_op *op, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  sk_pointer_child(p, sizeof p, ptr, "get");
  const char *get = json_string_value(json_object_get(j, "get"));
  if (get == NULL)
    return sk_error_set(err, json_object_get(j, "get") ? SK_ETYPE : SK_EMISSING, p,
                        "a query needs \"get\": \"position\", \"direction\", \"rotation\", ...");
  size_t q = 0;
  while (q < sizeof k_queries / sizeof k_queries[0] && strcmp(k_queries[q], get) != 0)
    q++;
  if (q == sizeof k_queries / sizeof k_queries[0])
    return sk_error_set(err, SK_ERANGE, p, "unknown query \"%s\"", get);
  op->query = (sk_query)q;
  const char *need = op->query == SK_Q_DIRECTION ? "axis"
                     : (op->query == SK_Q_ABSOLUTE_POSITION_FROM_LOCAL || op->query == SK_Q_LOCAL_POSITION_FROM_ABSOLUTE)
                         ? "point"
                         : NULL;
  const char *other = need != NULL && strcmp(need, "axis") == 0 ? "point" : "axis";
  if (json_object_get(j, other) != NULL || (need == NULL && json_object_get(j, "point") != NULL)) {
    sk_pointer_child(p, sizeof p, ptr, json_object_get(j, other) != NULL ? other : "point");
    return sk_error_set(err, SK_EUNKNOWN, p, "query \"%s\" takes no \"%s\"", get,
                        json_object_get(j, other) != NULL ? other : "point");
  }
  return need != NULL ? vector(j, ptr, need, 3, op->v, err) : 0;
}

/* The world matrix of the mesh node at `key` of `j`, which must be a node
 * (null is refused: the option would be absent). */
static int option_mesh(const json_t *j, const char *ptr, const char *key, float world[16], sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  sk_pointer_child(p, sizeof p, ptr, key);
  const json_t *m = json_object_get(j, key);
  bool has;
  sk_mesh mesh;
  if (json_is_null(m))
    return sk_error_set(err, SK_ETYPE, p, "expected a mesh node {\"position\", \"rotation\", \"scaling\", \"parent\"}");
  int rc = sk_ops_parse_mesh(m, p, &has, &mesh, err);
  if (!rc)
    memcpy(world, mesh.world, sizeof mesh.world);
  return rc;
}

/* The IK target: "target" (in op->v: targetPosition, doubles as given) or
 * "targetMesh" (Babylon's targetMesh: its getAbsolutePosition(), the
 * float32 translation of its world matrix). */
static int parse_ik_target(const json_t *j, const char *ptr, sk_op *op, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  sk_ik_options *o = &op->ik;
  if (json_object_get(j, "targetMesh") == NULL) {
    memcpy(o->target, op->v, sizeof o->target);
    return 0;
  }
  sk_pointer_child(p, sizeof p, ptr, "targetMesh");
  if (json_object_get(j, "target") != NULL)
    return sk_error_set(err, SK_ETYPE, p, "give \"target\" or \"targetMesh\", not both");
  float w[16];
  int rc = option_mesh(j, ptr, "targetMesh", w, err);
  for (int i = 0; !rc && i < 3; i++)
    o->target[i] = op->v[i] = w[12 + i];
  return rc;
}

/* The options of an "ik" op; "target" is already in op->v unless a
 * "targetMesh" gives it. */
static int parse_ik(const sk_skeleton *s, const json_t *j, const char *ptr, sk_op *op, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  sk_ik_options *o = &op->ik;
  int rc = parse_ik_target(j, ptr, op, err);
  if (rc)
    return rc;
  o->pole_target_bone = -1;
  const json_t *pb = json_object_get(j, "poleTargetBone");
  const bool pm = json_object_get(j, "poleTargetMesh") != NULL;
  if (pm && (json_object_get(j, "poleTarget") != NULL || pb != NULL)) {
    sk_pointer_child(p, sizeof p, ptr, "poleTargetMesh");
    return sk_error_set(err, SK_ETYPE, p, "give one of \"poleTarget\", \"poleTargetMesh\" and \"poleTargetBone\"");
  }
  if (pm) {
    if ((rc = option_mesh(j, ptr, "poleTargetMesh", o->pole_target_mesh, err)))
      return rc;
    o->has_pole_target_mesh = true;
  }
  if (json_object_get(j, "poleTarget") != NULL) {
    if (pb != NULL) {
      sk_pointer_child(p, sizeof p, ptr, "poleTargetBone");
      return sk_error_set(err, SK_ETYPE, p, "give \"poleTarget\" or \"poleTargetBone\", not both");
    }
    if ((rc = vector(j, ptr, "poleTarget", 3, o->pole_target, err)))
      return rc;
    o->has_pole_target = true;
  }
  if (pb != NULL) {
    sk_pointer_child(p, sizeof p, ptr, "poleTargetBone");
    if (!json_is_string(pb))
      return sk_error_set(err, SK_ETYPE, p, "expected a bone name");
    if ((o->pole_target_bone = sk_skeleton_find(s, json_string_value(pb))) < 0)
      return sk_json_no_bone(s, json_string_value(pb), p, err);
  }
  if (json_object_get(j, "poleTargetLocalOffset") &&
      (rc = vector(j, ptr, "poleTargetLocalOffset", 3, o->pole_target_local_offset, err)))
    return rc;
  if (json_object_get(j, "bendAxis")) {
    if ((rc = vector(j, ptr, "bendAxis", 3, o->bend_axis, err)))
      return rc;
    if (o->bend_axis[0] == 0 && o->bend_axis[1] == 0 && o->bend_axis[2] == 0) {
      sk_pointer_child(p, sizeof p, ptr, "bendAxis");
      return sk_error_set(err, SK_ERANGE, p, "the axis must not have zero length");
    }
    o->has_bend_axis = true;
  }
  static const char *const nums[3] = {"poleAngle", "maxAngle", "slerpAmount"};
  double *dst[3] = {&o->pole_angle, &o->max_angle, &o->slerp_amount};
  for (int k = 0; k < 3; k++)
    if (json_object_get(j, nums[k]) && (rc = number(json_object_get(j, nums[k]), ptr, nums[k], dst[k], err)))
      return rc;
  const char *why;
  if ((rc = sk_ctrl_ik_check(s, op->bone, o, &why))) {
    sk_pointer_child(p, sizeof p, ptr, "bone");
    return sk_error_set(err, rc, p, "%s", why);
  }
  return 0;
}

/* The options of a "lookAt" op; "target" is already in op->v. */
static int parse_look(const json_t *j, const char *ptr, sk_op *op, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  sk_look_options *o = &op->look;
  int rc;
  memcpy(o->target, op->v, sizeof o->target);
  static const char *const axes[3] = {"upAxis", "yawAxis", "pitchAxis"};
  double *av[3] = {o->up_axis, o->yaw_axis, o->pitch_axis};
  bool *ah[3] = {&o->has_up_axis, &o->has_yaw_axis, &o->has_pitch_axis};
  for (int k = 0; k < 3; k++) {
    if (json_object_get(j, axes[k]) == NULL)
      continue;
    if ((rc = vector(j, ptr, axes[k], 3, av[k], err)))
      return rc;
    if (k > 0 && av[k][0] == 0 && av[k][1] == 0 && av[k][2] == 0) {
      sk_pointer_child(p, sizeof p, ptr, axes[k]);
      return sk_error_set(err, SK_ERANGE, p, "the axis must not have zero length");
    }
    *ah[k] = true;
  }
  const json_t *sp = json_object_get(j, "upAxisSpace");
  if (sp != NULL) {
    const char *t = json_string_value(sp);
    sk_pointer_child(p, sizeof p, ptr, "upAxisSpace");
    if (t == NULL || (strcmp(t, "local") != 0 && strcmp(t, "world") != 0 && strcmp(t, "bone") != 0))
      return sk_error_set(err, SK_ERANGE, p, "expected \"local\", \"world\" or \"bone\"");
    o->up_axis_space = t[0] == 'l' ? 0 : t[0] == 'w' ? 1 : 2;
  }
  static const char *const lims[5] = {"minYaw", "maxYaw", "minPitch", "maxPitch", "slerpAmount"};
  double *lv[5] = {&o->min_yaw, &o->max_yaw, &o->min_pitch, &o->max_pitch, &o->slerp_amount};
  bool *lh[5] = {&o->has_min_yaw, &o->has_max_yaw, &o->has_min_pitch, &o->has_max_pitch, &o->has_slerp_amount};
  for (int k = 0; k < 5; k++) {
    if (json_object_get(j, lims[k]) == NULL)
      continue;
    if ((rc = number(json_object_get(j, lims[k]), ptr, lims[k], lv[k], err)))
      return rc;
    *lh[k] = true;
  }
  static const char *const adj[3] = {"adjustYaw", "adjustPitch", "adjustRoll"};
  double *jv[3] = {&o->adjust_yaw, &o->adjust_pitch, &o->adjust_roll};
  for (int k = 0; k < 3; k++)
    if (json_object_get(j, adj[k]) != NULL && (rc = number(json_object_get(j, adj[k]), ptr, adj[k], jv[k], err)))
      return rc;
  const json_t *ua = json_object_get(j, "useAbsoluteValueForYaw");
  if (ua != NULL && !json_is_boolean(ua)) {
    sk_pointer_child(p, sizeof p, ptr, "useAbsoluteValueForYaw");
    return sk_error_set(err, SK_ETYPE, p, "expected true or false");
  }
  o->use_absolute_value_for_yaw = json_is_true(ua);
  return 0;
}

/* The fields `spec`'s op may have (NULL-terminated, at most 20). */
static void allowed_keys(const op_spec *spec, const char **keys) {
  static const char *const k_ik[] = {"op", "bone", "target", "targetMesh", "poleTarget", "poleTargetMesh",
                                     "poleTargetBone", "poleTargetLocalOffset", "poleAngle", "bendAxis",
                                     "maxAngle", "slerpAmount", "mesh", NULL};
  static const char *const k_look[] = {"op", "bone", "target", "upAxis", "upAxisSpace", "yawAxis", "pitchAxis",
                                       "minYaw", "maxYaw", "minPitch", "maxPitch", "adjustYaw", "adjustPitch",
                                       "adjustRoll", "slerpAmount", "useAbsoluteValueForYaw", "mesh", NULL};
  const char *const *fixed = spec->kind == SK_OP_IK ? k_ik : spec->kind == SK_OP_LOOK_AT ? k_look : NULL;
  size_t nk = 0;
  if (fixed != NULL) {
    while ((keys[nk] = fixed[nk]) != NULL)
      nk++;
    return;
  }
  keys[nk++] = "op";
  keys[nk++] = "bone";
  if (spec->vec != NULL)
    keys[nk++] = spec->vec;
  if (spec->num != NULL)
    keys[nk++] = spec->num;
  if (spec->spaced) {
    keys[nk++] = "space";
    keys[nk++] = "mesh";
  }
  if (spec->kind == SK_OP_SCALE)
    keys[nk++] = "scaleChildren";
  if (spec->kind == SK_OP_SET_YAW_PITCH_ROLL) {
    keys[nk++] = "yaw";
    keys[nk++] = "pitch";
    keys[nk++] = "roll";
  }
  if (spec->kind == SK_OP_SET_ROTATION_MATRIX)
    keys[nk++] = "matrix";
  if (spec->kind == SK_OP_QUERY) {
    keys[nk++] = "get";
    keys[nk++] = "axis";
    keys[nk++] = "point";
  }
  keys[nk] = NULL;
}

int sk_ops_parse_one(const sk_skeleton *s, const json_t *j, const char *ptr, const sk_mesh *default_mesh, sk_op *op,
                     sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  memset(op, 0, sizeof *op);
  if (!json_is_object(j))
    return sk_error_set(err, SK_ETYPE, ptr, "expected an op object");
  sk_pointer_child(p, sizeof p, ptr, "op");
  const char *name = json_string_value(json_object_get(j, "op"));
  const op_spec *spec = name != NULL ? find_spec(name) : NULL;
  if (spec == NULL && name != NULL) {
    sk_near n;
    sk_near_init(&n, name);
    for (size_t i = 0; i < sizeof k_specs / sizeof k_specs[0]; i++)
      sk_near_offer(&n, k_specs[i].name);
    if (n.best != NULL)
      return sk_error_set(err, SK_ERANGE, p, "unknown op \"%s\"; did you mean \"%s\"?", name, n.best);
  }
  if (spec == NULL)
    return sk_error_set(err, name ? SK_ERANGE : SK_EMISSING, p, name ? "unknown op \"%s\"" : "every op needs an \"op\"",
                        name);
  op->kind = spec->kind;
  const char *keys[20];
  allowed_keys(spec, keys);
  int rc = check_keys(j, ptr, keys, err);
  if (rc)
    return rc;

  sk_pointer_child(p, sizeof p, ptr, "bone");
  const json_t *bone = json_object_get(j, "bone");
  op->bone = -1;
  if (bone == NULL && spec->kind != SK_OP_SET_CURRENT_POSE_AS_REST)
    return sk_error_set(err, SK_EMISSING, p, "\"%s\" needs a \"bone\"", name);
  if (bone != NULL) {
    if (!json_is_string(bone))
      return sk_error_set(err, SK_ETYPE, p, "expected a bone name");
    if ((op->bone = sk_skeleton_find(s, json_string_value(bone))) < 0)
      return sk_json_no_bone(s, json_string_value(bone), p, err);
  }
  const bool target_mesh = spec->kind == SK_OP_IK && json_object_get(j, "targetMesh") != NULL;
  if (spec->vec != NULL && !target_mesh && (rc = vector(j, ptr, spec->vec, (size_t)spec->vec_len, op->v, err)))
    return rc;
  if (spec->axis && !(op->v[0] != 0 || op->v[1] != 0 || op->v[2] != 0)) {
    sk_pointer_child(p, sizeof p, ptr, spec->vec);
    return sk_error_set(err, SK_ERANGE, p, "the axis must not have zero length");
  }
  if (spec->num != NULL && (rc = number(json_object_get(j, spec->num), ptr, spec->num, &op->amount, err)))
    return rc;
  if (spec->kind == SK_OP_SET_YAW_PITCH_ROLL) {
    static const char *const ypr[3] = {"yaw", "pitch", "roll"};
    for (int k = 0; k < 3; k++)
      if ((rc = number(json_object_get(j, ypr[k]), ptr, ypr[k], &op->v[k], err)))
        return rc;
  }
  if (spec->kind == SK_OP_SET_ROTATION_MATRIX) {
    sk_pointer_child(p, sizeof p, ptr, "matrix");
    const json_t *m = json_object_get(j, "matrix");
    if (m == NULL)
      return sk_error_set(err, SK_EMISSING, p, "\"setRotationMatrix\" needs a \"matrix\"");
    if ((rc = sk_json_floats(m, 16, p, op->matrix, err)))
      return rc;
  }
  if (spec->kind == SK_OP_SCALE) {
    const json_t *sc = json_object_get(j, "scaleChildren");
    if (sc != NULL && !json_is_boolean(sc)) {
      sk_pointer_child(p, sizeof p, ptr, "scaleChildren");
      return sk_error_set(err, SK_ETYPE, p, "expected true or false");
    }
    op->flag = json_is_true(sc);
  }
  if (spec->kind == SK_OP_QUERY && (rc = parse_query(j, ptr, op, err)))
    return rc;
  if (spec->kind == SK_OP_IK && (rc = parse_ik(s, j, ptr, op, err)))
    return rc;
  if (spec->kind == SK_OP_LOOK_AT && (rc = parse_look(j, ptr, op, err)))
    return rc;
  bool controller = spec->kind == SK_OP_IK || spec->kind == SK_OP_LOOK_AT;
  if (spec->spaced || controller) {
    const json_t *sp = json_object_get(j, "space");
    if (sp != NULL) {
      const char *t = json_string_value(sp);
      sk_pointer_child(p, sizeof p, ptr, "space");
      if (t == NULL || (strcmp(t, "local") != 0 && strcmp(t, "world") != 0))
        return sk_error_set(err, SK_ERANGE, p, "expected \"local\" or \"world\"");
      op->space = t[0] == 'w' ? SK_SPACE_WORLD : SK_SPACE_LOCAL;
    }
    if (spec->kind == SK_OP_SET_ABSOLUTE_POSITION || controller)
      op->space = SK_SPACE_WORLD;
    const json_t *mj = json_object_get(j, "mesh");
    if (mj != NULL) {
      sk_pointer_child(p, sizeof p, ptr, "mesh");
      if ((rc = sk_ops_parse_mesh(mj, p, &op->has_mesh, &op->mesh, err)))
        return rc;
    } else if (default_mesh != NULL) {
      op->has_mesh = true;
      op->mesh = *default_mesh;
    }
  }
  return 0;
}

int sk_ops_parse(const sk_skeleton *s, const json_t *j, const char *ptr, const sk_mesh *default_mesh, sk_op **out,
                 size_t *count, sk_error *err) {
  *out = NULL;
  *count = 0;
  if (!json_is_array(j))
    return sk_error_set(err, SK_ETYPE, ptr, "expected an array of ops");
  size_t n = json_array_size(j);
  sk_op *ops = calloc(n ? n : 1, sizeof *ops);
  if (ops == NULL)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  for (size_t i = 0; i < n; i++) {
    char p[SK_ERROR_POINTER_MAX];
    snprintf(p, sizeof p, "%s", ptr);
    sk_pointer_push_index(p, sizeof p, i);
    int rc = sk_ops_parse_one(s, json_array_get(j, i), p, default_mesh, &ops[i], err);
    if (rc) {
      free(ops);
      return rc;
    }
  }
  *out = ops;
  *count = n;
  return 0;
}

/* ---- apply ------------------------------------------------------------------------ */

static int append_doubles(sk_strbuf *out, const double *v, size_t n) {
  char num[40];
  if (sk_strbuf_append(out, "[", 1))
    return SK_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    size_t len = sk_numfmt_f64(v[i], num);
    if ((i > 0 && sk_strbuf_append(out, ",", 1)) || sk_strbuf_append(out, num, len))
      return SK_ENOMEM;
  }
  return sk_strbuf_append(out, "]", 1) ? SK_ENOMEM : 0;
}

static int run_query(sk_bones *b, const sk_op *op, sk_strbuf *out) {
  const sk_mesh *mesh = op->has_mesh ? &op->mesh : NULL;
  double v[4];
  float m[16];
  size_t n = 3;
  bool is_matrix = false;
  switch (op->query) {
  case SK_Q_POSITION: sk_bone_get_position(b, op->bone, op->space, mesh, v); break;
  case SK_Q_ABSOLUTE_POSITION: sk_bone_get_position(b, op->bone, SK_SPACE_WORLD, mesh, v); break;
  case SK_Q_DIRECTION: sk_bone_get_direction(b, op->bone, op->v, mesh, v); break;
  case SK_Q_ROTATION: sk_bone_get_rotation(b, op->bone, op->space, mesh, v); break;
  case SK_Q_ROTATION_QUATERNION:
    sk_bone_get_rotation_quaternion(b, op->bone, op->space, mesh, v);
    n = 4;
    break;
  case SK_Q_ROTATION_MATRIX:
    sk_bone_get_rotation_matrix(b, op->bone, op->space, mesh, m);
    is_matrix = true;
    break;
  case SK_Q_SCALE: sk_bone_get_scale(b, op->bone, v); break;
  case SK_Q_ABSOLUTE_POSITION_FROM_LOCAL: sk_bone_get_absolute_position_from_local(b, op->bone, op->v, mesh, v); break;
  case SK_Q_LOCAL_POSITION_FROM_ABSOLUTE: sk_bone_get_local_position_from_absolute(b, op->bone, op->v, mesh, v); break;
  }
  if (out == NULL)
    return 0;
  if (sk_strbuf_append(out, "{\"query\":", 9) || sk_json_write_string(out, k_queries[op->query]) ||
      sk_strbuf_append(out, ",\"bone\":", 8) || sk_json_write_string(out, b->s->bones[op->bone].name) ||
      sk_strbuf_append(out, ",\"value\":", 9))
    return SK_ENOMEM;
  int rc = is_matrix ? sk_strbuf_append_f32_array(out, m, 16) : append_doubles(out, v, n);
  return rc || sk_strbuf_append(out, "}", 1) ? SK_ENOMEM : 0;
}

static void run_setter(sk_bones *b, const sk_op *op) {
  const sk_mesh *mesh = op->has_mesh ? &op->mesh : NULL;
  switch (op->kind) {
  case SK_OP_TRANSLATE: sk_bone_translate(b, op->bone, op->v, op->space, mesh); break;
  case SK_OP_SET_POSITION:
  case SK_OP_SET_ABSOLUTE_POSITION: sk_bone_set_position(b, op->bone, op->v, op->space, mesh); break;
  case SK_OP_SCALE: sk_bone_scale(b, op->bone, op->v, op->flag); break;
  case SK_OP_SET_SCALE: sk_bone_set_scale(b, op->bone, op->v); break;
  case SK_OP_SET_YAW_PITCH_ROLL:
    sk_bone_set_yaw_pitch_roll(b, op->bone, op->v[0], op->v[1], op->v[2], op->space, mesh);
    break;
  case SK_OP_ROTATE: sk_bone_rotate(b, op->bone, op->v, op->amount, op->space, mesh); break;
  case SK_OP_SET_AXIS_ANGLE: sk_bone_set_axis_angle(b, op->bone, op->v, op->amount, op->space, mesh); break;
  case SK_OP_SET_ROTATION: sk_bone_set_rotation(b, op->bone, op->v, op->space, mesh); break;
  case SK_OP_SET_ROTATION_QUATERNION: sk_bone_set_rotation_quaternion(b, op->bone, op->v, op->space, mesh); break;
  case SK_OP_SET_ROTATION_MATRIX: sk_bone_set_rotation_matrix(b, op->bone, op->matrix, op->space, mesh); break;
  case SK_OP_SET_CURRENT_POSE_AS_REST: sk_bone_set_current_pose_as_rest(b, op->bone); break;
  case SK_OP_IK: sk_ctrl_ik(b, op->bone, mesh, &op->ik); break;
  case SK_OP_LOOK_AT: sk_ctrl_look_at(b, op->bone, mesh, &op->look); break;
  case SK_OP_QUERY: break;
  }
}

int sk_ops_apply(sk_bones *b, const sk_op *ops, size_t count, sk_strbuf *results, size_t *nresults) {
  for (size_t i = 0; i < count; i++) {
    if (ops[i].kind != SK_OP_QUERY) {
      run_setter(b, &ops[i]);
      continue;
    }
    if (results != NULL && *nresults > 0 && sk_strbuf_append(results, ",", 1))
      return SK_ENOMEM;
    if (run_query(b, &ops[i], results))
      return SK_ENOMEM;
    (*nresults)++;
  }
  return 0;
}

int sk_ops_write_world_arrays(const float *w, const float *p, size_t n, bool world, bool positions, bool first,
                              sk_strbuf *out) {
  if (world && ((!first && sk_strbuf_append(out, ",", 1)) || sk_strbuf_append(out, "\"world\":", 8) ||
                sk_strbuf_append_f32_array(out, w, 16 * n)))
    return SK_ENOMEM;
  first = first && !world;
  if (positions && ((!first && sk_strbuf_append(out, ",", 1)) || sk_strbuf_append(out, "\"positions\":", 12) ||
                    sk_strbuf_append_f32_array(out, p, 3 * n)))
    return SK_ENOMEM;
  return 0;
}

int sk_ops_write_world(sk_bones *b, const sk_mesh *mesh, bool world, bool positions, bool first, sk_strbuf *out) {
  size_t n = b->s->count;
  float *w = malloc((n ? n : 1) * 16 * sizeof *w), *p = malloc((n ? n : 1) * 3 * sizeof *p);
  int rc = w == NULL || p == NULL ? SK_ENOMEM : 0;
  if (!rc) {
    sk_bones_world(b, mesh, w, p);
    rc = sk_ops_write_world_arrays(w, p, n, world, positions, first, out);
  }
  free(w);
  free(p);
  return rc;
}
