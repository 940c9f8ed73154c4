/*
 * tahq.h - the one public header of libtahq, the bit-exact reference codec
 * for TAH-Quant activation compression ("tahq format 1", see ref/SPEC.md).
 *
 * Conventions
 *   - Every function returns a tahq_status (0 = TAHQ_OK) unless stated.
 *   - No allocation, no global state: the caller passes every buffer and
 *     its capacity; the size-query functions say how large they must be.
 *   - Inputs and outputs never alias.
 *   - On any error nothing past the caller's buffers is written; decode
 *     writes its output only after the whole message has been validated.
 *   - Section numbers (§) refer to ref/SPEC.md.
 */
#ifndef TAHQ_H
#define TAHQ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TAHQ_FORMAT_VERSION 1u
#define TAHQ_HEADER_BYTES 72u
#define TAHQ_MAGIC "TAHQ"
#define TAHQ_TILE_MIN 8u
#define TAHQ_TILE_MAX 256u
#define TAHQ_BITS_MAX 8u
/* Inputs must satisfy |x| < 2^64 (§3.2); larger values are TAHQ_ERR_RANGE. */
#define TAHQ_INPUT_LIMIT 18446744073709551616.0f
/* B*S*C is limited to 2^40 elements (§3.1). */
#define TAHQ_MAX_ELEMENTS (UINT64_C(1) << 40)

/* §9 error codes. Values are part of the format (they appear in golden vectors). */
typedef enum tahq_status {
    TAHQ_OK = 0,
    TAHQ_ERR_NULL = 1,        /* a required pointer is NULL */
    TAHQ_ERR_CONFIG = 2,      /* a configuration field is out of range */
    TAHQ_ERR_SHAPE = 3,       /* shape invalid for the configuration or too large */
    TAHQ_ERR_NONFINITE = 4,   /* NaN or infinity in the input tensor */
    TAHQ_ERR_RANGE = 5,       /* |x| >= 2^64, or a zero-point/scale overflows the metadata type */
    TAHQ_ERR_BUFFER = 6,      /* an output or workspace buffer is too small */
    TAHQ_ERR_TRUNCATED = 7,   /* message shorter than its header or its declared length */
    TAHQ_ERR_MAGIC = 8,       /* first four bytes are not "TAHQ" */
    TAHQ_ERR_VERSION = 9,     /* unknown format version or header size */
    TAHQ_ERR_HEADER = 10,     /* a header field is out of range or inconsistent */
    TAHQ_ERR_SIZE = 11,       /* declared payload size disagrees with the fields or the length */
    TAHQ_ERR_CRC = 12,        /* CRC-32C mismatch */
    TAHQ_ERR_PAYLOAD = 13     /* payload inconsistent: map counts, padding bits, metadata values */
} tahq_status;

#define TAHQ_STATUS_COUNT 14

/* Text for a status code; never NULL (unknown codes get a generic text). */
const char *tahq_strerror(int status);
/* Stable identifier of a status ("ok", "err_crc", ...), used by golden manifests. */
const char *tahq_status_name(int status);

typedef enum tahq_alloc {
    TAHQ_ALLOC_NONE = 0,  /* every tile gets hi_bits */
    TAHQ_ALLOC_TOKEN = 1, /* per sequence, lowest-entropy tokens get lo_bits (paper v1) */
    TAHQ_ALLOC_TILE = 2   /* per token, lowest-entropy tiles get lo_bits (paper v2) */
} tahq_alloc;

typedef enum tahq_rounding {
    TAHQ_ROUND_NEAREST_EVEN = 0,
    TAHQ_ROUND_STOCHASTIC = 1 /* Philox4x32-10 keyed by seed and element index */
} tahq_rounding;

typedef enum tahq_meta {
    TAHQ_META_FP16 = 0,
    TAHQ_META_BF16 = 1,
    TAHQ_META_FP32 = 2
} tahq_meta;

typedef struct tahq_config {
    uint32_t tile;          /* G: power of two, 8..256 */
    uint32_t hi_bits;       /* 1..8 */
    uint32_t lo_bits;       /* 1..hi_bits */
    uint32_t hi_permille;   /* high-precision share r in 1/1000, 0..1000 */
    tahq_alloc alloc;
    float tau;              /* outlier gate: finite >= 0, or +INFINITY (never) */
    tahq_rounding rounding;
    uint64_t seed;          /* stochastic rounding key; carried in the header */
    tahq_meta meta;         /* type of the zero-points and scales on the wire */
} tahq_config;

typedef struct tahq_shape {
    uint32_t batch;    /* B >= 1 */
    uint32_t seq_len;  /* S >= 1: rows are grouped into sequences of S tokens */
    uint32_t channels; /* C: a multiple of G */
} tahq_shape;

/* The parsed, validated header of a message (§8.1). */
typedef struct tahq_header {
    uint16_t version;
    tahq_config config;
    tahq_shape shape;
    uint64_t n_low;        /* number of low-precision units (tokens or tiles) */
    uint64_t n_flagged;    /* number of tiles with pivot swap + Hadamard */
    uint64_t payload_bytes;
    uint32_t crc;          /* as stored */
} tahq_header;

/* Paper operating point: G=64, 4/3 bits, r=0.8, token allocation, tau=2,
 * round-half-even, seed 0, fp16 metadata. */
void tahq_config_default(tahq_config *cfg);
/* Plain per-tile min/max quantizer as a profile of the codec: alloc none,
 * tau=+inf, hi=lo=bits (§7.1). */
void tahq_config_plain(tahq_config *cfg, uint32_t tile, uint32_t bits);

tahq_status tahq_check_config(const tahq_config *cfg);
tahq_status tahq_check_shape(const tahq_config *cfg, const tahq_shape *shape);

/* Largest message encode can produce for this config and shape (all tiles flagged). */
tahq_status tahq_encode_bound(const tahq_config *cfg, const tahq_shape *shape, size_t *bytes);
/* Workspace encode needs (may be 0; then workspace may be NULL). */
tahq_status tahq_encode_workspace_size(const tahq_config *cfg, const tahq_shape *shape,
                                       size_t *bytes);

/* Encode x[B*S*C] (row-major, rows = B*S tokens of C channels) into out.
 * On success *out_len is the message length. On error *out_len = 0 (when
 * out_len is not NULL). Every check that can be made up front (config,
 * shape, buffers, input values) runs before anything is written, so those
 * errors leave out untouched. A metadata overflow (TAHQ_ERR_RANGE) is only
 * found tile by tile: then the first TAHQ_HEADER_BYTES of out are zeroed so
 * that the partial output cannot be mistaken for a message. x, workspace
 * and out must not overlap. */
tahq_status tahq_encode(const tahq_config *cfg, const tahq_shape *shape, const float *x,
                        void *workspace, size_t workspace_bytes,
                        uint8_t *out, size_t out_capacity, size_t *out_len);

/* Parse and range-check the header; checks the length and the CRC too. */
tahq_status tahq_parse_header(const uint8_t *msg, size_t len, tahq_header *hdr);

/* Decode a whole message into out[count]; count must be B*S*C exactly.
 * out is written only if the whole message is valid. */
tahq_status tahq_decode(const uint8_t *msg, size_t len, float *out, size_t count);

/* Per-element error bound of a decoded message (§6): bound[i] >= |x_i - x̂_i|
 * for the tensor x that produced the message, computed in double from the
 * message alone. The bound for a flagged tile is its L2 bound, repeated. */
tahq_status tahq_error_bound(const uint8_t *msg, size_t len, double *bound, size_t count);

/* Per-tile information of a message (for inspect and tests). */
typedef struct tahq_tile_info {
    uint32_t bits;     /* hi_bits or lo_bits */
    uint32_t flagged;  /* 1 if pivot swap + Hadamard */
    uint32_t pivot;    /* valid if flagged */
    float zero;        /* decoded zero-point */
    float scale;       /* decoded scale */
} tahq_tile_info;
tahq_status tahq_tile_infos(const uint8_t *msg, size_t len, tahq_tile_info *info, size_t n_tiles);

/* ---------------------------------------------------------------------
 * Per-channel symmetric fixpoint quantizer for backward gradients (§7.2).
 * No header: codes[rows*C] (one byte each, holding q + 2^(b-1)) and
 * steps[C] (the metadata values as float, already rounded to meta).
 * Wire cost: rows*C*b bits + C metadata values.
 * --------------------------------------------------------------------- */
tahq_status tahq_fixpoint_encode(const float *g, uint64_t rows, uint32_t channels, uint32_t bits,
                                 tahq_meta meta, uint8_t *codes, float *steps);
tahq_status tahq_fixpoint_decode(const uint8_t *codes, const float *steps, uint64_t rows,
                                 uint32_t channels, uint32_t bits, float *out);

/* ---------------------------------------------------------------------
 * SPEC primitives, exposed so that tests, other implementations and the
 * CUDA kernels can check each step separately.
 * --------------------------------------------------------------------- */

/* §2.2 binary16 / bfloat16 conversions (round to nearest even, subnormals kept). */
uint16_t tahq_f32_to_f16(float x);
float tahq_f16_to_f32(uint16_t h);
uint16_t tahq_f32_to_bf16(float x);
float tahq_bf16_to_f32(uint16_t h);
/* §2.2 directed rounding of a binary32 value onto the metadata grid:
 * largest meta value <= x, smallest meta value >= x (may be +-inf). */
float tahq_meta_round_down(tahq_meta meta, float x);
float tahq_meta_round_up(tahq_meta meta, float x);
/* Encode / decode one metadata value as its wire bits (fp32: the bits). */
uint32_t tahq_meta_bits(tahq_meta meta, float v);
float tahq_meta_value(tahq_meta meta, uint32_t bits);
uint32_t tahq_meta_bytes(tahq_meta meta);

/* §2.4 Philox4x32-10: out = philox(counter, key). */
void tahq_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]);
/* The 32-bit random word for element index idx under seed (§2.4). */
uint32_t tahq_random_word(uint64_t seed, uint64_t idx);

/* §2.3 the SPEC's log2 for 0 < x <= 1 (finite positive x in general). */
float tahq_log2(float x);
/* §2.5 pairwise sum of n values, n a power of two (halving tree). */
float tahq_tree_sum(const float *v, uint32_t n);
/* §4.1 entropy of a unit of n = tiles*G values (tiles >= 1), in bits. */
float tahq_entropy(const float *x, uint32_t tiles, uint32_t tile);

/* §5.1 outlier gate: returns 1 if flagged; *pivot = lowest index of max |x|. */
int tahq_gate(const float *x, uint32_t tile, float tau, uint32_t *pivot);
/* §5.2 unnormalized in-place fast Walsh-Hadamard transform, stages h=1,2,..,G/2. */
void tahq_fwht(float *x, uint32_t tile);
/* The same transform as plain scalar loops (the fast path above must match
 * it bit for bit; test_hadamard compares them at every G). */
void tahq_fwht_scalar(float *x, uint32_t tile);
/* §5.2 forward (swap, FWHT, *2^-ceil(k/2)) and inverse (FWHT, *2^-floor(k/2), swap). */
void tahq_hadamard_forward(float *x, uint32_t tile, uint32_t pivot);
void tahq_hadamard_inverse(float *x, uint32_t tile, uint32_t pivot);

/* §5.3 quantize one tile of values v[G] with b bits: zero/scale (already on
 * the metadata grid) and codes[G]. elem0 is the global index of v[0] (for
 * stochastic rounding). Returns TAHQ_ERR_RANGE on metadata overflow. */
tahq_status tahq_quantize_tile(const float *v, uint32_t tile, uint32_t bits, tahq_meta meta,
                               tahq_rounding rounding, uint64_t seed, uint64_t elem0,
                               float *zero, float *scale, uint8_t *codes);
void tahq_dequantize_tile(const uint8_t *codes, uint32_t tile, float zero, float scale,
                          float *out);

/* §8.3 LSB-first bit packing of n codes of b bits starting at bit offset
 * bitpos of buf (buf must hold ceil((bitpos + n*b)/8) bytes; bits outside the
 * written range are preserved). */
void tahq_pack_bits(uint8_t *buf, uint64_t bitpos, const uint8_t *codes, uint64_t n, uint32_t b);
void tahq_unpack_bits(const uint8_t *buf, uint64_t bitpos, uint8_t *codes, uint64_t n, uint32_t b);

/* §2.6 CRC-32C (Castagnoli, reflected, init and xorout 0xFFFFFFFF); §8.1 says what it covers. */
uint32_t tahq_crc32c(uint32_t crc, const uint8_t *data, size_t n);

/* The number of low-precision units of a group of n units (§4.2):
 * floor(n * (1000 - hi_permille) / 1000) in integer arithmetic. */
uint64_t tahq_low_count(uint64_t n, uint32_t hi_permille);

/* =====================================================================
 * paper-v1 compatibility profile (ref/SPEC.md Appendix A)
 *
 * The authors' codec numerics and their raw wire layout: token allocation
 * with n_low = floor(S*(1-r)) in binary64, tokens reordered (low first),
 * natural-log entropy with their 1e-30 epsilons, gate m1 >= 2*m2, pivot
 * swap + Hadamard, binary32 zero/scale sent as fp16, an MSB-first bit
 * stream with no header. Not format 1: the decoder needs the configuration
 * and the shape from the caller. Errors use the tahq_status codes.
 * ===================================================================== */

typedef struct tahq_paper_v1_config {
    uint32_t tile;        /* G: power of two, 8..256 */
    uint32_t hi_bits;     /* 1..8 (the authors' 4) */
    uint32_t lo_bits;     /* 1..8 (the authors' 3) */
    uint32_t hi_permille; /* r in 1/1000, 0..1000 (the authors' 0.8 = 800) */
} tahq_paper_v1_config;

/* G=64, 4/3 bits, r=0.8. */
void tahq_paper_v1_config_default(tahq_paper_v1_config *cfg);
/* CONFIG or SHAPE (the shape rules of format 1, §3.1). */
tahq_status tahq_paper_v1_check(const tahq_paper_v1_config *cfg, const tahq_shape *shape);
/* floor(S * (1.0 - hi_permille/1000.0)) in binary64 (A.2): 204 for S=1024, r=800. */
uint64_t tahq_paper_v1_low_count(uint32_t seq_len, uint32_t hi_permille);
/* Largest message (every tile flagged) and the exact length for n_flagged tiles. */
tahq_status tahq_paper_v1_encode_bound(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                                       size_t *bytes);
tahq_status tahq_paper_v1_message_size(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                                       uint64_t n_flagged, size_t *bytes);
tahq_status tahq_paper_v1_workspace_size(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                                         size_t *bytes);
/* Encode x[B*S*C]. out_capacity must be at least tahq_paper_v1_encode_bound;
 * every check (config, shape, buffers, input finite with |x| < 2^64) runs
 * before anything is written. */
tahq_status tahq_paper_v1_encode(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                                 const float *x, void *workspace, size_t workspace_bytes,
                                 uint8_t *out, size_t out_capacity, size_t *out_len);
/* Decode into out[count], count = B*S*C; out is written only after the
 * message has been validated (A.4). */
tahq_status tahq_paper_v1_decode(const uint8_t *msg, size_t len, const tahq_paper_v1_config *cfg,
                                 const tahq_shape *shape, float *out, size_t count);
/* The message's fields, indexed by ORIGINAL position (any pointer may be
 * NULL): low_map[B*S] (1 = low), and per tile (B*S*C/G, original tile
 * order) flags, pivots (0 where not flagged), zeros and scales (fp16 bits),
 * codes[B*S*C]. Validates as decode does. */
tahq_status tahq_paper_v1_unpack(const uint8_t *msg, size_t len, const tahq_paper_v1_config *cfg,
                                 const tahq_shape *shape, uint8_t *low_map, uint8_t *flags,
                                 uint16_t *pivots, uint16_t *zeros, uint16_t *scales,
                                 uint8_t *codes, uint64_t *n_flagged);
/* A.1 primitives: ln(y) = fl(log2(y) * fl(ln 2)); the entropy of one token
 * of C channels; the gate (1 = flagged, *pivot = first index of max |x|);
 * the transform (swap, FWHT, / fl(sqrt G); inverse: FWHT, / fl(sqrt G),
 * swap); the quantizer (binary32 zero and scale, codes). */
float tahq_paper_v1_ln(float y);
float tahq_paper_v1_entropy(const float *x, uint32_t channels, uint32_t tile);
int tahq_paper_v1_gate(const float *x, uint32_t tile, uint32_t *pivot);
void tahq_paper_v1_hadamard(float *v, uint32_t tile, uint32_t pivot, int inverse);
void tahq_paper_v1_quantize_tile(const float *v, uint32_t tile, uint32_t bits, float *zero,
                                 float *scale, uint8_t *codes);

#ifdef __cplusplus
}
#endif
#endif /* TAHQ_H */
