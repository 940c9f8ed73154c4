/* SPDX-License-Identifier: MIT */ /* codec.c - whole-message encode and decode (SPEC §8, §10), the per-element
 * error bound (SPEC §6) and per-tile inspection. */
#include <math.h>
#include "internal.h"

/* ---- sizes ----------------------------------------------------------------- */

/*@ requires cfg == \null || \valid_read(cfg);
  @ requires shape == \null || \valid_read(shape);
  @ requires bytes == \null || (\valid(bytes) && \separated(bytes, cfg, shape));
  @ assigns *bytes;
  @ ensures \result == TAHQ_OK ==> cfg != \null && shape != \null && bytes != \null &&
  @   tahq_config_ok(cfg) && tahq_shape_ok(cfg, shape) &&
  @   *bytes == TAHQ_HEADER_BYTES + tahq_payload(cfg, shape, tahq_required_low(cfg, shape),
  @                                              tahq_ntiles(cfg, shape)); */
tahq_status tahq_encode_bound(const tahq_config *cfg, const tahq_shape *shape, size_t *bytes)
{
    if (!bytes)
        return TAHQ_ERR_NULL;
    tahq_status st = tahq_check_config(cfg);
    if (st == TAHQ_OK)
        st = tahq_check_shape(cfg, shape);
    if (st != TAHQ_OK)
        return st;
    uint64_t n_low = tahq_required_low_units(cfg, shape);
    tahq_layout lay = tahq_layout_compute(cfg, shape, n_low, 0);
    lay = tahq_layout_compute(cfg, shape, n_low, lay.n_tiles);
    uint64_t total = TAHQ_HEADER_BYTES + lay.payload_bytes;
    if (total > (uint64_t)SIZE_MAX)
        return TAHQ_ERR_SHAPE;
    *bytes = (size_t)total;
    return TAHQ_OK;
}

/* Units ranked together: S tokens (token and gain modes) or T tiles (tile mode). */
/*@ requires \valid_read(cfg) && \valid_read(shape) && tahq_config_ok(cfg) && tahq_shape_ok(cfg, shape);
  @ assigns \nothing;
  @ ensures \result == tahq_group(cfg, shape) && \result <= 0xFFFFFFFF; */
uint64_t tahq_alloc_group_size(const tahq_config *cfg, const tahq_shape *shape)
{
    switch (cfg->alloc) {
    case TAHQ_ALLOC_TOKEN:
    case TAHQ_ALLOC_GAIN:
        return shape->seq_len;
    case TAHQ_ALLOC_TILE:
        return shape->channels / cfg->tile;
    default:
        return 0;
    }
}

/*@ requires cfg == \null || \valid_read(cfg);
  @ requires shape == \null || \valid_read(shape);
  @ requires bytes == \null || (\valid(bytes) && \separated(bytes, cfg, shape));
  @ assigns *bytes;
  @ ensures \result == TAHQ_OK ==> cfg != \null && shape != \null && bytes != \null &&
  @   tahq_config_ok(cfg) && tahq_shape_ok(cfg, shape) &&
  @   *bytes == (tahq_group(cfg, shape) == 0 ? 0 : tahq_group(cfg, shape) * 12 + 7); */
tahq_status tahq_encode_workspace_size(const tahq_config *cfg, const tahq_shape *shape,
                                       size_t *bytes)
{
    if (!bytes)
        return TAHQ_ERR_NULL;
    tahq_status st = tahq_check_config(cfg);
    if (st == TAHQ_OK)
        st = tahq_check_shape(cfg, shape);
    if (st != TAHQ_OK)
        return st;
    uint64_t n = tahq_alloc_group_size(cfg, shape);
    /* keys and entropies, plus slack to align the keys to 8 bytes */
    uint64_t total = n == 0 ? 0 : n * (sizeof(uint64_t) + sizeof(float)) + sizeof(uint64_t) - 1;
    if (total > (uint64_t)SIZE_MAX)
        return TAHQ_ERR_SHAPE;
    *bytes = (size_t)total;
    return TAHQ_OK;
}

/* ---- encode ---------------------------------------------------------------- */

/* Index of the first element that is not finite or has |x| >= 2^64, and its
 * status; TAHQ_OK if none. The fast path is a branch-free max over |x| bits. */
/*@ requires \valid_read(x + (0 .. n - 1));
  @ assigns \nothing;
  @ ensures \result == TAHQ_OK || \result == TAHQ_ERR_NONFINITE || \result == TAHQ_ERR_RANGE;
  @ ensures in_range: \result == TAHQ_OK ==> \forall integer i; 0 <= i < n ==> tahq_mag(x[i]) < 0x5F800000; */
TAHQ_HOT static tahq_status check_input(const float *x, uint64_t n)
{
    uint32_t worst = 0;
    /*@ loop invariant 0 <= i <= n;
      @ loop invariant \forall integer j; 0 <= j < i ==> tahq_mag(x[j]) <= worst;
      @ loop assigns i, worst;
      @ loop variant n - i; */
    for (uint64_t i = 0; i < n; i++) {
        uint32_t a = tahq_bits_of(x[i]) & 0x7FFFFFFFu;
        worst = a > worst ? a : worst;
    }
    if (worst < 0x5F800000u) /* 2^64 */
        return TAHQ_OK;
    /*@ loop invariant 0 <= i <= n;
      @ loop invariant \forall integer j; 0 <= j < i ==> tahq_mag(x[j]) < 0x5F800000;
      @ loop assigns i;
      @ loop variant n - i; */
    for (uint64_t i = 0; i < n; i++) {
        uint32_t a = tahq_bits_of(x[i]) & 0x7FFFFFFFu;
        if (a >= 0x7F800000u)
            return TAHQ_ERR_NONFINITE;
        if (a >= 0x5F800000u)
            return TAHQ_ERR_RANGE;
    }
    return TAHQ_OK;
}

/*@ requires \valid_read(src + (0 .. (meta == TAHQ_META_FP32 ? 3 : 1)));
  @ assigns \nothing; */
static float get_meta(const uint8_t *src, tahq_meta meta)
{
    return tahq_meta_value(meta, tahq_get_meta_bits(src, meta));
}

/*@ ghost
  /@ requires first + len <= n;
   @ requires \forall integer i; 0 <= i < n ==> tahq_mag(x[i]) < 0x5F800000;
   @ assigns \nothing;
   @ ensures \forall integer i; 0 <= i < len ==> tahq_not_nan_bits(tahq_f32_bits(x[first + i])); @/
  static void codec_tile_not_nan(const float *x, uint64_t n, uint64_t first, uint64_t len) { }
*/

/* Code width of tile t (SPEC §4): lo_bits if the unit holding it (its row in
 * token mode, the tile itself in tile mode) is marked in the precision map. */
/*@ requires tahq_layout_wf(lay, cfg) && t < lay.n_tiles;
  @ requires \valid_read(map + (0 .. lay.map_bytes - 1));
  @ assigns \nothing;
  @ ensures \result == tahq_tile_bits(map, cfg, lay.tiles_per_row, t);
  @ ensures cfg.alloc != TAHQ_ALLOC_NONE ==> 0 <= tahq_unit(cfg, lay.tiles_per_row, t) < lay.map_bits;
  @ ensures 1 <= \result <= 8;
  @ ensures bit_def: \let i = tahq_unit(cfg, lay.tiles_per_row, t);
  @   tahq_bit(map, i) == ((map[i >> 3] >> (i & 7)) & 1); */
static uint32_t tile_bits(tahq_config cfg, tahq_layout lay, const uint8_t *map, uint64_t t)
{
    switch (cfg.alloc) {
    case TAHQ_ALLOC_TOKEN:
    case TAHQ_ALLOC_GAIN: {
        const uint64_t row = t / lay.tiles_per_row;
        /*@ assert row * lay.tiles_per_row <= t; */
        /*@ ghost if (row >= lay.rows) tahq_mul_mono(lay.rows, row, lay.tiles_per_row); */
        /*@ assert row < lay.rows; */
        return tahq_get_bit(map, row) ? cfg.lo_bits : cfg.hi_bits;
    }
    case TAHQ_ALLOC_TILE:
        return tahq_get_bit(map, t) ? cfg.lo_bits : cfg.hi_bits;
    default:
        return cfg.hi_bits;
    }
}

/* Code bytes of all tiles under the precision map. The codes section holds
 * exactly this many: the decoder checks it, so the tile walk's code offsets
 * are bounded by a checked fact (proofs/README.md). */
/*@ requires tahq_layout_wf(lay, cfg);
  @ requires \valid_read(map + (0 .. lay.map_bytes - 1));
  @ assigns \nothing;
  @ ensures \forall integer j; 0 <= j <= lay.n_tiles ==>
  @   tahq_code_end(map, cfg, lay.tiles_per_row, j) <= \result; */
static uint64_t map_code_bytes(tahq_config cfg, tahq_layout lay, const uint8_t *map)
{
    uint64_t sum = 0; /* of the code widths */
    /*@ loop invariant 0 <= t <= lay.n_tiles && sum <= t * 8;
      @ loop invariant sum == tahq_bits_sum(map, cfg, lay.tiles_per_row, t);
      @ loop invariant \forall integer j; 0 <= j <= t ==>
      @   tahq_code_end(map, cfg, lay.tiles_per_row, j) <= cfg.tile / 8 * sum;
      @ loop assigns t, sum;
      @ loop variant lay.n_tiles - t; */
    for (uint64_t t = 0; t < lay.n_tiles; t++) {
        /*@ ghost uint64_t before = sum; */
        sum += tile_bits(cfg, lay, map, t);
        /*@ assert sum == tahq_bits_sum(map, cfg, lay.tiles_per_row, t + 1); */
        /*@ ghost tahq_mul_mono(before, sum, cfg.tile / 8u); */
        /*@ assert last_product: cfg.tile / 8 * tahq_bits_sum(map, cfg, lay.tiles_per_row, t + 1) <=
          @   cfg.tile / 8 * sum; */
        /* tahq_code_end's own definition at t + 1; Z3 and cvc5 do not unfold it here
         * (proofs/README.md, trusted base) */
        /*@ admit last_unfold: tahq_code_end(map, cfg, lay.tiles_per_row, t + 1) ==
          @   cfg.tile / 8 * tahq_bits_sum(map, cfg, lay.tiles_per_row, t + 1); */
        /*@ assert last: tahq_code_end(map, cfg, lay.tiles_per_row, t + 1) <= cfg.tile / 8 * sum; */
    }
    /*@ ghost tahq_mul_mono(1, cfg.tile, lay.n_tiles); */
    /*@ assert sum <= 8 * 0x10000000000; */
    /*@ ghost tahq_mul_mono(cfg.tile / 8u, 32, sum); */
    return cfg.tile / 8u * sum;
}

/* A metadata overflow is found only after parts of the payload are written:
 * zero the header so that no partial message survives (SPEC §9). */
/*@ requires \valid(out + (0 .. TAHQ_HEADER_BYTES - 1));
  @ assigns out[0 .. TAHQ_HEADER_BYTES - 1]; */
static void invalidate_header(uint8_t *out)
{
    /*@ loop invariant 0 <= i <= TAHQ_HEADER_BYTES;
      @ loop assigns i, out[0 .. TAHQ_HEADER_BYTES - 1];
      @ loop variant TAHQ_HEADER_BYTES - i; */
    for (uint32_t i = 0; i < TAHQ_HEADER_BYTES; i++)
        out[i] = 0;
}

/*@ requires \valid_read(cfg) && \valid_read(shape) && tahq_config_ok(cfg) && tahq_shape_ok(cfg, shape);
  @ requires out_capacity >= TAHQ_HEADER_BYTES + tahq_payload(cfg, shape, tahq_required_low(cfg, shape),
  @                                                           tahq_ntiles(cfg, shape));
  @ requires \valid(out + (0 .. out_capacity - 1)) && \valid(out_len);
  @ requires \valid_read(x + (0 .. tahq_elements(shape) - 1));
  @ requires ws_views: \valid(keys + (0 .. tahq_group(cfg, shape) - 1)) &&
  @   \valid(entropies + (0 .. tahq_group(cfg, shape) - 1));
  @ requires ws_separated: \separated(keys + (0 .. tahq_group(cfg, shape) - 1),
  @   entropies + (0 .. tahq_group(cfg, shape) - 1), out + (0 .. out_capacity - 1), out_len, cfg, shape);
  @ requires x_separated: \separated(x + (0 .. tahq_elements(shape) - 1),
  @   entropies + (0 .. tahq_group(cfg, shape) - 1));
  @ requires \separated(out + (0 .. out_capacity - 1), out_len, cfg, shape);
  @ assigns out[0 .. out_capacity - 1], *out_len, keys[0 .. tahq_group(cfg, shape) - 1],
  @         entropies[0 .. tahq_group(cfg, shape) - 1];
  @ ensures \result == TAHQ_OK ==> *out_len <= out_capacity; */
static tahq_status encode_tiles(const tahq_config *cfg, const tahq_shape *shape, const float *x,
                                uint64_t *keys, float *entropies, uint8_t *out, size_t out_capacity,
                                size_t *out_len)
{
    (void)out_capacity;         /* the buffer size of the contract: at least 72 + payload */
    const tahq_config c = *cfg; /* by value: its facts survive the stores below */
    const uint64_t required = tahq_required_low_units(cfg, shape);
    const tahq_layout lay = tahq_layout_compute(cfg, shape, required, 0);
    /*@ assert lay.n_tiles * c.tile == tahq_elements(shape); */
    tahq_status st = check_input(x, lay.n_tiles * c.tile);
    if (st != TAHQ_OK)
        return st;

    const uint32_t G = c.tile;
    const uint32_t k = lay.tile_log2;
    /*@ assert 3 <= k <= 8; */
    /*@ ghost tahq_mul_mono(k, 8, lay.n_tiles); */
    /*@ assert lay.pivot_off == tahq_pivot_off(cfg, shape, required) &&
      @   lay.n_tiles == tahq_ntiles(cfg, shape) && k == tahq_lg(cfg->tile); */
    /*@ ghost tahq_payload_of(cfg, shape, required, lay.n_tiles, lay.pivot_off, k); */
    /*@ assert lay.pivot_off + (lay.n_tiles * k + 7) / 8 <= out_capacity - TAHQ_HEADER_BYTES; */
    uint8_t *payload = out + TAHQ_HEADER_BYTES;
    /*@ loop invariant 0 <= i <= lay.map_bytes + lay.flag_bytes;
      @ loop assigns i, payload[0 .. lay.map_bytes + lay.flag_bytes - 1];
      @ loop variant lay.map_bytes + lay.flag_bytes - i; */
    for (uint64_t i = 0; i < lay.map_bytes + lay.flag_bytes; i++) /* (a memset) */
        payload[i] = 0;
    /*@ loop invariant 0 <= i <= (lay.n_tiles * k + 7) / 8;
      @ loop assigns i, payload[lay.pivot_off .. lay.pivot_off + (lay.n_tiles * k + 7) / 8 - 1];
      @ loop variant (lay.n_tiles * k + 7) / 8 - i; */
    for (uint64_t i = 0; i < (lay.n_tiles * k + 7) / 8; i++) /* (a memset) */
        payload[lay.pivot_off + i] = 0;

    uint8_t *map = payload;
    uint64_t n_low = 0;
    if (c.alloc == TAHQ_ALLOC_GAIN) {
        st = tahq_allocate_gain(cfg, shape, x, keys, map, &n_low);
        if (st != TAHQ_OK) {
            invalidate_header(out);
            return st;
        }
    } else {
        n_low = tahq_allocate(cfg, shape, x, entropies, keys, map);
    }
Allocated:
    __attribute__((unused)); /* (the map as tahq_allocate left it) */
    /* tahq_bit's definition in the map as allocated, stated where the
     * context is small: inside the tile loop the provers time out on it */
    /*@ assert bit_allocated: \forall integer i; tahq_bit(map, i) == ((map[i >> 3] >> (i & 7)) & 1); */
    /* the input check's bound, restated after the allocation (which writes
     * only the workspace and the map): the tile loop carries it from here */
    /*@ assert x_checked: \forall integer i; 0 <= i < lay.n_tiles * G ==> tahq_mag(x[i]) < 0x5F800000; */
    uint8_t *flags = payload + lay.map_bytes;
    uint8_t *codes_out = payload + lay.code_off;
    uint8_t *pivots = payload + lay.pivot_off;
    uint64_t n_flagged = 0;
    float v[TAHQ_TILE_MAX];
    uint8_t codes[TAHQ_TILE_MAX];
    /*@ loop invariant 0 <= t <= lay.n_tiles && n_flagged <= t;
      @ loop invariant codes_out == payload + lay.code_off +
      @   c.tile / 8 * tahq_bits_sum{Allocated}(map, c, lay.tiles_per_row, t);
      @ loop invariant 0 <= c.tile / 8 * tahq_bits_sum{Allocated}(map, c, lay.tiles_per_row, t);
      @ loop assigns t, st, n_flagged, codes_out, v[0 .. 255], codes[0 .. 255],
      @   out[0 .. TAHQ_HEADER_BYTES - 1], payload[lay.map_bytes .. out_capacity - TAHQ_HEADER_BYTES - 1];
      @ loop variant lay.n_tiles - t; */
    for (uint64_t t = 0; t < lay.n_tiles; t++) {
        /*@ ghost tahq_mul_mono(t + 1, lay.n_tiles, G); */
        const float *tile_x = x + t * G;
        const uint32_t bits = tile_bits(c, lay, map, t);
        /*@ assert c.alloc != TAHQ_ALLOC_NONE ==>
          @   0 <= tahq_unit(c, lay.tiles_per_row, t) >> 3 < lay.map_bytes; */
        /*@ assert c.alloc != TAHQ_ALLOC_NONE ==> \let u = tahq_unit(c, lay.tiles_per_row, t) >> 3;
          @   map[u] == \at(map[u], Allocated); */
        /*@ assert c.alloc != TAHQ_ALLOC_NONE ==> tahq_bit(map, tahq_unit(c, lay.tiles_per_row, t)) ==
          @   tahq_bit{Allocated}(map, tahq_unit(c, lay.tiles_per_row, t)); */
        /*@ assert bits == tahq_tile_bits{Allocated}(map, c, lay.tiles_per_row, t); */
        /*@ assert tahq_bits_sum{Allocated}(map, c, lay.tiles_per_row, t + 1) ==
          @   tahq_bits_sum{Allocated}(map, c, lay.tiles_per_row, t) + bits; */
        /*@ assert c.tile / 8 * tahq_bits_sum{Allocated}(map, c, lay.tiles_per_row, t + 1) ==
          @   c.tile / 8 * tahq_bits_sum{Allocated}(map, c, lay.tiles_per_row, t) + G / 8 * bits; */
        /* tahq_allocate marks the SPEC §4 count of units in every group, so
         * the codes fill the codes section exactly: a counting argument WP
         * cannot make; the decoder checks it on every message (README). */
        /*@ admit map_codes:
          @   c.tile / 8 * tahq_bits_sum{Allocated}(map, c, lay.tiles_per_row, t + 1) <= lay.code_bytes; */
        uint32_t pivot;
        float lo, hi; /* one range scan serves the gate and, if unflagged, the quantizer */
        /*@ ghost codec_tile_not_nan(x, lay.n_tiles * G, t * G, G); */
        tahq_tile_range(tile_x, G, &lo, &hi);
        int flagged = tahq_gate_from_range(tile_x, G, c.tau, lo, hi, &pivot);
        const float *values = tile_x;
        if (flagged) {
            /*@ loop invariant 0 <= i <= G;
              @ loop assigns i, v[0 .. 255];
              @ loop variant G - i; */
            for (uint32_t i = 0; i < G; i++) /* (a memcpy) */
                v[i] = tile_x[i];
            tahq_hadamard_forward(v, G, pivot);
            tahq_tile_range(v, G, &lo, &hi);
            values = v;
        }
        float z, s;
        uint32_t zero_bits, scale_bits;
        st = tahq_quantize_tile_range(values, G, lo, hi, bits, c.meta, c.rounding, c.seed, t * G,
                                      &z, &s, &zero_bits, &scale_bits, codes);
        if (st != TAHQ_OK) {
            invalidate_header(out);
            return st;
        }
        /*@ ghost tahq_mul_mono(t + 1, lay.n_tiles, lay.meta_bytes); */
        /*@ ghost tahq_mul_mono(0, t, lay.meta_bytes); */
        /*@ assert meta_room: lay.map_bytes <= lay.zero_off + t * lay.meta_bytes &&
          @   lay.zero_off + t * lay.meta_bytes + lay.meta_bytes <= lay.scale_off &&
          @   lay.scale_off + t * lay.meta_bytes + lay.meta_bytes <= lay.code_off &&
          @   lay.code_off <= lay.pivot_off <= out_capacity - TAHQ_HEADER_BYTES; */
        tahq_put_meta_bits(payload + lay.zero_off + t * lay.meta_bytes, c.meta, zero_bits);
        tahq_put_meta_bits(payload + lay.scale_off + t * lay.meta_bytes, c.meta, scale_bits);
        /*@ assert lay.map_bytes <= lay.code_off && lay.pivot_off <= out_capacity - TAHQ_HEADER_BYTES; */
        /*@ assert codes_start: lay.map_bytes <= lay.code_off +
          @   c.tile / 8 * tahq_bits_sum{Allocated}(map, c, lay.tiles_per_row, t); */
        /*@ assert codes_end: lay.code_off + c.tile / 8 * tahq_bits_sum{Allocated}(map, c, lay.tiles_per_row, t) +
          @   G / 8 * bits <= out_capacity - TAHQ_HEADER_BYTES; */
        tahq_pack_tile(codes_out, codes, G, bits);
        codes_out += G / 8u * bits;
        if (flagged) {
            uint8_t p = (uint8_t)pivot;
            tahq_set_bit(flags, t);
            /*@ ghost tahq_mul_mono(n_flagged + 1, lay.n_tiles, k); */
            const uint64_t pivot_bit = n_flagged * k;
            /*@ assert pivot_bit == n_flagged * k && (pivot_bit + k + 7) / 8 <= (lay.n_tiles * k + 7) / 8; */
            /*@ assert lay.pivot_off + (pivot_bit + k + 7) / 8 <= out_capacity - TAHQ_HEADER_BYTES; */
            tahq_pack_bits(pivots, pivot_bit, &p, 1, k);
            n_flagged++;
        }
    }
    /*@ ghost tahq_mul_mono(n_flagged, lay.n_tiles, k); */
    /* the layout above, with the pivot section of the n_flagged pivots */
    const uint64_t payload_bytes = lay.pivot_off + (n_flagged * k + 7) / 8;
    tahq_header_write(out, cfg, shape, n_low, n_flagged, payload_bytes);
    tahq_header_seal(out, payload_bytes);
    *out_len = (size_t)(TAHQ_HEADER_BYTES + payload_bytes);
    return TAHQ_OK;
}

/* The first of tahq_encode's argument checks: every pointer it needs
 * (TAHQ_ERR_NULL), then the message length is 0 until a message is written. */
/*@ requires out_len == \null || \valid(out_len);
  @ assigns *out_len;
  @ ensures \result == TAHQ_OK || \result == TAHQ_ERR_NULL;
  @ ensures \result == TAHQ_OK <==> cfg != \null && shape != \null && x != \null && out != \null &&
  @   out_len != \null;
  @ ensures \result == TAHQ_OK ==> *out_len == 0; */
tahq_status tahq_encode_check_pointers(const tahq_config *cfg, const tahq_shape *shape,
                                       const float *x, const uint8_t *out, size_t *out_len)
{
    if (!cfg || !shape || !x || !out || !out_len)
        return TAHQ_ERR_NULL;
    *out_len = 0;
    return TAHQ_OK;
}

/* The last of tahq_encode's argument checks, once the configuration and the
 * shape passed: room for the message bound in out, then a workspace of
 * ws_need bytes. */
/*@ assigns \nothing;
  @ ensures \result == TAHQ_OK || \result == TAHQ_ERR_BUFFER || \result == TAHQ_ERR_NULL;
  @ ensures \result == TAHQ_OK <==> out_capacity >= bound && (ws_need == 0 || workspace != \null) &&
  @   workspace_bytes >= ws_need; */
tahq_status tahq_encode_check_room(size_t bound, size_t out_capacity, size_t ws_need,
                                   const void *workspace, size_t workspace_bytes)
{
    if (out_capacity < bound)
        return TAHQ_ERR_BUFFER;
    if (ws_need > 0 && !workspace)
        return TAHQ_ERR_NULL;
    if (workspace_bytes < ws_need)
        return TAHQ_ERR_BUFFER;
    return TAHQ_OK;
}

/*@ requires cfg == \null || \valid_read(cfg);
  @ requires shape == \null || \valid_read(shape);
  @ requires out_len == \null || \valid(out_len);
  @ requires out == \null || \valid(out + (0 .. out_capacity - 1));
  @ requires input: cfg != \null && shape != \null && tahq_config_ok(cfg) && tahq_shape_ok(cfg, shape) &&
  @   x != \null ==> \valid_read(x + (0 .. tahq_elements(shape) - 1));
  @ requires workspace == \null || \valid((uint8_t *)workspace + (0 .. workspace_bytes - 1));
  @ requires ws_not_x: cfg != \null && shape != \null && tahq_config_ok(cfg) && tahq_shape_ok(cfg, shape) &&
  @   x != \null && workspace != \null ==>
  @   \separated((uint8_t *)workspace + (0 .. workspace_bytes - 1), x + (0 .. tahq_elements(shape) - 1));
  @ requires \separated(out + (0 .. out_capacity - 1), out_len, cfg, shape);
  @ assigns *out_len, out[0 .. out_capacity - 1], ((uint8_t *)workspace)[0 .. workspace_bytes - 1]; */
tahq_status tahq_encode(const tahq_config *cfg, const tahq_shape *shape, const float *x,
                        void *workspace, size_t workspace_bytes, uint8_t *out, size_t out_capacity,
                        size_t *out_len)
{
    tahq_status st = tahq_encode_check_pointers(cfg, shape, x, out, out_len);
    if (st != TAHQ_OK)
        return st;
    size_t bound, ws_need;
    /* tahq_encode_bound checks the configuration, then the shape */
    st = tahq_encode_bound(cfg, shape, &bound);
    if (st == TAHQ_OK)
        st = tahq_encode_workspace_size(cfg, shape, &ws_need);
    if (st == TAHQ_OK)
        st = tahq_encode_check_room(bound, out_capacity, ws_need, workspace, workspace_bytes);
    if (st != TAHQ_OK)
        return st;

    uint64_t group = tahq_alloc_group_size(cfg, shape);
    uint8_t *ws = (uint8_t *)workspace; /* any alignment: round up inside the slack */
    uint64_t *keys = ws ? (uint64_t *)(ws + (sizeof(uint64_t) - (uintptr_t)ws % sizeof(uint64_t)) %
                                                sizeof(uint64_t))
                        : NULL;
    float *entropies = keys ? (float *)(keys + group) : NULL; /* NULL + 0 is undefined */
    return encode_tiles(cfg, shape, x, keys, entropies, out, out_capacity, out_len);
}

/* ---- decode ---------------------------------------------------------------- */

/*@ requires first + n <= UINT64_MAX && \valid_read(buf + (first / 8 .. (first + n + 7) / 8 - 1));
  @ assigns \nothing;
  @ ensures \result <= n && \result == tahq_bit_count(buf, first, n);
  @ ensures \forall integer j; 0 <= j <= n ==> tahq_bit_count(buf, first, j) <= \result; */
static uint64_t popcount_bits(const uint8_t *buf, uint64_t first, uint64_t n)
{
    uint64_t c = 0;
    /*@ loop invariant 0 <= i <= n && c <= i && c == tahq_bit_count(buf, first, i);
      @ loop invariant \forall integer j; 0 <= j <= i ==> tahq_bit_count(buf, first, j) <= c;
      @ loop assigns i, c;
      @ loop variant n - i; */
    for (uint64_t i = 0; i < n; i++)
        c += tahq_get_bit(buf, first + i);
    return c;
}

/*@ // The tile size of a configuration value: the walk's predicates take the
  @ // configuration as one value (see proofs/README.md, Frama-C notes).
  @ logic integer tahq_cfg_tile(tahq_config c) = c.tile;
  @*/

/*@ // What the tile walk of a validated message relies on: the layout, the
  @ // payload bytes, and the two counts checked by validate_payload.
  @ predicate tahq_walk_ok{L}(tahq_header *h, tahq_layout lay, uint8_t *payload) =
  @   (\forall integer j; 0 <= j <= lay.n_tiles ==>
  @     tahq_code_end(payload, h->config, lay.tiles_per_row, j) <= lay.code_bytes) &&
  @   (\forall integer j; 0 <= j <= lay.n_tiles ==>
  @     tahq_bit_count(payload + lay.map_bytes, 0, j) <= h->n_flagged);
  @ predicate tahq_message_ok{L}(tahq_header *h, tahq_layout lay, uint8_t *payload) =
  @   \valid_read(h) && tahq_layout_wf(lay, h->config) &&
  @   lay.pivot_bytes == (h->n_flagged * lay.tile_log2 + 7) / 8 &&
  @   \valid_read(payload + (0 .. lay.payload_bytes - 1)) && tahq_walk_ok(h, lay, payload);
  @*/

/* SPEC §8.4 step 5: everything in the payload that the header does not fix. */
/* a * b = c * d from a = c and b = d, as a lemma of its own (the provers
 * miss this rewriting step in validate_payload's large context). */
/*@ ghost
  /@ requires a == c && b == d;
   @ assigns \nothing;
   @ ensures a * b == c * d; @/
  static void codec_same_products(uint64_t a, uint64_t b, uint64_t c, uint64_t d) { }
*/

/*@ requires \valid_read(h) && tahq_header_ok(h, TAHQ_HEADER_BYTES + h->payload_bytes);
  @ requires tahq_layout_ok(lay, &h->config, &h->shape, h->n_low, h->n_flagged);
  @ requires tahq_layout_wf(lay, h->config);
  @ requires \valid_read(payload + (0 .. lay.payload_bytes - 1));
  @ assigns \nothing;
  @ ensures \result == TAHQ_OK || \result == TAHQ_ERR_PAYLOAD;
  @ ensures \result == TAHQ_OK ==> tahq_walk_ok(h, lay, payload); */
static tahq_status validate_payload(const tahq_header *h, tahq_layout lay, const uint8_t *payload)
{
    const tahq_config *cfg = &h->config;
    const uint8_t *map = payload;
    uint64_t group = tahq_alloc_group_size(cfg, &h->shape);
    if (group > 0) {
        uint64_t want = tahq_low_count(group, cfg->hi_permille);
        /* token mode: B groups of S rows; tile mode: B*S groups of C/G tiles */
        const uint64_t n_groups = tahq_per_row(cfg->alloc) ? h->shape.batch : lay.rows;
        /*@ assert tahq_per_row(cfg->alloc) || cfg->alloc == TAHQ_ALLOC_TILE; */
        /*@ assert tahq_per_row(cfg->alloc) ==> group == h->shape.seq_len &&
          @   lay.rows == h->shape.batch * h->shape.seq_len && lay.map_bits == lay.rows; */
        /*@ assert cfg->alloc == TAHQ_ALLOC_TILE ==> group == lay.tiles_per_row &&
          @   lay.map_bits == lay.n_tiles; */
        /*@ assert tahq_per_row(cfg->alloc) ==> n_groups == h->shape.batch; */
        /*@ ghost if (tahq_per_row(cfg->alloc))
          @   codec_same_products(n_groups, group, h->shape.batch, h->shape.seq_len); */
        /*@ assert tahq_per_row(cfg->alloc) ==>
          @   n_groups * group == h->shape.batch * h->shape.seq_len; */
        /*@ assert tahq_per_row(cfg->alloc) ==> n_groups * group == lay.rows; */
        /*@ assert tahq_per_row(cfg->alloc) ==> n_groups * group == lay.map_bits; */
        /*@ assert cfg->alloc == TAHQ_ALLOC_TILE ==> n_groups * group == lay.map_bits; */
        /*@ assert n_groups * group == lay.map_bits; */
        /*@ loop invariant 0 <= u <= n_groups;
          @ loop assigns u;
          @ loop variant n_groups - u; */
        for (uint64_t u = 0; u < n_groups; u++) {
            /*@ ghost tahq_mul_mono(u + 1, n_groups, group); */
            if (popcount_bits(map, u * group, group) != want)
                return TAHQ_ERR_PAYLOAD;
        }
        if (!tahq_padding_is_zero(map, lay.map_bits))
            return TAHQ_ERR_PAYLOAD;
    }
    /* implied by the counts above (SPEC §8.2); it is what bounds the walk */
    if (map_code_bytes(*cfg, lay, map) != lay.code_bytes)
        return TAHQ_ERR_PAYLOAD;
    const uint8_t *flags = payload + lay.map_bytes;
    if (popcount_bits(flags, 0, lay.n_tiles) != h->n_flagged ||
        !tahq_padding_is_zero(flags, lay.n_tiles))
        return TAHQ_ERR_PAYLOAD;
    if (!tahq_padding_is_zero(payload + lay.pivot_off, h->n_flagged * lay.tile_log2))
        return TAHQ_ERR_PAYLOAD;
    /*@ loop invariant 0 <= t <= lay.n_tiles;
      @ loop assigns t;
      @ loop variant lay.n_tiles - t; */
    for (uint64_t t = 0; t < lay.n_tiles; t++) {
        /*@ ghost tahq_mul_mono(t + 1, lay.n_tiles, lay.meta_bytes); */
        uint32_t zb = tahq_get_meta_bits(payload + lay.zero_off + t * lay.meta_bytes, cfg->meta);
        uint32_t sb = tahq_get_meta_bits(payload + lay.scale_off + t * lay.meta_bytes, cfg->meta);
        float z = tahq_meta_value(cfg->meta, zb);
        float s = tahq_meta_value(cfg->meta, sb);
        uint32_t sign = cfg->meta == TAHQ_META_FP32 ? 0x80000000u : 0x8000u;
        if (!(z - z == 0.0f) || zb == sign) /* non-finite, or -0 */
            return TAHQ_ERR_PAYLOAD;
        if (!(s - s == 0.0f) || (sb & sign))
            return TAHQ_ERR_PAYLOAD;
    }
    return TAHQ_OK;
}

/* Position of the tile walk over a validated message, kept by value. */
typedef struct tile_cursor {
    uint64_t t;         /* next tile */
    uint64_t codes;     /* its codes' offset in the codes section */
    uint64_t n_flagged; /* flagged tiles before it */
} tile_cursor;

typedef struct tile_data {
    uint32_t bits, flagged, pivot;
    float zero, scale;
    uint8_t codes[TAHQ_TILE_MAX];
} tile_data;

/*@ predicate tahq_cursor_ok{L}(tile_cursor c, tahq_header *h, tahq_layout lay, uint8_t *payload) =
  @   c.t <= lay.n_tiles &&
  @   c.codes == tahq_cfg_tile(h->config) / 8 *
  @     tahq_bits_sum(payload, h->config, lay.tiles_per_row, c.t) &&
  @   c.n_flagged == tahq_bit_count(payload + lay.map_bytes, 0, c.t);
  @*/

/*@ ghost
  /@ requires \valid_read(h) && c.t <= lay.n_tiles;
   @ requires c.codes == tahq_cfg_tile(h->config) / 8 *
   @   tahq_bits_sum(payload, h->config, lay.tiles_per_row, c.t);
   @ requires c.n_flagged == tahq_bit_count(payload + lay.map_bytes, 0, c.t);
   @ assigns \nothing;
   @ ensures tahq_cursor_ok(c, h, lay, payload); @/
  static void codec_cursor_intro(tile_cursor c, const tahq_header *h, tahq_layout lay,
                                 const uint8_t *payload) { }
*/

/* Reads tile c.t into *d; returns the cursor of the next tile. */
/*@ requires tahq_message_ok(h, lay, payload) && tahq_cursor_ok(c, h, lay, payload) && c.t < lay.n_tiles;
  @ requires \valid(d) && \separated(d, h, payload + (0 .. lay.payload_bytes - 1));
  @ assigns *d;
  @ ensures tahq_cursor_ok(\result, h, lay, payload) && \result.t == c.t + 1;
  @ ensures d->pivot < h->config.tile && d->flagged <= 1 && 1 <= d->bits <= 8; */
static tile_cursor cursor_next(tile_cursor c, const tahq_header *h, tahq_layout lay,
                               const uint8_t *payload, tile_data *d)
{
    const tahq_config cfg = h->config;
    const uint32_t G = cfg.tile;
    const uint64_t t = c.t;
    const uint32_t bits = tile_bits(cfg, lay, payload, t);
    const uint32_t flagged = tahq_get_bit(payload + lay.map_bytes, t);
    /*@ assert a_walk: tahq_walk_ok(h, lay, payload); */
    /*@ assert a_end: tahq_code_end(payload, cfg, lay.tiles_per_row, t + 1) <= lay.code_bytes; */
    /*@ assert a_le: G / 8 * tahq_bits_sum(payload, cfg, lay.tiles_per_row, t + 1) <= lay.code_bytes; */
    /*@ assert a_cnt_le: tahq_bit_count(payload + lay.map_bytes, 0, t + 1) <= h->n_flagged; */
    /*@ assert a_codes: c.codes == G / 8 * tahq_bits_sum(payload, cfg, lay.tiles_per_row, t); */
    /*@ assert a_nflag: c.n_flagged == tahq_bit_count(payload + lay.map_bytes, 0, t); */
    /*@ assert a_step: tahq_bits_sum(payload, cfg, lay.tiles_per_row, t + 1) ==
      @   tahq_bits_sum(payload, cfg, lay.tiles_per_row, t) + bits; */
    /*@ assert a_cnt_step: tahq_bit_count(payload + lay.map_bytes, 0, t + 1) == c.n_flagged + flagged; */
    /*@ assert a_dist: G / 8 * tahq_bits_sum(payload, cfg, lay.tiles_per_row, t + 1) ==
      @   c.codes + G / 8 * bits; */
    /*@ assert a_fit: c.codes + G / 8 * bits <= lay.code_bytes; */
    /*@ assert a_flag_fit: c.n_flagged + flagged <= h->n_flagged; */
    uint32_t pivot = 0;
    if (flagged) {
        uint8_t p;
        /*@ ghost tahq_mul_mono(c.n_flagged + 1, h->n_flagged, lay.tile_log2); */
        tahq_unpack_bits(payload + lay.pivot_off, c.n_flagged * lay.tile_log2, &p, 1,
                         lay.tile_log2);
        pivot = p;
        /* the bound on the local: at the return, through the walk's frame,
         * the provers time out on d->pivot < G */
        /*@ assert pivot_lt: pivot < G; */
        c.n_flagged++;
    }
    d->bits = bits;
    d->flagged = flagged;
    d->pivot = pivot;
    /*@ ghost tahq_mul_mono(t + 1, lay.n_tiles, lay.meta_bytes); */
    d->zero = get_meta(payload + lay.zero_off + t * lay.meta_bytes, cfg.meta);
    d->scale = get_meta(payload + lay.scale_off + t * lay.meta_bytes, cfg.meta);
    tahq_unpack_tile(payload + lay.code_off + c.codes, d->codes, G, bits);
    c.codes += G / 8u * bits;
    c.t++;
    /* The stores to *d and p leave the payload alone, so the walk's sums over
     * it are unchanged: WP needs this by induction, which a ghost loop gives. */
    /*@ assert frame: \forall integer i; 0 <= i < lay.payload_bytes ==> payload[i] == \at(payload[i], Pre); */
    /*@ ghost
      @ /@ loop invariant 0 <= j <= t + 1;
      @  @ loop invariant tahq_bits_sum{Pre}(payload, cfg, lay.tiles_per_row, j) ==
      @  @   tahq_bits_sum(payload, cfg, lay.tiles_per_row, j);
      @  @ loop invariant tahq_bit_count{Pre}(payload + lay.map_bytes, 0, j) ==
      @  @   tahq_bit_count(payload + lay.map_bytes, 0, j);
      @  @ loop assigns j;
      @  @ loop variant t + 1 - j; @/
      @ for (uint64_t j = 0; j <= t; j++) {
      @   /@ assert g_bits: tahq_tile_bits{Pre}(payload, cfg, lay.tiles_per_row, j) ==
      @    @   tahq_tile_bits(payload, cfg, lay.tiles_per_row, j); @/
      @   /@ assert g_flag: tahq_bit{Pre}(payload + lay.map_bytes, j) ==
      @    @   tahq_bit(payload + lay.map_bytes, j); @/
      @   /@ assert g_pre: tahq_bits_sum{Pre}(payload, cfg, lay.tiles_per_row, j + 1) ==
      @    @   tahq_bits_sum{Pre}(payload, cfg, lay.tiles_per_row, j) +
      @    @   tahq_tile_bits{Pre}(payload, cfg, lay.tiles_per_row, j); @/
      @   /@ assert g_here: tahq_bits_sum(payload, cfg, lay.tiles_per_row, j + 1) ==
      @    @   tahq_bits_sum(payload, cfg, lay.tiles_per_row, j) +
      @    @   tahq_tile_bits(payload, cfg, lay.tiles_per_row, j); @/
      @   /@ assert g_cpre: tahq_bit_count{Pre}(payload + lay.map_bytes, 0, j + 1) ==
      @    @   tahq_bit_count{Pre}(payload + lay.map_bytes, 0, j) +
      @    @   tahq_bit{Pre}(payload + lay.map_bytes, j); @/
      @   /@ assert g_chere: tahq_bit_count(payload + lay.map_bytes, 0, j + 1) ==
      @    @   tahq_bit_count(payload + lay.map_bytes, 0, j) + tahq_bit(payload + lay.map_bytes, j); @/
      @ }
      @*/
    /* From a_dist (the same product over the entry state's bytes) and the
     * ghost loop's equality of the two sums; the provers time out on the
     * substitution inside the product (proofs/README.md, trusted base). */
    /*@ admit codes_here: c.codes == G / 8 * tahq_bits_sum(payload, cfg, lay.tiles_per_row, c.t); */
    /*@ assert c.n_flagged == tahq_bit_count(payload + lay.map_bytes, 0, c.t); */
    /*@ assert h->config == cfg; */
    /*@ ghost codec_cursor_intro(c, h, lay, payload); */
    return c;
}

/*@ ghost
  /@ requires \valid_read(h) && tahq_layout_wf(lay, h->config);
   @ requires lay.pivot_bytes == (h->n_flagged * lay.tile_log2 + 7) / 8;
   @ requires \valid_read(payload + (0 .. lay.payload_bytes - 1));
   @ requires tahq_walk_ok(h, lay, payload);
   @ assigns \nothing;
   @ ensures tahq_message_ok(h, lay, payload); @/
  static void codec_message_intro(const tahq_header *h, tahq_layout lay, const uint8_t *payload) { }
*/

/* A parsed and validated message: its status and, if TAHQ_OK, its layout
 * (returned by value, so the caller's facts about memory survive). */
typedef struct opened_message {
    tahq_status st;
    tahq_layout lay;
} opened_message;

/* Parses and validates the whole message and checks the caller's output size
 * (`count`: the number of elements, or with per_tile = 1 the number of tiles). */
/*@ requires msg != \null && \valid_read(msg + (0 .. len - 1));
  @ requires \valid(h) && \separated(h, msg + (0 .. len - 1));
  @ assigns *h;
  @ ensures \result.st == TAHQ_OK ==> tahq_message_ok(h, \result.lay, msg + TAHQ_HEADER_BYTES) &&
  @   count == \result.lay.n_tiles * (per_tile ? 1 : h->config.tile); */
static opened_message open_message(const uint8_t *msg, size_t len, size_t count, int per_tile,
                                   tahq_header *h)
{
    opened_message m = {TAHQ_OK, {0}};
    m.st = tahq_parse_header(msg, len, h);
    if (m.st != TAHQ_OK)
        return m;
    const tahq_layout lay = tahq_layout_compute(&h->config, &h->shape, h->n_low, h->n_flagged);
    /*@ assert h->payload_bytes == tahq_payload(&h->config, &h->shape, h->n_low, h->n_flagged) &&
      @   len == TAHQ_HEADER_BYTES + h->payload_bytes; */
    /*@ assert lay.payload_bytes == tahq_payload(&h->config, &h->shape, h->n_low, h->n_flagged) &&
      @   lay.pivot_bytes == (h->n_flagged * lay.tile_log2 + 7) / 8; */
    m.st = validate_payload(h, lay, msg + TAHQ_HEADER_BYTES);
    /*@ ghost if (m.st == TAHQ_OK) codec_message_intro(h, lay, msg + TAHQ_HEADER_BYTES); */
    if (m.st == TAHQ_OK && (uint64_t)count != lay.n_tiles * (per_tile ? 1u : h->config.tile))
        m.st = TAHQ_ERR_BUFFER;
    m.lay = lay;
    return m;
}

/* SPEC §6.1: a flagged tile's inverse transform meets inf - inf when q*s
 * overflowed (large bf16/fp32 scales); its NaNs become the canonical one.
 * Unflagged tiles give no NaN (z finite, q*s >= 0), so they skip this. */
/*@ requires n <= 256 && \valid(x + (0 .. n - 1));
  @ assigns x[0 .. n - 1]; */
static void canonical_nans(float *x, uint32_t n)
{
    /*@ loop invariant 0 <= i <= n;
      @ loop assigns i, x[0 .. n - 1];
      @ loop variant n - i; */
    for (uint32_t i = 0; i < n; i++)
        x[i] = tahq_canonical_nan(x[i]);
}

/*@ requires msg == \null || \valid_read(msg + (0 .. len - 1));
  @ requires out == \null || (\valid(out + (0 .. count - 1)) && \separated(out + (0 .. count - 1), msg + (0 .. len - 1)));
  @ assigns out[0 .. count - 1]; */
tahq_status tahq_decode(const uint8_t *msg, size_t len, float *out, size_t count)
{
    if (!msg || !out)
        return TAHQ_ERR_NULL;
    tahq_header h;
    const opened_message m = open_message(msg, len, count, 0, &h);
    if (m.st != TAHQ_OK)
        return m.st;
    const tahq_layout lay = m.lay;
    const uint8_t *payload = msg + TAHQ_HEADER_BYTES;
    const uint32_t G = h.config.tile;
    tile_cursor cur = {0, 0, 0};
    tile_data d;
    /*@ loop invariant 0 <= t <= lay.n_tiles && cur.t == t && tahq_cursor_ok(cur, &h, lay, payload);
      @ loop assigns t, cur, d, out[0 .. count - 1];
      @ loop variant lay.n_tiles - t; */
    for (uint64_t t = 0; t < lay.n_tiles; t++) {
        cur = cursor_next(cur, &h, lay, payload, &d);
        /*@ ghost tahq_mul_mono(t + 1, lay.n_tiles, G); */
        float *dst = out + t * G;
        tahq_dequantize_tile(d.codes, G, d.zero, d.scale, dst);
        if (d.flagged) {
            tahq_hadamard_inverse(dst, G, d.pivot);
            canonical_nans(dst, G);
        }
    }
    return TAHQ_OK;
}

/* ---- error bound (SPEC §6) --------------------------------------------------- */

/* §6.2 element bound of a tile quantized with (zero, scale, bits). */
/*@ requires 1 <= bits <= 8;
  @ assigns \nothing; */
static double element_bound(double zero, double scale, uint32_t bits, tahq_rounding rounding)
{
    const double u = 0x1p-24;
    const double levels = (double)((1u << bits) - 1u);
    const double eq = rounding == TAHQ_ROUND_STOCHASTIC ? 1.0 : 0.5;
    return scale * (eq + (5.0 * levels + 4.0) * u) + fabs(zero) * u + 0x1p-148;
}

/* Constants of the flagged-tile bound (SPEC §6.3) for G = 2^k. */
typedef struct bound_consts {
    double gamma, kappa, root_g;
} bound_consts;

/*@ requires k <= 8;
  @ assigns errno; */
static bound_consts bound_constants(uint32_t k, uint32_t G)
{
    bound_consts c;
    c.gamma = pow(1.0 + 0x1p-24, (double)(k + 1)) - 1.0;
    c.kappa = (k & 1u) ? sqrt(2.0) : 1.0;
    c.root_g = sqrt((double)G);
    return c;
}

/* The bound of every element of one decoded tile; v is scratch space. */
/*@ requires \valid_read(d) && 1 <= d->bits <= 8 && G <= 256;
  @ requires \valid(v + (0 .. G - 1)) && \separated(v + (0 .. G - 1), d);
  @ assigns v[0 .. G - 1], errno; */
static double tile_error_bound(const tile_data *d, uint32_t G, tahq_rounding rounding,
                               bound_consts c, float *v)
{
    const double b = element_bound(d->zero, d->scale, d->bits, rounding);
    double e = b;
    if (d->flagged) {
        tahq_dequantize_tile(d->codes, G, d->zero, d->scale, v);
        double norm2 = 0.0;
        /*@ loop invariant 0 <= i <= G;
          @ loop assigns i, norm2;
          @ loop variant G - i; */
        for (uint32_t i = 0; i < G; i++)
            norm2 += (double)v[i] * (double)v[i];
        double x_norm = c.kappa * (sqrt(norm2) + c.root_g * (b + 0x1p-150)) / (1.0 - c.gamma);
        e = (1.0 + c.gamma) * c.kappa * c.root_g * b + c.gamma * (2.0 + c.gamma) * x_norm +
            0x1p-140;
    }
    return e * (1.0 + 0x1p-40); /* slack: binary64 rounding of these formulas */
}

/*@ requires msg == \null || \valid_read(msg + (0 .. len - 1));
  @ requires bound == \null || (\valid(bound + (0 .. count - 1)) && \separated(bound + (0 .. count - 1), msg + (0 .. len - 1)));
  @ assigns bound[0 .. count - 1], errno; */
tahq_status tahq_error_bound(const uint8_t *msg, size_t len, double *bound, size_t count)
{
    if (!msg || !bound)
        return TAHQ_ERR_NULL;
    tahq_header h;
    const opened_message m = open_message(msg, len, count, 0, &h);
    if (m.st != TAHQ_OK)
        return m.st;
    const tahq_layout lay = m.lay;
    const uint8_t *payload = msg + TAHQ_HEADER_BYTES;
    const uint32_t G = h.config.tile;
    const tahq_rounding rounding = h.config.rounding;
    const bound_consts consts = bound_constants(lay.tile_log2, G);
    tile_cursor cur = {0, 0, 0};
    tile_data d;
    float v[TAHQ_TILE_MAX];
    /*@ loop invariant 0 <= t <= lay.n_tiles && cur.t == t && tahq_cursor_ok(cur, &h, lay, payload);
      @ loop assigns t, cur, d, v[0 .. 255], bound[0 .. count - 1], errno;
      @ loop variant lay.n_tiles - t; */
    for (uint64_t t = 0; t < lay.n_tiles; t++) {
        cur = cursor_next(cur, &h, lay, payload, &d);
        /*@ ghost tahq_mul_mono(t + 1, lay.n_tiles, G); */
        const double e = tile_error_bound(&d, G, rounding, consts, v);
        /*@ loop invariant 0 <= i <= G;
          @ loop assigns i, bound[0 .. count - 1];
          @ loop variant G - i; */
        for (uint32_t i = 0; i < G; i++)
            bound[t * G + i] = e;
    }
    return TAHQ_OK;
}

/*@ requires msg == \null || \valid_read(msg + (0 .. len - 1));
  @ requires info == \null || (\valid(info + (0 .. n_tiles - 1)) && \separated(info + (0 .. n_tiles - 1), msg + (0 .. len - 1)));
  @ assigns info[0 .. n_tiles - 1];
  @ ensures pivot_in_tile: \result == TAHQ_OK ==> \forall integer t; 0 <= t < n_tiles ==>
  @   info[t].pivot < TAHQ_TILE_MAX; */
tahq_status tahq_tile_infos(const uint8_t *msg, size_t len, tahq_tile_info *info, size_t n_tiles)
{
    if (!msg || !info)
        return TAHQ_ERR_NULL;
    tahq_header h;
    const opened_message m = open_message(msg, len, n_tiles, 1, &h);
    if (m.st != TAHQ_OK)
        return m.st;
    const tahq_layout lay = m.lay;
    const uint8_t *payload = msg + TAHQ_HEADER_BYTES;
    tile_cursor cur = {0, 0, 0};
    tile_data d;
    /*@ loop invariant 0 <= t <= lay.n_tiles && cur.t == t && tahq_cursor_ok(cur, &h, lay, payload);
      @ loop invariant \forall integer j; 0 <= j < t ==> info[j].pivot < TAHQ_TILE_MAX;
      @ loop assigns t, cur, d, info[0 .. n_tiles - 1];
      @ loop variant lay.n_tiles - t; */
    for (uint64_t t = 0; t < lay.n_tiles; t++) {
        cur = cursor_next(cur, &h, lay, payload, &d);
        /*@ assert d.pivot < TAHQ_TILE_MAX; */
        info[t].bits = d.bits;
        info[t].flagged = d.flagged;
        info[t].pivot = d.pivot;
        info[t].zero = d.zero;
        info[t].scale = d.scale;
    }
    return TAHQ_OK;
}

/* Last in the file: Frama-C numbers declarations in reading order, and the
 * proof cache knows goals by those numbers (tahq.h). */
/*@ requires msg == \null || \valid_read(msg + (0 .. len - 1));
  @ requires bound == \null || (\valid(bound + (0 .. n_tiles - 1)) && \separated(bound + (0 .. n_tiles - 1), msg + (0 .. len - 1)));
  @ assigns bound[0 .. n_tiles - 1], errno; */
tahq_status tahq_tile_error_bound(const uint8_t *msg, size_t len, double *bound, size_t n_tiles)
{
    if (!msg || !bound)
        return TAHQ_ERR_NULL;
    tahq_header h;
    const opened_message m = open_message(msg, len, n_tiles, 1, &h);
    if (m.st != TAHQ_OK)
        return m.st;
    const tahq_layout lay = m.lay;
    const uint8_t *payload = msg + TAHQ_HEADER_BYTES;
    const uint32_t G = h.config.tile;
    const bound_consts consts = bound_constants(lay.tile_log2, G);
    tile_cursor cur = {0, 0, 0};
    tile_data d;
    float v[TAHQ_TILE_MAX];
    /*@ loop invariant 0 <= t <= lay.n_tiles && cur.t == t && tahq_cursor_ok(cur, &h, lay, payload);
      @ loop assigns t, cur, d, v[0 .. 255], bound[0 .. n_tiles - 1], errno;
      @ loop variant lay.n_tiles - t; */
    for (uint64_t t = 0; t < lay.n_tiles; t++) {
        cur = cursor_next(cur, &h, lay, payload, &d);
        bound[t] = tile_error_bound(&d, G, h.config.rounding, consts, v);
    }
    return TAHQ_OK;
}
