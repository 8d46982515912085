#include "sk_retarget_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_buf.h"
#include "sk_gltf.h"
#include "sk_gltf_mesh.h"
#include "sk_json.h"
#include "sk_numfmt.h"
#include "sk_outfile.h"
#include "sk_retarget.h"
#include "sk_retarget_json.h"

static int put(sk_strbuf *b, const char *s) { return sk_strbuf_append(b, s, strlen(s)); }

static int put_f64(sk_strbuf *b, double v) {
  char num[40];
  size_t n = sk_numfmt_f64(v, num);
  return sk_strbuf_append(b, num, n);
}

int sk_retarget_cmd_write(const sk_anim_clip *c, const sk_skeleton *s, sk_strbuf *out) {
  static const char *const props[3] = {"position", "rotationQuaternion", "scaling"};
  int rc = put(out, "{\"name\":") || sk_json_write_string(out, c->name) || put(out, ",\"from\":0,\"to\":") ||
           put_f64(out, c->end_frame) || put(out, ",\"animations\":[");
  for (size_t k = 0; !rc && k < c->channel_count; k++) {
    const sk_anim_channel *ch = &c->channels[k];
    const size_t w = ch->path == SK_ANIM_ROTATION ? 4 : 3;
    rc = put(out, k ? ",{\"target\":" : "{\"target\":") || sk_json_write_string(out, s->bones[ch->bone].name) ||
         put(out, ",\"property\":\"") || put(out, props[ch->path]) || put(out, "\",\"frames\":[");
    for (size_t i = 0; !rc && i < ch->count; i++)
      rc = (i && put(out, ",")) || put_f64(out, ch->frames[i]);
    rc = rc || put(out, "],\"values\":[");
    for (size_t i = 0; !rc && i < ch->count; i++)
      for (size_t e = 0; !rc && e < w; e++)
        rc = put(out, e ? "," : i ? ",[" : "[") || put_f64(out, ch->values64[i * 3 * w + e]) ||
             (e + 1 == w && put(out, "]"));
    rc = rc || put(out, "]}");
  }
  rc = rc || put(out, "]}\n");
  return rc || out->failed ? SK_ENOMEM : 0;
}

typedef struct side {
  sk_skeleton *s;
  sk_anim *a;
  double *above;
  size_t above_count;
} side;

static int load(const char *path, side *sd, sk_error *err) {
  sk_strbuf b = {0};
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return sk_error_set(err, SK_EIO, "", "cannot open %.200s", path);
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    if (sk_strbuf_append(&b, chunk, n))
      break;
  int rc = ferror(f) ? sk_error_set(err, SK_EIO, "", "cannot read %.200s", path) : b.failed ? SK_ENOMEM : 0;
  fclose(f);
  sk_gltf_extra x;
  memset(&x, 0, sizeof x);
  size_t est;
  if (!rc)
    rc = sk_gltf_import_extra(b.data, b.len, NULL, 0, 0, &est, false, &sd->s, &sd->a, &x, err);
  if (!rc && sk_gltf_mesh_chain_above(x.mesh_json, true, &sd->above, &sd->above_count) != 0)
    rc = SK_ENOMEM;
  sk_gltf_extra_clear(&x);
  sk_strbuf_free(&b);
  return rc;
}

static void side_free(side *sd) {
  sk_anim_destroy(sd->a);
  sk_skeleton_destroy(sd->s);
  free(sd->above);
}

typedef struct rargs {
  const char *src, *dst, *clip, *opts, *out;
} rargs;

static int parse_args(int argc, char **argv, rargs *a) {
  memset(a, 0, sizeof *a);
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(argv[i], "--help") == 0)
      return -1;
    if ((strcmp(argv[i], "--clip") == 0 || strcmp(argv[i], "--options") == 0 || strcmp(argv[i], "-o") == 0) && v) {
      *(argv[i][2] == 'c' ? &a->clip : argv[i][2] == 'o' ? &a->opts : &a->out) = v;
      i++;
    } else if (argv[i][0] != '-' && a->src == NULL) {
      a->src = argv[i];
    } else if (argv[i][0] != '-' && a->dst == NULL) {
      a->dst = argv[i];
    } else {
      fprintf(stderr, "skinner retarget: unexpected argument \"%s\"\n", argv[i]);
      return 2;
    }
  }
  if (a->src == NULL || a->dst == NULL || a->clip == NULL) {
    fprintf(stderr, "skinner retarget: needs SOURCE.glb TARGET.glb --clip NAME\n");
    return 2;
  }
  return 0;
}

static int run(const rargs *a, sk_error *err) {
  side src = {0}, dst = {0};
  json_t *opts = NULL;
  sk_retarget_json rj = {0};
  sk_anim_clip clip = {0};
  sk_strbuf out = {0};
  size_t ci = 0;
  int rc = load(a->src, &src, err);
  if (!rc)
    rc = load(a->dst, &dst, err);
  if (!rc && a->opts != NULL)
    rc = sk_json_load(a->opts, strlen(a->opts), &opts, err);
  if (!rc)
    rc = sk_retarget_json_parse(opts, &rj, err);
  if (!rc && sk_anim_find_clip(src.a, a->clip, &ci) != 0)
    rc = sk_error_set(err, SK_ENOTFOUND, "/animation", "%.200s has no clip \"%.128s\"", a->src, a->clip);
  if (!rc) {
    const sk_retarget_side ss = {.s = src.s, .a = src.a, .above = src.above, .above_count = src.above_count};
    const sk_retarget_side ds = {.s = dst.s, .a = dst.a, .above = dst.above, .above_count = dst.above_count};
    rc = sk_retarget_clip(&ss, ci, &ds, &rj.o, &clip, err);
  }
  if (!rc)
    rc = sk_retarget_cmd_write(&clip, dst.s, &out);
  sk_outfile of = {0};
  if (!rc && (rc = sk_outfile_open(&of, a->out != NULL ? a->out : "-", err)) == 0) {
    if (fwrite(out.data, 1, out.len, of.f) != out.len) {
      sk_outfile_abort(&of);
      rc = sk_error_set(err, SK_EIO, "", "cannot write the clip");
    } else {
      rc = sk_outfile_commit(&of, err);
    }
  }
  sk_strbuf_free(&out);
  sk_retarget_clip_free(&clip);
  sk_retarget_json_free(&rj);
  json_decref(opts);
  side_free(&src);
  side_free(&dst);
  return rc;
}

int sk_retarget_cmd_main(int argc, char **argv) {
  rargs a;
  int st = parse_args(argc, argv, &a);
  if (st == -1) {
    printf("usage: skinner retarget SOURCE.glb TARGET.glb --clip NAME [--options JSON] [-o FILE]\n"
           "  retargets clip NAME of SOURCE onto TARGET's skin as Babylon's AnimatorAvatar does; OPTIONS uses\n"
           "  Babylon's names (mapNodeNames, fixRootPosition, groundReferenceNodeName, ...); writes the clip's\n"
           "  keys as JSON (stdout without -o)\n");
    return 0;
  }
  if (st)
    return st;
  sk_error err;
  sk_error_clear(&err);
  int rc = run(&a, &err);
  if (!rc)
    return 0;
  fprintf(stderr, "skinner retarget: %s at \"%s\": %s\n", sk_strerror(err.code ? err.code : rc), err.pointer, err.text);
  return rc == SK_ENOMEM || rc == SK_EIO ? 1 : 2;
}
