/* SPDX-License-Identifier: MIT */ /* paper_v1.c - the "paper-v1" compatibility profile: the authors' TAH-Quant
 * codec numerics and their raw wire layout (ref/SPEC.md Appendix A). No
 * header: the decoder takes the configuration and the shape from the caller. */
#include "internal.h"
#include "pairwise.h"

/* Binary32 constants of Appendix A.1. */
#define PV1_EPS 1e-30f           /* 0x1.4484cp-100, the authors' epsilon */
#define PV1_LN2 0x1.62e43p-1f    /* binary32 nearest ln 2 */
#define PV1_SQRT2 0x1.6a09e6p+0f /* binary32 nearest sqrt 2 */

/*@ // A configuration and shape that pv1_check accepts.
  @ predicate tahq_pv1_config_ok{L}(tahq_paper_v1_config *cfg) =
  @   \valid_read(cfg) && tahq_valid_tile(cfg->tile) && 1 <= cfg->hi_bits <= 8 &&
  @   1 <= cfg->lo_bits <= 8 && cfg->hi_permille <= 1000;
  @ predicate tahq_pv1_shape_ok{L}(tahq_paper_v1_config *cfg, tahq_shape *s) =
  @   \valid_read(s) && s->batch >= 1 && s->seq_len >= 1 && s->channels >= cfg->tile &&
  @   s->channels % cfg->tile == 0 && tahq_elements(s) <= 0x10000000000;
  @ // Bit p of an MSB-first stream (get_bit), and the number of ones among
  @ // bits off .. off+n-1.
  @ logic integer pv1_bit{L}(uint8_t *buf, integer p) = (buf[p / 8] >> (7 - p % 8)) & 1;
  @ logic integer pv1_ones{L}(uint8_t *buf, integer off, integer n) =
  @   n <= 0 ? 0 : pv1_ones(buf, off, n - 1) + pv1_bit(buf, off + n - 1);
  @ // Ones among the S map bits of sequence b (the map starts at bit off).
  @ logic integer pv1_seq_ones{L}(uint8_t *buf, integer off, integer S, integer b) =
  @   pv1_ones(buf, off + b * S, S);
  @ // Every count of bits of msg[0 .. len-1] is the same in states L1 and L2.
  @ predicate pv1_counts_kept{L1,L2}(uint8_t *msg, integer len) =
  @   \forall integer o, n; 0 <= o && 0 <= n && o + n <= 8 * len ==>
  @     pv1_ones{L1}(msg, o, n) == pv1_ones{L2}(msg, o, n);
  @*/

/*@ requires cfg == \null || \valid(cfg);
  @ assigns *cfg;
  @ ensures cfg != \null ==> tahq_pv1_config_ok(cfg); */
void tahq_paper_v1_config_default(tahq_paper_v1_config *cfg)
{
    if (!cfg)
        return;
    cfg->tile = 64;
    cfg->hi_bits = 4;
    cfg->lo_bits = 3;
    cfg->hi_permille = 800;
}

/*@ requires cfg == \null || \valid_read(cfg);
  @ requires shape == \null || \valid_read(shape);
  @ assigns \nothing;
  @ ensures \result == TAHQ_OK ==> cfg != \null && shape != \null &&
  @   tahq_pv1_config_ok(cfg) && tahq_pv1_shape_ok(cfg, shape); */
static tahq_status pv1_check(const tahq_paper_v1_config *cfg, const tahq_shape *shape)
{
    if (!cfg || !shape)
        return TAHQ_ERR_NULL;
    if (cfg->tile < TAHQ_TILE_MIN || cfg->tile > TAHQ_TILE_MAX || tahq_tile_log2(cfg->tile) == 0u ||
        cfg->hi_bits < 1u || cfg->hi_bits > TAHQ_BITS_MAX || cfg->lo_bits < 1u ||
        cfg->lo_bits > TAHQ_BITS_MAX || cfg->hi_permille > 1000u)
        return TAHQ_ERR_CONFIG;
    tahq_config c;
    tahq_config_default(&c);
    c.tile = cfg->tile;
    return tahq_check_shape(&c, shape);
}

/*@ requires cfg == \null || \valid_read(cfg);
  @ requires shape == \null || \valid_read(shape);
  @ assigns \nothing;
  @ ensures \result == TAHQ_OK ==> cfg != \null && shape != \null &&
  @   tahq_pv1_config_ok(cfg) && tahq_pv1_shape_ok(cfg, shape); */
tahq_status tahq_paper_v1_check(const tahq_paper_v1_config *cfg, const tahq_shape *shape)
{
    return pv1_check(cfg, shape);
}

/*@ assigns \nothing;
  @ ensures \result <= seq_len; */
uint64_t tahq_paper_v1_low_count(uint32_t seq_len, uint32_t hi_permille)
{
    /* The authors' int(S * (1 - r)) with r = 0.8 etc. as binary64 values:
     * C's truncation is their floor for a product >= 0; one below 0 (r > 1)
     * gives 0. The product is at most S (1 - r <= 1, rounding is monotone),
     * so the conversion is defined; the final min states q <= S for the
     * proof without a binary64 argument (it never changes q). */
    double r = (double)hi_permille / 1000.0;
    double n = (double)seq_len * (1.0 - r);
    if (!(n >= 0.0))
        return 0;
    if (!(n < (double)seq_len))
        return seq_len; /* r = 0: exactly S */
    uint64_t q = (uint64_t)n;
    return q < seq_len ? q : seq_len;
}

/* ---- layout (bit offsets, Appendix A.3) ----------------------------------- */

/*@ requires tahq_pv1_config_ok(cfg) && tahq_pv1_shape_ok(cfg, shape);
  @ requires \valid(l) && \separated(l, cfg) && \separated(l, shape);
  @ assigns *l;
  @ ensures l->B == shape->batch && l->S == shape->seq_len && l->C == shape->channels;
  @ ensures l->T == shape->channels / cfg->tile && l->T >= 1 && l->N == l->B * l->S * l->T;
  @ ensures l->k == tahq_lg(cfg->tile) && l->n_low <= l->S && l->n_high == l->S - l->n_low;
  @ ensures l->N <= 0x10000000000 && l->off_piv + l->N * 8 <= 0x400000000000;
  @ ensures l->B * l->S <= 0x10000000000 && l->off_lo == 0 && l->off_hi <= 0x100000000000;
  @ ensures l->off_map + l->B * l->S == l->off_flags && l->off_flags + l->N == l->off_piv;
  @ ensures l->T * \old(cfg->tile) == l->C;
  @ ensures l->B * l->S * l->C <= 0x10000000000 && l->n_elems == l->B * l->S * l->C;
  @ ensures l->off_hi == l->B * l->n_low * l->C * \old(cfg->lo_bits);
  @ ensures l->off_zero == l->off_hi + l->B * l->n_high * l->C * \old(cfg->hi_bits);
  @ ensures l->off_scale == l->off_zero + 16 * l->N && l->off_map == l->off_scale + 16 * l->N; */
void tahq_pv1_layout_compute(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                             tahq_pv1_layout *l)
{
    const uint64_t B = shape->batch, S = shape->seq_len, C = shape->channels;
    const uint64_t T = C / cfg->tile;
    /*@ assert B * S * C <= 0x10000000000 && 1 <= T <= C; */
    /*@ ghost tahq_mul_mono(1, C, B * S); */
    /*@ ghost tahq_mul_mono(T, C, B * S); */
    const uint64_t N = B * S * T;
    const uint64_t n_low = tahq_paper_v1_low_count(shape->seq_len, cfg->hi_permille);
    const uint64_t n_high = S - n_low;
    /*@ ghost tahq_mul_mono(n_low, S, B); */
    /*@ ghost tahq_mul_mono(B * n_low, B * S, C); */
    /*@ ghost tahq_mul_mono(cfg->lo_bits, 8, B * n_low * C); */
    /*@ ghost tahq_mul_mono(n_high, S, B); */
    /*@ ghost tahq_mul_mono(B * n_high, B * S, C); */
    /*@ ghost tahq_mul_mono(cfg->hi_bits, 8, B * n_high * C); */
    const uint64_t low_code_bits = B * n_low * C * cfg->lo_bits;
    const uint64_t high_code_bits = B * n_high * C * cfg->hi_bits;
    /*@ assert low_code_bits <= 0x80000000000 && high_code_bits <= 0x80000000000; */
    /*@ assert N <= 0x10000000000 && B * S <= 0x10000000000; */
    l->B = B;
    l->S = S;
    l->C = C;
    l->T = T;
    l->N = N;
    l->n_elems = B * S * C;
    l->rows = B * S;
    l->n_low = n_low;
    l->n_high = n_high;
    l->k = tahq_tile_log2(cfg->tile);
    l->G = cfg->tile;
    l->lo_bits = cfg->lo_bits;
    l->hi_bits = cfg->hi_bits;
    l->off_lo = 0;
    const uint64_t off_zero = low_code_bits + high_code_bits; /* low codes, then high codes */
    const uint64_t off_scale = off_zero + 16u * N;
    const uint64_t off_map = off_scale + 16u * N;
    const uint64_t off_flags = off_map + B * S;
    l->off_hi = low_code_bits;
    l->off_zero = off_zero;
    l->off_scale = off_scale;
    l->off_map = off_map;
    l->off_flags = off_flags;
    l->off_piv = off_flags + N;
    /*@ assert T * cfg->tile == C; */ /* (last: Qed would substitute it into the bounds above) */
}

/*@ assigns \nothing;
  @ ensures \result == (bits + 7) / 8; */
static uint64_t bytes_of_bits(uint64_t bits)
{
    return bits / 8u + (bits % 8u != 0u);
}

/*@ requires cfg == \null || \valid_read(cfg);
  @ requires shape == \null || \valid_read(shape);
  @ requires bytes == \null || (\valid(bytes) && \separated(bytes, cfg, shape));
  @ assigns *bytes; */
tahq_status tahq_paper_v1_encode_bound(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                                       size_t *bytes)
{
    if (!bytes)
        return TAHQ_ERR_NULL;
    tahq_status st = pv1_check(cfg, shape);
    if (st != TAHQ_OK)
        return st;
    tahq_pv1_layout l;
    tahq_pv1_layout_compute(cfg, shape, &l);
    /*@ ghost tahq_mul_mono(l.k, 8, l.N); */
    uint64_t total = bytes_of_bits(l.off_piv + l.N * l.k);
    if (total > (uint64_t)SIZE_MAX)
        return TAHQ_ERR_SHAPE;
    *bytes = (size_t)total;
    return TAHQ_OK;
}

/*@ requires cfg == \null || \valid_read(cfg);
  @ requires shape == \null || \valid_read(shape);
  @ requires bytes == \null || (\valid(bytes) && \separated(bytes, cfg, shape));
  @ assigns *bytes; */
tahq_status tahq_paper_v1_message_size(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                                       uint64_t n_flagged, size_t *bytes)
{
    if (!bytes)
        return TAHQ_ERR_NULL;
    tahq_status st = pv1_check(cfg, shape);
    if (st != TAHQ_OK)
        return st;
    tahq_pv1_layout l;
    tahq_pv1_layout_compute(cfg, shape, &l);
    if (n_flagged > l.N)
        return TAHQ_ERR_CONFIG;
    /*@ ghost tahq_mul_mono(n_flagged, l.N, l.k); */
    *bytes = (size_t)bytes_of_bits(l.off_piv + n_flagged * l.k);
    return TAHQ_OK;
}

/*@ requires cfg == \null || \valid_read(cfg);
  @ requires shape == \null || \valid_read(shape);
  @ requires bytes == \null || (\valid(bytes) && \separated(bytes, cfg, shape));
  @ assigns *bytes; */
tahq_status tahq_paper_v1_workspace_size(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                                         size_t *bytes)
{
    if (!bytes)
        return TAHQ_ERR_NULL;
    tahq_status st = pv1_check(cfg, shape);
    if (st != TAHQ_OK)
        return st;
    /* one 64-bit sort key per token of a sequence, plus alignment slack */
    uint64_t total = (uint64_t)shape->seq_len * sizeof(uint64_t) + sizeof(uint64_t) - 1u;
    if (total > (uint64_t)SIZE_MAX)
        return TAHQ_ERR_SHAPE;
    *bytes = (size_t)total;
    return TAHQ_OK;
}

/* ---- MSB-first bit stream -------------------------------------------------- */

/* ORs the n low bits of v (most significant first) into bits pos.. of buf
 * (the buffer is zeroed first). */
/*@ requires n <= 32 && pos + n + 7 <= UINT64_MAX;
  @ requires \valid(buf + (pos / 8 .. (pos + n + 7) / 8 - 1));
  @ assigns buf[pos / 8 .. (pos + n + 7) / 8 - 1]; */
static void put_bits(uint8_t *buf, uint64_t pos, uint32_t v, uint32_t n)
{
    /*@ loop invariant 0 <= j <= n;
      @ loop assigns j, buf[pos / 8 .. (pos + n + 7) / 8 - 1];
      @ loop variant n - j; */
    for (uint32_t j = 0; j < n; j++) {
        uint64_t p = pos + j;
        /*@ assert p >> 3 == p / 8 && p / 8 <= (pos + n + 7) / 8 - 1; */
        if ((v >> (n - 1u - j)) & 1u)
            buf[p >> 3] |= (uint8_t)(0x80u >> (p & 7u));
    }
}

/* Bit pos of buf (bit 0 is the most significant bit of byte 0). */
/*@ requires \valid_read(buf + pos / 8);
  @ assigns \nothing;
  @ ensures \result <= 1 && \result == pv1_bit(buf, pos); */
static uint32_t get_bit(const uint8_t *buf, uint64_t pos)
{
    uint32_t bit = (uint32_t)(pos & 7u);
    /*@ assert pos >> 3 == pos / 8 && bit == pos % 8; */
    return ((uint32_t)buf[pos >> 3] >> (7u - bit)) & 1u;
}

/* Bits pos .. pos+n-1 of buf as an integer, the first one most significant. */
/*@ requires n <= 32 && pos + n + 7 <= UINT64_MAX;
  @ requires \valid_read(buf + (pos / 8 .. (pos + n + 7) / 8 - 1));
  @ assigns \nothing;
  @ ensures n <= 8 ==> \result < (1 << n); */
static uint32_t get_bits(const uint8_t *buf, uint64_t pos, uint32_t n)
{
    uint32_t v = 0;
    /*@ loop invariant 0 <= j <= n;
      @ loop invariant n <= 8 ==> v + (1 << (n - j)) <= (1 << n);
      @ loop assigns j, v;
      @ loop variant n - j; */
    for (uint32_t j = 0; j < n; j++) {
        uint64_t p = pos + j;
        /*@ assert p / 8 <= (pos + n + 7) / 8 - 1; */
        const uint32_t shift = n - 1u - j;
        /*@ assert shift <= 31 && (1 << shift) <= 0x80000000; */
        if (get_bit(buf, p))
            v |= 1u << shift; /* (a weight, not a running shift: no bound on v needed) */
    }
    return v;
}

/* An fp16 value in the stream: its two bytes, low byte first, each MSB-first
 * (Appendix A.3). */
/*@ requires pos + 23 <= UINT64_MAX;
  @ requires \valid(buf + (pos / 8 .. (pos + 23) / 8 - 1));
  @ assigns buf[pos / 8 .. (pos + 23) / 8 - 1]; */
static void put_f16(uint8_t *buf, uint64_t pos, uint16_t h)
{
    put_bits(buf, pos, h & 0xFFu, 8u);
    put_bits(buf, pos + 8u, (uint32_t)h >> 8, 8u);
}

/*@ requires pos + 23 <= UINT64_MAX;
  @ requires \valid_read(buf + (pos / 8 .. (pos + 23) / 8 - 1));
  @ assigns \nothing; */
static uint16_t get_f16(const uint8_t *buf, uint64_t pos)
{
    const uint32_t lo = get_bits(buf, pos, 8u);
    const uint32_t hi = get_bits(buf, pos + 8u, 8u);
    /*@ assert lo <= 255 && hi <= 255; */
    /*@ assert (hi << 8) <= (255 << 8); */
    return (uint16_t)(lo | (hi << 8));
}

/* ---- numerics (Appendix A.1, A.2) ------------------------------------------ */

/*@ assigns \nothing; */
float tahq_paper_v1_ln(float y)
{
    return tahq_log2(y) * PV1_LN2;
}

/* Both sums combine the tile sums pairwise (SPEC §2.5), as the codec does. */
/*@ requires tahq_valid_tile(tile) && channels >= tile;
  @ requires \valid_read(x + (0 .. channels - 1));
  @ assigns \nothing; */
float tahq_paper_v1_entropy(const float *x, uint32_t channels, uint32_t tile)
{
    /*@ assert tahq_popcount(0) == 0; */
    const uint32_t T = channels / tile;
    float w[TAHQ_TILE_MAX];
    /*@ assert 1 <= T; */
    /*@ assert T * tile <= channels; */
    tahq_pairwise_acc acc = {.count = 0, .depth = 0};
    /*@ loop invariant 0 <= t <= T && acc.count == t && acc.depth == tahq_popcount(t);
      @ loop assigns t, acc, w[0 .. 255];
      @ loop variant T - t; */
    for (uint32_t t = 0; t < T; t++) {
        /*@ assert (t + 1) * tile <= T * tile; */
        /*@ loop invariant 0 <= i <= tile;
          @ loop assigns i, w[0 .. 255];
          @ loop variant tile - i; */
        for (uint32_t i = 0; i < tile; i++)
            w[i] = tahq_absf(x[(uint64_t)t * tile + i]);
        tahq_pairwise_push(&acc, tahq_tree_sum(w, tile));
    }
    const float den = tahq_pairwise_finish(&acc) + PV1_EPS;
    tahq_pairwise_acc hacc = {.count = 0, .depth = 0};
    /*@ loop invariant 0 <= t <= T && hacc.count == t && hacc.depth == tahq_popcount(t);
      @ loop assigns t, hacc, w[0 .. 255];
      @ loop variant T - t; */
    for (uint32_t t = 0; t < T; t++) {
        /*@ assert (t + 1) * tile <= T * tile; */
        /*@ loop invariant 0 <= i <= tile;
          @ loop assigns i, w[0 .. 255];
          @ loop variant tile - i; */
        for (uint32_t i = 0; i < tile; i++) {
            float p = tahq_absf(x[(uint64_t)t * tile + i]) / den;
            w[i] = p * tahq_paper_v1_ln(p + PV1_EPS);
        }
        tahq_pairwise_push(&hacc, tahq_tree_sum(w, tile));
    }
    return 0.0f - tahq_pairwise_finish(&hacc);
}

/*@ requires 1 <= tile <= 256 && \valid_read(x + (0 .. tile - 1));
  @ requires pivot == \null || (\valid(pivot) && \separated(pivot, x + (0 .. tile - 1)));
  @ assigns *pivot;
  @ ensures \result == 0 || \result == 1;
  @ ensures pivot_in_tile: pivot != \null ==> *pivot < tile; */
int tahq_paper_v1_gate(const float *x, uint32_t tile, uint32_t *pivot)
{
    float m1 = tahq_absf(x[0]);
    uint32_t d = 0;
    /*@ loop invariant 1 <= i <= tile && d < i;
      @ loop assigns i, m1, d;
      @ loop variant tile - i; */
    for (uint32_t i = 1; i < tile; i++) {
        float a = tahq_absf(x[i]);
        if (a > m1) {
            m1 = a;
            d = i;
        }
    }
    float m2 = -1.0f;
    /*@ loop invariant 0 <= i <= tile;
      @ loop assigns i, m2;
      @ loop variant tile - i; */
    for (uint32_t i = 0; i < tile; i++) {
        float a = tahq_absf(x[i]);
        if (i != d && a > m2)
            m2 = a;
    }
    if (pivot)
        *pivot = d;
    return m1 >= 2.0f * m2;
}

/*@ requires tahq_valid_tile(tile);
  @ assigns \nothing; */
static float pv1_sqrt_tile(uint32_t tile)
{
    uint32_t k = tahq_tile_log2(tile);
    float p = (float)(1u << (k / 2u));   /* 2^floor(k/2), exact */
    return (k & 1u) ? p * PV1_SQRT2 : p; /* exact scaling of fl(sqrt 2) */
}

/*@ requires tahq_valid_tile(tile) && pivot < tile && \valid(v + (0 .. tile - 1));
  @ assigns v[0 .. tile - 1]; */
void tahq_paper_v1_hadamard(float *v, uint32_t tile, uint32_t pivot, int inverse)
{
    float r = pv1_sqrt_tile(tile);
    if (!inverse) {
        float t = v[0];
        v[0] = v[pivot];
        v[pivot] = t;
    }
    tahq_fwht(v, tile);
    /*@ loop invariant 0 <= i <= tile;
      @ loop assigns i, v[0 .. tile - 1];
      @ loop variant tile - i; */
    for (uint32_t i = 0; i < tile; i++)
        v[i] = v[i] / r;
    if (inverse) {
        float t = v[0];
        v[0] = v[pivot];
        v[pivot] = t;
    }
}

/*@ requires 1 <= tile <= 256 && 1 <= bits <= 8 && \valid_read(v + (0 .. tile - 1));
  @ requires in_range: \forall integer i; 0 <= i < tile ==> tahq_mag(v[i]) < 0x5F800000;
  @ requires \valid(zero) && \valid(scale) && \valid(codes + (0 .. tile - 1));
  @ requires \separated(zero, scale, codes + (0 .. tile - 1), v + (0 .. tile - 1));
  @ assigns *zero, *scale, codes[0 .. tile - 1];
  @ ensures code_range: \forall integer i; 0 <= i < tile ==> codes[i] <= (1 << bits) - 1; */
void tahq_paper_v1_quantize_tile(const float *v, uint32_t tile, uint32_t bits, float *zero,
                                 float *scale, uint8_t *codes)
{
    float lo = v[0], hi = v[0];
    /*@ loop invariant 1 <= i <= tile;
      @ loop assigns i, lo, hi;
      @ loop variant tile - i; */
    for (uint32_t i = 1; i < tile; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    const uint32_t levels = (1u << bits) - 1u;
    float L = (float)levels;
    float s = (hi - lo) / L;
    if (!(s >= PV1_EPS))
        s = PV1_EPS;
    /*@ loop invariant 0 <= i <= tile;
      @ loop invariant \forall integer j; 0 <= j < i ==> codes[j] <= levels;
      @ loop assigns i, codes[0 .. tile - 1];
      @ loop variant tile - i; */
    for (uint32_t i = 0; i < tile; i++) {
        float t = (v[i] - lo) / s;
        if (t > L)
            t = L;
        /* 0 <= t <= L: v >= lo, s > 0 (tested) */
        codes[i] = tahq_nearest_code(t, levels);
    }
    *zero = lo;
    *scale = s;
}

/* ---- the reordered walk (Appendix A.3) -------------------------------------- */

/* *dst = v, for a byte outside the message. The message's bit counts (the
 * walk's facts) then hold in the new state too; in WP's typed model every
 * byte store is a new state of the one byte memory, and the counts are a
 * recursive function of it, so the ghost loop carries them across by
 * induction on the count's length. */
/*@ requires \valid(dst) && \separated(dst, msg + (0 .. len - 1)) && len <= 0x100000000000;
  @ assigns *dst;
  @ ensures *dst == v && pv1_counts_kept{Pre, Post}(msg, len); */
static void pv1_put_u8(uint8_t *dst, uint8_t v, const uint8_t *msg, size_t len)
{
    (void)msg; /* read by the ghost loop only */
    (void)len;
    *dst = v;
    /*@ ghost
      @ /@ loop invariant 0 <= n <= 8 * len;
      @  @ loop invariant \forall integer o, m; 0 <= o && 0 <= m <= n && o + m <= 8 * len ==>
      @  @   pv1_ones{Pre}(msg, o, m) == pv1_ones(msg, o, m);
      @  @ loop assigns n;
      @  @ loop variant 8 * len - n; @/
      @ for (uint64_t n = 0; n < 8 * len; n++)
      @   /@ assert \forall integer o; 0 <= o && o + n < 8 * len ==>
      @    @   pv1_bit{Pre}(msg, o + n) == pv1_bit(msg, o + n); @/ ;
      @*/
}

/* Counting ones over a growing prefix: the count grows by at most the length
 * added (induction on n2, one bit per step). */
/*@ ghost
  /@ requires n1 <= n2;
   @ assigns \nothing;
   @ ensures pv1_ones(buf, off, n1) <= pv1_ones(buf, off, n2);
   @ ensures pv1_ones(buf, off, n2) - pv1_ones(buf, off, n1) <= n2 - n1; @/
  static void pv1_ones_grow(const uint8_t *buf, uint64_t off, uint64_t n1, uint64_t n2)
  {
      /@ loop invariant n1 <= n <= n2;
       @ loop invariant pv1_ones(buf, off, n1) <= pv1_ones(buf, off, n);
       @ loop invariant pv1_ones(buf, off, n) - pv1_ones(buf, off, n1) <= n - n1;
       @ loop assigns n;
       @ loop variant n2 - n; @/
      for (uint64_t n = n1; n < n2; n++)
          /@ assert 0 <= pv1_bit(buf, off + n) <= 1; @/ ;
  }
*/

/* The tokens of one sequence in reordered order: the low tokens (map bit 1)
 * in ascending position, then the high tokens (map bit 0). A walk is a value:
 * pv1_walk_start gives the state before the first token, each pv1_walk_next
 * the next token, S of them in all (found is 0 past the last). For a found
 * token, pos is its position, low its map bit, visited - 1 its reordered row
 * within the sequence and pass_rank its row among the tokens of its
 * precision. The map must hold n_low ones (pv1_open checks it; the encoder
 * marks exactly that many), which bounds the ranks. */
typedef struct pv1_walk {
    uint64_t S, map_off, n_low; /* tokens; first map bit; ones in the map */
    int pass;                   /* 1 while handing out low tokens, then 0 */
    uint64_t scan;              /* next position the pass looks at */
    uint64_t visited;           /* tokens handed out */
    uint64_t pass_visited;      /* tokens of this pass handed out */
    int found, low;
    uint64_t pos, pass_rank;
} pv1_walk;

/*@ // The walk's counters are the counts of map bits it has scanned.
  @ predicate pv1_walk_ok{L}(uint8_t *map, pv1_walk w) =
  @   w.S <= 0x10000000000 && w.map_off + w.S <= 0x400000000000 &&
  @   \valid_read(map + (w.map_off / 8 .. (w.map_off + w.S + 7) / 8 - 1)) &&
  @   pv1_ones(map, w.map_off, w.S) == w.n_low && w.n_low <= w.S && w.scan <= w.S &&
  @   (w.pass == 1 ==> w.pass_visited == pv1_ones(map, w.map_off, w.scan) &&
  @                    w.visited == w.pass_visited) &&
  @   (w.pass == 0 ==> w.pass_visited == w.scan - pv1_ones(map, w.map_off, w.scan) &&
  @                    w.visited == w.n_low + w.pass_visited) &&
  @   (w.pass == 0 || w.pass == 1);
  @ // What is left to scan (decreases with every token handed out).
  @ logic integer pv1_walk_left(pv1_walk w) = w.pass == 1 ? 2 * w.S + 1 - w.scan : w.S - w.scan;
  @*/

/*@ requires pv1_walk_ok(map, w);
  @ assigns \nothing;
  @ ensures pv1_walk_ok(map, \result);
  @ ensures \result.S == w.S && \result.map_off == w.map_off && \result.n_low == w.n_low;
  @ ensures found: \result.found != 0 ==>
  @   \result.pos < w.S && \result.low == pv1_bit(map, w.map_off + \result.pos) &&
  @   \result.visited == w.visited + 1 && \result.visited <= w.S &&
  @   (\result.low == 1 ? \result.pass_rank < w.n_low : \result.pass_rank < w.S - w.n_low) &&
  @   (\result.low == 0 || \result.low == 1) &&
  @   pv1_walk_left(\result) < pv1_walk_left(w);
  @ ensures done: \result.found == 0 ==> \result.visited == w.S && \result.visited == w.visited;
  @ ensures (\result.found == 0 || \result.found == 1) && pv1_walk_left(\result) <= pv1_walk_left(w); */
static pv1_walk pv1_walk_next(const uint8_t *map, pv1_walk w)
{
    /*@ loop invariant pv1_walk_ok(map, w) && pv1_walk_left(w) <= pv1_walk_left(\at(w, Pre));
      @ loop invariant w.S == \at(w, Pre).S && w.map_off == \at(w, Pre).map_off &&
      @   w.n_low == \at(w, Pre).n_low && w.visited == \at(w, Pre).visited;
      @ loop assigns w;
      @ loop variant pv1_walk_left(w); */
    for (;;) {
        if (w.scan == w.S) {
            if (w.pass == 0) {
                /*@ assert w.visited == w.S; */
                w.found = 0;
                return w;
            }
            w.pass = 0; /* the low tokens are done: the high ones, from the start */
            w.scan = 0;
            w.pass_visited = 0;
            continue;
        }
        const uint64_t s = w.scan;
        /*@ ghost pv1_ones_grow(map, w.map_off, s + 1, w.S); */
        w.scan = s + 1u;
        if ((int)get_bit(map, w.map_off + s) == w.pass) {
            w.found = 1;
            w.pos = s;
            w.low = w.pass;
            w.visited++;
            w.pass_rank = w.pass_visited++;
            return w;
        }
    }
}

/* The walk of the sequence whose map bits start at map_off, before its first
 * token. */
/*@ assigns \nothing;
  @ ensures \result.S == S && \result.map_off == map_off && \result.n_low == n_low;
  @ ensures \result.pass == 1 && \result.scan == 0 && \result.visited == 0 &&
  @   \result.pass_visited == 0; */
static pv1_walk pv1_walk_start(uint64_t map_off, uint64_t S, uint64_t n_low)
{
    const pv1_walk w = {.S = S,
                        .map_off = map_off,
                        .n_low = n_low,
                        .pass = 1,
                        .scan = 0,
                        .visited = 0,
                        .pass_visited = 0,
                        .found = 0,
                        .low = 0,
                        .pos = 0,
                        .pass_rank = 0};
    return w;
}

/* ---- encode ---------------------------------------------------------------- */

/* First code bit of a token of sequence b: the low tokens' codes come first,
 * then the high tokens', each in reordered order, sequence by sequence
 * (Appendix A.3). */
/*@ requires \valid_read(l) && l->off_lo == 0 && l->off_hi <= 0x100000000000;
  @ requires l->B * l->S <= 0x10000000000 && l->B * l->S * l->C <= 0x10000000000;
  @ requires l->n_low <= l->S && l->n_high == l->S - l->n_low;
  @ requires b < l->B && 1 <= bits <= 8;
  @ requires low != 0 ? pass_rank < l->n_low : pass_rank < l->n_high;
  @ requires low != 0 ==> l->off_hi == l->B * l->n_low * l->C * bits;
  @ requires low == 0 ==> l->off_zero == l->off_hi + l->B * l->n_high * l->C * bits;
  @ requires l->off_hi <= l->off_zero;
  @ assigns \nothing;
  @ ensures \result + l->C * bits <= (low != 0 ? l->off_hi : l->off_zero);
  @ ensures \result + l->C * bits <= l->off_zero; */
static uint64_t pv1_code_base(const tahq_pv1_layout *l, uint64_t b, int low, uint64_t pass_rank,
                              uint32_t bits)
{
    /*@ ghost const uint64_t B = l->B, S = l->S; */
    const uint64_t C = l->C;
    const uint64_t count = low ? l->n_low : l->n_high; /* tokens of this precision */
    /*@ assert count <= S; */
    /*@ ghost tahq_mul_mono(b + 1, B, count); */
    /*@ ghost tahq_mul_mono(count, S, B); */
    const uint64_t row = b * count + pass_rank; /* among this precision's rows */
    /*@ assert row < B * S; */
    /*@ ghost tahq_mul_mono(row, B * S, C); */
    const uint64_t first_element = row * C;
    /*@ assert first_element <= 0x10000000000; */
    /*@ ghost tahq_mul_mono(bits, 8, first_element); */
    const uint64_t code_bits = first_element * bits;
    /*@ assert code_bits <= 0x80000000000; */
    /*@ assert row + 1 <= B * count; */
    /*@ ghost tahq_mul_mono(row + 1, B * count, C * bits); */
    /*@ assert code_bits + C * bits <= B * count * C * bits; */
    const uint64_t base = low ? l->off_lo : l->off_hi;
    return base + code_bits;
}

/* (Not given to WP: keys carved out of the byte workspace, map bits read back
 * while other bytes of out are written, and a pivot slot that rests on both
 * passes flagging the same tiles; proofs/README.md.) */
/*@ requires cfg == \null || \valid_read(cfg);
  @ requires shape == \null || \valid_read(shape);
  @ requires out_len == \null || \valid(out_len);
  @ requires out == \null || \valid(out + (0 .. out_capacity - 1));
  @ requires workspace == \null || \valid((uint8_t *)workspace + (0 .. workspace_bytes - 1));
  @ requires \separated(out + (0 .. out_capacity - 1), out_len, cfg, shape);
  @ assigns *out_len, out[0 .. out_capacity - 1], ((uint8_t *)workspace)[0 .. workspace_bytes - 1]; */
tahq_status tahq_paper_v1_encode(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                                 const float *x, void *workspace, size_t workspace_bytes,
                                 uint8_t *out, size_t out_capacity, size_t *out_len)
{
    tahq_status st = tahq_paper_v1_encode_check_pointers(cfg, shape, out_len);
    if (st != TAHQ_OK)
        return st;
    size_t bound = 0, ws_need = 0;
    tahq_paper_v1_workspace_size(cfg, shape, &ws_need);
    st = tahq_paper_v1_encode_check_room(cfg, shape, x, out, out_capacity, workspace,
                                         workspace_bytes, ws_need);
    if (st != TAHQ_OK)
        return st;
    tahq_paper_v1_encode_bound(cfg, shape, &bound);
    tahq_pv1_layout l;
    tahq_pv1_layout_compute(cfg, shape, &l);
    for (uint64_t i = 0; i < l.n_elems; i++) {
        float a = tahq_absf(x[i]);
        if (!(a <= 3.4028235e38f))
            return TAHQ_ERR_NONFINITE;
        if (a >= TAHQ_INPUT_LIMIT)
            return TAHQ_ERR_RANGE;
    }

    const uint32_t G = cfg->tile;
    uintptr_t p = (uintptr_t)workspace;
    uint64_t *keys = (uint64_t *)(void *)(p + ((8u - (p & 7u)) & 7u));

    /* Pass 1: allocation (token bitmap) and the number of flagged tiles. */
    uint64_t n_flagged = 0;
    memset(out, 0, bound);
    for (uint64_t b = 0; b < l.B; b++) {
        for (uint64_t s = 0; s < l.S; s++) {
            const float *row = x + (b * l.S + s) * l.C;
            float H = tahq_paper_v1_entropy(row, (uint32_t)l.C, G);
            keys[s] = ((uint64_t)tahq_bits_of(H) << 32) | s;
            for (uint64_t t = 0; t < l.T; t++)
                n_flagged += (uint64_t)tahq_paper_v1_gate(row + t * G, G, NULL);
        }
        if (l.n_low > 0) {
            tahq_sort_keys(keys, l.S); /* ascending; keys distinct (low half = s) */
            for (uint64_t i = 0; i < l.n_low; i++)
                put_bits(out, l.off_map + b * l.S + (keys[i] & 0xFFFFFFFFu), 1u, 1u);
        }
    }

    /* Pass 2: tiles in reordered order. */
    uint64_t flag_rank = 0;
    float v[TAHQ_TILE_MAX];
    uint8_t codes[TAHQ_TILE_MAX];
    for (uint64_t b = 0; b < l.B; b++) {
        pv1_walk w = pv1_walk_start(l.off_map + b * l.S, l.S, l.n_low);
        for (uint64_t rank = 0; rank < l.S; rank++) {
            w = pv1_walk_next(out, w); /* found: a sequence has S tokens */
            const float *row = x + (b * l.S + w.pos) * l.C;
            uint32_t bits = w.low ? cfg->lo_bits : cfg->hi_bits;
            uint64_t code_base = pv1_code_base(&l, b, w.low, w.pass_rank, bits);
            for (uint64_t t = 0; t < l.T; t++) {
                uint64_t tr = (b * l.S + rank) * l.T + t; /* reordered tile index */
                memcpy(v, row + t * G, G * sizeof v[0]);
                uint32_t piv = 0;
                if (tahq_paper_v1_gate(v, G, &piv)) {
                    tahq_paper_v1_hadamard(v, G, piv, 0);
                    put_bits(out, l.off_flags + tr, 1u, 1u);
                    put_bits(out, l.off_piv + (n_flagged - 1u - flag_rank) * l.k, piv, l.k);
                    flag_rank++;
                }
                float z, sc;
                tahq_paper_v1_quantize_tile(v, G, bits, &z, &sc, codes);
                put_f16(out, l.off_zero + 16u * tr, tahq_f32_to_f16(z));
                put_f16(out, l.off_scale + 16u * tr, tahq_f32_to_f16(sc));
                uint64_t cb = code_base + t * G * bits;
                for (uint32_t i = 0; i < G; i++)
                    put_bits(out, cb + (uint64_t)i * bits, codes[i], bits);
            }
        }
    }
    *out_len = (size_t)bytes_of_bits(l.off_piv + n_flagged * l.k);
    return TAHQ_OK;
}

/* ---- decode ---------------------------------------------------------------- */

/* Whether each of the B sequences' S map bits, from bit off on, holds n_low
 * ones (the low tokens of Appendix A.3). */
/*@ requires off + B * S <= 0x400000000000 && B * S <= 0x10000000000;
  @ requires \valid_read(msg + (off / 8 .. (off + B * S + 7) / 8 - 1));
  @ assigns \nothing;
  @ ensures \result != 0 ==> \forall integer b; 0 <= b < B ==> pv1_seq_ones(msg, off, S, b) == n_low; */
static int pv1_map_counts_ok(const uint8_t *msg, uint64_t off, uint64_t B, uint64_t S,
                             uint64_t n_low)
{
    /*@ loop invariant 0 <= b <= B;
      @ loop invariant \forall integer b2; 0 <= b2 < b ==> pv1_seq_ones(msg, off, S, b2) == n_low;
      @ loop assigns b;
      @ loop variant B - b; */
    for (uint64_t b = 0; b < B; b++) {
        uint64_t ones = 0;
        /*@ ghost tahq_mul_mono(b + 1, B, S); */
        /*@ loop invariant 0 <= s <= S && ones <= s && ones == pv1_ones(msg, off + b * S, s);
          @ loop assigns s, ones;
          @ loop variant S - s; */
        for (uint64_t s = 0; s < S; s++)
            ones += get_bit(msg, off + b * S + s);
        if (ones != n_low)
            return 0;
        /*@ assert pv1_seq_ones(msg, off, S, b) == n_low; */
    }
    return 1;
}

/* Validate msg against the layout of its configuration and shape (its
 * length, its padding bits, the number of ones of each sequence's map); on
 * success, the number of flagged tiles. */
/*@ requires msg == \null || \valid_read(msg + (0 .. len - 1));
  @ requires \valid_read(l) && \valid(n_flagged) && \separated(l, n_flagged);
  @ requires l->k <= 8 && l->N <= 0x10000000000 && l->off_piv + l->N * 8 <= 0x400000000000;
  @ requires l->B * l->S <= 0x10000000000;
  @ requires l->off_map + l->B * l->S == l->off_flags && l->off_flags + l->N == l->off_piv;
  @ assigns *n_flagged;
  @ ensures \result == TAHQ_OK ==> msg != \null && len <= 0x100000000000;
  @ ensures \result == TAHQ_OK ==> *n_flagged <= l->N && l->off_piv + *n_flagged * l->k <= 8 * len;
  @ ensures flags: \result == TAHQ_OK ==> *n_flagged == pv1_ones(msg, l->off_flags, l->N);
  @ ensures map: \result == TAHQ_OK ==> \forall integer b; 0 <= b < l->B ==>
  @   pv1_seq_ones(msg, l->off_map, l->S, b) == l->n_low; */
static tahq_status pv1_open(const uint8_t *msg, size_t len, const tahq_pv1_layout *l,
                            uint64_t *n_flagged)
{
    if (!msg)
        return TAHQ_ERR_NULL;
    if ((uint64_t)len < bytes_of_bits(l->off_piv))
        return TAHQ_ERR_TRUNCATED;
    /*@ assert l->off_piv <= 8 * len; */
    uint64_t nf = 0;
    /*@ loop invariant 0 <= t <= l->N && nf <= t && nf == pv1_ones(msg, l->off_flags, t);
      @ loop assigns t, nf;
      @ loop variant l->N - t; */
    for (uint64_t t = 0; t < l->N; t++)
        nf += get_bit(msg, l->off_flags + t);
    /*@ assert flags: nf == pv1_ones(msg, l->off_flags, l->N); */
    /*@ ghost tahq_mul_mono(nf, l->N, l->k); */
    /*@ ghost tahq_mul_mono(l->k, 8, l->N); */
    uint64_t total = l->off_piv + nf * l->k;
    uint64_t need = bytes_of_bits(total);
    if ((uint64_t)len < need)
        return TAHQ_ERR_TRUNCATED;
    if ((uint64_t)len > need)
        return TAHQ_ERR_SIZE;
    /*@ assert total <= 8 * len && (total % 8 != 0 ==> total / 8 == len - 1); */
    if (total % 8u != 0u && get_bits(msg, total, (uint32_t)(8u - total % 8u)) != 0u)
        return TAHQ_ERR_PAYLOAD;
    /*@ assert l->off_map + l->B * l->S <= l->off_piv <= 8 * len; */
    /*@ assert (l->off_map + l->B * l->S + 7) / 8 - 1 <= len - 1; */
    if (!pv1_map_counts_ok(msg, l->off_map, l->B, l->S, l->n_low))
        return TAHQ_ERR_PAYLOAD;
    *n_flagged = nf;
    return TAHQ_OK;
}

/* ---- the reordered walk over a message (decode, unpack) -------------------- */

/* Where the walk puts what it reads: the decoder's tensor, or the unpacker's
 * fields. Each pointer is NULL (not wanted) or holds one entry per element
 * (out, codes), per tile (flags, pivots, zeros, scales) or per token
 * (low_map), in the tensor's order. */
typedef struct pv1_sink {
    float *out;
    uint8_t *low_map, *flags, *codes;
    uint16_t *pivots, *zeros, *scales;
} pv1_sink;

/*@ // Outputs for n_tok tokens, n_tiles tiles and n_elems elements; the byte
  @ // outputs lie outside the message (pv1_put_u8).
  @ predicate pv1_outputs_ok(float *out, uint8_t *low_map, uint8_t *flags, uint8_t *codes,
  @     uint16_t *pivots, uint16_t *zeros, uint16_t *scales,
  @     integer n_tok, integer n_tiles, integer n_elems, uint8_t *msg, integer len) =
  @   (out == \null || \valid(out + (0 .. n_elems - 1))) &&
  @   (low_map == \null || \valid(low_map + (0 .. n_tok - 1)) &&
  @                        \separated(low_map + (0 .. n_tok - 1), msg + (0 .. len - 1))) &&
  @   (flags == \null || \valid(flags + (0 .. n_tiles - 1)) &&
  @                      \separated(flags + (0 .. n_tiles - 1), msg + (0 .. len - 1))) &&
  @   (codes == \null || \valid(codes + (0 .. n_elems - 1)) &&
  @                      \separated(codes + (0 .. n_elems - 1), msg + (0 .. len - 1))) &&
  @   (pivots == \null || \valid(pivots + (0 .. n_tiles - 1))) &&
  @   (zeros == \null || \valid(zeros + (0 .. n_tiles - 1))) &&
  @   (scales == \null || \valid(scales + (0 .. n_tiles - 1)));
  @ predicate pv1_sink_ok(pv1_sink s, integer n_tok, integer n_tiles, integer n_elems,
  @     uint8_t *msg, integer len) =
  @   pv1_outputs_ok(s.out, s.low_map, s.flags, s.codes, s.pivots, s.zeros, s.scales,
  @                  n_tok, n_tiles, n_elems, msg, len);
  @*/

/* One tile of a message: tile tr in reordered order, tile `to` of the tensor
 * (its elements from `elem` on), its G codes of the given width from bit
 * code_pos on; flag_rank flagged tiles come before it, so its pivot, when it
 * is flagged, is the (flag_rank+1)-th from the end of the pivot section
 * (Appendix A.3). Its fields are read before any output is written, each
 * code as it is stored. Returns its flag bit. */
/*@ requires \valid_read(l) && \valid_read(msg + (0 .. len - 1)) && len <= 0x100000000000;
  @ requires tahq_valid_tile(G) && G == (1 << l->k) && l->k <= 8 && 1 <= bits <= 8;
  @ requires pv1_sink_ok(s, l->B * l->S, l->N, l->n_elems, msg, len);
  @ requires to < l->N && elem + G <= l->n_elems;
  @ requires tr < l->N && l->N <= 0x10000000000 && l->off_piv + l->N * 8 <= 0x400000000000;
  @ requires l->off_scale == l->off_zero + 16 * l->N && l->off_map == l->off_scale + 16 * l->N;
  @ requires l->off_map <= l->off_flags && l->off_flags + l->N == l->off_piv;
  @ requires nf == pv1_ones(msg, l->off_flags, l->N) && l->off_piv + nf * l->k <= 8 * len;
  @ requires flag_rank == pv1_ones(msg, l->off_flags, tr);
  @ requires code_pos + G * bits <= l->off_zero;
  @ // (the whole outputs, as the token's loop assigns them: it writes only
  @ // the tile's elements and entry `to`, but the provers match the loop's
  @ // assigns against a call's far more easily when they are the same)
  @ assigns s.out[0 .. l->n_elems - 1], s.codes[0 .. l->n_elems - 1], s.flags[0 .. l->N - 1],
  @   s.pivots[0 .. l->N - 1], s.zeros[0 .. l->N - 1], s.scales[0 .. l->N - 1];
  @ ensures pv1_counts_kept{Pre, Post}(msg, len) && nf == pv1_ones(msg, l->off_flags, l->N);
  @ ensures \result <= 1 && pv1_ones(msg, l->off_flags, tr + 1) == flag_rank + \result;
  @ ensures flag_rank + \result <= nf; */
static uint32_t pv1_visit_tile(const uint8_t *msg, size_t len, const tahq_pv1_layout *l,
                               uint64_t nf, uint64_t tr, uint64_t flag_rank, uint64_t code_pos,
                               uint32_t bits, uint32_t G, pv1_sink s, uint64_t to, uint64_t elem)
{
    const uint16_t zero = get_f16(msg, l->off_zero + 16u * tr);
    const uint16_t scale = get_f16(msg, l->off_scale + 16u * tr);
    const uint32_t flagged = get_bit(msg, l->off_flags + tr);
    /*@ assert pv1_ones(msg, l->off_flags, tr + 1) == flag_rank + flagged; */
    /*@ ghost pv1_ones_grow(msg, l->off_flags, tr + 1, l->N); */
    uint32_t piv = 0;
    if (flagged) {
        /*@ assert flag_rank < nf; */
        /*@ ghost tahq_mul_mono(nf - flag_rank, nf, l->k); */
        piv = get_bits(msg, l->off_piv + (nf - 1u - flag_rank) * l->k, l->k);
    }
    if (s.out) {
        float v[TAHQ_TILE_MAX];
        const float z = tahq_f16_to_f32(zero);
        const float sc = tahq_f16_to_f32(scale);
        /*@ loop invariant 0 <= i <= G;
          @ loop assigns i, v[0 .. 255];
          @ loop variant G - i; */
        for (uint32_t i = 0; i < G; i++) {
            /*@ ghost tahq_mul_mono(i + 1, G, bits); */
            const float q = (float)get_bits(msg, code_pos + (uint64_t)i * bits, bits);
            v[i] = q * sc + z;
        }
        if (flagged)
            tahq_paper_v1_hadamard(v, G, piv, 1);
        /*@ loop invariant 0 <= i <= G;
          @ loop assigns i, s.out[elem .. elem + G - 1];
          @ loop variant G - i; */
        for (uint32_t i = 0; i < G; i++)
            s.out[elem + i] = tahq_canonical_nan(v[i]); /* SPEC A.4: any NaN is canonical */
    }
    if (s.flags)
        pv1_put_u8(s.flags + to, (uint8_t)flagged, msg, len);
    if (s.pivots)
        s.pivots[to] = (uint16_t)piv;
    if (s.zeros)
        s.zeros[to] = zero;
    if (s.scales)
        s.scales[to] = scale;
    /*@ assert pv1_counts_kept{Pre, Here}(msg, len); */
    if (s.codes) {
        /*@ assert codes_room: \valid(s.codes + (elem .. elem + G - 1)) &&
          @   \separated(s.codes + (elem .. elem + G - 1), msg + (0 .. len - 1)); */
        /*@ loop invariant 0 <= i <= G && pv1_counts_kept{Pre, Here}(msg, len);
          @ loop assigns i, s.codes[elem .. elem + G - 1];
          @ loop variant G - i; */
        for (uint32_t i = 0; i < G; i++) {
            /*@ ghost tahq_mul_mono(i + 1, G, bits); */
            /*@ assert code_pos + (i + 1) * bits <= l->off_zero <= l->off_piv <= 8 * len; */
            /*@ assert (code_pos + i * bits + bits + 7) / 8 <= len; */
            const uint32_t code = get_bits(msg, code_pos + (uint64_t)i * bits, bits);
            pv1_put_u8(s.codes + elem + i, (uint8_t)code, msg, len);
        }
    }
    /*@ assert pv1_counts_kept{Pre, Here}(msg, len); */
    return flagged;
}

/* The T tiles of one token: row orow of the tensor, row rrow in reordered
 * order, its codes from bit code_base on; flag_rank flagged tiles come before
 * its first tile. Returns the number of flagged tiles before the next token. */
/*@ requires \valid_read(l) && \valid_read(msg + (0 .. len - 1)) && len <= 0x100000000000;
  @ requires pv1_sink_ok(s, l->B * l->S, l->N, l->n_elems, msg, len);
  @ requires tahq_valid_tile(G) && l->k == tahq_lg(G) && l->k <= 8 && 1 <= bits <= 8;
  @ requires 1 <= l->T && l->T * G == l->C;
  @ requires l->N == l->B * l->S * l->T && l->n_elems == l->B * l->S * l->C;
  @ requires l->N <= 0x10000000000 && l->B * l->S * l->C <= 0x10000000000;
  @ requires l->B * l->S <= 0x10000000000 && l->off_piv + l->N * 8 <= 0x400000000000;
  @ requires l->off_scale == l->off_zero + 16 * l->N && l->off_map == l->off_scale + 16 * l->N;
  @ requires l->off_map <= l->off_flags && l->off_flags + l->N == l->off_piv;
  @ requires nf == pv1_ones(msg, l->off_flags, l->N) && nf <= l->N;
  @ requires l->off_piv + nf * l->k <= 8 * len;
  @ requires orow < l->B * l->S && rrow < l->B * l->S;
  @ requires code_base + l->C * bits <= l->off_zero;
  @ requires flag_rank == pv1_ones(msg, l->off_flags, rrow * l->T);
  @ assigns s.out[0 .. l->n_elems - 1], s.codes[0 .. l->n_elems - 1], s.flags[0 .. l->N - 1],
  @   s.pivots[0 .. l->N - 1], s.zeros[0 .. l->N - 1], s.scales[0 .. l->N - 1];
  @ ensures pv1_counts_kept{Pre, Post}(msg, len) && nf == pv1_ones(msg, l->off_flags, l->N);
  @ ensures \result == pv1_ones(msg, l->off_flags, rrow * l->T + l->T) && \result <= nf; */
static uint64_t pv1_visit_token(const uint8_t *msg, size_t len, const tahq_pv1_layout *l,
                                uint64_t nf, uint64_t orow, uint64_t rrow, uint64_t code_base,
                                uint32_t bits, uint32_t G, uint64_t flag_rank, pv1_sink s)
{
    /*@ ghost tahq_mul_mono(orow + 1, l->B * l->S, l->C); */
    /*@ ghost tahq_mul_mono(orow + 1, l->B * l->S, l->T); */
    /*@ ghost tahq_mul_mono(rrow + 1, l->B * l->S, l->T); */
    const uint64_t row = orow * l->C; /* the token's first element */
    /*@ ghost pv1_ones_grow(msg, l->off_flags, rrow * l->T, l->N); */
    /*@ loop invariant 0 <= t <= l->T && pv1_counts_kept{Pre, Here}(msg, len);
      @ loop invariant nf == pv1_ones(msg, l->off_flags, l->N);
      @ loop invariant flag_rank == pv1_ones(msg, l->off_flags, rrow * l->T + t) && flag_rank <= nf;
      @ loop assigns t, flag_rank, s.out[0 .. l->n_elems - 1], s.codes[0 .. l->n_elems - 1],
      @   s.flags[0 .. l->N - 1], s.pivots[0 .. l->N - 1], s.zeros[0 .. l->N - 1],
      @   s.scales[0 .. l->N - 1];
      @ loop variant l->T - t; */
    for (uint64_t t = 0; t < l->T; t++) {
        const uint64_t tr = rrow * l->T + t; /* reordered tile index */
        const uint64_t to = orow * l->T + t; /* the tile's index in the tensor */
        /*@ assert tr < l->N && to < l->N; */
        /*@ ghost tahq_mul_mono(t + 1, l->T, G); */
        const uint64_t first = t * G; /* the tile's first element in the row */
        /*@ assert first + G <= l->C; */
        /*@ ghost tahq_mul_mono(first + G, l->C, bits); */
        /*@ assert row + first + G <= l->n_elems; */
        flag_rank += pv1_visit_tile(msg, len, l, nf, tr, flag_rank, code_base + first * bits, bits,
                                    G, s, to, row + first);
    }
    return flag_rank;
}

/* The S tokens of sequence b in reordered order (pv1_walk_next); flag_rank
 * flagged tiles come before the sequence. Returns the number of flagged
 * tiles before the next one. */
/*@ requires \valid_read(l) && \valid_read(cfg) && \valid_read(msg + (0 .. len - 1));
  @ requires len <= 0x100000000000;
  @ requires pv1_sink_ok(s, l->B * l->S, l->N, l->n_elems, msg, len);
  @ requires tahq_valid_tile(G) && l->k == tahq_lg(G) && l->k <= 8;
  @ requires 1 <= cfg->lo_bits <= 8 && 1 <= cfg->hi_bits <= 8;
  @ requires 1 <= l->T && l->T * G == l->C && b < l->B;
  @ requires l->N == l->B * l->S * l->T && l->n_elems == l->B * l->S * l->C;
  @ requires l->N <= 0x10000000000 && l->B * l->S * l->C <= 0x10000000000;
  @ requires l->B * l->S <= 0x10000000000 && l->off_piv + l->N * 8 <= 0x400000000000;
  @ requires l->n_low <= l->S && l->n_high == l->S - l->n_low && l->off_lo == 0;
  @ requires l->off_hi <= 0x100000000000 && l->off_hi <= l->off_zero;
  @ requires l->off_hi == l->B * l->n_low * l->C * cfg->lo_bits;
  @ requires l->off_zero == l->off_hi + l->B * l->n_high * l->C * cfg->hi_bits;
  @ requires l->off_scale == l->off_zero + 16 * l->N && l->off_map == l->off_scale + 16 * l->N;
  @ requires l->off_map + l->B * l->S == l->off_flags && l->off_flags + l->N == l->off_piv;
  @ requires nf == pv1_ones(msg, l->off_flags, l->N) && nf <= l->N;
  @ requires l->off_piv + nf * l->k <= 8 * len;
  @ requires pv1_seq_ones(msg, l->off_map, l->S, b) == l->n_low;
  @ requires flag_rank == pv1_ones(msg, l->off_flags, b * l->S * l->T);
  @ assigns s.out[0 .. l->n_elems - 1], s.codes[0 .. l->n_elems - 1], s.flags[0 .. l->N - 1],
  @   s.pivots[0 .. l->N - 1], s.zeros[0 .. l->N - 1], s.scales[0 .. l->N - 1],
  @   s.low_map[0 .. l->B * l->S - 1];
  @ ensures pv1_counts_kept{Pre, Post}(msg, len) && nf == pv1_ones(msg, l->off_flags, l->N);
  @ ensures \result == pv1_ones(msg, l->off_flags, b * l->S * l->T + l->S * l->T); */
static uint64_t pv1_visit_sequence(const uint8_t *msg, size_t len, const tahq_paper_v1_config *cfg,
                                   const tahq_pv1_layout *l, uint64_t nf, uint64_t b, uint32_t G,
                                   uint64_t flag_rank, pv1_sink s)
{
    /*@ ghost tahq_mul_mono(b + 1, l->B, l->S); */
    pv1_walk w = pv1_walk_start(l->off_map + b * l->S, l->S, l->n_low);
    /*@ assert w.map_off == l->off_map + b * l->S && w.map_off + l->S <= l->off_flags; */
    /*@ assert l->S <= 0x10000000000 && l->off_flags <= 8 * len && l->off_piv <= 8 * len; */
    /*@ assert l->n_low == pv1_ones(msg, l->off_map + b * l->S, l->S); */
    /*@ assert pv1_ones(msg, w.map_off, w.S) == l->n_low; */
    /*@ assert pv1_ones(msg, w.map_off, 0) == 0; */
    uint64_t rank;
    /*@ loop invariant 0 <= rank <= l->S && pv1_counts_kept{Pre, Here}(msg, len);
      @ loop invariant pv1_walk_ok(msg, w) && w.S == l->S && w.n_low == l->n_low;
      @ loop invariant w.map_off == l->off_map + b * l->S && w.visited == rank;
      @ loop invariant nf == pv1_ones(msg, l->off_flags, l->N);
      @ loop invariant flag_rank == pv1_ones(msg, l->off_flags, (b * l->S + rank) * l->T);
      @ loop assigns rank, w, flag_rank, s.out[0 .. l->n_elems - 1], s.codes[0 .. l->n_elems - 1],
      @   s.flags[0 .. l->N - 1], s.pivots[0 .. l->N - 1], s.zeros[0 .. l->N - 1],
      @   s.scales[0 .. l->N - 1], s.low_map[0 .. l->B * l->S - 1];
      @ loop variant l->S - rank; */
    for (rank = 0; rank < l->S; rank++) {
        w = pv1_walk_next(msg, w);              /* found: a sequence has S tokens */
        const uint64_t orow = b * l->S + w.pos; /* the token's row in the tensor */
        const uint64_t rrow = b * l->S + rank;  /* its row in reordered order */
        /*@ assert orow < l->B * l->S && rrow < l->B * l->S; */
        const uint32_t bits = w.low ? cfg->lo_bits : cfg->hi_bits;
        const uint64_t code_base = pv1_code_base(l, b, w.low, w.pass_rank, bits);
        /*@ ghost tahq_mul_mono(rrow + 1, l->B * l->S, l->T); */
        /*@ assert rrow * l->T + l->T <= l->N; */
        /*@ assert l->off_flags + rrow * l->T <= 8 * len && l->off_flags + l->N <= 8 * len; */
        if (s.low_map)
            pv1_put_u8(s.low_map + orow, (uint8_t)w.low, msg, len);
        /*@ assert nf == pv1_ones(msg, l->off_flags, l->N); */
        /*@ assert flag_rank == pv1_ones(msg, l->off_flags, rrow * l->T); */
        flag_rank = pv1_visit_token(msg, len, l, nf, orow, rrow, code_base, bits, G, flag_rank, s);
        /*@ assert pv1_counts_kept{LoopCurrent, Here}(msg, len); */
        /*@ assert pv1_ones(msg, w.map_off, w.S) == pv1_ones{LoopCurrent}(msg, w.map_off, w.S); */
        /*@ assert pv1_ones(msg, w.map_off, w.scan) == pv1_ones{LoopCurrent}(msg, w.map_off, w.scan); */
        /*@ assert rrow * l->T + l->T == (b * l->S + rank + 1) * l->T; */
    }
    /*@ assert rank == l->S; */
    /*@ assert flag_rank == pv1_ones(msg, l->off_flags, (b * l->S + l->S) * l->T); */
    /*@ assert (b * l->S + l->S) * l->T == b * l->S * l->T + l->S * l->T; */
    return flag_rank;
}

/* All B sequences of a validated message (pv1_open: nf flagged tiles), in
 * reordered order, into the sink. */
/*@ requires \valid_read(l) && \valid_read(cfg) && \valid_read(msg + (0 .. len - 1));
  @ requires len <= 0x100000000000;
  @ requires pv1_sink_ok(s, l->B * l->S, l->N, l->n_elems, msg, len);
  @ requires tahq_valid_tile(cfg->tile) && l->k == tahq_lg(cfg->tile) && l->k <= 8;
  @ requires 1 <= cfg->lo_bits <= 8 && 1 <= cfg->hi_bits <= 8;
  @ requires 1 <= l->T && l->T * cfg->tile == l->C;
  @ requires l->N == l->B * l->S * l->T && l->n_elems == l->B * l->S * l->C;
  @ requires l->N <= 0x10000000000 && l->B * l->S * l->C <= 0x10000000000;
  @ requires l->B * l->S <= 0x10000000000 && l->off_piv + l->N * 8 <= 0x400000000000;
  @ requires l->n_low <= l->S && l->n_high == l->S - l->n_low && l->off_lo == 0;
  @ requires l->off_hi <= 0x100000000000 && l->off_hi <= l->off_zero;
  @ requires l->off_hi == l->B * l->n_low * l->C * cfg->lo_bits;
  @ requires l->off_zero == l->off_hi + l->B * l->n_high * l->C * cfg->hi_bits;
  @ requires l->off_scale == l->off_zero + 16 * l->N && l->off_map == l->off_scale + 16 * l->N;
  @ requires l->off_map + l->B * l->S == l->off_flags && l->off_flags + l->N == l->off_piv;
  @ requires nf == pv1_ones(msg, l->off_flags, l->N) && nf <= l->N;
  @ requires l->off_piv + nf * l->k <= 8 * len;
  @ requires \forall integer b; 0 <= b < l->B ==> pv1_seq_ones(msg, l->off_map, l->S, b) == l->n_low;
  @ assigns s.out[0 .. l->n_elems - 1], s.codes[0 .. l->n_elems - 1], s.flags[0 .. l->N - 1],
  @   s.pivots[0 .. l->N - 1], s.zeros[0 .. l->N - 1], s.scales[0 .. l->N - 1],
  @   s.low_map[0 .. l->B * l->S - 1]; */
static void pv1_visit(const uint8_t *msg, size_t len, const tahq_paper_v1_config *cfg,
                      const tahq_pv1_layout *l, uint64_t nf, pv1_sink s)
{
    const uint32_t G = cfg->tile;
    uint64_t flag_rank = 0; /* flagged tiles before this sequence, in reordered order */
    /*@ loop invariant 0 <= b <= l->B && pv1_counts_kept{Pre, Here}(msg, len);
      @ loop invariant nf == pv1_ones(msg, l->off_flags, l->N);
      @ loop invariant flag_rank == pv1_ones(msg, l->off_flags, b * l->S * l->T);
      @ loop assigns b, flag_rank, s.out[0 .. l->n_elems - 1], s.codes[0 .. l->n_elems - 1],
      @   s.flags[0 .. l->N - 1], s.pivots[0 .. l->N - 1], s.zeros[0 .. l->N - 1],
      @   s.scales[0 .. l->N - 1], s.low_map[0 .. l->B * l->S - 1];
      @ loop variant l->B - b; */
    for (uint64_t b = 0; b < l->B; b++) {
        /*@ ghost tahq_mul_mono(b + 1, l->B, l->S); */
        /*@ assert l->off_map + b * l->S + l->S <= 8 * len; */
        /*@ assert pv1_ones(msg, l->off_map + b * l->S, l->S) ==
          @   pv1_ones{Pre}(msg, l->off_map + b * l->S, l->S); */
        /*@ assert pv1_seq_ones(msg, l->off_map, l->S, b) ==
          @   pv1_seq_ones{Pre}(msg, l->off_map, l->S, b); */
        flag_rank = pv1_visit_sequence(msg, len, cfg, l, nf, b, G, flag_rank, s);
    }
}

/* Each non-null output holds one entry per token (low_map), per tile (flags,
 * pivots, zeros, scales) or per element (codes), outside the message. */
/* a * b = c * d from a = c and b = d, as a lemma of its own: in the
 * unpacker's context the provers do not find this rewriting step. */
/*@ ghost
  /@ requires a == c && b == d;
   @ assigns \nothing;
   @ ensures a * b == c * d; @/
  static void pv1_same_products(uint64_t a, uint64_t b, uint64_t c, uint64_t d) { }
*/

/*@ requires cfg == \null || \valid_read(cfg);
  @ requires shape == \null || \valid_read(shape);
  @ requires msg == \null || \valid_read(msg + (0 .. len - 1));
  @ requires n_flagged == \null || \valid(n_flagged);
  @ requires cfg != \null && shape != \null && tahq_pv1_config_ok(cfg) &&
  @   tahq_pv1_shape_ok(cfg, shape) ==>
  @   pv1_outputs_ok(\null, low_map, flags, codes, pivots, zeros, scales,
  @                  shape->batch * shape->seq_len,
  @                  shape->batch * shape->seq_len * (shape->channels / cfg->tile),
  @                  shape->batch * shape->seq_len * shape->channels, msg, len);
  @ assigns *n_flagged, low_map[..], flags[..], pivots[..], zeros[..], scales[..], codes[..]; */
tahq_status tahq_paper_v1_unpack(const uint8_t *msg, size_t len, const tahq_paper_v1_config *cfg,
                                 const tahq_shape *shape, uint8_t *low_map, uint8_t *flags,
                                 uint16_t *pivots, uint16_t *zeros, uint16_t *scales,
                                 uint8_t *codes, uint64_t *n_flagged)
{
    tahq_status st = pv1_check(cfg, shape);
    if (st != TAHQ_OK)
        return st;
    tahq_pv1_layout l;
    tahq_pv1_layout_compute(cfg, shape, &l);
    const pv1_sink s = {.out = NULL,
                        .low_map = low_map,
                        .flags = flags,
                        .codes = codes,
                        .pivots = pivots,
                        .zeros = zeros,
                        .scales = scales};
    /*@ assert l.B == shape->batch && l.S == shape->seq_len && l.C == shape->channels; */
    /*@ ghost pv1_same_products(l.B, l.S, shape->batch, shape->seq_len); */
    /*@ assert l.B * l.S == shape->batch * shape->seq_len; */
    /*@ assert l.N == shape->batch * shape->seq_len * (shape->channels / cfg->tile); */
    /*@ assert l.n_elems == shape->batch * shape->seq_len * shape->channels; */
    /*@ assert pv1_sink_ok(s, l.B * l.S, l.N, l.n_elems, msg, len); */
    uint64_t nf = 0;
    st = pv1_open(msg, len, &l, &nf);
    if (st != TAHQ_OK)
        return st;
    if (n_flagged)
        *n_flagged = nf;
    /*@ assert l.T * cfg->tile == l.C && l.off_hi <= l.off_zero; */
    pv1_visit(msg, len, cfg, &l, nf, s);
    return TAHQ_OK;
}

/*@ requires cfg == \null || \valid_read(cfg);
  @ requires shape == \null || \valid_read(shape);
  @ requires msg == \null || \valid_read(msg + (0 .. len - 1));
  @ requires out == \null || \valid(out + (0 .. count - 1));
  @ assigns out[0 .. count - 1]; */
tahq_status tahq_paper_v1_decode(const uint8_t *msg, size_t len, const tahq_paper_v1_config *cfg,
                                 const tahq_shape *shape, float *out, size_t count)
{
    tahq_status st = pv1_check(cfg, shape);
    if (st != TAHQ_OK)
        return st;
    tahq_pv1_layout l;
    tahq_pv1_layout_compute(cfg, shape, &l);
    uint64_t nf = 0;
    st = pv1_open(msg, len, &l, &nf);
    if (st != TAHQ_OK)
        return st;
    if (!out)
        return TAHQ_ERR_NULL;
    if ((uint64_t)count != l.n_elems)
        return TAHQ_ERR_BUFFER;
    const pv1_sink s = {.out = out,
                        .low_map = NULL,
                        .flags = NULL,
                        .codes = NULL,
                        .pivots = NULL,
                        .zeros = NULL,
                        .scales = NULL};
    /*@ assert l.T * cfg->tile == l.C && l.off_hi <= l.off_zero; */
    pv1_visit(msg, len, cfg, &l, nf, s);
    return TAHQ_OK;
}

/* ---- the encoders' argument checks ----------------------------------------- */

/* The first of tahq_paper_v1_encode's argument checks, exported for the
 * encoders that make the same checks in the same order (cpu/paper_v1_fast.c
 * checks its job count between the two): the message length is 0 until a
 * message is written, then the pointers the configuration check needs. */
/*@ requires out_len == \null || \valid(out_len);
  @ assigns *out_len;
  @ ensures out_len != \null ==> *out_len == 0;
  @ ensures \result == TAHQ_OK || \result == TAHQ_ERR_NULL;
  @ ensures \result == TAHQ_OK <==> cfg != \null && shape != \null && out_len != \null; */
tahq_status tahq_paper_v1_encode_check_pointers(const tahq_paper_v1_config *cfg,
                                                const tahq_shape *shape, size_t *out_len)
{
    if (out_len)
        *out_len = 0;
    if (!cfg || !shape || !out_len)
        return TAHQ_ERR_NULL;
    return TAHQ_OK;
}

/* The last: the configuration and shape, the data pointers, then room for
 * the message bound in out and for a workspace of ws_need bytes (the size the
 * caller's encoder asks for; it matters only once the configuration passed). */
/*@ requires cfg == \null || \valid_read(cfg);
  @ requires shape == \null || \valid_read(shape);
  @ requires cfg == \null || shape == \null || \separated(cfg, shape);
  @ assigns \nothing;
  @ ensures \result == TAHQ_OK ==> cfg != \null && shape != \null && tahq_pv1_config_ok(cfg) &&
  @   tahq_pv1_shape_ok(cfg, shape) && x != \null && out != \null && workspace != \null &&
  @   workspace_bytes >= ws_need; */
tahq_status tahq_paper_v1_encode_check_room(const tahq_paper_v1_config *cfg,
                                            const tahq_shape *shape, const float *x,
                                            const uint8_t *out, size_t out_capacity,
                                            const void *workspace, size_t workspace_bytes,
                                            size_t ws_need)
{
    tahq_status st = pv1_check(cfg, shape);
    if (st != TAHQ_OK)
        return st;
    if (!x || !out || !workspace)
        return TAHQ_ERR_NULL;
    size_t bound = 0;
    tahq_paper_v1_encode_bound(cfg, shape, &bound);
    if (out_capacity < bound || workspace_bytes < ws_need)
        return TAHQ_ERR_BUFFER;
    return TAHQ_OK;
}
