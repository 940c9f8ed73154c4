/* SPDX-License-Identifier: MIT */ /*
 * tahq.h - the codec API of libtahq, the bit-exact reference codec for
 * TAH-Quant activation compression ("tahq format 1", see ref/SPEC.md):
 * encode, decode, the error bound, per-tile information, the fixpoint
 * quantizer for backward gradients, status codes. Users of the codec need
 * only this header (and tahq_version.h for the library version).
 *
 * Two more headers, one audience each:
 *   tahq_spec.h      the SPEC primitives, for implementers and tests;
 *   tahq_paper_v1.h  the authors' format, SPEC Appendix A.
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
/* Header version of messages with alloc = TAHQ_ALLOC_GAIN (SPEC §4.3, §8.1). */
#define TAHQ_GAIN_VERSION 3u
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
    TAHQ_ERR_NULL = 1,      /* a required pointer is NULL */
    TAHQ_ERR_CONFIG = 2,    /* a configuration field is out of range */
    TAHQ_ERR_SHAPE = 3,     /* shape invalid for the configuration or too large */
    TAHQ_ERR_NONFINITE = 4, /* NaN or infinity in the input tensor */
    TAHQ_ERR_RANGE = 5,     /* |x| >= 2^64, or a zero-point/scale overflows the metadata type */
    TAHQ_ERR_BUFFER = 6,    /* an output or workspace buffer is too small */
    TAHQ_ERR_TRUNCATED = 7, /* message shorter than its header or its declared length */
    TAHQ_ERR_MAGIC = 8,     /* first four bytes are not "TAHQ" */
    TAHQ_ERR_VERSION = 9,   /* unknown format version or header size */
    TAHQ_ERR_HEADER = 10,   /* a header field is out of range or inconsistent */
    TAHQ_ERR_SIZE = 11,     /* declared payload size disagrees with the fields or the length */
    TAHQ_ERR_CRC = 12,      /* CRC-32C mismatch */
    TAHQ_ERR_PAYLOAD = 13   /* payload inconsistent: map counts, padding bits, metadata values */
} tahq_status;

#define TAHQ_STATUS_COUNT 14

/* Text for a status code; never NULL (unknown codes get a generic text). */
const char *tahq_strerror(int status);
/* Stable identifier of a status ("ok", "err_crc", ...), used by golden manifests. */
const char *tahq_status_name(int status);

typedef enum tahq_alloc {
    TAHQ_ALLOC_NONE = 0,  /* every tile gets hi_bits */
    TAHQ_ALLOC_TOKEN = 1, /* per sequence, lowest-entropy tokens get lo_bits (paper v1) */
    TAHQ_ALLOC_TILE = 2,  /* per token, lowest-entropy tiles get lo_bits (paper v2) */
    TAHQ_ALLOC_GAIN = 3   /* per sequence, the tokens whose low width adds the least
                           * squared error get lo_bits (SPEC §4.3; header version 3) */
} tahq_alloc;

typedef enum tahq_rounding {
    TAHQ_ROUND_NEAREST_EVEN = 0,
    TAHQ_ROUND_STOCHASTIC = 1 /* Philox4x32-10 keyed by seed and element index */
} tahq_rounding;

typedef enum tahq_meta { TAHQ_META_FP16 = 0, TAHQ_META_BF16 = 1, TAHQ_META_FP32 = 2 } tahq_meta;

typedef struct tahq_config {
    uint32_t tile;        /* G: power of two, 8..256 */
    uint32_t hi_bits;     /* 1..8 */
    uint32_t lo_bits;     /* 1..hi_bits */
    uint32_t hi_permille; /* high-precision share r in 1/1000, 0..1000 */
    tahq_alloc alloc;
    float tau; /* outlier gate: finite >= 0, or +INFINITY (never) */
    tahq_rounding rounding;
    uint64_t seed;  /* stochastic rounding key; carried in the header */
    tahq_meta meta; /* type of the zero-points and scales on the wire */
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
    uint64_t n_low;     /* number of low-precision units (tokens or tiles) */
    uint64_t n_flagged; /* number of tiles with pivot swap + Hadamard */
    uint64_t payload_bytes;
    uint32_t crc; /* as stored */
} tahq_header;

/* Paper operating point: G=64, 4/3 bits, r=0.8, token allocation, tau=2,
 * round-half-even, seed 0, fp16 metadata. */
void tahq_config_default(tahq_config *cfg);
/* Plain per-tile min/max quantizer as a profile of the codec: alloc none,
 * tau=+inf, hi=lo=bits (§7.1). */
void tahq_config_plain(tahq_config *cfg, uint32_t tile, uint32_t bits);

tahq_status tahq_check_config(const tahq_config *cfg);
/* tahq_check_config's status, and in buf the reason for a refusal: the
 * first field refused, its allowed range and the value given, e.g.
 * "tile: must be a power of two 8..256, got 48" ("" for a valid
 * configuration). At most n bytes are written, always NUL-terminated when
 * n > 0; buf may be NULL when n is 0. Not part of the proved reference. */
tahq_status tahq_config_explain(const tahq_config *cfg, char *buf, size_t n);
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
                        void *workspace, size_t workspace_bytes, uint8_t *out, size_t out_capacity,
                        size_t *out_len);

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
    uint32_t bits;    /* hi_bits or lo_bits */
    uint32_t flagged; /* 1 if pivot swap + Hadamard */
    uint32_t pivot;   /* valid if flagged */
    float zero;       /* decoded zero-point */
    float scale;      /* decoded scale */
} tahq_tile_info;
tahq_status tahq_tile_infos(const uint8_t *msg, size_t len, tahq_tile_info *info, size_t n_tiles);

/* Hidden from the proofs' parse (__FRAMAC__), which sees the definitions in
 * ref/ instead: Frama-C numbers every declaration it reads, the proof cache
 * knows goals by those numbers, and a declaration here, read before every
 * function of ref/, would renumber them all (proofs/README.md). */
#ifndef __FRAMAC__
/* tahq_parse_header without the CRC: the same checks in the same order, so
 * the same status for every message whose CRC is right; *hdr is unchanged on
 * failure. It reads msg[0 .. min(len, TAHQ_HEADER_BYTES) - 1] only (len is
 * the whole message's length). For sizing the buffers of tahq_decode or
 * tahq_tile_error_bound, which check the CRC themselves, so that a message's
 * CRC is computed once; the fields are not known to be intact until then. */
tahq_status tahq_parse_header_nocrc(const uint8_t *msg, size_t len, tahq_header *hdr);

/* tahq_error_bound's bound once per tile: bound[t] >= |x_i - x̂_i| for every element i
 * of tile t (tiles in message order, as tahq_tile_infos); n_tiles must be the
 * message's tile count, B*S*C / tile. tahq_error_bound is this value repeated
 * over the tile, in 1/tile of the memory. */
tahq_status tahq_tile_error_bound(const uint8_t *msg, size_t len, double *bound, size_t n_tiles);
#endif

/* The struct layouts are part of the ABI: the Python binding (python/tahq)
 * mirrors them field by field with ctypes. Pinned here for the LP64 ABIs
 * (x86-64 and AArch64 System V: enums are 4 bytes, uint64_t 8-aligned).
 * Left out under Frama-C, whose C front end does not take _Static_assert. */
#if !defined(__FRAMAC__) && (defined(__LP64__) || defined(_WIN64))
#ifdef __cplusplus
#define TAHQ_LAYOUT(cond) static_assert(cond, "tahq struct layout changed: update python/tahq")
#else
#define TAHQ_LAYOUT(cond) _Static_assert(cond, "tahq struct layout changed: update python/tahq")
#endif
TAHQ_LAYOUT(sizeof(tahq_config) == 48 && offsetof(tahq_config, alloc) == 16 &&
            offsetof(tahq_config, tau) == 20 && offsetof(tahq_config, rounding) == 24 &&
            offsetof(tahq_config, seed) == 32 && offsetof(tahq_config, meta) == 40);
TAHQ_LAYOUT(sizeof(tahq_shape) == 12);
TAHQ_LAYOUT(sizeof(tahq_header) == 104 && offsetof(tahq_header, config) == 8 &&
            offsetof(tahq_header, shape) == 56 && offsetof(tahq_header, n_low) == 72 &&
            offsetof(tahq_header, n_flagged) == 80 && offsetof(tahq_header, payload_bytes) == 88 &&
            offsetof(tahq_header, crc) == 96);
TAHQ_LAYOUT(sizeof(tahq_tile_info) == 20 && offsetof(tahq_tile_info, zero) == 12 &&
            offsetof(tahq_tile_info, scale) == 16);
#undef TAHQ_LAYOUT
#endif

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

#ifdef __cplusplus
}
#endif
#endif /* TAHQ_H */
