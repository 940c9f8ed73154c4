/* SPDX-License-Identifier: MIT */ /* eva_driver.c - Eva entry points for the proofs of ref/ (proofs/README.md).
 *
 * run.sh runs one Eva analysis per entry point (-main eva_...):
 *
 *   eva_codec_g8 .. eva_codec_g256  the whole codec (tahq_encode, then on the
 *       message tahq_parse_header, tahq_decode, tahq_error_bound,
 *       tahq_tile_infos) for that tile size G, once per metadata type;
 *   eva_primitives  the SPEC primitives, the bit packers at any offset and the
 *       fixpoint quantizer of §7.2;
 *   eva_paper_v1  the paper-v1 profile (encode, unpack, decode) for every G;
 *   eva_fp16_round_trip, eva_bf16_round_trip  f32_to_f16(f16_to_f32(h)) == h
 *       (bfloat16 likewise) on every non-NaN pattern, one at a time (end of
 *       this file).
 *
 * In every codec call the input tensor is non-deterministic: each element is
 * any finite float with |x| < 2^64 (the whole input domain of tahq_encode;
 * that contains the metadata range of every type, so both the success path
 * and the TAHQ_ERR_RANGE path are analysed), and so are the configuration
 * fields that do not size a buffer: hi_bits in 1..8, lo_bits in 1..hi_bits
 * (so every bit-width, in both precisions), hi_permille in 0..1000, the
 * allocation mode, the rounding mode, tau (any finite value >= 0 or +inf)
 * and the seed. Only G, the shape and the metadata type are concrete: they
 * size the buffers, and Eva keeps them exact (and the allocation mode on
 * rows of several tiles, see codec()). One analysis therefore covers every
 * tensor and every configuration of that G and shape. The shapes give every
 * kind of allocation group: 2 batches of 2 tokens, rows of 2 tiles, tokens
 * of 2 tiles (G = 8), 2 tokens of one tile (G = 16, 32), one tile (G >= 64,
 * so that the analysis of G = 256 stays cheap; the group logic does not
 * depend on G, the per-tile code does not depend on the number of tiles).
 *
 * Not part of the build: only `frama-c -eva` reads this file. */
#include "tahq.h"
#include "tahq_paper_v1.h"
#include "tahq_spec.h"

/* Non-deterministic values. Frama-C's Frama_C_*_interval functions are
 * specified in ACSL only, and run.sh passes -no-annot: their result would be
 * any value of the type (NaN included). These helpers read a volatile (any
 * value) and clamp it in C, which Eva follows exactly. */
static volatile uint64_t any_bits;
static volatile float any_float;

static uint64_t any_u64(uint64_t lo, uint64_t hi)
{
    uint64_t v = any_bits;
    return v >= lo && v <= hi ? v : lo;
}

static uint32_t any_u32(uint32_t lo, uint32_t hi)
{
    return (uint32_t)any_u64(lo, hi);
}

static float any_f32(float lo, float hi)
{
    float v = any_float;
    return v >= lo && v <= hi ? v : lo; /* NaN fails both tests */
}

/* the largest float below TAHQ_INPUT_LIMIT = 2^64 */
#define XMAX 0x1.fffffep63f
#define MAX_ELEMS 512u
#define MAX_MSG 4096u

static float x[MAX_ELEMS];
static float y[MAX_ELEMS];
static double bound[MAX_ELEMS];
static tahq_tile_info info[MAX_ELEMS / 8u];
static uint8_t msg[MAX_MSG];
/* The workspace is an absolute address (run.sh passes -absolute-valid-range
 * 0x10000-0x1FFFF): tahq_encode rounds the workspace address up to 8 bytes,
 * which Eva computes exactly only for a known address. */
#define WORKSPACE ((void *)0x10000)
#define WORKSPACE_BYTES 0x10000u

/* `allocs` argument of codec(): any allocation mode, or one given mode */
#define ANY_ALLOC (-1)

/* Encode a non-deterministic tensor of shape (batch, seq, tile*tiles_per_row)
 * with a non-deterministic configuration of tile size `tile` and metadata
 * type `meta`; then read the message back with every decoding entry point. */
static void codec(uint32_t tile, tahq_meta meta, int allocs, uint32_t batch, uint32_t seq,
                  uint32_t tiles_per_row)
{
    tahq_config cfg;
    cfg.tile = tile;
    cfg.hi_bits = any_u32(1, 8);
    cfg.lo_bits = any_u32(1, cfg.hi_bits);
    cfg.hi_permille = any_u32(0, 1000);
    /* With tiles_per_row > 1 the modes merged in one state would give n_low
     * an interval too wide for the token layout (n_low * tiles_per_row):
     * such shapes are analysed once per mode. */
    cfg.alloc = allocs == ANY_ALLOC ? (tahq_alloc)any_u32(0, 3) : (tahq_alloc)allocs;
    cfg.rounding = (tahq_rounding)any_u32(0, 1);
    cfg.meta = meta;
    /* tau: any finite value >= 0, or +inf (the gate never flags) */
    tahq_config plain;
    tahq_config_plain(&plain, 8, 1);
    cfg.tau = any_u32(0, 1) ? plain.tau : any_f32(0.0f, 0x1.fffffep127f);
    cfg.seed = any_u64(0, UINT64_MAX);
    tahq_shape shape = {batch, seq, tile * tiles_per_row};
    uint32_t n = batch * seq * tile * tiles_per_row;
    for (uint32_t i = 0; i < n; i++)
        x[i] = any_f32(-XMAX, XMAX);
    size_t len = 0;
    tahq_status st =
        tahq_encode(&cfg, &shape, x, WORKSPACE, WORKSPACE_BYTES, msg, sizeof msg, &len);
    if (st != TAHQ_OK)
        return;
    tahq_header h;
    (void)tahq_parse_header(msg, len, &h);
    (void)tahq_decode(msg, len, y, n);
    (void)tahq_error_bound(msg, len, bound, n);
    (void)tahq_tile_infos(msg, len, info, n / tile);
}

static void codec_all_meta(uint32_t tile, int allocs, uint32_t batch, uint32_t seq,
                           uint32_t tiles_per_row)
{
    codec(tile, TAHQ_META_FP16, allocs, batch, seq, tiles_per_row);
    codec(tile, TAHQ_META_BF16, allocs, batch, seq, tiles_per_row);
    codec(tile, TAHQ_META_FP32, allocs, batch, seq, tiles_per_row);
}

/* G = 8: 2 batches of 2 tokens of one tile (token groups of 2), rows of 2
 * tiles (tile groups of 2), and 2 tokens of 2 tiles in token mode. */
void eva_codec_g8(void)
{
    codec_all_meta(8, ANY_ALLOC, 2, 2, 1);
    codec_all_meta(8, TAHQ_ALLOC_TILE, 1, 1, 2);
    codec_all_meta(8, TAHQ_ALLOC_TOKEN, 1, 2, 2);
    codec_all_meta(8, TAHQ_ALLOC_GAIN, 1, 2, 2);
}

/* G = 16, 32: 2 tokens of one tile; G >= 64: one tile. */
void eva_codec_g16(void)
{
    codec_all_meta(16, ANY_ALLOC, 1, 2, 1);
}
void eva_codec_g32(void)
{
    codec_all_meta(32, ANY_ALLOC, 1, 2, 1);
}
void eva_codec_g64(void)
{
    codec_all_meta(64, ANY_ALLOC, 1, 1, 1);
}
void eva_codec_g128(void)
{
    codec_all_meta(128, ANY_ALLOC, 1, 1, 1);
}
void eva_codec_g256(void)
{
    codec_all_meta(256, ANY_ALLOC, 1, 1, 1);
}

/* The paper-v1 profile (SPEC appendix A) for tile size `tile`: `batch`
 * sequences of 2 tokens of `tiles` tiles, any tensor, any code widths and any
 * ratio r; the message read back by unpack and decode. */
static void paper_v1(uint32_t tile, uint32_t batch, uint32_t tiles)
{
    tahq_paper_v1_config cfg;
    tahq_paper_v1_config_default(&cfg);
    cfg.tile = tile;
    cfg.hi_bits = any_u32(1, 8);
    cfg.lo_bits = any_u32(1, 8);
    cfg.hi_permille = any_u32(0, 1000);
    tahq_shape shape = {batch, 2, tile * tiles};
    const uint32_t n = batch * 2u * tile * tiles;
    for (uint32_t i = 0; i < n; i++)
        x[i] = any_f32(-XMAX, XMAX);
    size_t len = 0;
    if (tahq_paper_v1_encode(&cfg, &shape, x, WORKSPACE, WORKSPACE_BYTES, msg, sizeof msg, &len) !=
        TAHQ_OK)
        return;
    static uint8_t low_map[4], flags[MAX_ELEMS / 8u], codes[MAX_ELEMS];
    static uint16_t pivots[MAX_ELEMS / 8u], zeros[MAX_ELEMS / 8u], scales[MAX_ELEMS / 8u];
    uint64_t n_flagged;
    (void)tahq_paper_v1_unpack(msg, len, &cfg, &shape, low_map, flags, pivots, zeros, scales, codes,
                               &n_flagged);
    (void)tahq_paper_v1_decode(msg, len, &cfg, &shape, y, n);
}

/* G = 8: 2 sequences of 2 tokens of 2 tiles; every larger G: 2 tokens of one
 * tile (the walks do not depend on G, the per-tile code does not depend on
 * the number of tiles). */
void eva_paper_v1(void)
{
    paper_v1(8, 2, 2);
    paper_v1(16, 1, 1);
    paper_v1(32, 1, 1);
    paper_v1(64, 1, 1);
    paper_v1(128, 1, 1);
    paper_v1(256, 1, 1);
}

/* The primitives on their own, on all their inputs. */
void eva_primitives(void)
{
    uint16_t hbits = (uint16_t)any_u32(0, 0xFFFF);
    (void)tahq_f32_to_f16(tahq_f16_to_f32(hbits));
    (void)tahq_f32_to_bf16(tahq_bf16_to_f32(hbits));
    for (uint32_t m = TAHQ_META_FP16; m <= TAHQ_META_FP32; m++) {
        float v = any_f32(-0x1.fffffep127f, 0x1.fffffep127f);
        (void)tahq_meta_round_down((tahq_meta)m, v);
        (void)tahq_meta_round_up((tahq_meta)m, v);
        (void)tahq_meta_value((tahq_meta)m, tahq_meta_bits((tahq_meta)m, v));
    }
    (void)tahq_random_word(any_u64(0, UINT64_MAX), any_u64(0, UINT64_MAX));
    (void)tahq_log2(any_f32(0x1p-149f, 0x1.fffffep127f));
    (void)tahq_strerror((int)any_u32(0, 40) - 20);
    (void)tahq_status_name((int)any_u32(0, 40) - 20);
    /* entropy of a unit of several tiles (token allocation with C > G: the
     * pairwise combination of tile sums), any number of tiles up to 7 */
    for (uint32_t i = 0; i < 7u * 8u; i++)
        x[i] = any_f32(-XMAX, XMAX);
    for (uint32_t tiles = 1; tiles <= 7; tiles++)
        (void)tahq_entropy(x, tiles, 8);
    /* bit streams: any width, any start bit of the first byte */
    uint8_t codes[8], back[8], packed[16];
    for (int i = 0; i < 8; i++)
        codes[i] = (uint8_t)any_u32(0, 255);
    for (int i = 0; i < 16; i++)
        packed[i] = (uint8_t)any_u32(0, 255);
    uint32_t b = any_u32(1, 8);
    uint64_t at = any_u32(0, 7);
    tahq_pack_bits(packed, at, codes, 8, b);
    tahq_unpack_bits(packed, at, back, 8, b);
    /* fixpoint quantizer (§7.2): 2 rows of 4 channels, any width */
    static uint8_t g8[8];
    static float gs[4];
    float g[8];
    for (int i = 0; i < 8; i++)
        g[i] = any_f32(-XMAX, XMAX);
    /* every width (2..8) and metadata type, each exactly: the codes are
     * q + 2^(b-1) with |q| <= 2^(b-1) - 1, which needs b known */
    for (uint32_t fb = 2; fb <= 8; fb++)
        for (uint32_t m = TAHQ_META_FP16; m <= TAHQ_META_FP32; m++)
            if (tahq_fixpoint_encode(g, 2, 4, fb, (tahq_meta)m, g8, gs) == TAHQ_OK)
                (void)tahq_fixpoint_decode(g8, gs, 2, 4, fb, y);
}

/* ---- Exhaustive checks: a property on every input -------------------------
 * run.sh passes -no-annot, so the driver states a property in C:
 * MUST_HOLD(c) divides by (c != 0), which Eva reports as a division-by-zero
 * alarm at that line in any state where c may be false. A loop over every
 * input, each iteration analysed with the exact value (the loops below stay
 * within -eva-auto-loop-unroll 300, and every call gets singletons), then
 * proves the property for every input; any alarm not listed in README.md
 * fails the run. The values are split into 256 calls of 256 patterns: the
 * unrolled states of one call are merged on return, which keeps the
 * analysis linear in the number of patterns. */
static volatile uint32_t must_hold_sink;
#define MUST_HOLD(c) (must_hold_sink = 1u / (uint32_t)((c) != 0))

/* The 16-bit pattern h through binary32 and back. */
static uint16_t fp16_round_trip(uint16_t h)
{
    return tahq_f32_to_f16(tahq_f16_to_f32(h));
}
static uint16_t bf16_round_trip(uint16_t h)
{
    return tahq_f32_to_bf16(tahq_bf16_to_f32(h));
}

/* Patterns first .. first+255 of a 16-bit float type with exponent field
 * `exponent`: every finite value and both infinities must come back
 * unchanged. NaNs are left to the tests (a NaN comes back a NaN,
 * tests/test_fp16.c): Eva's float values do not keep a NaN's payload, so it
 * cannot follow one through the bit views. */
static void round_trip_block(uint16_t (*round_trip)(uint16_t), uint32_t exponent, uint32_t first)
{
    for (uint32_t h = first; h < first + 256u; h++) {
        if ((h & exponent) == exponent && (h & 0x7FFFu & ~exponent) != 0u)
            continue; /* NaN */
        MUST_HOLD(round_trip((uint16_t)h) == h);
    }
}

void eva_fp16_round_trip(void)
{
    for (uint32_t first = 0; first <= 0xFF00u; first += 256u)
        round_trip_block(fp16_round_trip, 0x7C00u, first);
}

void eva_bf16_round_trip(void)
{
    for (uint32_t first = 0; first <= 0xFF00u; first += 256u)
        round_trip_block(bf16_round_trip, 0x7F80u, first);
}
