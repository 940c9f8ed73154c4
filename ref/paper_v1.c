/* paper_v1.c - the "paper-v1" compatibility profile: the authors' TAH-Quant
 * codec numerics and their raw wire layout (ref/SPEC.md Appendix A). No
 * header: the decoder takes the configuration and the shape from the caller. */
#include "internal.h"

/* Binary32 constants of Appendix A.1. */
#define PV1_EPS 1e-30f               /* 0x1.4484cp-100, the authors' epsilon */
#define PV1_LN2 0x1.62e43p-1f        /* binary32 nearest ln 2 */
#define PV1_SQRT2 0x1.6a09e6p+0f     /* binary32 nearest sqrt 2 */

/*@ // A configuration and shape that pv1_check accepts.
  @ predicate tahq_pv1_config_ok{L}(tahq_paper_v1_config *cfg) =
  @   \valid_read(cfg) && tahq_valid_tile(cfg->tile) && 1 <= cfg->hi_bits <= 8 &&
  @   1 <= cfg->lo_bits <= 8 && cfg->hi_permille <= 1000;
  @ predicate tahq_pv1_shape_ok{L}(tahq_paper_v1_config *cfg, tahq_shape *s) =
  @   \valid_read(s) && s->batch >= 1 && s->seq_len >= 1 && s->channels >= cfg->tile &&
  @   s->channels % cfg->tile == 0 && tahq_elements(s) <= 0x10000000000;
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
        cfg->hi_bits < 1u || cfg->hi_bits > TAHQ_BITS_MAX ||
        cfg->lo_bits < 1u || cfg->lo_bits > TAHQ_BITS_MAX || cfg->hi_permille > 1000u)
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

typedef struct pv1_layout {
    uint64_t B, S, C, T, N, n_low, n_high;
    uint32_t k;
    uint64_t off_lo, off_hi, off_zero, off_scale, off_map, off_flags, off_piv;
} pv1_layout;

/*@ requires tahq_pv1_config_ok(cfg) && tahq_pv1_shape_ok(cfg, shape);
  @ requires \valid(l) && \separated(l, cfg, shape);
  @ assigns *l;
  @ ensures l->B == shape->batch && l->S == shape->seq_len && l->C == shape->channels;
  @ ensures l->T == shape->channels / cfg->tile && l->T >= 1 && l->N == l->B * l->S * l->T;
  @ ensures l->k == tahq_lg(cfg->tile) && l->n_low <= l->S && l->n_high == l->S - l->n_low;
  @ ensures l->N <= 0x10000000000 && l->off_piv + l->N * 8 <= 0x400000000000;
  @ ensures l->B * l->S <= 0x10000000000 && l->off_lo == 0 && l->off_hi <= 0x100000000000;
  @ ensures l->off_map + l->B * l->S == l->off_flags && l->off_flags + l->N == l->off_piv; */
static void pv1_layout_compute(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                               pv1_layout *l)
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
    l->n_low = n_low;
    l->n_high = n_high;
    l->k = tahq_tile_log2(cfg->tile);
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
    pv1_layout l;
    pv1_layout_compute(cfg, shape, &l);
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
    pv1_layout l;
    pv1_layout_compute(cfg, shape, &l);
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
  @ ensures \result <= 1; */
static uint32_t get_bit(const uint8_t *buf, uint64_t pos)
{
    uint32_t bit = (uint32_t)(pos & 7u);
    /*@ assert pos >> 3 == pos / 8 && bit == pos % 8; */
    return ((uint32_t)buf[pos >> 3] >> (7u - bit)) & 1u;
}

/* Bits pos .. pos+n-1 of buf as an integer, the first one most significant. */
/*@ requires n <= 32 && pos + n + 7 <= UINT64_MAX;
  @ requires \valid_read(buf + (pos / 8 .. (pos + n + 7) / 8 - 1));
  @ assigns \nothing; */
static uint32_t get_bits(const uint8_t *buf, uint64_t pos, uint32_t n)
{
    uint32_t v = 0;
    /*@ loop invariant 0 <= j <= n;
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

/* An fp16 value as its two bytes, little-endian, each byte MSB-first: the
 * 16-bit field holds the low byte first. */
/*@ assigns \nothing;
  @ ensures \result <= 0xFFFF; */
static uint32_t f16_field(uint16_t h)
{
    return ((uint32_t)(h & 0xFFu) << 8) | (uint32_t)(h >> 8);
}

/* ---- numerics (Appendix A.1, A.2) ------------------------------------------ */

/* Binary-counter pairwise combination of tile sums (SPEC §2.5). */
typedef struct pv1_acc {
    float sum[64];
    uint64_t count;
    uint32_t depth;
} pv1_acc;

/* (Not given to WP: that depth stays below 64 is the binary-counter fact
 * depth == popcount(count), count < 2^64; proofs/README.md.) */
/*@ requires \valid(a);
  @ assigns *a; */
static void acc_push(pv1_acc *a, float v)
{
    uint64_t c = a->count;
    while (c & 1u) {
        v = a->sum[--a->depth] + v;
        c >>= 1;
    }
    a->sum[a->depth++] = v;
    a->count++;
}

/*@ requires \valid_read(a) && 1 <= a->depth <= 64;
  @ assigns \nothing; */
static float acc_finish(const pv1_acc *a)
{
    float v = a->sum[a->depth - 1u];
    for (uint32_t i = a->depth - 1u; i > 0; i--)
        v = a->sum[i - 1u] + v;
    return v;
}

/*@ assigns \nothing; */
float tahq_paper_v1_ln(float y)
{
    return tahq_log2(y) * PV1_LN2;
}

/*@ requires tahq_valid_tile(tile) && channels >= tile;
  @ requires \valid_read(x + (0 .. channels - 1));
  @ assigns \nothing; */
float tahq_paper_v1_entropy(const float *x, uint32_t channels, uint32_t tile)
{
    uint32_t T = channels / tile;
    float w[TAHQ_TILE_MAX];
    pv1_acc acc = {.count = 0, .depth = 0};
    for (uint32_t t = 0; t < T; t++) {
        for (uint32_t i = 0; i < tile; i++)
            w[i] = tahq_absf(x[(uint64_t)t * tile + i]);
        acc_push(&acc, tahq_tree_sum(w, tile));
    }
    float den = acc_finish(&acc) + PV1_EPS;
    pv1_acc hacc = {.count = 0, .depth = 0};
    for (uint32_t t = 0; t < T; t++) {
        for (uint32_t i = 0; i < tile; i++) {
            float p = tahq_absf(x[(uint64_t)t * tile + i]) / den;
            w[i] = p * tahq_paper_v1_ln(p + PV1_EPS);
        }
        acc_push(&hacc, tahq_tree_sum(w, tile));
    }
    return 0.0f - acc_finish(&hacc);
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
    float p = (float)(1u << (k / 2u)); /* 2^floor(k/2), exact */
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
        float r = (t + 0x1p23f) - 0x1p23f; /* ties to even */
        /*@ admit float_to_int: -1 < r < 4294967296; */ /* 0 <= t <= L: v >= lo, s > 0 (tested) */
        uint32_t q = (uint32_t)r;
        codes[i] = (uint8_t)(q < levels ? q : levels); /* (q <= L already; stated for the cast) */
    }
    *zero = lo;
    *scale = s;
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
  @ assigns \nothing; */
static uint64_t pv1_code_base(const pv1_layout *l, uint64_t b, int low, uint64_t pass_rank,
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
    const uint64_t base = low ? l->off_lo : l->off_hi;
    return base + code_bits;
}

/* Runs the statement block for the tokens of sequence b in reordered order: low tokens
 * (map bit 1) in ascending position, then high tokens. In the block, pos is the
 * token's position, rank its reordered row within the sequence, pass_rank its row
 * among the tokens of its precision (= rank - n_low for a high token, the map
 * having n_low low tokens: pv1_open checks it, the encoder marks exactly that
 * many), and low its map bit. */
#define PV1_FOR_REORDERED(map_bit, S, ...)                                                    \
    do {                                                                                    \
        uint64_t r_ = 0;                                                                    \
        for (int pass_ = 1; pass_ >= 0; pass_--) {                                          \
            uint64_t k_ = 0;                                                                \
            for (uint64_t s_ = 0; s_ < (S); s_++)                                           \
                if ((int)(map_bit(s_)) == pass_) {                                           \
                    uint64_t pos = s_, rank = r_++, pass_rank = k_++;                       \
                    int low = pass_;                                                        \
                    __VA_ARGS__                                                             \
                }                                                                           \
        }                                                                                   \
    } while (0)

/* (Not given to WP: the reordered walk is generated by PV1_FOR_REORDERED, and
 * the keys are carved out of the byte workspace.) */
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
    if (out_len)
        *out_len = 0;
    if (!cfg || !shape || !out_len)
        return TAHQ_ERR_NULL;
    tahq_status st = pv1_check(cfg, shape);
    if (st != TAHQ_OK)
        return st;
    if (!x || !out || !workspace)
        return TAHQ_ERR_NULL;
    size_t bound = 0, ws_need = 0;
    tahq_paper_v1_encode_bound(cfg, shape, &bound);
    tahq_paper_v1_workspace_size(cfg, shape, &ws_need);
    if (out_capacity < bound || workspace_bytes < ws_need)
        return TAHQ_ERR_BUFFER;
    pv1_layout l;
    pv1_layout_compute(cfg, shape, &l);
    uint64_t n = l.B * l.S * l.C;
    for (uint64_t i = 0; i < n; i++) {
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
#define PV1_MAP_BIT(s) get_bit(out, l.off_map + b * l.S + (s))
    for (uint64_t b = 0; b < l.B; b++) {
        PV1_FOR_REORDERED(PV1_MAP_BIT, l.S, {
            const float *row = x + (b * l.S + pos) * l.C;
            uint32_t bits = low ? cfg->lo_bits : cfg->hi_bits;
            uint64_t code_base = pv1_code_base(&l, b, low, pass_rank, bits);
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
                put_bits(out, l.off_zero + 16u * tr, f16_field(tahq_f32_to_f16(z)), 16u);
                put_bits(out, l.off_scale + 16u * tr, f16_field(tahq_f32_to_f16(sc)), 16u);
                uint64_t cb = code_base + t * G * bits;
                for (uint32_t i = 0; i < G; i++)
                    put_bits(out, cb + (uint64_t)i * bits, codes[i], bits);
            }
        });
    }
#undef PV1_MAP_BIT
    *out_len = (size_t)bytes_of_bits(l.off_piv + n_flagged * l.k);
    return TAHQ_OK;
}

/* ---- decode ---------------------------------------------------------------- */

/* Validate msg against cfg and shape; on success fills the layout and the
 * flagged-tile count. */
/*@ requires cfg == \null || \valid_read(cfg);
  @ requires shape == \null || \valid_read(shape);
  @ requires msg == \null || \valid_read(msg + (0 .. len - 1));
  @ requires \valid(l) && \valid(n_flagged) && \separated(l, n_flagged, cfg, shape);
  @ assigns *l, *n_flagged;
  @ ensures \result == TAHQ_OK ==> *n_flagged <= l->N && l->off_piv + *n_flagged * l->k <= 8 * len; */
static tahq_status pv1_open(const uint8_t *msg, size_t len, const tahq_paper_v1_config *cfg,
                            const tahq_shape *shape, pv1_layout *l, uint64_t *n_flagged)
{
    if (!cfg || !shape)
        return TAHQ_ERR_NULL;
    tahq_status st = pv1_check(cfg, shape);
    if (st != TAHQ_OK)
        return st;
    if (!msg)
        return TAHQ_ERR_NULL;
    pv1_layout_compute(cfg, shape, l);
    if ((uint64_t)len < bytes_of_bits(l->off_piv))
        return TAHQ_ERR_TRUNCATED;
    /*@ assert l->off_piv <= 8 * len; */
    uint64_t nf = 0;
    /*@ loop invariant 0 <= t <= l->N && nf <= t;
      @ loop assigns t, nf;
      @ loop variant l->N - t; */
    for (uint64_t t = 0; t < l->N; t++)
        nf += get_bit(msg, l->off_flags + t);
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
    /*@ loop invariant 0 <= b <= l->B;
      @ loop assigns b;
      @ loop variant l->B - b; */
    for (uint64_t b = 0; b < l->B; b++) {
        uint64_t ones = 0;
        /*@ ghost tahq_mul_mono(b + 1, l->B, l->S); */
        /*@ loop invariant 0 <= s <= l->S && ones <= s;
          @ loop assigns s, ones;
          @ loop variant l->S - s; */
        for (uint64_t s = 0; s < l->S; s++)
            ones += get_bit(msg, l->off_map + b * l->S + s);
        if (ones != l->n_low)
            return TAHQ_ERR_PAYLOAD;
    }
    *n_flagged = nf;
    return TAHQ_OK;
}

/* (Not given to WP: the reordered walk is generated by PV1_FOR_REORDERED.)
 * Each non-null output holds one entry per token (low_map), per tile (flags,
 * pivots, zeros, scales) or per element (codes). */
/*@ requires cfg == \null || \valid_read(cfg);
  @ requires shape == \null || \valid_read(shape);
  @ requires msg == \null || \valid_read(msg + (0 .. len - 1));
  @ requires n_flagged == \null || \valid(n_flagged);
  @ assigns *n_flagged, low_map[..], flags[..], pivots[..], zeros[..], scales[..], codes[..]; */
tahq_status tahq_paper_v1_unpack(const uint8_t *msg, size_t len, const tahq_paper_v1_config *cfg,
                                 const tahq_shape *shape, uint8_t *low_map, uint8_t *flags,
                                 uint16_t *pivots, uint16_t *zeros, uint16_t *scales,
                                 uint8_t *codes, uint64_t *n_flagged)
{
    pv1_layout l;
    uint64_t nf;
    tahq_status st = pv1_open(msg, len, cfg, shape, &l, &nf);
    if (st != TAHQ_OK)
        return st;
    if (n_flagged)
        *n_flagged = nf;
    const uint32_t G = cfg->tile;
    uint64_t flag_rank = 0;
#define PV1_MAP_BIT(s) get_bit(msg, l.off_map + b * l.S + (s))
    for (uint64_t b = 0; b < l.B; b++) {
        PV1_FOR_REORDERED(PV1_MAP_BIT, l.S, {
            uint64_t orow = b * l.S + pos;
            if (low_map)
                low_map[orow] = (uint8_t)low;
            uint32_t bits = low ? cfg->lo_bits : cfg->hi_bits;
            uint64_t code_base = pv1_code_base(&l, b, low, pass_rank, bits);
            for (uint64_t t = 0; t < l.T; t++) {
                uint64_t tr = (b * l.S + rank) * l.T + t;
                uint64_t to = orow * l.T + t; /* original tile index */
                uint32_t f = get_bit(msg, l.off_flags + tr);
                uint32_t piv = 0;
                if (f) {
                    piv = get_bits(msg, l.off_piv + (nf - 1u - flag_rank) * l.k, l.k);
                    flag_rank++;
                }
                if (flags)
                    flags[to] = (uint8_t)f;
                if (pivots)
                    pivots[to] = (uint16_t)piv;
                if (zeros)
                    zeros[to] = (uint16_t)f16_field((uint16_t)get_bits(msg, l.off_zero + 16u * tr, 16u));
                if (scales)
                    scales[to] = (uint16_t)f16_field((uint16_t)get_bits(msg, l.off_scale + 16u * tr, 16u));
                if (codes)
                    for (uint32_t i = 0; i < G; i++)
                        codes[to * G + i] =
                            (uint8_t)get_bits(msg, code_base + (t * G + i) * bits, bits);
            }
        });
    }
#undef PV1_MAP_BIT
    return TAHQ_OK;
}

/* (Not given to WP: the reordered walk is generated by PV1_FOR_REORDERED.) */
/*@ requires cfg == \null || \valid_read(cfg);
  @ requires shape == \null || \valid_read(shape);
  @ requires msg == \null || \valid_read(msg + (0 .. len - 1));
  @ requires out == \null || \valid(out + (0 .. count - 1));
  @ assigns out[0 .. count - 1]; */
tahq_status tahq_paper_v1_decode(const uint8_t *msg, size_t len, const tahq_paper_v1_config *cfg,
                                 const tahq_shape *shape, float *out, size_t count)
{
    pv1_layout l;
    uint64_t nf;
    tahq_status st = pv1_open(msg, len, cfg, shape, &l, &nf);
    if (st != TAHQ_OK)
        return st;
    if (!out)
        return TAHQ_ERR_NULL;
    if ((uint64_t)count != l.B * l.S * l.C)
        return TAHQ_ERR_BUFFER;
    const uint32_t G = cfg->tile;
    uint64_t flag_rank = 0;
    float v[TAHQ_TILE_MAX];
#define PV1_MAP_BIT(s) get_bit(msg, l.off_map + b * l.S + (s))
    for (uint64_t b = 0; b < l.B; b++) {
        PV1_FOR_REORDERED(PV1_MAP_BIT, l.S, {
            float *row = out + (b * l.S + pos) * l.C;
            uint32_t bits = low ? cfg->lo_bits : cfg->hi_bits;
            uint64_t code_base = pv1_code_base(&l, b, low, pass_rank, bits);
            for (uint64_t t = 0; t < l.T; t++) {
                uint64_t tr = (b * l.S + rank) * l.T + t;
                float z = tahq_f16_to_f32(
                    (uint16_t)f16_field((uint16_t)get_bits(msg, l.off_zero + 16u * tr, 16u)));
                float sc = tahq_f16_to_f32(
                    (uint16_t)f16_field((uint16_t)get_bits(msg, l.off_scale + 16u * tr, 16u)));
                for (uint32_t i = 0; i < G; i++) {
                    float q = (float)get_bits(msg, code_base + (t * G + i) * bits, bits);
                    v[i] = q * sc + z;
                }
                if (get_bit(msg, l.off_flags + tr)) {
                    uint32_t piv = get_bits(msg, l.off_piv + (nf - 1u - flag_rank) * l.k, l.k);
                    flag_rank++;
                    tahq_paper_v1_hadamard(v, G, piv, 1);
                }
                memcpy(row + t * G, v, G * sizeof v[0]);
            }
        });
    }
#undef PV1_MAP_BIT
    return TAHQ_OK;
}
