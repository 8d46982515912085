#include "sk_vsin.h"

#include "sk_cpu.h"
#include "sk_error.h"
#include "sk_fdlibm.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define SK_VSIN_X86 1
#include <immintrin.h>
#endif

/* fdlibm's constants (src/sk_fdlibm.c: kernel_sin, kernel_cos, rem_pio2). */
#define VS1 (-1.66666666666666324348e-01)
#define VS2 8.33333333332248946124e-03
#define VS3 (-1.98412698298579493134e-04)
#define VS4 2.75573137070700676789e-06
#define VS5 (-2.50507602534068634195e-08)
#define VS6 1.58969099521155010221e-10
#define VC1 4.16666666666666019037e-02
#define VC2 (-1.38888888888741095749e-03)
#define VC3 2.48015872894767294178e-05
#define VC4 (-2.75573143513906633035e-07)
#define VC5 2.08757232129817482790e-09
#define VC6 (-1.13596475577881948265e-11)
#define VPIO2_1 1.57079632673412561417e+00
#define VPIO2_1T 6.07710050650619224932e-11
#define VPIO2_2 6.07710050630396597660e-11
#define VPIO2_2T 2.02226624879595063154e-21
/* acos's (sk_fdlibm_acos, asin_ratio) */
#define VPIO2_HI 1.57079632679489655800e+00
#define VPIO2_LO 6.12323399573676603587e-17
#define VPS0 1.66666666666666657415e-01
#define VPS1 (-3.25565818622400915405e-01)
#define VPS2 2.01212532134862925881e-01
#define VPS3 (-4.00555345006794114027e-02)
#define VPS4 7.91534994289814532176e-04
#define VPS5 3.47933107596021167570e-05
#define VQS1 (-2.40339491173441421878e+00)
#define VQS2 2.02094576023350569471e+00
#define VQS3 (-6.88283971605453293030e-01)
#define VQS4 7.70381505559019352791e-02

static void run_scalar(const double *x, double *y, size_t n) {
  for (size_t i = 0; i < n; i++)
    y[i] = sk_fdlibm_sin(x[i]);
}

static void run_acos_scalar(const double *x, double *y, size_t n) {
  for (size_t i = 0; i < n; i++)
    y[i] = sk_fdlibm_acos(x[i]);
}

#ifdef SK_VSIN_X86
/* Lanes of a comparison mask are all ones or all zeros: the sign bits say.
 * No SSE2 path: without SSE4.2's 64-bit compares GCC emulates the lane
 * tests, and two lanes then ran slower than the scalar code (2.8 against
 * 2.4 ns a sin). */
#define SKV(name) name##_avx2
#define SKV_ATTR __attribute__((target("avx2")))
#define SKV_N 4
#define SKV_ANY(m) (_mm256_movemask_pd((__m256d)(m)) != 0)
#define SKV_SQRT(v) ((vd_avx2)_mm256_sqrt_pd((__m256d)(v)))
#include "sk_vsin_lanes.h"

#define SKV(name) name##_avx512
#define SKV_ATTR __attribute__((target("avx512f,avx2")))
#define SKV_N 8
#define SKV_ANY(m) (_mm512_test_epi64_mask((__m512i)(m), (__m512i)(m)) != 0)
#define SKV_SQRT(v) ((vd_avx512)_mm512_sqrt_pd((__m512d)(v)))
#include "sk_vsin_lanes.h"
#endif

typedef void (*vsin_fn)(const double *x, double *y, size_t n);

typedef struct vsin_path {
  const char *name;
  sk_isa isa;
  unsigned needs; /* sk_cpu features; asking costs a load (sk_cpu.h): the
                   * path is picked at every call, and sk_sample calls once
                   * per frame and layer */
  vsin_fn run, run_acos;
} vsin_path;

/* Best first. */
static const vsin_path k_paths[] = {
#ifdef SK_VSIN_X86
    {"avx512", SK_ISA_AVX512, SK_CPU_AVX512F | SK_CPU_AVX2, run_avx512, run_acos_avx512},
    {"avx2", SK_ISA_AVX2, SK_CPU_AVX2, run_avx2, run_acos_avx2},
#endif
    {"scalar", SK_ISA_SCALAR, 0, run_scalar, run_acos_scalar},
};
#define NPATHS (sizeof k_paths / sizeof k_paths[0])

static const vsin_path *best(void) {
  for (size_t i = 0; i < NPATHS; i++)
    if (sk_cpu_has(k_paths[i].needs))
      return &k_paths[i];
  return &k_paths[NPATHS - 1];
}

void sk_vsin(const double *x, double *y, size_t n) { best()->run(x, y, n); }

const char *sk_vsin_path(void) { return best()->name; }

void sk_vsin_acos(const double *x, double *y, size_t n) { best()->run_acos(x, y, n); }

static int run_on(const char *path, bool acos, const double *x, double *y, size_t n) {
  /* "avx512", "avx2" or "scalar" */
  const int isa = sk_isa_parse(path);
  if (isa != SK_ISA_AVX512 && isa != SK_ISA_AVX2 && isa != SK_ISA_SCALAR)
    return SK_EINVAL;
  for (size_t i = 0; i < NPATHS; i++)
    if ((int)k_paths[i].isa == isa) {
      if (!sk_cpu_has(k_paths[i].needs))
        return SK_EUNSUPPORTED;
      (acos ? k_paths[i].run_acos : k_paths[i].run)(x, y, n);
      return 0;
    }
  return SK_EUNSUPPORTED; /* a known ISA this build has no code for */
}

int sk_vsin_on(const char *path, const double *x, double *y, size_t n) { return run_on(path, false, x, y, n); }

int sk_vsin_acos_on(const char *path, const double *x, double *y, size_t n) { return run_on(path, true, x, y, n); }
