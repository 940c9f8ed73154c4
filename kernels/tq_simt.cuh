/* SPDX-License-Identifier: MIT */
/*
 * tq_simt.cuh - the warp abstraction every tahq kernel is written against.
 *
 * Each kernel body is a "warp program": a template over a warp type W that is
 * run by one whole warp, with warp-uniform control flow; per-lane choices are
 * selects and masked memory operations. Two warp types exist:
 *
 *   DevW  (device only): one CUDA thread per lane; varying values are plain
 *         scalars, shuffles are __shfl_*_sync, ballots are __ballot_sync.
 *   HostW (host only):   a CPU emulation of a warp. A varying value is a
 *         vector of 32 lane values (LV<T>) and every operation is applied
 *         lane by lane with the same binary32 / integer operation, so a warp
 *         program gives bit-identical results on both. Shuffles, ballots and
 *         masked loads/stores follow the CUDA semantics.
 *
 * Types inside a program: W::F (float), W::D (double), W::U (uint32),
 * W::I (int32), W::U64 (uint64), W::B (bool) are per-lane ("varying"); binary64
 * arithmetic goes through vdadd/vdsub/vdmul (one IEEE operation each, never
 * contracted, tahq_device_math.cuh); plain C types are
 * warp-uniform. The host emulation is how test_device_math checks the whole
 * GPU pipeline against libtahq on a machine without a GPU.
 */
#ifndef TQ_SIMT_CUH
#define TQ_SIMT_CUH

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tahq_device_math.cuh"

/* ---- scalar overloads (device lanes, and uniform values anywhere) ------------- */

template <class T> TQ_HD T sel(bool c, T a, T b)
{
    return c ? a : b;
}
TQ_HD uint32_t fbits(float x)
{
    return tq_bits(x);
}
TQ_HD float ffloat(uint32_t w)
{
    return tq_float(w);
}
TQ_HD float u2f(uint32_t u)
{
    return (float)u;
}
TQ_HD float i2f(int32_t i)
{
    return (float)i;
}
TQ_HD uint32_t f2u(float f)
{
    return (uint32_t)f;
}
TQ_HD int32_t f2i(float f)
{
    return (int32_t)f;
}
TQ_HD uint32_t vmaxu(uint32_t a, uint32_t b)
{
    return a > b ? a : b;
}
TQ_HD uint32_t vminu(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}
TQ_HD int32_t vmaxi(int32_t a, int32_t b)
{
    return a > b ? a : b;
}
TQ_HD int32_t vmini(int32_t a, int32_t b)
{
    return a < b ? a : b;
}
TQ_HD uint64_t vminu64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}
TQ_HD uint32_t tq_popc32(uint32_t x)
{
#if defined(__CUDA_ARCH__)
    return (uint32_t)__popc(x);
#else
    return (uint32_t)__builtin_popcount(x);
#endif
}
TQ_HD uint32_t tq_popc64(uint64_t x)
{
#if defined(__CUDA_ARCH__)
    return (uint32_t)__popcll(x);
#else
    return (uint32_t)__builtin_popcountll(x);
#endif
}
TQ_HD uint32_t popc(uint32_t x)
{
    return tq_popc32(x);
}
TQ_HD uint32_t popc64(uint64_t x)
{
    return tq_popc64(x);
}
TQ_HD uint32_t tq_ctz32(uint32_t x)
{
#if defined(__CUDA_ARCH__)
    return (uint32_t)(__ffs((int)x) - 1);
#else
    return (uint32_t)__builtin_ctz(x);
#endif
}
TQ_HD uint32_t lo32(uint64_t x)
{
    return (uint32_t)x;
}
TQ_HD uint64_t u64(uint32_t x)
{
    return (uint64_t)x;
}
TQ_HD int32_t as_i32(uint32_t x)
{
    return (int32_t)x;
}
TQ_HD uint32_t as_u32(int32_t x)
{
    return (uint32_t)x;
}
TQ_HD uint32_t b2u(bool b)
{
    return b ? 1u : 0u;
}
TQ_HD double f2d(float x)
{
    return (double)x;
} /* exact */
TQ_HD double vdadd(double a, double b)
{
    return tq_dadd(a, b);
}
TQ_HD double vdsub(double a, double b)
{
    return tq_dsub(a, b);
}
TQ_HD double vdmul(double a, double b)
{
    return tq_dmul(a, b);
}

/* identity alias: makes a parameter a non-deduced context */
template <class T> struct tq_id {
    typedef T type;
};

/* The status block every pipeline keeps in its workspace. */
struct tq_status_block {
    unsigned long long bad;       /* min over bad inputs of (index << 1 | is_range); ~0 none */
    unsigned long long n_flagged; /* total of the flag scan */
    unsigned long long payload;   /* payload bytes (encoder: computed on the device) */
    unsigned int range;           /* encoder: metadata overflow; decoder: payload invalid */
    unsigned int crc_raw;         /* raw CRC register of the payload from 0 */
    unsigned int status;          /* decoder: final status after validation */
    unsigned int pad0;
    unsigned long long flag_count; /* decoder: popcount of the flag bitmap */
    unsigned long long pad[2];
};

/* =============================================================================== */
#if defined(__CUDACC__)

#define TQ_FULL 0xFFFFFFFFu

struct DevW {
    typedef float F;
    typedef double D;
    typedef uint32_t U;
    typedef int32_t I;
    typedef uint64_t U64;
    typedef bool B;

    static __device__ __forceinline__ U lane()
    {
        return threadIdx.x & 31u;
    }
    static __device__ __forceinline__ void sync()
    {
        __syncwarp();
    }

    template <class T> static __device__ __forceinline__ T shfl(T x, U src)
    {
        return __shfl_sync(TQ_FULL, x, (int)src);
    }
    template <class T> static __device__ __forceinline__ T shfl_xor(T x, unsigned m)
    {
        return __shfl_xor_sync(TQ_FULL, x, (int)m);
    }
    template <class T>
    static __device__ __forceinline__ T shfl_down(T x, unsigned d, unsigned width = 32)
    {
        return __shfl_down_sync(TQ_FULL, x, d, (int)width);
    }
    template <class T>
    static __device__ __forceinline__ T shfl_up(T x, unsigned d, unsigned width = 32)
    {
        return __shfl_up_sync(TQ_FULL, x, d, (int)width);
    }
    static __device__ __forceinline__ bool shfl(bool x, U src)
    {
        return __shfl_sync(TQ_FULL, (int)x, (int)src) != 0;
    }
    /* value of lane src, as a warp-uniform value */
    template <class T> static __device__ __forceinline__ T bcast(T x, unsigned src)
    {
        return __shfl_sync(TQ_FULL, x, (int)src);
    }
    static __device__ __forceinline__ uint32_t ballot(bool b)
    {
        return __ballot_sync(TQ_FULL, b);
    }
    static __device__ __forceinline__ bool any(bool b)
    {
        return __any_sync(TQ_FULL, b) != 0;
    }

    template <class Fn, class... A>
    static __device__ __forceinline__ auto apply(Fn f, const A &...a) -> decltype(f(a...))
    {
        return f(a...);
    }

    /* masked memory operations; idx is an element index */
    template <class T> static __device__ __forceinline__ T ld(const T *p, U64 i, bool m)
    {
        return m ? p[i] : T(0);
    }
    template <class T>
    static __device__ __forceinline__ void st(T *p, U64 i, typename tq_id<T>::type v, bool m)
    {
        if (m)
            p[i] = v;
    }
    static __device__ __forceinline__ U ld8(const uint8_t *p, U64 i, bool m)
    {
        return m ? (U)p[i] : 0u;
    }
    static __device__ __forceinline__ void st8(uint8_t *p, U64 i, U v, bool m)
    {
        if (m)
            p[i] = (uint8_t)v;
    }
    /* 16 bytes at p + i (16-byte aligned) */
    static __device__ __forceinline__ void ld16(const uint8_t *p, U64 i, bool m, U &a, U &b, U &c,
                                                U &d)
    {
        uint4 q = make_uint4(0u, 0u, 0u, 0u);
        if (m)
            q = *reinterpret_cast<const uint4 *>(p + i);
        a = q.x;
        b = q.y;
        c = q.z;
        d = q.w;
    }
    static __device__ __forceinline__ void st16(uint8_t *p, U64 i, U a, U b, U c, U d, bool m)
    {
        if (m)
            *reinterpret_cast<uint4 *>(p + i) = make_uint4(a, b, c, d);
    }
    /* 4 floats at p + i (i a multiple of 4); one 16-byte access when aligned */
    static __device__ __forceinline__ void ld4f(const float *p, U64 i, bool m, bool aligned, F &a,
                                                F &b, F &c, F &d)
    {
        a = b = c = d = 0.0f;
        if (m) {
            if (aligned) {
                float4 q = *reinterpret_cast<const float4 *>(p + i);
                a = q.x;
                b = q.y;
                c = q.z;
                d = q.w;
            } else {
                a = p[i];
                b = p[i + 1];
                c = p[i + 2];
                d = p[i + 3];
            }
        }
    }
    static __device__ __forceinline__ void st4f(float *p, U64 i, F a, F b, F c, F d, bool m,
                                                bool aligned)
    {
        if (m) {
            if (aligned) {
                *reinterpret_cast<float4 *>(p + i) = make_float4(a, b, c, d);
            } else {
                p[i] = a;
                p[i + 1] = b;
                p[i + 2] = c;
                p[i + 3] = d;
            }
        }
    }
    static __device__ __forceinline__ void atomic_min_u64(unsigned long long *p, U64 v, bool m)
    {
        if (m)
            atomicMin(p, (unsigned long long)v);
    }
    static __device__ __forceinline__ void atomic_add_u64(unsigned long long *p, U64 v, bool m)
    {
        if (m)
            atomicAdd(p, (unsigned long long)v);
    }
    static __device__ __forceinline__ void atomic_or_u32(unsigned int *p, U v, bool m)
    {
        if (m)
            atomicOr(p, v);
    }
    static __device__ __forceinline__ void atomic_add_u32(unsigned int *p, U64 i, U v, bool m)
    {
        if (m)
            atomicAdd(p + i, v);
    }
    static __device__ __forceinline__ void atomic_max_u32(unsigned int *p, U64 i, U v, bool m)
    {
        if (m)
            atomicMax(p + i, v);
    }
};

#endif /* __CUDACC__ */

/* =============================================================================== */
#if !defined(__CUDA_ARCH__)

#include <stdio.h>
#include <stdlib.h>
#include <utility>

/* A misaligned 16-byte access would fault on the device. */
[[noreturn]] inline void tq_misaligned(const char *what, const void *p)
{
    fprintf(stderr, "tq_simt: misaligned 16-byte %s at %p\n", what, p);
    abort();
}

template <class T> struct LV;

/* lane masks */
template <> struct LV<bool> {
    bool v[32];
    LV() : v() {}
    LV(bool s)
    {
        for (int i = 0; i < 32; i++)
            v[i] = s;
    }
    bool &operator[](int i)
    {
        return v[i];
    }
    const bool &operator[](int i) const
    {
        return v[i];
    }
    friend LV operator&&(const LV &a, const LV &b)
    {
        LV r;
        for (int i = 0; i < 32; i++)
            r.v[i] = a.v[i] && b.v[i];
        return r;
    }
    friend LV operator||(const LV &a, const LV &b)
    {
        LV r;
        for (int i = 0; i < 32; i++)
            r.v[i] = a.v[i] || b.v[i];
        return r;
    }
    friend LV operator==(const LV &a, const LV &b)
    {
        LV r;
        for (int i = 0; i < 32; i++)
            r.v[i] = a.v[i] == b.v[i];
        return r;
    }
    friend LV operator!=(const LV &a, const LV &b)
    {
        LV r;
        for (int i = 0; i < 32; i++)
            r.v[i] = a.v[i] != b.v[i];
        return r;
    }
    LV operator!() const
    {
        LV r;
        for (int i = 0; i < 32; i++)
            r.v[i] = !v[i];
        return r;
    }
};

/* 32 lane values of a varying T. */
template <class T> struct LV {
    T v[32];
    LV() : v() {}
    /* Broadcast of a uniform value. Only non-narrowing conversions are
     * accepted (int -> uint32, double -> float, uint64 -> uint32 do not
     * compile), so that host emulation and device agree on every type. */
    template <class S, class = decltype(T{std::declval<S>()})> LV(S s)
    {
        for (int i = 0; i < 32; i++)
            v[i] = T{s};
    }
    template <class S> explicit LV(const LV<S> &o)
    {
        for (int i = 0; i < 32; i++)
            v[i] = static_cast<T>(o.v[i]);
    }
    T &operator[](int i)
    {
        return v[i];
    }
    const T &operator[](int i) const
    {
        return v[i];
    }

#define TQ_LV_BIN(op)                                  \
    friend LV operator op(const LV &a, const LV &b)    \
    {                                                  \
        LV r;                                          \
        for (int i = 0; i < 32; i++)                   \
            r.v[i] = static_cast<T>(a.v[i] op b.v[i]); \
        return r;                                      \
    }
    TQ_LV_BIN(+)
    TQ_LV_BIN(-)
    TQ_LV_BIN(*)
    TQ_LV_BIN(/)
    TQ_LV_BIN(&)
    TQ_LV_BIN(|)
    TQ_LV_BIN(^)
#undef TQ_LV_BIN
    friend LV operator%(const LV &a, const LV &b)
    {
        LV r;
        for (int i = 0; i < 32; i++)
            r.v[i] = b.v[i] ? static_cast<T>(a.v[i] % b.v[i]) : T(0);
        return r;
    }
    /* shift counts are taken modulo the width, as the hardware does */
    friend LV operator<<(const LV &a, const LV &b)
    {
        LV r;
        for (int i = 0; i < 32; i++)
            r.v[i] = static_cast<T>(a.v[i] << (b.v[i] & (T)(sizeof(T) * 8 - 1)));
        return r;
    }
    friend LV operator>>(const LV &a, const LV &b)
    {
        LV r;
        for (int i = 0; i < 32; i++)
            r.v[i] = static_cast<T>(a.v[i] >> (b.v[i] & (T)(sizeof(T) * 8 - 1)));
        return r;
    }
    LV operator~() const
    {
        LV r;
        for (int i = 0; i < 32; i++)
            r.v[i] = static_cast<T>(~v[i]);
        return r;
    }
    LV operator-() const
    {
        LV r;
        for (int i = 0; i < 32; i++)
            r.v[i] = static_cast<T>(-v[i]);
        return r;
    }
#define TQ_LV_CMP(op)                                     \
    friend LV<bool> operator op(const LV &a, const LV &b) \
    {                                                     \
        LV<bool> r;                                       \
        for (int i = 0; i < 32; i++)                      \
            r.v[i] = a.v[i] op b.v[i];                    \
        return r;                                         \
    }
    TQ_LV_CMP(<)
    TQ_LV_CMP(<=)
    TQ_LV_CMP(>)
    TQ_LV_CMP(>=)
    TQ_LV_CMP(==)
    TQ_LV_CMP(!=)
#undef TQ_LV_CMP
    LV &operator+=(const LV &b)
    {
        return *this = *this + b;
    }
    LV &operator-=(const LV &b)
    {
        return *this = *this - b;
    }
    LV &operator|=(const LV &b)
    {
        return *this = *this | b;
    }
    LV &operator&=(const LV &b)
    {
        return *this = *this & b;
    }
    LV &operator^=(const LV &b)
    {
        return *this = *this ^ b;
    }
};

template <class T> inline LV<T> sel(const LV<bool> &c, const LV<T> &a, const LV<T> &b)
{
    LV<T> r;
    for (int i = 0; i < 32; i++)
        r.v[i] = c.v[i] ? a.v[i] : b.v[i];
    return r;
}

#define TQ_LV_UNARY(name, TIN, TOUT, expr) \
    inline LV<TOUT> name(const LV<TIN> &a) \
    {                                      \
        LV<TOUT> r;                        \
        for (int i = 0; i < 32; i++) {     \
            TIN x = a.v[i];                \
            r.v[i] = (expr);               \
        }                                  \
        return r;                          \
    }
TQ_LV_UNARY(fbits, float, uint32_t, tq_bits(x))
TQ_LV_UNARY(ffloat, uint32_t, float, tq_float(x))
TQ_LV_UNARY(u2f, uint32_t, float, (float)x)
TQ_LV_UNARY(i2f, int32_t, float, (float)x)
/* float -> integer of a value outside the range is undefined in C++; the
 * device saturates (NaN -> 0). Only garbage lanes or invalid inputs get there,
 * and their results are never used; emulate the saturation. */
TQ_LV_UNARY(f2u, float, uint32_t,
            (x != x || x <= 0.0f) ? 0u : (x >= 4294967296.0f ? 0xFFFFFFFFu : (uint32_t)x))
TQ_LV_UNARY(f2i, float, int32_t,
            (x != x)
                ? 0
                : (x <= -2147483648.0f ? INT32_MIN : (x >= 2147483648.0f ? INT32_MAX : (int32_t)x)))
TQ_LV_UNARY(popc, uint32_t, uint32_t, (uint32_t)__builtin_popcount(x))
TQ_LV_UNARY(popc64, uint64_t, uint32_t, (uint32_t)__builtin_popcountll(x))
TQ_LV_UNARY(lo32, uint64_t, uint32_t, (uint32_t)x)
TQ_LV_UNARY(u64, uint32_t, uint64_t, (uint64_t)x)
TQ_LV_UNARY(as_i32, uint32_t, int32_t, (int32_t)x)
TQ_LV_UNARY(as_u32, int32_t, uint32_t, (uint32_t)x)
TQ_LV_UNARY(b2u, bool, uint32_t, x ? 1u : 0u)
TQ_LV_UNARY(f2d, float, double, (double)x)
#undef TQ_LV_UNARY

#define TQ_LV_BINARY(name, T, expr)                   \
    inline LV<T> name(const LV<T> &a, const LV<T> &b) \
    {                                                 \
        LV<T> r;                                      \
        for (int i = 0; i < 32; i++) {                \
            T x = a.v[i], y = b.v[i];                 \
            r.v[i] = (expr);                          \
        }                                             \
        return r;                                     \
    }
TQ_LV_BINARY(vmaxu, uint32_t, x > y ? x : y)
TQ_LV_BINARY(vminu, uint32_t, x < y ? x : y)
TQ_LV_BINARY(vmaxi, int32_t, x > y ? x : y)
TQ_LV_BINARY(vmini, int32_t, x < y ? x : y)
TQ_LV_BINARY(vminu64, uint64_t, x < y ? x : y)
TQ_LV_BINARY(vdadd, double, tq_dadd(x, y))
TQ_LV_BINARY(vdsub, double, tq_dsub(x, y))
TQ_LV_BINARY(vdmul, double, tq_dmul(x, y))
#undef TQ_LV_BINARY

struct HostW {
    typedef LV<float> F;
    typedef LV<double> D;
    typedef LV<uint32_t> U;
    typedef LV<int32_t> I;
    typedef LV<uint64_t> U64;
    typedef LV<bool> B;

    static U lane()
    {
        U r;
        for (int i = 0; i < 32; i++)
            r.v[i] = (uint32_t)i;
        return r;
    }
    static void sync() {}

    template <class T> static LV<T> shfl(const LV<T> &x, const U &src)
    {
        LV<T> r;
        for (int i = 0; i < 32; i++)
            r.v[i] = x.v[src.v[i] & 31u];
        return r;
    }
    template <class T> static LV<T> shfl_xor(const LV<T> &x, unsigned m)
    {
        LV<T> r;
        for (int i = 0; i < 32; i++)
            r.v[i] = x.v[(i ^ (int)m) & 31];
        return r;
    }
    template <class T> static LV<T> shfl_down(const LV<T> &x, unsigned d, unsigned width = 32)
    {
        LV<T> r;
        for (int i = 0; i < 32; i++)
            r.v[i] = ((unsigned)i % width) + d < width ? x.v[i + (int)d] : x.v[i];
        return r;
    }
    template <class T> static LV<T> shfl_up(const LV<T> &x, unsigned d, unsigned width = 32)
    {
        LV<T> r;
        for (int i = 0; i < 32; i++)
            r.v[i] = ((unsigned)i % width) >= d ? x.v[i - (int)d] : x.v[i];
        return r;
    }
    template <class T> static T bcast(const LV<T> &x, unsigned src)
    {
        return x.v[src & 31u];
    }
    static uint32_t ballot(const B &b)
    {
        uint32_t m = 0;
        for (int i = 0; i < 32; i++)
            m |= (uint32_t)b.v[i] << i;
        return m;
    }
    static bool any(const B &b)
    {
        return ballot(b) != 0u;
    }

    template <class T> static const T &lane_of(const LV<T> &x, int i)
    {
        return x.v[i];
    }
    template <class T> static const T &lane_of(const T &x, int)
    {
        return x;
    }
    template <class Fn, class... A>
    static auto apply(Fn f, const A &...a) -> LV<decltype(f(lane_of(a, 0)...))>
    {
        LV<decltype(f(lane_of(a, 0)...))> r;
        for (int i = 0; i < 32; i++)
            r.v[i] = f(lane_of(a, i)...);
        return r;
    }

    template <class T> static LV<T> ld(const T *p, const U64 &i, const B &m)
    {
        LV<T> r;
        for (int l = 0; l < 32; l++)
            r.v[l] = m.v[l] ? p[i.v[l]] : T(0);
        return r;
    }
    template <class T>
    static void st(T *p, const U64 &i, const typename tq_id<LV<T>>::type &v, const B &m)
    {
        for (int l = 0; l < 32; l++)
            if (m.v[l])
                p[i.v[l]] = v.v[l];
    }
    static U ld8(const uint8_t *p, const U64 &i, const B &m)
    {
        U r;
        for (int l = 0; l < 32; l++)
            r.v[l] = m.v[l] ? (uint32_t)p[i.v[l]] : 0u;
        return r;
    }
    static void st8(uint8_t *p, const U64 &i, const U &v, const B &m)
    {
        for (int l = 0; l < 32; l++)
            if (m.v[l])
                p[i.v[l]] = (uint8_t)v.v[l];
    }
    static void ld16(const uint8_t *p, const U64 &i, const B &m, U &a, U &b, U &c, U &d)
    {
        for (int l = 0; l < 32; l++) {
            uint32_t q[4] = {0, 0, 0, 0};
            if (m.v[l]) {
                if (((uintptr_t)(p + i.v[l]) & 15u) != 0)
                    tq_misaligned("ld16", p + i.v[l]);
                memcpy(q, p + i.v[l], 16);
            }
            a.v[l] = q[0];
            b.v[l] = q[1];
            c.v[l] = q[2];
            d.v[l] = q[3];
        }
    }
    static void st16(uint8_t *p, const U64 &i, const U &a, const U &b, const U &c, const U &d,
                     const B &m)
    {
        for (int l = 0; l < 32; l++)
            if (m.v[l]) {
                if (((uintptr_t)(p + i.v[l]) & 15u) != 0)
                    tq_misaligned("st16", p + i.v[l]);
                uint32_t q[4] = {a.v[l], b.v[l], c.v[l], d.v[l]};
                memcpy(p + i.v[l], q, 16);
            }
    }
    static void ld4f(const float *p, const U64 &i, const B &m, bool aligned, F &a, F &b, F &c, F &d)
    {
        for (int l = 0; l < 32; l++) {
            float q[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            if (m.v[l]) {
                if (aligned && ((uintptr_t)(p + i.v[l]) & 15u) != 0)
                    tq_misaligned("ld4f", p + i.v[l]);
                memcpy(q, p + i.v[l], 16);
            }
            a.v[l] = q[0];
            b.v[l] = q[1];
            c.v[l] = q[2];
            d.v[l] = q[3];
        }
    }
    static void st4f(float *p, const U64 &i, const F &a, const F &b, const F &c, const F &d,
                     const B &m, bool aligned)
    {
        for (int l = 0; l < 32; l++)
            if (m.v[l]) {
                if (aligned && ((uintptr_t)(p + i.v[l]) & 15u) != 0)
                    tq_misaligned("st4f", p + i.v[l]);
                float q[4] = {a.v[l], b.v[l], c.v[l], d.v[l]};
                memcpy(p + i.v[l], q, 16);
            }
    }
    static void atomic_min_u64(unsigned long long *p, const U64 &v, const B &m)
    {
        for (int l = 0; l < 32; l++)
            if (m.v[l] && v.v[l] < *p)
                *p = v.v[l];
    }
    static void atomic_add_u64(unsigned long long *p, const U64 &v, const B &m)
    {
        for (int l = 0; l < 32; l++)
            if (m.v[l])
                *p += v.v[l];
    }
    static void atomic_or_u32(unsigned int *p, const U &v, const B &m)
    {
        for (int l = 0; l < 32; l++)
            if (m.v[l])
                *p |= v.v[l];
    }
    static void atomic_add_u32(unsigned int *p, const U64 &i, const U &v, const B &m)
    {
        for (int l = 0; l < 32; l++)
            if (m.v[l])
                p[i.v[l]] += v.v[l];
    }
    static void atomic_max_u32(unsigned int *p, const U64 &i, const U &v, const B &m)
    {
        for (int l = 0; l < 32; l++)
            if (m.v[l] && v.v[l] > p[i.v[l]])
                p[i.v[l]] = v.v[l];
    }
};

#endif /* !__CUDA_ARCH__ */

/* ---- warp-level helpers shared by the programs --------------------------------- */

/* Sum over all 32 lanes (integer; order irrelevant). Every lane gets it. */
template <class W> TQ_HD typename W::U warp_sum_u32(typename W::U x)
{
    for (unsigned m = 16; m >= 1; m >>= 1)
        x = x + W::shfl_xor(x, m);
    return x;
}
template <class W> TQ_HD typename W::U64 warp_sum_u64(typename W::U64 x)
{
    for (unsigned m = 16; m >= 1; m >>= 1)
        x = x + W::shfl_xor(x, m);
    return x;
}
/* Inclusive prefix sum over lanes 0..31. */
template <class W> TQ_HD typename W::U warp_incl_u32(typename W::U x)
{
    typedef typename W::U U;
    U lane = W::lane();
    for (unsigned d = 1; d < 32; d <<= 1) {
        U y = W::shfl_up(x, d);
        x = x + sel(lane >= U(d), y, U(0u));
    }
    return x;
}
template <class W> TQ_HD typename W::U64 warp_incl_u64(typename W::U64 x)
{
    typedef typename W::U U;
    typedef typename W::U64 U64;
    U lane = W::lane();
    for (unsigned d = 1; d < 32; d <<= 1) {
        U64 y = W::shfl_up(x, d);
        x = x + sel(lane >= U(d), y, U64((uint64_t)0));
    }
    return x;
}
template <class W> TQ_HD typename W::U64 warp_min_u64(typename W::U64 x)
{
    for (unsigned m = 16; m >= 1; m >>= 1)
        x = vminu64(x, W::shfl_xor(x, m));
    return x;
}

#endif /* TQ_SIMT_CUH */
