/* sk_record: the bytes a stored skeleton is kept as (inside sk_store's
 * checksummed file), written and read field by field.
 *
 * Version 2, written by this build: a fixed header, the source a reload
 * needs (the glTF file and the ?skin= selector, to rebuild the clips), the
 * bone names, one fixed-size block per bone and a CRC-32, every number a
 * little-endian fixed-width integer or IEEE 754 value at a stated offset.
 * Nothing depends on a struct's layout, the compiler or the host's byte
 * order; proto/record.md lists every byte and how a version 3 would be
 * added. Version 1 (the memory images of sk_bone that earlier builds wrote,
 * x86-64/aarch64 layout) is still read, decoded at its fixed offsets, so an
 * upgrade keeps every stored skeleton; a record is rewritten in version 2
 * the next time its skeleton changes.
 *
 * Both keep every matrix and the TRS caches bit for bit: a decoded skeleton
 * answers every request exactly as the encoded one did. */
#ifndef SK_RECORD_H
#define SK_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_buf.h"
#include "sk_skeleton.h"

#define SK_RECORD_VERSION 2
#define SK_RECORD_HEADER 24     /* bytes before the skin selector */
#define SK_RECORD_BONE 556      /* bytes per bone */
#define SK_RECORD_SKIN_MAX 4096 /* longest ?skin= selector kept */
#define SK_RECORD_FLAG_JSON 2u  /* flags bit 1: the source is Babylon JSON text (bit 0: a mesh part) */
#define SK_RECORD_FLAG_CLIPS 4u /* flags bit 2: a clips part (retargeted clips) ends the record */

/* A decoded record. */
typedef struct sk_record {
  unsigned version;  /* the format it was read from: 1 or 2 */
  sk_skeleton *skel; /* owned until the caller takes it (set it to NULL) */
  const void *gltf;  /* borrowed from the decoded bytes; NULL for JSON skeletons */
  size_t gltf_len;
  char *skin;        /* owned, NUL-terminated ?skin= selector, or NULL */
  char *mesh_json;   /* owned, NUL-terminated default mesh of a JSON skeleton, or NULL */
  bool json;         /* `gltf` is the Babylon skeleton JSON text of an upload with clips (flags bit 1) */
  const void *clips; /* borrowed: the clips part (sk_retarget_clips_encode's bytes), or NULL */
  size_t clips_len;
} sk_record;

/* Longest default mesh text a record keeps (a 64-node chain is ~13 KB). */
#define SK_RECORD_MESH_MAX 65536

/* Appends a version-2 record of `s` to `out`, with the glTF file it came
 * from (`gltf` NULL for a JSON skeleton) and the ?skin= selector (NULL for
 * none; at most SK_RECORD_SKIN_MAX bytes). 0, SK_EINVAL (selector too long,
 * more than 2^32-1 bones or name bytes), SK_ENOMEM. */
int sk_record_encode(const sk_skeleton *s, const void *gltf, size_t gltf_len, const char *skin, sk_strbuf *out);
/* The same with a JSON skeleton's default mesh (`mesh_json`, the chain's
 * JSON text, at most SK_RECORD_MESH_MAX bytes; NULL: none, and the record
 * is byte for byte what sk_record_encode writes). With a mesh the header's
 * flags are 1 and a mesh part (u32 length, the text) follows the skeleton
 * part; records without one read as before. */
int sk_record_encode_mesh(const sk_skeleton *s, const void *gltf, size_t gltf_len, const char *skin,
                          const char *mesh_json, sk_strbuf *out);
/* sk_record_encode whose source may be Babylon skeleton JSON text (`json`
 * true, `skin` NULL): flags bit 1 says so, and a reload re-parses the text
 * for the clips. A record without the bit reads as before. */
int sk_record_encode_src(const sk_skeleton *s, const void *gltf, size_t gltf_len, const char *skin, bool json,
                         sk_strbuf *out);
/* Both: a skeleton whose source is JSON text (`json`) and that has a
 * default mesh (`mesh_json`, may be NULL). The other two call this. */
int sk_record_encode_full(const sk_skeleton *s, const void *gltf, size_t gltf_len, const char *skin, bool json,
                          const char *mesh_json, sk_strbuf *out);
/* sk_record_encode_full with a clips part (`clips`, opaque here; NULL or 0
 * bytes: none, and the record is sk_record_encode_full's): flags bit 2, then
 * u64 length and the bytes after the mesh part. */
int sk_record_encode_clips(const sk_skeleton *s, const void *gltf, size_t gltf_len, const char *skin, bool json,
                           const char *mesh_json, const void *clips, size_t clips_len, sk_strbuf *out);

/* Decodes a record of either version from data[0..len). On success `*rec`
 * holds a new skeleton and a new selector (release with sk_record_clear)
 * and points into `data` for the glTF bytes. SK_EFORMAT for anything that
 * is not exactly a record (wrong magic or version, lengths that do not add
 * up, a CRC mismatch, flags or bytes out of range, a broken skeleton
 * invariant), SK_ENOMEM. */
int sk_record_decode(const void *data, size_t len, sk_record *rec);

/* Frees what `rec` owns (NULL members are fine) and zeroes it. */
void sk_record_clear(sk_record *rec);

/* The skeleton part alone, as in a version-2 record after its source:
 * u32 bone count, u32 names size, u32 bone size, the names, the bones. Exposed for the
 * snapshot fuzz target. *used is the part's length. */
int sk_record_skeleton_encode(const sk_skeleton *s, sk_strbuf *out);
int sk_record_skeleton_decode(const void *data, size_t len, size_t *used, sk_skeleton **out);

/* The skeleton snapshot of a version-1 record ("SKSNAP01" ...), decoded
 * at version 1's fixed offsets. *used is its length. SK_EFORMAT, SK_ENOMEM. */
int sk_record_skeleton_decode_v1(const void *data, size_t len, size_t *used, sk_skeleton **out);

#endif
