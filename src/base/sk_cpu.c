#include "sk_cpu.h"

#include <string.h>

int sk_isa_parse(const char *name) {
  static const char *const k_names[][2] = {
      [SK_ISA_SCALAR] = {"scalar", "generic"}, [SK_ISA_SSE2] = {"sse2", NULL},
      [SK_ISA_AVX2] = {"avx2", NULL},          [SK_ISA_AVX512] = {"avx512", NULL}};
  for (int i = 0; name != NULL && i < SK_ISA_COUNT; i++)
    for (int k = 0; k < 2; k++)
      if (k_names[i][k] != NULL && strcmp(name, k_names[i][k]) == 0)
        return i;
  return -1;
}
