/* SPDX-License-Identifier: MIT */
/* golden_common.h - pieces shared by `tahq golden-gen` and `tahq conform`:
 * the configuration as one line of JSON (manifest and --run protocol), its
 * parser, the section layout of a message (SPEC §8.2) and the name of the
 * field a byte offset of a message belongs to. */
#ifndef TAHQ_GOLDEN_GOLDEN_COMMON_H
#define TAHQ_GOLDEN_GOLDEN_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "tahq.h"

#define GOLDEN_SCHEMA "tahq-golden-manifest/1"

/* The bits of a binary32 value and back (the golden files write floats by
 * their bits). */
static inline uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* {"tile":64,"hi_bits":4,"lo_bits":3,"hi_permille":800,"alloc":"token",
 *  "tau":"2","tau_bits":"0x40000000","rounding":"nearest","seed":"0","meta":"fp16"}
 * (one line, no spaces, this key order). */
void golden_config_json(char *buf, size_t n, const tahq_config *cfg);
/* Parse the object above (tau_bits is the authority for tau). 0 or -1 with err. */
int golden_config_parse(const json_t *o, tahq_config *cfg, char *err, size_t errlen);

/* Read a manifest (or any JSON document of the golden set) with jansson:
 * duplicate member names and nesting deeper than GOLDEN_MAX_DEPTH are
 * refused. Returns the document (json_decref it), or NULL with err set
 * ("line L column C: reason"). */
#define GOLDEN_MAX_DEPTH 64
json_t *golden_json_load(const char *text, size_t len, char *err, size_t errlen);
/* Typed members of an object: 0 on success, -1 if absent or of another
 * type (or obj is not an object). golden_json_u64 takes an integer >= 0;
 * jansson's integers are signed 64-bit, so a number above INT64_MAX fails
 * golden_json_load ("too big integer"): full-range u64 values such as the
 * seed are strings in the manifest. */
int golden_json_str(const json_t *obj, const char *key, const char **s);
int golden_json_u64(const json_t *obj, const char *key, uint64_t *v);

/* Byte layout of a message whose header has been parsed (SPEC §8.2). */
typedef struct golden_layout {
    uint32_t G, k, T, mb;
    uint64_t rows, N;
    uint64_t map_off, map_bits, flags_off, zp_off, sc_off, codes_off, piv_off, end;
} golden_layout;
void golden_layout_of(const tahq_header *h, golden_layout *L);
/* 1 if tile t of the message is low precision (reads the map). */
int golden_tile_is_low(const uint8_t *msg, const tahq_header *h, const golden_layout *L,
                       uint64_t t);

/* Describe the field holding byte `off` of the valid message msg[len]:
 * "header.n_flagged", "precision_map (row 3)", "gate_flags (tiles 8..15)",
 * "zero_points (tile 5)", "scales (tile 5)", "codes (tile 12, elements 4..5)",
 * "pivots (pivot 2 of tile 40)", "past the end". *section gets the bare
 * section name ("header", "precision_map", "gate_flags", "zero_points",
 * "scales", "codes", "pivots", "length"); *tile the tile or -1. */
void golden_locate(const uint8_t *msg, size_t len, uint64_t off, char *buf, size_t n,
                   const char **section, int64_t *tile);

#endif
