/* SPDX-License-Identifier: MIT */
/*
 * test_fp_flags - the floating-point environment SPEC §1 requires, as seen
 * by code compiled with the project's flags (the same flags as ref/):
 *   - no contraction of a*b + c into a fused multiply-add (-ffp-contract=off),
 *     checked both in a plain function and in one compiled for a CPU that has
 *     FMA (where a compiler allowed to contract would use it);
 *   - FLT_EVAL_METHOD == 0 (binary32 operations evaluated in binary32);
 *   - subnormal results and operands are kept (no flush-to-zero /
 *     denormals-are-zero).
 *
 * The FMA case: a = b = 1 + 2^-12, c = -(1 + 2^-11).
 *   a*b = 1 + 2^-11 + 2^-24 exactly. In binary32 (ulp 2^-23 on [1,2)) this is
 *   a tie between 1 + 2^-11 (even last bit) and 1 + 2^-11 + 2^-23 (odd), so
 *   fl(a*b) = 1 + 2^-11 and fl(fl(a*b) + c) = 0 exactly;
 *   fma(a, b, c) = 2^-24 exactly (the exact sum is representable).
 */
#include <float.h>

#include "tutil.h"

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif

static volatile float va = 0x1.001p0f, vb = 0x1.001p0f, vc = -0x1.002p0f; /* 1+2^-12, -(1+2^-11) */

static float mul_add_plain(float a, float b, float c)
{
    return a * b + c;
}

#if HAVE_X86
/* compiled for a CPU with FMA: with contraction enabled GCC/Clang emit
 * vfmadd here; -ffp-contract=off must prevent it */
__attribute__((target("fma"), noinline)) static float mul_add_fma_target(float a, float b, float c)
{
    return a * b + c;
}
/* the same expression in a loop that the vectorizer may turn into SIMD FMA */
__attribute__((target("avx2,fma"), noinline)) static void
mul_add_loop(const float *a, const float *b, const float *c, float *r, int n)
{
    for (int i = 0; i < n; i++)
        r[i] = a[i] * b[i] + c[i];
}
#endif

int main(void)
{
    const float a = va, b = vb, c = vc;
    const float fused = fmaf(a, b, c);
    CHECKF(fused == 0x1p-24f, "fmaf reference: %a (want 0x1p-24)", (double)fused);
    float r1 = a * b + c;
    CHECKF(r1 == 0.0f && r1 != fused, "a*b + c inline = %a: contracted into an FMA?", (double)r1);
    float r2 = mul_add_plain(a, b, c);
    CHECKF(r2 == 0.0f, "a*b + c in a function = %a", (double)r2);
    const char *fma_note = "no FMA unit";
#if HAVE_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("fma")) {
        float r3 = mul_add_fma_target(a, b, c);
        CHECKF(r3 == 0.0f, "a*b + c with target(fma) = %a: contracted", (double)r3);
        fma_note = "FMA unit present, target(fma) code checked";
        if (__builtin_cpu_supports("avx2")) {
            float A[64], B[64], Cc[64], R[64];
            for (int i = 0; i < 64; i++) {
                A[i] = a;
                B[i] = b;
                Cc[i] = c;
            }
            mul_add_loop(A, B, Cc, R, 64);
            int ok = 1;
            for (int i = 0; i < 64; i++)
                ok &= R[i] == 0.0f;
            CHECKF(ok, "vectorizable a*b + c loop contracted");
        }
    }
#endif
    /* FLT_EVAL_METHOD: binary32 expressions are evaluated in binary32 */
    CHECKF(FLT_EVAL_METHOD == 0, "FLT_EVAL_METHOD = %d", (int)FLT_EVAL_METHOD);
    /* excess precision would make (a*b) - 1 keep the 2^-24 */
    volatile float p = a * b;
    CHECK(p - 1.0f == 0x1p-11f);

    /* subnormals: a product that underflows to a subnormal is kept ... */
    volatile float s1 = 0x1p-100f, s2 = 0x1p-40f;
    float sub = s1 * s2; /* 2^-140 */
    CHECKF(sub == 0x1p-140f && sub != 0.0f, "2^-100 * 2^-40 = %a (flush to zero?)", (double)sub);
    volatile float tiny = 0x1p-149f;
    CHECKF(tiny * 2.0f == 0x1p-148f, "2^-149 * 2 = %a", (double)(tiny * 2.0f));
    /* ... and a subnormal operand is not treated as zero */
    volatile float d = 0x1.8p-140f;
    CHECKF(d * 0x1p30f == 0x1.8p-110f, "subnormal operand read as zero (DAZ?)");
    CHECKF(d + d == 0x1.8p-139f, "subnormal sum");
    /* round to nearest, ties to even */
    volatile float one = 1.0f, half_ulp = 0x1p-24f;
    CHECK(one + half_ulp == 1.0f);
    CHECK((one + 0x1p-23f) + half_ulp == 1.0f + 0x1p-22f);

    char what[200];
    snprintf(what, sizeof what, "no FMA contraction (%s), FLT_EVAL_METHOD 0, subnormals kept, RNE",
             fma_note);
    return t_finish("test_fp_flags", what);
}
