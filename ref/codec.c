/* codec.c - whole-message encode and decode (SPEC §8, §10), the per-element
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

/* Units ranked together: S tokens (token mode) or T tiles (tile mode). */
/*@ requires \valid_read(cfg) && \valid_read(shape) && tahq_config_ok(cfg) && tahq_shape_ok(cfg, shape);
  @ assigns \nothing;
  @ ensures \result == tahq_group(cfg, shape) && \result <= 0xFFFFFFFF; */
static uint64_t alloc_group_size(const tahq_config *cfg, const tahq_shape *shape)
{
    switch (cfg->alloc) {
    case TAHQ_ALLOC_TOKEN: return shape->seq_len;
    case TAHQ_ALLOC_TILE: return shape->channels / cfg->tile;
    default: return 0;
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
    uint64_t n = alloc_group_size(cfg, shape);
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

/*@ requires \valid(dst + (0 .. (meta == TAHQ_META_FP32 ? 3 : 1)));
  @ requires meta != TAHQ_META_FP32 ==> bits <= 0xFFFF;
  @ assigns dst[0 .. (meta == TAHQ_META_FP32 ? 3 : 1)]; */
static void put_meta_bits(uint8_t *dst, tahq_meta meta, uint32_t bits)
{
    if (meta == TAHQ_META_FP32)
        tahq_put_u32(dst, bits);
    else
        tahq_put_u16(dst, (uint16_t)bits);
}

/*@ requires \valid_read(src + (0 .. (meta == TAHQ_META_FP32 ? 3 : 1)));
  @ assigns \nothing; */
static float get_meta(const uint8_t *src, tahq_meta meta)
{
    uint32_t bits = meta == TAHQ_META_FP32 ? tahq_get_u32(src) : tahq_get_u16(src);
    return tahq_meta_value(meta, bits);
}

/*@ requires \valid_read(src + (0 .. (meta == TAHQ_META_FP32 ? 3 : 1)));
  @ assigns \nothing; */
static uint32_t meta_get_bits(const uint8_t *src, tahq_meta meta)
{
    return meta == TAHQ_META_FP32 ? tahq_get_u32(src) : tahq_get_u16(src);
}

/* Is tile t (in row `row`) low precision, given the precision map? */
/*@ requires \valid_read(cfg);
  @ requires cfg->alloc == TAHQ_ALLOC_TOKEN ==> \valid_read(map + row / 8);
  @ requires cfg->alloc == TAHQ_ALLOC_TILE ==> \valid_read(map + t / 8);
  @ assigns \nothing;
  @ ensures \result == 0 || \result == 1; */
static int tile_is_low(const tahq_config *cfg, const uint8_t *map, uint64_t row, uint64_t t)
{
    switch (cfg->alloc) {
    case TAHQ_ALLOC_TOKEN: return (int)tahq_get_bit(map, row);
    case TAHQ_ALLOC_TILE: return (int)tahq_get_bit(map, t);
    default: return 0;
    }
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
  @ requires \separated(out + (0 .. out_capacity - 1), out_len, cfg, shape);
  @ assigns out[0 .. out_capacity - 1], *out_len, keys[0 .. tahq_group(cfg, shape) - 1],
  @         entropies[0 .. tahq_group(cfg, shape) - 1];
  @ ensures \result == TAHQ_OK ==> *out_len <= out_capacity; */
static tahq_status encode_tiles(const tahq_config *cfg, const tahq_shape *shape, const float *x,
                                uint64_t *keys, float *entropies, uint8_t *out,
                                size_t out_capacity, size_t *out_len)
{
    (void)out_capacity; /* the buffer size of the contract: at least 72 + payload */
    tahq_layout lay = tahq_layout_compute(cfg, shape, tahq_required_low_units(cfg, shape), 0);
    /*@ assert lay.n_tiles * cfg->tile == tahq_elements(shape); */
    tahq_status st = check_input(x, lay.n_tiles * cfg->tile);
    if (st != TAHQ_OK)
        return st;

    const uint32_t G = cfg->tile;
    const uint32_t k = lay.tile_log2;
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
    uint64_t n_low = tahq_allocate(cfg, shape, x, entropies, keys, map);

    uint8_t *flags = payload + lay.map_bytes;
    uint8_t *codes_out = payload + lay.code_off;
    uint8_t *pivots = payload + lay.pivot_off;
    uint64_t n_flagged = 0;
    float v[TAHQ_TILE_MAX];
    uint8_t codes[TAHQ_TILE_MAX];
    uint64_t row = 0, col = 0; /* t = row * tiles_per_row + col */
    /*@ loop invariant 0 <= t <= lay.n_tiles && n_flagged <= t;
      @ loop invariant t == row * lay.tiles_per_row + col && col <= lay.tiles_per_row;
      @ loop invariant payload + lay.code_off <= codes_out;
      @ loop assigns t, col, row, n_flagged, codes_out, v[0 .. 255], codes[0 .. 255],
      @   out[0 .. out_capacity - 1];
      @ loop variant lay.n_tiles - t; */
    for (uint64_t t = 0; t < lay.n_tiles; t++, col++) {
        if (col == lay.tiles_per_row) {
            col = 0;
            row++;
        }
        /*@ assert col < lay.tiles_per_row && row * lay.tiles_per_row <= t; */
        /*@ assert row < lay.rows && (t + 1) * G <= tahq_elements(shape); */
        const float *tile_x = x + t * G;
        uint32_t bits = tile_is_low(cfg, map, row, t) ? cfg->lo_bits : cfg->hi_bits;
        uint32_t pivot;
        float lo, hi; /* one range scan serves the gate and, if unflagged, the quantizer */
        tahq_tile_range(tile_x, G, &lo, &hi);
        int flagged = tahq_gate_from_range(tile_x, G, cfg->tau, lo, hi, &pivot);
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
        st = tahq_quantize_tile_range(values, G, lo, hi, bits, cfg->meta, cfg->rounding, cfg->seed,
                                      t * G, &z, &s, &zero_bits, &scale_bits, codes);
        if (st != TAHQ_OK) {
            /*@ loop invariant 0 <= i <= TAHQ_HEADER_BYTES;
              @ loop assigns i, out[0 .. TAHQ_HEADER_BYTES - 1];
              @ loop variant TAHQ_HEADER_BYTES - i; */
            for (uint32_t i = 0; i < TAHQ_HEADER_BYTES; i++) /* no partial message survives */
                out[i] = 0;
            return st;
        }
        put_meta_bits(payload + lay.zero_off + t * lay.meta_bytes, cfg->meta, zero_bits);
        put_meta_bits(payload + lay.scale_off + t * lay.meta_bytes, cfg->meta, scale_bits);
        /*@ admit codes_fit: codes_out + G / 8 * bits <= payload + lay.pivot_off; */
        tahq_pack_tile(codes_out, codes, G, bits);
        codes_out += (uint64_t)G * bits / 8;
        if (flagged) {
            uint8_t p = (uint8_t)pivot;
            tahq_set_bit(flags, t);
            tahq_pack_bits(pivots, n_flagged * k, &p, 1, k);
            n_flagged++;
        }
    }
    lay = tahq_layout_compute(cfg, shape, n_low, n_flagged);
    tahq_header_write(out, cfg, shape, n_low, n_flagged, lay.payload_bytes);
    tahq_header_seal(out, lay.payload_bytes);
    *out_len = (size_t)(TAHQ_HEADER_BYTES + lay.payload_bytes);
    return TAHQ_OK;
}

/*@ requires cfg == \null || \valid_read(cfg);
  @ requires shape == \null || \valid_read(shape);
  @ requires out_len == \null || \valid(out_len);
  @ requires out == \null || \valid(out + (0 .. out_capacity - 1));
  @ requires input: cfg != \null && shape != \null && tahq_config_ok(cfg) && tahq_shape_ok(cfg, shape) &&
  @   x != \null ==> \valid_read(x + (0 .. tahq_elements(shape) - 1));
  @ requires workspace == \null || \valid((uint8_t *)workspace + (0 .. workspace_bytes - 1));
  @ requires \separated(out + (0 .. out_capacity - 1), out_len, cfg, shape);
  @ assigns *out_len, out[0 .. out_capacity - 1], ((uint8_t *)workspace)[0 .. workspace_bytes - 1]; */
tahq_status tahq_encode(const tahq_config *cfg, const tahq_shape *shape, const float *x,
                        void *workspace, size_t workspace_bytes, uint8_t *out,
                        size_t out_capacity, size_t *out_len)
{
    if (!cfg || !shape || !x || !out || !out_len)
        return TAHQ_ERR_NULL;
    *out_len = 0;
    size_t bound, ws_need;
    /* tahq_encode_bound checks the configuration, then the shape */
    tahq_status st = tahq_encode_bound(cfg, shape, &bound);
    if (st == TAHQ_OK)
        st = tahq_encode_workspace_size(cfg, shape, &ws_need);
    if (st != TAHQ_OK)
        return st;
    if (out_capacity < bound)
        return TAHQ_ERR_BUFFER;
    if (ws_need > 0 && !workspace)
        return TAHQ_ERR_NULL;
    if (workspace_bytes < ws_need)
        return TAHQ_ERR_BUFFER;

    uint64_t group = alloc_group_size(cfg, shape);
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
  @ ensures \result <= n; */
static uint64_t popcount_bits(const uint8_t *buf, uint64_t first, uint64_t n)
{
    uint64_t c = 0;
    /*@ loop invariant 0 <= i <= n && c <= i;
      @ loop assigns i, c;
      @ loop variant n - i; */
    for (uint64_t i = 0; i < n; i++)
        c += tahq_get_bit(buf, first + i);
    return c;
}

/* Bits from nbits up to the end of the last byte must be zero. */
/*@ requires \valid_read(buf + (0 .. (nbits + 7) / 8 - 1));
  @ assigns \nothing; */
static int padding_is_zero(const uint8_t *buf, uint64_t nbits)
{
    if ((nbits & 7u) == 0)
        return 1;
    return (buf[nbits >> 3] >> (nbits & 7u)) == 0;
}

/* SPEC §8.4 step 5: everything in the payload that the header does not fix. */
/*@ requires \valid_read(h) && \valid_read(lay) && tahq_header_ok(h, TAHQ_HEADER_BYTES + h->payload_bytes);
  @ requires tahq_layout_ok(*lay, &h->config, &h->shape, h->n_low, h->n_flagged);
  @ requires \valid_read(payload + (0 .. h->payload_bytes - 1));
  @ assigns \nothing;
  @ ensures \result == TAHQ_OK || \result == TAHQ_ERR_PAYLOAD; */
static tahq_status validate_payload(const tahq_header *h, const tahq_layout *lay,
                                    const uint8_t *payload)
{
    const tahq_config *cfg = &h->config;
    const uint8_t *map = payload;
    uint64_t group = alloc_group_size(cfg, &h->shape);
    if (group > 0) {
        uint64_t want = tahq_low_count(group, cfg->hi_permille);
        /*@ loop invariant 0 <= first <= lay->map_bits && first % group == 0;
          @ loop assigns first;
          @ loop variant lay->map_bits - first; */
        for (uint64_t first = 0; first < lay->map_bits; first += group)
            if (popcount_bits(map, first, group) != want)
                return TAHQ_ERR_PAYLOAD;
        if (!padding_is_zero(map, lay->map_bits))
            return TAHQ_ERR_PAYLOAD;
    }
    const uint8_t *flags = payload + lay->map_bytes;
    if (popcount_bits(flags, 0, lay->n_tiles) != h->n_flagged || !padding_is_zero(flags, lay->n_tiles))
        return TAHQ_ERR_PAYLOAD;
    if (!padding_is_zero(payload + lay->pivot_off, h->n_flagged * lay->tile_log2))
        return TAHQ_ERR_PAYLOAD;
    /*@ loop invariant 0 <= t <= lay->n_tiles;
      @ loop assigns t;
      @ loop variant lay->n_tiles - t; */
    for (uint64_t t = 0; t < lay->n_tiles; t++) {
        uint32_t zb = meta_get_bits(payload + lay->zero_off + t * lay->meta_bytes, cfg->meta);
        uint32_t sb = meta_get_bits(payload + lay->scale_off + t * lay->meta_bytes, cfg->meta);
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

/* Walks the tiles of a validated message in order. */
typedef struct tile_cursor {
    const tahq_header *h;
    const tahq_layout *lay;
    const uint8_t *payload;
    const uint8_t *codes;   /* next tile's codes */
    uint64_t t;             /* next tile = row * tiles_per_row + col */
    uint64_t row, col;
    uint64_t n_flagged;     /* flagged tiles seen so far */
} tile_cursor;

typedef struct tile_data {
    uint32_t bits, flagged, pivot;
    float zero, scale;
    uint8_t codes[TAHQ_TILE_MAX];
} tile_data;

/*@ predicate tahq_cursor_ok{L}(tile_cursor *c) =
  @   \valid(c) && \valid_read(c->h) && \valid_read(c->lay) &&
  @   tahq_header_ok(c->h, TAHQ_HEADER_BYTES + c->h->payload_bytes) &&
  @   tahq_layout_ok(*c->lay, &c->h->config, &c->h->shape, c->h->n_low, c->h->n_flagged) &&
  @   \valid_read(c->payload + (0 .. c->h->payload_bytes - 1)) &&
  @   \separated(c, c->h, c->lay) &&
  @   c->t <= c->lay->n_tiles && c->t == c->row * c->lay->tiles_per_row + c->col &&
  @   c->col <= c->lay->tiles_per_row && c->n_flagged <= c->t &&
  @   c->payload + c->lay->code_off <= c->codes;
  @*/

/*@ requires tahq_cursor_ok(c) && c->t < c->lay->n_tiles;
  @ requires \valid(d) && \separated(d, c, c->h, c->lay, c->payload + (0 .. c->h->payload_bytes - 1));
  @ assigns *c, *d;
  @ ensures tahq_cursor_ok(c) && c->t == \old(c->t) + 1;
  @ ensures c->h == \old(c->h) && c->lay == \old(c->lay) && c->payload == \old(c->payload);
  @ ensures d->pivot < c->h->config.tile && (d->bits == c->h->config.lo_bits || d->bits == c->h->config.hi_bits); */
static void cursor_next(tile_cursor *c, tile_data *d)
{
    const tahq_config *cfg = &c->h->config;
    const tahq_layout *lay = c->lay;
    const uint32_t G = cfg->tile;
    uint64_t t = c->t;
    if (c->col == lay->tiles_per_row) {
        c->col = 0;
        c->row++;
    }
    d->bits = tile_is_low(cfg, c->payload, c->row, t) ? cfg->lo_bits : cfg->hi_bits;
    d->flagged = tahq_get_bit(c->payload + lay->map_bytes, t);
    d->pivot = 0;
    if (d->flagged) {
        uint8_t p;
        /*@ admit flag_count: c->n_flagged < c->h->n_flagged; */ /* popcount(flags) = n_flagged, checked in validate_payload */
        tahq_unpack_bits(c->payload + lay->pivot_off, c->n_flagged * lay->tile_log2, &p, 1,
                         lay->tile_log2);
        d->pivot = p;
        c->n_flagged++;
    }
    d->zero = get_meta(c->payload + lay->zero_off + t * lay->meta_bytes, cfg->meta);
    d->scale = get_meta(c->payload + lay->scale_off + t * lay->meta_bytes, cfg->meta);
    /*@ admit codes_fit: c->codes + G / 8 * d->bits <= c->payload + c->lay->pivot_off; */ /* map counts checked in validate_payload */
    tahq_unpack_tile(c->codes, d->codes, G, d->bits);
    c->codes += (uint64_t)G * d->bits / 8;
    c->t++;
    c->col++;
}

/* Parse + validate the whole message and check the caller's output size:
 * `count` must be the number of elements (per_tile = 1: one entry per tile). */
/*@ requires msg != \null && \valid_read(msg + (0 .. len - 1));
  @ requires \valid(h) && \valid(lay) && \valid(cur) && \separated(h, lay, cur, msg + (0 .. len - 1));
  @ assigns *h, *lay, *cur;
  @ ensures \result == TAHQ_OK ==> tahq_cursor_ok(cur) && cur->t == 0 && cur->h == h && cur->lay == lay &&
  @   cur->payload == msg + TAHQ_HEADER_BYTES &&
  @   count == lay->n_tiles * (per_tile ? 1 : h->config.tile); */
static tahq_status open_message(const uint8_t *msg, size_t len, size_t count, int per_tile,
                                tahq_header *h, tahq_layout *lay, tile_cursor *cur)
{
    tahq_status st = tahq_parse_header(msg, len, h);
    if (st != TAHQ_OK)
        return st;
    *lay = tahq_layout_compute(&h->config, &h->shape, h->n_low, h->n_flagged);
    const uint8_t *payload = msg + TAHQ_HEADER_BYTES;
    st = validate_payload(h, lay, payload);
    if (st != TAHQ_OK)
        return st;
    if ((uint64_t)count != lay->n_tiles * (per_tile ? 1u : h->config.tile))
        return TAHQ_ERR_BUFFER;
    cur->h = h;
    cur->lay = lay;
    cur->payload = payload;
    cur->codes = payload + lay->code_off;
    cur->t = 0;
    cur->row = 0;
    cur->col = 0;
    cur->n_flagged = 0;
    return TAHQ_OK;
}

/*@ requires msg == \null || \valid_read(msg + (0 .. len - 1));
  @ requires out == \null || (\valid(out + (0 .. count - 1)) && \separated(out + (0 .. count - 1), msg + (0 .. len - 1)));
  @ assigns out[0 .. count - 1]; */
tahq_status tahq_decode(const uint8_t *msg, size_t len, float *out, size_t count)
{
    if (!msg || !out)
        return TAHQ_ERR_NULL;
    tahq_header h;
    tahq_layout lay;
    tile_cursor cur;
    tahq_status st = open_message(msg, len, count, 0, &h, &lay, &cur);
    if (st != TAHQ_OK)
        return st;
    const uint32_t G = h.config.tile;
    tile_data d;
    /*@ loop invariant 0 <= t <= lay.n_tiles && cur.t == t && tahq_cursor_ok(&cur);
      @ loop invariant cur.h == &h && cur.lay == &lay;
      @ loop assigns t, cur, d, out[0 .. count - 1];
      @ loop variant lay.n_tiles - t; */
    for (uint64_t t = 0; t < lay.n_tiles; t++) {
        cursor_next(&cur, &d);
        /*@ assert (t + 1) * G <= count; */
        float *dst = out + t * G;
        tahq_dequantize_tile(d.codes, G, d.zero, d.scale, dst);
        if (d.flagged)
            tahq_hadamard_inverse(dst, G, d.pivot);
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

/*@ requires msg == \null || \valid_read(msg + (0 .. len - 1));
  @ requires bound == \null || (\valid(bound + (0 .. count - 1)) && \separated(bound + (0 .. count - 1), msg + (0 .. len - 1)));
  @ assigns bound[0 .. count - 1], errno; */
tahq_status tahq_error_bound(const uint8_t *msg, size_t len, double *bound, size_t count)
{
    if (!msg || !bound)
        return TAHQ_ERR_NULL;
    tahq_header h;
    tahq_layout lay;
    tile_cursor cur;
    tahq_status st = open_message(msg, len, count, 0, &h, &lay, &cur);
    if (st != TAHQ_OK)
        return st;
    const uint32_t G = h.config.tile;
    const double u = 0x1p-24;
    const uint32_t k = lay.tile_log2;
    const double gamma = pow(1.0 + u, (double)(k + 1)) - 1.0;
    const double kappa = (k & 1u) ? sqrt(2.0) : 1.0;
    const double root_g = sqrt((double)G);
    const double slack = 1.0 + 0x1p-40; /* binary64 rounding of these formulas */
    tile_data d;
    float v[TAHQ_TILE_MAX];
    /*@ loop invariant 0 <= t <= lay.n_tiles && cur.t == t && tahq_cursor_ok(&cur);
      @ loop invariant cur.h == &h && cur.lay == &lay;
      @ loop assigns t, cur, d, v[0 .. 255], bound[0 .. count - 1], errno;
      @ loop variant lay.n_tiles - t; */
    for (uint64_t t = 0; t < lay.n_tiles; t++) {
        cursor_next(&cur, &d);
        /*@ assert (t + 1) * G <= count; */
        double b = element_bound(d.zero, d.scale, d.bits, h.config.rounding);
        double e = b;
        if (d.flagged) {
            tahq_dequantize_tile(d.codes, G, d.zero, d.scale, v);
            double norm2 = 0.0;
            /*@ loop invariant 0 <= i <= G;
              @ loop assigns i, norm2;
              @ loop variant G - i; */
            for (uint32_t i = 0; i < G; i++)
                norm2 += (double)v[i] * (double)v[i];
            double x_norm = kappa * (sqrt(norm2) + root_g * (b + 0x1p-150)) / (1.0 - gamma);
            e = (1.0 + gamma) * kappa * root_g * b + gamma * (2.0 + gamma) * x_norm + 0x1p-140;
        }
        e *= slack;
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
    tahq_layout lay;
    tile_cursor cur;
    tahq_status st = open_message(msg, len, n_tiles, 1, &h, &lay, &cur);
    if (st != TAHQ_OK)
        return st;
    tile_data d;
    /*@ loop invariant 0 <= t <= lay.n_tiles && cur.t == t && tahq_cursor_ok(&cur);
      @ loop invariant cur.h == &h && cur.lay == &lay;
      @ loop invariant \forall integer j; 0 <= j < t ==> info[j].pivot < h.config.tile;
      @ loop assigns t, cur, d, info[0 .. n_tiles - 1];
      @ loop variant lay.n_tiles - t; */
    for (uint64_t t = 0; t < lay.n_tiles; t++) {
        cursor_next(&cur, &d);
        info[t].bits = d.bits;
        info[t].flagged = d.flagged;
        info[t].pivot = d.pivot;
        info[t].zero = d.zero;
        info[t].scale = d.scale;
    }
    return TAHQ_OK;
}
