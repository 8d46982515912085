#include "sk_answer.h"

#include <stdio.h>
#include <string.h>

const sk_output_kind sk_answer_outputs[SK_OUT_KINDS] = {
#define SK_OUTPUT_ROW(kind, name, family, extra) {name, SK_OUT_##kind, family, extra},
    SK_OUTPUT_MAP(SK_OUTPUT_ROW)
#undef SK_OUTPUT_ROW
};

unsigned sk_answer_family_mask(int family) {
  unsigned m = 0;
  for (size_t k = 0; k < SK_OUT_KINDS; k++)
    if (sk_answer_outputs[k].family == family)
      m |= sk_answer_outputs[k].bit;
  return m;
}

unsigned sk_answer_output_bit(const char *name, size_t len) {
  for (size_t k = 0; k < SK_OUT_KINDS; k++)
    if (strlen(sk_answer_outputs[k].name) == len && memcmp(sk_answer_outputs[k].name, name, len) == 0)
      return sk_answer_outputs[k].bit;
  return 0;
}

uint64_t sk_answer_core_matrices(unsigned mask, uint64_t bones) {
  uint64_t n = 0;
  for (size_t k = 0; k < SK_OUT_KINDS; k++)
    if (sk_answer_outputs[k].family == SK_OUTPUT_CORE && (mask & sk_answer_outputs[k].bit))
      n += bones + sk_answer_outputs[k].extra;
  return n;
}

size_t sk_answer_output_names(char *dest, size_t size, const char *last) {
  size_t at = 0, named = 0;
  for (size_t k = 0; k < SK_OUT_KINDS; k++)
    named += sk_answer_outputs[k].family != SK_OUTPUT_MESH;
  for (size_t k = 0, i = 0; k < SK_OUT_KINDS; k++) {
    if (sk_answer_outputs[k].family == SK_OUTPUT_MESH)
      continue;
    const char *sep = i == 0 ? "" : i + 1 == named ? last : ", ";
    i++;
    int n = snprintf(at < size ? dest + at : NULL, at < size ? size - at : 0, "%s\"%s\"", sep,
                     sk_answer_outputs[k].name);
    at += n > 0 ? (size_t)n : 0;
  }
  return at;
}
