#include "sk_eval.h"

#include <stdlib.h>
#include <string.h>

#include "sk_json.h"

void sk_pose_close(sk_pose *pose) {
  free(pose->overrides);
  memset(pose, 0, sizeof *pose);
}

static bool key_allowed(const char *key, const char *const *a) {
  for (; a != NULL && *a != NULL; a++)
    if (strcmp(*a, key) == 0)
      return true;
  return false;
}

static int sub_pointer(char *buf, size_t cap, const char *ptr, const char *key) {
  snprintf(buf, cap, "%s", ptr);
  sk_pointer_push(buf, cap, key);
  return 0;
}

int sk_pose_parse(const sk_skeleton *s, const json_t *j, const char *ptr, const char *const *extra_keys, sk_pose *pose,
                  sk_error *err) {
  static const char *const own[] = {"bones", "initialSkinMatrix", "output", NULL};
  char p[SK_ERROR_POINTER_MAX];
  memset(pose, 0, sizeof *pose);
  pose->output = SK_OUT_FINAL;
  if (!json_is_object(j))
    return sk_error_set(err, SK_ETYPE, ptr, "expected a pose object");
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)j, key, val) {
    if (!key_allowed(key, own) && !key_allowed(key, extra_keys)) {
      sub_pointer(p, sizeof p, ptr, key);
      return sk_error_set(err, SK_EUNKNOWN, p, "unknown field \"%s\"", key);
    }
  }
  int rc;
  const json_t *bones = json_object_get(j, "bones");
  if (bones != NULL) {
    sub_pointer(p, sizeof p, ptr, "bones");
    if ((rc = sk_json_parse_overrides(s, bones, p, &pose->overrides, &pose->count, err)))
      return rc;
  }
  const json_t *ism = json_object_get(j, "initialSkinMatrix");
  if (ism != NULL && !json_is_null(ism)) {
    sub_pointer(p, sizeof p, ptr, "initialSkinMatrix");
    if ((rc = sk_json_floats(ism, 16, p, pose->initial_skin, err))) {
      sk_pose_close(pose);
      return rc;
    }
    pose->has_initial_skin = true;
  }
  sub_pointer(p, sizeof p, ptr, "output");
  if ((rc = sk_json_parse_output(json_object_get(j, "output"), p, &pose->output, err))) {
    sk_pose_close(pose);
    return rc;
  }
  return 0;
}

int sk_eval_buffers_init(sk_eval_buffers *b, size_t bones) {
  memset(b, 0, sizeof *b);
  size_t m = 16 * (bones + 1);
  b->bones = bones;
  b->locals = malloc(m * sizeof(float));
  b->scratch = malloc(m * sizeof(float));
  b->final = malloc(m * sizeof(float));
  b->absolute = malloc(m * sizeof(float));
  b->local = malloc(m * sizeof(float));
  if (!b->locals || !b->scratch || !b->final || !b->absolute || !b->local) {
    sk_eval_buffers_close(b);
    return SK_ENOMEM;
  }
  return 0;
}

void sk_eval_buffers_close(sk_eval_buffers *b) {
  free(b->locals);
  free(b->scratch);
  free(b->final);
  free(b->absolute);
  free(b->local);
  memset(b, 0, sizeof *b);
}

void sk_pose_evaluate(const sk_skeleton *s, const sk_pose *pose, sk_eval_buffers *buf) {
  const float *locals = NULL;
  if (pose->count > 0) {
    sk_skeleton_pose_locals(s, pose->overrides, pose->count, buf->locals);
    locals = buf->locals;
  }
  sk_skeleton_evaluate(s, locals, pose->has_initial_skin ? pose->initial_skin : NULL, buf->scratch,
                       (pose->output & SK_OUT_FINAL) ? buf->final : NULL,
                       (pose->output & SK_OUT_ABSOLUTE) ? buf->absolute : NULL,
                       (pose->output & SK_OUT_LOCAL) ? buf->local : NULL);
}

int sk_pose_write_json(const sk_skeleton *s, const sk_pose *pose, const sk_eval_buffers *buf, sk_strbuf *out) {
  return sk_json_write_result(out, s->count, (pose->output & SK_OUT_FINAL) ? buf->final : NULL,
                              (pose->output & SK_OUT_ABSOLUTE) ? buf->absolute : NULL,
                              (pose->output & SK_OUT_LOCAL) ? buf->local : NULL);
}

int sk_eval_write_order(const sk_skeleton *s, sk_strbuf *out) {
  if (sk_strbuf_append(out, "[", 1))
    return SK_ENOMEM;
  for (size_t i = 0; i < s->count; i++)
    if ((i > 0 && sk_strbuf_append(out, ",", 1)) || sk_json_write_string(out, s->bones[i].name))
      return SK_ENOMEM;
  return sk_strbuf_append(out, "]", 1) ? SK_ENOMEM : 0;
}

/* ---- ops ------------------------------------------------------------------ */

static int op_bone(const sk_skeleton *s, const json_t *op, const char *ptr, bool required, int32_t *bone,
                   sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  sub_pointer(p, sizeof p, ptr, "bone");
  const json_t *name = json_object_get(op, "bone");
  *bone = -1;
  if (name == NULL) {
    if (required)
      return sk_error_set(err, SK_EMISSING, p, "this op needs a \"bone\"");
    return 0;
  }
  if (!json_is_string(name))
    return sk_error_set(err, SK_ETYPE, p, "expected a bone name");
  *bone = sk_skeleton_find(s, json_string_value(name));
  if (*bone < 0)
    return sk_error_set(err, SK_ENOTFOUND, p, "no bone named \"%s\"", json_string_value(name));
  return 0;
}

static int check_op_keys(const json_t *op, const char *ptr, const char *const *allowed, sk_error *err) {
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)op, key, val) {
    if (!key_allowed(key, allowed)) {
      char p[SK_ERROR_POINTER_MAX];
      sub_pointer(p, sizeof p, ptr, key);
      return sk_error_set(err, SK_EUNKNOWN, p, "unknown field \"%s\"", key);
    }
  }
  return 0;
}

static int run_op(sk_skeleton *s, const json_t *op, const char *ptr, sk_eval_buffers *buf, sk_strbuf *out,
                  size_t *nresults, sk_error *err) {
  static const char *const k_op[] = {"op", NULL};
  static const char *const k_set[] = {"op", "bones", NULL};
  static const char *const k_bind[] = {"op", "bone", "matrix", "keepLocal", NULL};
  static const char *const k_rest[] = {"op", "bone", "matrix", NULL};
  static const char *const k_rtr[] = {"op", "bone", NULL};
  static const char *const k_eval[] = {"op", "initialSkinMatrix", "output", NULL};
  char p[SK_ERROR_POINTER_MAX];
  int rc;
  if (!json_is_object(op))
    return sk_error_set(err, SK_ETYPE, ptr, "expected an op object");
  const char *name = json_string_value(json_object_get(op, "op"));
  sub_pointer(p, sizeof p, ptr, "op");
  if (name == NULL)
    return sk_error_set(err, SK_EMISSING, p, "every op needs an \"op\" string");

  if (strcmp(name, "set") == 0) {
    if ((rc = check_op_keys(op, ptr, k_set, err)))
      return rc;
    sk_override *o;
    size_t n;
    const json_t *bones = json_object_get(op, "bones");
    sub_pointer(p, sizeof p, ptr, "bones");
    if (bones == NULL)
      return sk_error_set(err, SK_EMISSING, p, "\"set\" needs \"bones\"");
    if ((rc = sk_json_parse_overrides(s, bones, p, &o, &n, err)))
      return rc;
    sk_skeleton_apply(s, o, n);
    free(o);
    return 0;
  }
  if (strcmp(name, "pose") == 0 || strcmp(name, "evaluate") == 0) {
    bool is_pose = name[0] == 'p';
    sk_pose pose;
    if (!is_pose && (rc = check_op_keys(op, ptr, k_eval, err)))
      return rc;
    if ((rc = sk_pose_parse(s, op, ptr, k_op, &pose, err)))
      return rc;
    sk_pose_evaluate(s, &pose, buf);
    if (*nresults > 0 && sk_strbuf_append(out, ",", 1))
      rc = SK_ENOMEM;
    if (!rc)
      rc = sk_pose_write_json(s, &pose, buf, out);
    (*nresults)++;
    sk_pose_close(&pose);
    return rc ? sk_error_set(err, rc, ptr, "out of memory writing the result") : 0;
  }
  if (strcmp(name, "setBind") == 0 || strcmp(name, "setRest") == 0) {
    bool bind = name[3] == 'B';
    if ((rc = check_op_keys(op, ptr, bind ? k_bind : k_rest, err)))
      return rc;
    int32_t bone;
    if ((rc = op_bone(s, op, ptr, true, &bone, err)))
      return rc;
    float m[16];
    sub_pointer(p, sizeof p, ptr, "matrix");
    const json_t *mj = json_object_get(op, "matrix");
    if (mj == NULL)
      return sk_error_set(err, SK_EMISSING, p, "\"%s\" needs a \"matrix\"", name);
    if ((rc = sk_json_floats(mj, 16, p, m, err)))
      return rc;
    if (!bind) {
      sk_skeleton_set_rest(s, bone, m);
      return 0;
    }
    const json_t *kl = json_object_get(op, "keepLocal");
    if (kl != NULL && !json_is_boolean(kl)) {
      sub_pointer(p, sizeof p, ptr, "keepLocal");
      return sk_error_set(err, SK_ETYPE, p, "expected true or false");
    }
    if (sk_skeleton_set_bind(s, bone, m, json_is_true(kl)) != 0)
      return sk_error_set(err, SK_ESINGULAR, p, "the absolute bind matrix of bone \"%s\" would not be invertible",
                          s->bones[bone].name);
    return 0;
  }
  if (strcmp(name, "returnToRest") == 0) {
    if ((rc = check_op_keys(op, ptr, k_rtr, err)))
      return rc;
    int32_t bone;
    if ((rc = op_bone(s, op, ptr, false, &bone, err)))
      return rc;
    if (bone >= 0)
      sk_skeleton_bone_return_to_rest(s, bone);
    else
      sk_skeleton_return_to_rest(s);
    return 0;
  }
  return sk_error_set(err, SK_ERANGE, p, "unknown op \"%s\"", name);
}

int sk_eval_case(const json_t *c, sk_strbuf *out, sk_error *err) {
  static const char *const k_case[] = {"skeleton", "ops", NULL};
  if (!json_is_object(c))
    return sk_error_set(err, SK_ETYPE, "", "expected a case object {\"skeleton\", \"ops\"}");
  int rc = check_op_keys(c, "", k_case, err);
  if (rc)
    return rc;
  const json_t *skel = json_object_get(c, "skeleton");
  if (skel == NULL)
    return sk_error_set(err, SK_EMISSING, "/skeleton", "a case needs a \"skeleton\"");
  const json_t *ops = json_object_get(c, "ops");
  if (ops != NULL && !json_is_array(ops))
    return sk_error_set(err, SK_ETYPE, "/ops", "expected an array of ops");
  sk_skeleton *s;
  if ((rc = sk_json_parse_skeleton(skel, "/skeleton", 0, &s, err)))
    return rc;
  sk_eval_buffers buf;
  if ((rc = sk_eval_buffers_init(&buf, s->count))) {
    sk_skeleton_destroy(s);
    return sk_error_set(err, rc, "", "out of memory");
  }
  size_t nresults = 0;
  if (sk_strbuf_append(out, "{\"order\":", 9) || sk_eval_write_order(s, out) ||
      sk_strbuf_append(out, ",\"results\":[", 12))
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  for (size_t i = 0; !rc && i < json_array_size(ops); i++) {
    char p[SK_ERROR_POINTER_MAX] = "/ops";
    sk_pointer_push_index(p, sizeof p, i);
    rc = run_op(s, json_array_get(ops, i), p, &buf, out, &nresults, err);
  }
  if (!rc && sk_strbuf_append(out, "]}", 2))
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  sk_eval_buffers_close(&buf);
  sk_skeleton_destroy(s);
  return rc;
}
