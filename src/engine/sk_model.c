#include "sk_model.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "sk_error.h"
#include "sk_ops.h"
#include "sk_sample.h"

/* Copies `text` (NULL stays NULL) into *dest. false: out of memory. */
static bool dup_text(const char *text, char **dest) {
  *dest = NULL;
  if (text == NULL)
    return true;
  return (*dest = strdup(text)) != NULL;
}

/* Sets the default mesh from its chain's JSON text: parsed and composed
 * here, once per published version, so every request reads a ready
 * sk_mesh. A chain that does not compose (a glTF file with a zero scale
 * above its mesh; JSON ones were refused at the PUT) leaves has_mesh false. */
static void model_mesh(sk_model *m) {
  m->has_mesh = false;
  if (m->mesh_json == NULL)
    return;
  json_t *j = json_loads(m->mesh_json, 0, NULL);
  bool has = false;
  if (j != NULL && sk_ops_parse_mesh(j, "/mesh", &has, &m->mesh, NULL) == 0)
    m->has_mesh = has;
  json_decref(j);
}

int sk_model_init(sk_model *m, sk_skeleton *skel, sk_anim *anim, const char *mesh_json, const char *skins_json,
                  int32_t skin) {
  memset(m, 0, sizeof *m);
  m->skel = skel;
  m->anim = anim;
  if (!dup_text(mesh_json, &m->mesh_json) || !dup_text(skins_json, &m->skins_json)) {
    sk_model_close(m);
    return SK_ENOMEM;
  }
  m->skin = skin;
  model_mesh(m);
  sk_skeleton_prepare(skel);
  m->bone_count = skel->count;
  if (sk_rig_create(skel, &m->rig) != 0) {
    sk_model_close(m);
    return SK_ENOMEM;
  }
  /* The stored pose, evaluated once: a small pose recomputes only the
   * subtrees it changes (sk_skeleton_evaluate_changed). Optional: without
   * memory for it, poses are evaluated in full. */
  const size_t base_floats = 16 * (2 * skel->count + 1);
  m->base_world = malloc(base_floats * sizeof(float));
  if (m->base_world != NULL) {
    m->base_final = m->base_world + 16 * skel->count;
    sk_skeleton_evaluate_base(skel, m->base_world, m->base_final);
    /* Its JSON text too: the matrices of bones a pose leaves alone are
     * copied into the answer instead of printed (printing ~1 000 floats
     * was half the cost of a JSON pose request). Optional as well. */
    sk_f32_text_build(&m->base_final_text, m->base_final, 16 * (skel->count + 1), 16);
  }
  /* Frame ranges hold the anim's sampler of every clip instead of building
   * one per request. Optional: without it, they build their own. Built here
   * only for small clips (a small upload, parsed on the loop anyway); large
   * ones got theirs where they were parsed, on the pool, or none (over the
   * cap: building it again here would stall the loop for nothing). */
  if (anim != NULL && sk_anim_memory(anim) <= SK_MODEL_SHARE_INLINE)
    sk_sampler_share(anim, SK_SAMPLER_SHARE_MAX);
  return 0;
}

void sk_model_set_geom(sk_model *m, sk_geom *geom, const sk_mesh_hook *hook) {
  sk_geom_unref(m->geom);
  m->geom = sk_geom_ref(geom);
  m->mesh_hook = hook;
}

void sk_model_close(sk_model *m) {
  sk_geom_unref(m->geom);
  sk_rig_destroy(m->rig);
  sk_f32_text_free(&m->base_final_text);
  free(m->base_world);
  sk_skeleton_destroy(m->skel);
  sk_anim_destroy(m->anim);
  free(m->mesh_json);
  free(m->skins_json);
  memset(m, 0, sizeof *m);
}

int sk_model_view_init(sk_model *m, sk_skeleton *s, bool batch) {
  memset(m, 0, sizeof *m);
  m->skel = s;
  m->bone_count = s->count;
  if (!batch)
    return 0;
  /* The rig snapshots the inverse binds and the base evaluation the
   * locals: both after any op that changed them. */
  m->base_world = malloc(16 * (2 * s->count + 1) * sizeof(float));
  if (m->base_world == NULL) {
    sk_model_view_close(m);
    return SK_ENOMEM;
  }
  /* Without a rig the exact core answers: the same bytes, slower. */
  if (sk_rig_create(s, &m->rig) != 0)
    m->rig = NULL;
  m->base_final = m->base_world + 16 * s->count;
  sk_skeleton_evaluate_base(s, m->base_world, m->base_final);
  return 0;
}

void sk_model_view_close(sk_model *m) {
  sk_geom_unref(m->geom);
  sk_rig_destroy(m->rig);
  free(m->base_world);
  memset(m, 0, sizeof *m);
}
