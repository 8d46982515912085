/* sk_routes_anim: the clips of a stored skeleton over HTTP. One clip's
 * detail (GET /v1/skeletons/{id}/animations/{clip}) and what an upload of
 * Babylon-format clips keeps (its JSON text, persisted and re-parsed on
 * load: the text is what the client sent, so a reload parses exactly the
 * bits it parsed the first time). */
#include <stdlib.h>
#include <string.h>

#include "sk_anim.h"
#include "sk_error.h"
#include "sk_problem.h"
#include "sk_routes_int.h"

int sk_routes__keep_babylon_source(const sk_routes *r, const sk_skeleton *s, sk_anim *anim, const char *text,
                                   size_t len, sk_error *err) {
  /* What the upload will hold in memory: the skeleton, its clips and the
   * text; the same cap a glTF upload's estimate meets. */
  size_t bytes = sk_cache_skeleton_bytes(s) + sk_anim_memory(anim) + len;
  if (bytes > r->cfg.max_skeleton)
    return sk_error_set(err, SK_ETOOBIG, "",
                        "the skeleton and its Babylon clips take %zu bytes; the limit is %zu (--max-skeleton-mb)", bytes,
                        r->cfg.max_skeleton);
  if ((anim->source = malloc(len ? len : 1)) == NULL)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  memcpy(anim->source, text, len);
  anim->source_len = len;
  return 0;
}

void sk_routes__animation(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  sk_cache_entry *e = sk_routes__entry_or_404(r, req, m);
  if (e == NULL)
    return;
  size_t clip;
  if (!m->clip_ok || m->clip[0] == 0 || e->anim == NULL || sk_anim_find_clip(e->anim, m->clip, &clip) != 0) {
    sk_problem(req, SK_ENOTFOUND, "", "skeleton \"%s\" has no clip \"%s\"%s", e->id, m->clip_ok ? m->clip : "(too long)",
               e->anim == NULL ? " (it has no animations)" : "");
    sk_cache_entry_unref(e);
    return;
  }
  sk_strbuf b = {0};
  sk_anim_write_clip_json(e->anim, e->skel, clip, &b); /* out of memory: b.failed, answered 503 */
  sk_cache_entry_unref(e);
  sk_routes__respond_json(req, 200, &b, NULL);
}
