/* sk_bench_mix: the exact kernel's instruction-mix bound (sk_bench_mix.h).
 *
 * One iteration is the AVX-512 exact kernel's common step for TRS input
 * (sk_kernel_lanes.h: load_local, then world_final), instruction class for
 * instruction class and in the same order:
 *
 *   compose   10 row loads widened (vcvtps2pd from memory), x2 y2 z2
 *             (3 adds), 5 products, 9 fused sums, 3 "1 - ..." subtractions,
 *             9 scaled entries (a multiply each) rounded to float32
 *             (vcvtpd2ps + vcvtps2pd)
 *   world     12 entries, column by column: the parent's entry loaded, a
 *             product and three fused terms (row 3: two and an add),
 *             rounded, stored to the world's slot
 *   final     12 entries: an inverse-bind entry broadcast, the same sum,
 *             narrowed to float32 (the pair's packing); the kernel issues
 *             column j of the final after column j+1 of the world
 *   store     8 inserts (the packed pairs and the constant column), the
 *             8-pose transpose (16 unpacks, 2 index loads, 8 two-source
 *             permutes), 8 stores of 64 bytes
 *
 * 38 multiplies, 75 FMAs, 12 adds, 33 narrowings, 31 widenings, 32
 * shuffles, 15 broadcasts, 14 loads, 20 stores, counted from the source;
 * `perf annotate` of group_avx512's hot blocks (which take in a little of
 * the neighbouring paths) shows the same classes within four of each. Every
 * instruction reads only zmm28-zmm31 (never written) or memory and writes
 * a register no later instruction of the iteration reads, so nothing waits
 * on anything: the iteration's time is the CPU's throughput for this list.
 * On the bench's rigs every bone but the root takes this step, and the
 * kernel also waits on its parent bone's world and on each sum's chain, so
 * it cannot beat this. Destinations rotate over
 * zmm0-zmm23 so an FMA (which reads its destination) is far from the last
 * write of the same register. */
#include "sk_bench_mix.h"

#include "sk_cpu.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SK_BENCH_MIX 1
#else
#define SK_BENCH_MIX 0
#endif

#if SK_BENCH_MIX
/* Entries read zmm30/zmm31 (operands), zmm29 (a float32 source), store
 * zmm28; loads and broadcasts go to zmm26/zmm27. %1 is a 512-byte scratch. */
#define MK_RW(op, d) op " %%zmm30, %%zmm31, %%zmm" d "\n\t"
#define MK_ROUND(d) "vcvtpd2ps %%zmm30, %%ymm" d "\n\tvcvtps2pd %%ymm29, %%zmm" d "\n\t"
#define MK_DOT4(a, b, c, d) MK_RW("vmulpd", a) MK_RW("vfmadd231pd", b) MK_RW("vfmadd231pd", c) MK_RW("vfmadd231pd", d)
#define MK_DOT3_1(a, b, c, d) MK_RW("vmulpd", a) MK_RW("vfmadd231pd", b) MK_RW("vfmadd231pd", c) MK_RW("vaddpd", d)
#define MK_W(a, b, c, d) "vmovapd 128(%1), %%zmm26\n\t" MK_DOT4(a, b, c, d) MK_ROUND(a) "vmovapd %%zmm28, 256(%1)\n\t"
#define MK_W3(a, b, c, d) "vmovapd 128(%1), %%zmm26\n\t" MK_DOT3_1(a, b, c, d) MK_ROUND(a) "vmovapd %%zmm28, 320(%1)\n\t"
#define MK_F(a, b, c, d) "vbroadcastsd 64(%1), %%zmm27\n\t" MK_DOT4(a, b, c, d) "vcvtpd2ps %%zmm30, %%ymm" b "\n\t"
#define MK_F3(a, b, c, d) "vbroadcastsd 64(%1), %%zmm27\n\t" MK_DOT3_1(a, b, c, d) "vcvtpd2ps %%zmm30, %%ymm" b "\n\t"
#define MK_WCOL(a, b, c, d) \
  MK_W(a, b, c, d) MK_W("4", "5", "6", "7") MK_W("8", "9", "10", "11") MK_W3("12", "13", "14", "15")
#define MK_FCOL(a, b, c, d) \
  MK_F(a, b, c, d) MK_F("16", "17", "18", "19") MK_F("20", "21", "22", "23") MK_F3("4", "5", "6", "7")
#define MK_WID(d) "vcvtps2pd (%1), %%zmm" d "\n\t"
#define MK_LOCAL(d) MK_RW("vmulpd", d) MK_ROUND(d)
#define MK_COMPOSE                                                                                                   \
  MK_WID("0") MK_WID("1") MK_WID("2") MK_WID("3") MK_WID("4") MK_WID("5") MK_WID("6") MK_WID("7") MK_WID("8")       \
  MK_WID("9") MK_RW("vaddpd", "10") MK_RW("vaddpd", "11") MK_RW("vaddpd", "12") MK_RW("vmulpd", "13")               \
  MK_RW("vmulpd", "14") MK_RW("vmulpd", "15") MK_RW("vmulpd", "16") MK_RW("vmulpd", "17")                           \
  MK_RW("vfmadd231pd", "18") MK_RW("vfmadd231pd", "19") MK_RW("vfmadd231pd", "20") MK_RW("vfmadd231pd", "21")       \
  MK_RW("vfmadd231pd", "22") MK_RW("vfmadd231pd", "23") MK_RW("vfmadd231pd", "0") MK_RW("vfmadd231pd", "1")         \
  MK_RW("vfmadd231pd", "2") MK_RW("vsubpd", "3") MK_RW("vsubpd", "4") MK_RW("vsubpd", "5") MK_LOCAL("6")             \
  MK_LOCAL("7") MK_LOCAL("8") MK_LOCAL("9") MK_LOCAL("10") MK_LOCAL("11") MK_LOCAL("12") MK_LOCAL("13")             \
  MK_LOCAL("14")
#define MK_INS(d) "vinsertf64x4 $1, %%ymm30, %%zmm31, %%zmm" d "\n\t"
#define MK_STORE                                                                                                     \
  MK_INS("16") MK_INS("17") MK_INS("18") MK_INS("19") MK_INS("20") MK_INS("21") MK_INS("22") MK_INS("23")           \
  MK_RW("vunpcklps", "0") MK_RW("vunpckhps", "1") MK_RW("vunpcklps", "2") MK_RW("vunpckhps", "3")                   \
  MK_RW("vunpcklps", "4") MK_RW("vunpckhps", "5") MK_RW("vunpcklps", "6") MK_RW("vunpckhps", "7")                   \
  MK_RW("vunpcklpd", "8") MK_RW("vunpckhpd", "9") MK_RW("vunpcklpd", "10") MK_RW("vunpckhpd", "11")                 \
  MK_RW("vunpcklpd", "12") MK_RW("vunpckhpd", "13") MK_RW("vunpcklpd", "14") MK_RW("vunpckhpd", "15")               \
  "vmovapd 192(%1), %%zmm26\n\tvmovapd 192(%1), %%zmm27\n\t"                                                        \
  "vpermt2ps %%zmm30, %%zmm29, %%zmm16\n\tvpermt2ps %%zmm30, %%zmm29, %%zmm17\n\t"                                   \
  "vpermt2ps %%zmm30, %%zmm29, %%zmm18\n\tvpermt2ps %%zmm30, %%zmm29, %%zmm19\n\t"                                   \
  "vpermt2ps %%zmm30, %%zmm29, %%zmm20\n\tvpermt2ps %%zmm30, %%zmm29, %%zmm21\n\t"                                   \
  "vpermt2ps %%zmm30, %%zmm29, %%zmm22\n\tvpermt2ps %%zmm30, %%zmm29, %%zmm23\n\t"                                   \
  "vmovups %%zmm28, 384(%1)\n\tvmovups %%zmm28, 448(%1)\n\tvmovups %%zmm28, 384(%1)\n\tvmovups %%zmm28, 448(%1)\n\t" \
  "vmovups %%zmm28, 384(%1)\n\tvmovups %%zmm28, 448(%1)\n\tvmovups %%zmm28, 384(%1)\n\tvmovups %%zmm28, 448(%1)\n\t"
/* world column 0; world 1 then final 0; world 2 then final 1; final 2
 * (with the 3 broadcasts of the constant column's pair); the store. */
#define MK_STEP                                                                                                      \
  MK_COMPOSE MK_WCOL("0", "1", "2", "3") MK_WCOL("16", "17", "18", "19") MK_FCOL("0", "1", "2", "3")                \
  MK_WCOL("20", "21", "22", "23") MK_FCOL("8", "9", "10", "11") MK_FCOL("12", "13", "14", "15")                     \
  "vbroadcastsd 64(%1), %%zmm27\n\tvbroadcastsd 64(%1), %%zmm27\n\tvbroadcastsd 64(%1), %%zmm27\n\t" MK_STORE

__attribute__((target("avx512f"))) static void mix_avx512(size_t iterations) {
  double scratch[64] __attribute__((aligned(64))) = {0};
  __asm__ volatile("vxorpd %%xmm28, %%xmm28, %%xmm28\n\t"
                   "vxorpd %%xmm29, %%xmm29, %%xmm29\n\t"
                   "vxorpd %%xmm30, %%xmm30, %%xmm30\n\t"
                   "vxorpd %%xmm31, %%xmm31, %%xmm31\n"
                   "1:\n\t" MK_STEP "dec %0\n\t"
                   "jnz 1b"
                   : "+r"(iterations)
                   : "r"(scratch)
                   : "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
                     "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20",
                     "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31");
}
#endif

bool sk_bench_mix_supported(void) {
#if SK_BENCH_MIX
  return sk_cpu_has(SK_CPU_AVX512F);
#else
  return false;
#endif
}

void sk_bench_mix_run(size_t iterations) {
#if SK_BENCH_MIX
  /* The loop tests after its body: 0 would run 2^64 times. */
  if (iterations != 0 && sk_bench_mix_supported())
    mix_avx512(iterations);
#else
  (void)iterations;
#endif
}
