#include "sk_model.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "sk_anim_memo.h"
#include "sk_error.h"
#include "sk_ops.h"
#include "sk_rootframes.h"
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

static void model_free(sk_model *m);

int sk_model_create(sk_skeleton *skel, sk_anim *anim, const char *mesh_json, const char *skins_json, int32_t skin,
                    sk_model **out) {
  *out = NULL;
  sk_model *m = calloc(1, sizeof *m);
  if (m == NULL) {
    sk_skeleton_destroy(skel);
    sk_anim_destroy(anim);
    return SK_ENOMEM;
  }
  m->refs = 1;
  m->skel = skel;
  m->anim = anim;
  if (!dup_text(mesh_json, &m->mesh_json) || !dup_text(skins_json, &m->skins_json)) {
    model_free(m);
    return SK_ENOMEM;
  }
  m->skin = skin;
  model_mesh(m);
  sk_skeleton_prepare(skel);
  m->bone_count = skel->count;
  if (sk_rig_create(skel, &m->rig) != 0) {
    model_free(m);
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
   * one per request, and additive layers at the default reference read
   * the keys made additive once. Optional: without them, requests build
   * their own. Built here only for small clips (a small upload, parsed on
   * the loop anyway); large ones got theirs where they were parsed, on the
   * pool, or none (over the cap: building them again here would stall the
   * loop for nothing). */
  if (anim != NULL && sk_anim_memory(anim) <= SK_MODEL_SHARE_INLINE) {
    sk_sampler_share(anim, SK_SAMPLER_SHARE_MAX);
    sk_anim_additive_share(anim, skel, SK_ANIM_ADDITIVE_SHARE_MAX);
  }
  *out = m;
  return 0;
}

void sk_model_set_geom(sk_model *m, sk_geom *geom, const sk_mesh_hook *hook) {
  sk_geom_unref(m->geom);
  m->geom = sk_geom_ref(geom);
  m->mesh_hook = hook;
}

static void model_free(sk_model *m) {
  sk_geom_unref(m->geom);
  sk_rig_destroy(m->rig);
  sk_f32_text_free(&m->base_final_text);
  free(m->base_world);
  sk_skeleton_destroy(m->skel);
  sk_anim_destroy(m->anim);
  free(m->mesh_json);
  free(m->skins_json);
  sk_rootframes_memo_release(m);
  free(m);
}

void sk_model_set_budget(sk_model *m, struct sk_budget *budget) {
  m->budget = budget;
  sk_anim_memo_set_budget(m->anim, budget); /* clips shared with older versions: the daemon's one budget */
}

sk_model *sk_model_ref(sk_model *m) {
  __atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
  return m;
}

void sk_model_unref(sk_model *m) {
  if (m == NULL)
    return;
  /* acq_rel: the thread that frees must see every other holder's reads done. */
  if (__atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) == 0)
    model_free(m);
}
