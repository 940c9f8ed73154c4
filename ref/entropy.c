/* SPDX-License-Identifier: MIT */ /* entropy.c - the SPEC's log2, summation trees, entropy and precision
 * allocation (SPEC §2.3, §2.5, §4). */
#include "internal.h"
#include "pairwise.h"

/*@ assigns \nothing; */
float tahq_log2(float x)
{
    return tahq_core_log2(x); /* the scalar core's, which cpu/ and kernels/ call too */
}

/* SPEC §2.5 halving tree over w[0..n), n a power of two; w is overwritten. */
/*@ requires 1 <= n && \valid(w + (0 .. n - 1));
  @ assigns w[0 .. n - 1]; */
static inline float halving_tree_scalar(float *w, uint32_t n)
{
    /*@ loop invariant 0 <= h <= n / 2;
      @ loop assigns h, w[0 .. n - 1];
      @ loop variant h; */
    for (uint32_t h = n / 2; h >= 1; h /= 2)
        /*@ loop invariant 0 <= j <= h;
          @ loop assigns j, w[0 .. n - 1];
          @ loop variant h - j; */
        for (uint32_t j = 0; j < h; j++)
            w[j] = w[j] + w[j + h];
    return w[0];
}

/* The tree of the per-tile sums; outside the proofs' build the 8-lane
 * form of cpu/ref_accel.c (the same additions) from 8 values up. */
/*@ requires 1 <= n && \valid(w + (0 .. n - 1));
  @ assigns w[0 .. n - 1]; */
static inline float halving_tree(float *w, uint32_t n)
{
#ifdef TAHQ_HAVE_V8
    if (n >= 8)
        return tahq_cpu_halving_tree8(w, n);
#endif
    return halving_tree_scalar(w, n);
}

/* The halving tree without scratch memory: the value that ends in w[r] at
 * the level where the stride is m aggregates the indices r mod m... so the
 * root is E(0, 1) with E(r, m) = v[r] if m = n, else E(r, 2m) + E(r+m, 2m).
 * Used for n above the tile size (recursion depth log2 n). */
/*@ requires tahq_is_pow2(n) && tahq_is_pow2(m) && m <= n && r < m;
  @ requires \valid_read(v + (0 .. n - 1));
  @ decreases n - m;
  @ assigns \nothing; */
static float halving_tree_recursive(const float *v, uint32_t n, uint32_t r, uint32_t m)
{
    if (m == n)
        return v[r];
    return halving_tree_recursive(v, n, r, 2 * m) + halving_tree_recursive(v, n, r + m, 2 * m);
}

/* A tile size (up to 256) or any power of two above it. */
/*@ requires (tahq_valid_tile(n) || tahq_is_pow2(n)) && \valid_read(v + (0 .. n - 1));
  @ assigns \nothing; */
float tahq_tree_sum(const float *v, uint32_t n)
{
    if (n > TAHQ_TILE_MAX)
        return halving_tree_recursive(v, n, 0, 1);
    float w[TAHQ_TILE_MAX];
    /*@ loop invariant 0 <= i <= n;
      @ loop assigns i, w[0 .. n - 1];
      @ loop variant n - i; */
    for (uint32_t i = 0; i < n; i++)
        w[i] = v[i];
    return halving_tree_scalar(w, n);
}

/* The pairwise accumulator (pairwise.h). */
/*@ requires \valid(acc) && acc->count < 0xFFFFFFFF && acc->depth == tahq_popcount(acc->count);
  @ assigns acc->count, acc->depth, acc->sum[0 .. 63];
  @ ensures acc->count == \old(acc->count) + 1 && acc->depth == tahq_popcount(acc->count); */
void tahq_pairwise_push(tahq_pairwise_acc *acc, float v)
{
    uint64_t c = acc->count;
    /*@ loop invariant 0 <= c <= \at(acc->count, Pre);
      @ loop invariant acc->depth == tahq_popcount(c);
      @ loop invariant tahq_popcount(c + 1) == tahq_popcount(\at(acc->count, Pre) + 1);
      @ loop assigns c, v, acc->depth;
      @ loop variant c; */
    while (c & 1u) { /* a complete left subtree of the same size exists */
        /*@ assert c % 2 == 1 && (c + 1) % 2 == 0 && (c + 1) / 2 == c / 2 + 1; */
        /*@ assert tahq_popcount(c) == 1 + tahq_popcount(c / 2); */
        /*@ assert tahq_popcount(c + 1) == tahq_popcount(c / 2 + 1); */
        v = acc->sum[--acc->depth] + v;
        c >>= 1;
    }
    /*@ assert c % 2 == 0 && (c + 1) % 2 == 1 && (c + 1) / 2 == c / 2; */
    /*@ assert tahq_popcount(c) == tahq_popcount(c / 2); */
    /*@ assert tahq_popcount(c + 1) == 1 + tahq_popcount(c / 2); */
    acc->sum[acc->depth++] = v;
    acc->count++;
}

/*@ requires \valid_read(acc) && 1 <= acc->depth <= 64;
  @ assigns \nothing; */
float tahq_pairwise_finish(const tahq_pairwise_acc *acc)
{
    /* Right-most partial subtrees are completed with zero padding, which
     * leaves them unchanged: combine from the right. */
    float v = acc->sum[acc->depth - 1];
    /*@ loop invariant 0 <= i <= acc->depth - 1;
      @ loop assigns i, v;
      @ loop variant i; */
    for (uint32_t i = acc->depth - 1; i > 0; i--)
        v = acc->sum[i - 1] + v;
    return v;
}

/* Σ|x| over a unit of `tiles` tiles (SPEC §2.5: halving tree per tile,
 * pairwise across tiles). One call per unit so that the vector loop's set-up
 * is paid once, not per tile. */
/*@ requires 1 <= tiles && 1 <= tile <= 256 && \valid_read(x + (0 .. tiles * tile - 1));
  @ assigns \nothing; */
TAHQ_HOT static float unit_abs_sum(const float *x, uint32_t tiles, uint32_t tile)
{
    tahq_pairwise_acc acc = {.count = 0, .depth = 0};
    float w[TAHQ_TILE_MAX];
    /*@ loop invariant 0 <= t <= tiles && acc.count == t && acc.depth == tahq_popcount(t);
      @ loop invariant x == \at(x, Pre) + t * tile;
      @ loop assigns t, x, acc, w[0 .. 255];
      @ loop variant tiles - t; */
    for (uint32_t t = 0; t < tiles; t++, x += tile) {
        /*@ assert (t + 1) * tile <= tiles * tile; */
        /*@ loop invariant 0 <= i <= tile;
          @ loop assigns i, w[0 .. 255];
          @ loop variant tile - i; */
        for (uint32_t i = 0; i < tile; i++)
            w[i] = tahq_absf(x[i]);
        tahq_pairwise_push(&acc, halving_tree(w, tile));
    }
    return tahq_pairwise_finish(&acc);
}

/* The same sum with p = |x| / total, for units whose reciprocal overflows
 * (all values below 2^-128; rare, so no fast path). p <= 1 exactly here. */
/*@ requires 1 <= tiles && 1 <= tile <= 256 && \valid_read(x + (0 .. tiles * tile - 1));
  @ assigns \nothing; */
static float unit_plogp_sum_divide(const float *x, uint32_t tiles, uint32_t tile, float total)
{
    tahq_pairwise_acc acc = {.count = 0, .depth = 0};
    float w[TAHQ_TILE_MAX];
    /*@ loop invariant 0 <= t <= tiles && acc.count == t && acc.depth == tahq_popcount(t);
      @ loop invariant x == \at(x, Pre) + t * tile;
      @ loop assigns t, x, acc, w[0 .. 255];
      @ loop variant tiles - t; */
    for (uint32_t t = 0; t < tiles; t++, x += tile) {
        /*@ assert (t + 1) * tile <= tiles * tile; */
        /*@ loop invariant 0 <= i <= tile;
          @ loop assigns i, w[0 .. 255];
          @ loop variant tile - i; */
        for (uint32_t i = 0; i < tile; i++) {
            float p = tahq_absf(x[i]) / total;
            w[i] = p * tahq_core_log2(p); /* -0 for p = 0: see unit_plogp_sum */
        }
        tahq_pairwise_push(&acc, halving_tree(w, tile));
    }
    return tahq_pairwise_finish(&acc);
}

/* Σ p*log2(p) with p = min(|x| * (1/total), 1) over a unit (SPEC §4.1). */
/*@ requires 1 <= tiles && 1 <= tile <= 256 && \valid_read(x + (0 .. tiles * tile - 1));
  @ assigns \nothing; */
TAHQ_HOT static float unit_plogp_sum(const float *x, uint32_t tiles, uint32_t tile, float total)
{
    tahq_pairwise_acc acc = {.count = 0, .depth = 0};
    float w[TAHQ_TILE_MAX];
    /*@ assert tahq_popcount(0) == 0; */
    const float inverse = 1.0f / total;
    if (tahq_bits_of(inverse) == 0x7F800000u) /* total < 2^-128: divide (SPEC §4.1) */
        return unit_plogp_sum_divide(x, tiles, tile, total);
    /*@ loop invariant 0 <= t <= tiles && acc.count == t && acc.depth == tahq_popcount(t);
      @ loop invariant x == \at(x, Pre) + t * tile;
      @ loop assigns t, x, acc, w[0 .. 255];
      @ loop variant tiles - t; */
    for (uint32_t t = 0; t < tiles; t++, x += tile) {
        /*@ assert (t + 1) * tile <= tiles * tile; */
        /*@ loop invariant 0 <= i <= tile;
          @ loop assigns i, w[0 .. 255];
          @ loop variant tile - i; */
        for (uint32_t i = 0; i < tile; i++) {
            float p = tahq_absf(x[i]) * inverse;
            p = p < 1.0f ? p : 1.0f; /* the rounded reciprocal can push a sole value to 1+ulp */
            /* For p = +0, tahq_core_log2 gives -150 and the product is -0 instead
             * of the SPEC's +0: adding -0 leaves every non-zero partial sum
             * unchanged and H = 0 - sum maps both zeros to +0, so H is the
             * same bit pattern. */
            w[i] = p * tahq_core_log2(p);
        }
        tahq_pairwise_push(&acc, halving_tree(w, tile));
    }
    return tahq_pairwise_finish(&acc);
}

/*@ requires 1 <= tiles && 1 <= tile <= 256 && \valid_read(x + (0 .. tiles * tile - 1));
  @ assigns \nothing; */
float tahq_entropy(const float *x, uint32_t tiles, uint32_t tile)
{
    float total = unit_abs_sum(x, tiles, tile);
    if (total == 0.0f)
        return 0.0f;
    return 0.0f - unit_plogp_sum(x, tiles, tile, total);
}

/* ---- allocation ---------------------------------------------------------- */

/* In-place heapsort of 64-bit keys (entropy bits << 32 | index): keys are
 * distinct, so the order, and with it the tie rule, is total. */
/*@ predicate heap_from{L}(uint64_t *a, integer start, integer n) =
  @   \forall integer c; 1 <= c < n && start <= (c - 1) / 2 ==> a[(c - 1) / 2] >= a[c];
  @ predicate keys_ascending{L}(uint64_t *a, integer m, integer n) =
  @   \forall integer i, j; m <= i <= j < n ==> a[i] <= a[j];
  @ predicate keys_at_most{L}(uint64_t *a, integer n, integer bound) =
  @   \forall integer i; 0 <= i < n ==> a[i] <= bound; */

/* Ghost lemma: the root of a heap is its largest key (induction on the
 * index: a node's parent comes before it). */
/*@ ghost
  /@ requires 1 <= n && \valid_read(a + (0 .. n - 1)) && heap_from(a, 0, n);
   @ assigns \nothing;
   @ ensures keys_at_most(a, n, a[0]); @/
  static void heap_top(uint64_t *a, uint64_t n)
  {
      /@ loop invariant 1 <= i <= n && keys_at_most(a, i, a[0]);
       @ loop assigns i;
       @ loop variant n - i; @/
      for (uint64_t i = 1; i < n; i++) {
          /@ assert (i - 1) / 2 < i && a[(i - 1) / 2] >= a[i]; @/
      }
  }
*/

/* Restore the heap below `start` (its children's subtrees are heaps). Ghost
 * parameters: total, the keys a[0 .. total-1] stay distinct unit indices
 * below total; bound, a value no key of a[0 .. n-1] exceeds, which the swaps
 * keep (the extraction loop passes the smallest key of the sorted tail). */
/*@ requires start < n <= total <= 0x100000000 && \valid(a + (0 .. total - 1));
  @ requires tahq_keys_ok(a, total, total);
  @ requires heap_from(a, start + 1, n) && keys_at_most(a, n, bound);
  @ assigns a[0 .. n - 1];
  @ ensures tahq_keys_ok(a, total, total);
  @ ensures heap_from(a, start, n) && keys_at_most(a, n, bound); */
static void sift_down(uint64_t *a, uint64_t start,
                      uint64_t n) /*@ ghost (uint64_t total, uint64_t bound) */
{
    uint64_t root = start;
    /*@ loop invariant start <= root < n;
      @ loop invariant keys: tahq_keys_ok(a, total, total);
      @ loop invariant parent: root != start ==> start <= (root - 1) / 2 < root;
      @ loop invariant hole: \forall integer c; 1 <= c < n && start <= (c - 1) / 2 &&
      @   (c - 1) / 2 != root ==> a[(c - 1) / 2] >= a[c];
      @ loop invariant above: root != start ==> \forall integer c; 1 <= c < n &&
      @   (c - 1) / 2 == root ==> a[(root - 1) / 2] >= a[c];
      @ loop invariant bound: keys_at_most(a, n, bound);
      @ loop assigns root, a[0 .. n - 1];
      @ loop variant n - root; */
    while (2 * root + 1 < n) {
        uint64_t child = 2 * root + 1;
        if (child + 1 < n && a[child] < a[child + 1])
            child++;
        /*@ assert (child - 1) / 2 == root && a[child] >= a[2 * root + 1] &&
          @   (2 * root + 2 < n ==> a[child] >= a[2 * root + 2]); */
        if (a[root] >= a[child])
            return;
        uint64_t t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

/*@ requires n <= 0x100000000 && \valid(a + (0 .. n - 1)) && tahq_keys_ok(a, n, n);
  @ assigns a[0 .. n - 1];
  @ ensures tahq_keys_ok(a, n, n);
  @ ensures ascending: keys_ascending(a, 0, n); */
void tahq_sort_keys(uint64_t *a, uint64_t n)
{
    if (n < 2)
        return;
    /*@ loop invariant start <= n / 2 && tahq_keys_ok(a, n, n) && heap_from(a, start, n);
      @ loop assigns start, a[0 .. n - 1];
      @ loop variant start; */
    for (uint64_t start = n / 2; start > 0;) {
        start--;
        sift_down(a, start, n) /*@ ghost (n, UINT64_MAX) */;
    }
    /* a[0 .. end] is a heap; a[end+1 .. n-1] holds the largest keys, sorted */
    /*@ loop invariant 0 <= end <= n - 1 && tahq_keys_ok(a, n, n) && heap_from(a, 0, end + 1);
      @ loop invariant keys_ascending(a, end + 1, n);
      @ loop invariant \forall integer i, j; 0 <= i <= end < j < n ==> a[i] <= a[j];
      @ loop assigns end, a[0 .. n - 1];
      @ loop variant end; */
    for (uint64_t end = n - 1; end > 0; end--) {
        /*@ ghost heap_top(a, end + 1); */
        uint64_t t = a[0];
        a[0] = a[end];
        a[end] = t;
        /*@ assert tahq_keys_ok(a, n, n); */
        /*@ assert heap_from(a, 1, end); */
        /*@ assert keys_at_most(a, end, a[end]); */
        sift_down(a, 0, end) /*@ ghost (n, a[end]) */;
    }
}

/* Mark the units of the n_low smallest keys of a group: map bits
 * first_bit + index, where a key is (rank << 32) + index with distinct
 * indices below n, so the order is total and equal ranks go low in index
 * order (SPEC §4.2's tie rule). Sorts keys. Returns n_low. */
/*@ requires n_low <= n <= 0x100000000 && first_bit + n <= UINT64_MAX;
  @ requires \valid(keys + (0 .. n - 1)) && tahq_keys_ok(keys, n, n);
  @ requires \valid(map + (first_bit / 8 .. (first_bit + n + 7) / 8 - 1));
  @ requires \separated(keys + (0 .. n - 1), map + (first_bit / 8 .. (first_bit + n + 7) / 8 - 1));
  @ assigns keys[0 .. n - 1], map[first_bit / 8 .. (first_bit + n + 7) / 8 - 1];
  @ ensures \result == n_low;
  @ ensures low_units: tahq_keys_ok(keys, n, n);
  @ ensures tie_rule: keys_ascending(keys, 0, n); */
static uint64_t mark_lowest(uint64_t *keys, uint64_t n, uint64_t n_low, uint8_t *map,
                            uint64_t first_bit)
{
    tahq_sort_keys(keys, n);
    /*@ loop invariant 0 <= i <= n_low;
      @ loop assigns i, map[first_bit / 8 .. (first_bit + n + 7) / 8 - 1];
      @ loop variant n_low - i; */
    for (uint64_t i = 0; i < n_low; i++)
        tahq_set_bit(map, first_bit + (keys[i] & 0xFFFFFFFFu));
    return n_low;
}

/* Mark the n_low smallest of the n entropies of a group: for entropies >= 0
 * the bit patterns order as the values. */
/*@ requires n_low <= n <= 0x100000000 && first_bit + n <= UINT64_MAX;
  @ requires \valid_read(entropy + (0 .. n - 1)) && \valid(keys + (0 .. n - 1));
  @ requires \valid(map + (first_bit / 8 .. (first_bit + n + 7) / 8 - 1));
  @ requires \separated(keys + (0 .. n - 1), map + (first_bit / 8 .. (first_bit + n + 7) / 8 - 1));
  @ assigns keys[0 .. n - 1], map[first_bit / 8 .. (first_bit + n + 7) / 8 - 1];
  @ ensures \result == n_low;
  @ ensures low_units: tahq_keys_ok(keys, n, n);
  @ ensures tie_rule: keys_ascending(keys, 0, n); */
static uint64_t select_low(const float *entropy, uint64_t n, uint64_t n_low, uint64_t *keys,
                           uint8_t *map, uint64_t first_bit)
{
    /*@ loop invariant 0 <= i <= n;
      @ loop invariant \forall integer j; 0 <= j < i ==> keys[j] % 0x100000000 == j;
      @ loop invariant tahq_keys_ok(keys, i, n);
      @ loop assigns i, keys[0 .. n - 1];
      @ loop variant n - i; */
    for (uint64_t i = 0; i < n; i++)
        keys[i] = ((uint64_t)tahq_bits_of(entropy[i]) << 32) + i; /* = | i: i < 2^32 */
    return mark_lowest(keys, n, n_low, map, first_bit);
}

/* Ghost lemma functions: the nonlinear index bounds of tahq_allocate, each
 * proved on its own (integers only) and used there by a ghost call. */
/*@ ghost
  /@ requires x <= y;
   @ assigns \nothing;
   @ ensures x * c <= y * c; @/
  static void entropy_mul_le(uint64_t x, uint64_t y, uint64_t c) { }
*/
/*@ ghost
  /@ requires b < B && 1 <= C && low <= S && B * S * C <= 0x10000000000;
   @ assigns \nothing;
   @ ensures B * S <= 0x10000000000;
   @ ensures b * S + S <= B * S && (b + 1) * S <= B * S;
   @ ensures b * low + low <= b * S + S && (b + 1) * low <= (b + 1) * S; @/
  static void entropy_token_step(uint64_t b, uint64_t B, uint64_t S, uint64_t C, uint64_t low) { }
*/
/*@ ghost
  /@ requires b < B && s < S && b * S + S <= B * S <= 0x10000000000;
   @ requires B * S * C <= 0x10000000000;
   @ assigns \nothing;
   @ ensures b * S + s + 1 <= B * S && (b * S + s) * C <= 0x10000000000;
   @ ensures (b * S + s) * C + C <= B * S * C && (b * S + s + 1) * C <= B * S * C; @/
  static void entropy_token_elem(uint64_t b, uint64_t s, uint64_t B, uint64_t S, uint64_t C)
  {
      entropy_mul_le(b * S + s + 1, B * S, C);
  }
*/
/*@ ghost
  /@ requires B <= 0xFFFFFFFF && S <= 0xFFFFFFFF && 1 <= G <= C <= 0xFFFFFFFF && C % G == 0;
   @ requires B * S * C <= 0x10000000000;
   @ assigns \nothing;
   @ ensures B * S <= 0x10000000000 && (B * S) * C <= 0x10000000000;
   @ ensures 1 <= C / G <= C && (C / G) * G == C; @/
  static void entropy_tile_setup(uint64_t B, uint64_t S, uint64_t C, uint64_t G) { }
*/
/*@ ghost
  /@ requires r < rows && T * G == C && 1 <= G && low <= T && rows * C <= 0x10000000000;
   @ assigns \nothing;
   @ ensures rows * T <= rows * C;
   @ ensures r * T + T <= rows * T && (r + 1) * T <= rows * T;
   @ ensures r * C + C <= rows * C && (r + 1) * C <= rows * C;
   @ ensures r * low + low <= r * T + T && (r + 1) * low <= (r + 1) * T; @/
  static void entropy_tile_step(uint64_t r, uint64_t rows, uint64_t T, uint64_t C, uint64_t G,
                                uint64_t low)
  {
      entropy_mul_le(r + 1, rows, T);
      entropy_mul_le(r + 1, rows, C);
  }
*/
/*@ ghost
  /@ requires \valid_read(cfg) && \valid_read(shape);
   @ assigns \nothing;
   @ ensures tahq_rows(shape) == shape->batch * shape->seq_len;
   @ ensures tahq_elements(shape) == shape->batch * shape->seq_len * shape->channels;
   @ ensures tahq_tpr(cfg, shape) == shape->channels / cfg->tile;
   @ ensures tahq_per_row(cfg->alloc) ==> tahq_map_bits(cfg, shape) == tahq_rows(shape) &&
   @   tahq_group(cfg, shape) == shape->seq_len &&
   @   tahq_required_low(cfg, shape) == shape->batch * tahq_low(shape->seq_len, cfg->hi_permille);
   @ ensures cfg->alloc == TAHQ_ALLOC_TILE ==>
   @   tahq_map_bits(cfg, shape) == tahq_rows(shape) * tahq_tpr(cfg, shape) &&
   @   tahq_group(cfg, shape) == tahq_tpr(cfg, shape) &&
   @   tahq_required_low(cfg, shape) ==
   @     tahq_rows(shape) * tahq_low(tahq_tpr(cfg, shape), cfg->hi_permille); @/
  static void entropy_defs(const tahq_config *cfg, const tahq_shape *shape) { }
*/
/*@ ghost
  /@ requires t < T;
   @ assigns \nothing;
   @ ensures t * G + G <= T * G && (t + 1) * G <= T * G; @/
  static void entropy_tile_elem(uint64_t t, uint64_t T, uint64_t G) { }
*/

/*@ requires \valid_read(cfg) && \valid_read(shape) && tahq_config_ok(cfg) && tahq_shape_ok(cfg, shape);
  @ requires not_gain: cfg->alloc != TAHQ_ALLOC_GAIN; // tahq_allocate_gain
  @ requires \valid_read(x + (0 .. tahq_elements(shape) - 1));
  @ requires \valid(entropy_ws + (0 .. tahq_group(cfg, shape) - 1));
  @ requires \valid(key_ws + (0 .. tahq_group(cfg, shape) - 1));
  @ requires \valid(map + (0 .. (tahq_map_bits(cfg, shape) + 7) / 8 - 1));
  @ requires \separated(entropy_ws + (0 .. tahq_group(cfg, shape) - 1),
  @                      key_ws + (0 .. tahq_group(cfg, shape) - 1),
  @                      map + (0 .. (tahq_map_bits(cfg, shape) + 7) / 8 - 1));
  @ requires ws_not_cfg: \separated(cfg, key_ws + (0 .. tahq_group(cfg, shape) - 1),
  @                                  map + (0 .. (tahq_map_bits(cfg, shape) + 7) / 8 - 1));
  @ requires ws_not_shape: \separated(shape, key_ws + (0 .. tahq_group(cfg, shape) - 1),
  @                                    map + (0 .. (tahq_map_bits(cfg, shape) + 7) / 8 - 1));
  @ assigns entropy_ws[0 .. tahq_group(cfg, shape) - 1], key_ws[0 .. tahq_group(cfg, shape) - 1],
  @         map[0 .. (tahq_map_bits(cfg, shape) + 7) / 8 - 1];
  @ ensures n_low: \result == tahq_required_low(cfg, shape); */
uint64_t tahq_allocate(const tahq_config *cfg, const tahq_shape *shape, const float *x,
                       float *entropy_ws, uint64_t *key_ws, uint8_t *map)
{
    /*@ ghost entropy_defs(cfg, shape); */
    const uint32_t G = cfg->tile;
    const uint64_t C = shape->channels;
    const uint32_t T = (uint32_t)(C / G);
    uint64_t n_low = 0;
    if (cfg->alloc == TAHQ_ALLOC_TOKEN) {
        const uint64_t S = shape->seq_len;
        const uint64_t low = tahq_low_count(S, cfg->hi_permille);
        /*@ assert shape->batch * S * C == tahq_elements(shape) <= 0x10000000000; */
        /*@ loop invariant 0 <= b <= shape->batch && n_low == b * low;
          @ loop assigns b, n_low, entropy_ws[0 .. S - 1], key_ws[0 .. S - 1],
          @   map[0 .. (tahq_map_bits(cfg, shape) + 7) / 8 - 1];
          @ loop variant shape->batch - b; */
        for (uint64_t b = 0; b < shape->batch; b++) {
            /*@ ghost entropy_token_step(b, shape->batch, S, C, low); */
            /*@ assert (b + 1) * S <= shape->batch * S; */
            /*@ loop invariant 0 <= s <= S;
              @ loop assigns s, entropy_ws[0 .. S - 1];
              @ loop variant S - s; */
            for (uint64_t s = 0; s < S; s++) {
                /*@ ghost entropy_token_elem(b, s, shape->batch, S, C); */
                /*@ assert (b * S + s + 1) * C <= tahq_elements(shape); */
                /*@ assert (b * S + s) * C + C == (b * S + s + 1) * C; */
                /*@ assert (b * S + s) * C <= 0x10000000000; */
                const uint64_t unit = b * S + s; /* (named for the proof) */
                /*@ assert unit == b * S + s && unit * C <= 0x10000000000; */
                entropy_ws[s] = tahq_entropy(x + unit * C, T, G);
            }
            n_low += select_low(entropy_ws, S, low, key_ws, map, b * S);
        }
    } else if (cfg->alloc == TAHQ_ALLOC_TILE) {
        /*@ ghost entropy_tile_setup(shape->batch, shape->seq_len, C, G); */
        const uint64_t rows = (uint64_t)shape->batch * shape->seq_len;
        const uint64_t low = tahq_low_count(T, cfg->hi_permille);
        /* (the product with C first: once T * G == C is known, Qed rewrites C) */
        /*@ assert rows == tahq_rows(shape) && rows * C == tahq_elements(shape) <= 0x10000000000; */
        /*@ assert T == tahq_tpr(cfg, shape) && T * G == C; */
        /*@ assert tahq_map_bits(cfg, shape) == rows * T; */
        /*@ loop invariant 0 <= r <= rows && n_low == r * low;
          @ loop assigns r, n_low, entropy_ws[0 .. T - 1], key_ws[0 .. T - 1],
          @   map[0 .. (tahq_map_bits(cfg, shape) + 7) / 8 - 1];
          @ loop variant rows - r; */
        for (uint64_t r = 0; r < rows; r++) {
            /*@ ghost entropy_tile_step(r, rows, T, C, G, low); */
            /*@ assert (r + 1) * T <= rows * T; */
            /*@ loop invariant 0 <= t <= T;
              @ loop assigns t, entropy_ws[0 .. T - 1];
              @ loop variant T - t; */
            for (uint32_t t = 0; t < T; t++) {
                /*@ ghost entropy_tile_elem(t, T, G); */
                /*@ assert r * C + (t + 1) * G <= tahq_elements(shape); */
                entropy_ws[t] = tahq_entropy(x + r * C + (uint64_t)t * G, 1, G);
            }
            n_low += select_low(entropy_ws, T, low, key_ws, map, r * T);
        }
    }
    return n_low;
}

/*@ ghost
  /@ requires k <= 0xFFFFFFFF && i <= 0xFFFFFFFF;
   @ assigns \nothing;
   @ ensures (k * 0x100000000 + i) % 0x100000000 == i; @/
  static void entropy_key_index(uint64_t k, uint64_t i) { }
*/

/* keys[index] of a group: (rank << 32) + index (index < 2^32, so = | index). */
/*@ requires \valid(slot) && index <= 0xFFFFFFFF;
  @ assigns *slot;
  @ ensures *slot % 0x100000000 == index; */
static void put_key(uint64_t *slot, uint32_t rank, uint64_t index)
{
    const uint64_t high = (uint64_t)rank << 32;
    /*@ assert high == rank * 0x100000000; */
    /*@ ghost entropy_key_index(rank, index); */
    *slot = high + index;
}

/* Gain allocation (SPEC §4.3): per sequence, the low(S) tokens with the
 * smallest (gain key, row) get lo_bits. The keys come from gain.c; a tile
 * whose zero-point or scale overflows the metadata at either width stops the
 * ranking with TAHQ_ERR_RANGE. No key is computed when low(S) = 0. */
/*@ requires \valid_read(cfg) && \valid_read(shape) && tahq_config_ok(cfg) && tahq_shape_ok(cfg, shape);
  @ requires gain: cfg->alloc == TAHQ_ALLOC_GAIN;
  @ requires \valid_read(x + (0 .. tahq_elements(shape) - 1));
  @ requires finite_input: \forall integer i; 0 <= i < tahq_elements(shape) ==> tahq_mag(x[i]) < 0x5F800000;
  @ requires \valid(key_ws + (0 .. shape->seq_len - 1));
  @ requires \valid(map + (0 .. (tahq_rows(shape) + 7) / 8 - 1));
  @ requires \valid(n_low);
  @ requires \separated(key_ws + (0 .. shape->seq_len - 1), map + (0 .. (tahq_rows(shape) + 7) / 8 - 1),
  @                      n_low, cfg, shape);
  @ requires \separated(map + (0 .. (tahq_rows(shape) + 7) / 8 - 1), n_low, cfg, shape);
  @ requires \separated(n_low, cfg, shape);
  @ assigns key_ws[0 .. shape->seq_len - 1], map[0 .. (tahq_rows(shape) + 7) / 8 - 1], *n_low;
  @ ensures \result == TAHQ_OK || \result == TAHQ_ERR_RANGE;
  @ ensures n_low: \result == TAHQ_OK ==> *n_low == tahq_required_low(cfg, shape); */
tahq_status tahq_allocate_gain(const tahq_config *cfg, const tahq_shape *shape, const float *x,
                               uint64_t *key_ws, uint8_t *map, uint64_t *n_low)
{
    /*@ ghost entropy_defs(cfg, shape); */
    const uint32_t G = cfg->tile;
    const uint64_t C = shape->channels;
    const uint32_t T = (uint32_t)(C / G);
    const uint64_t S = shape->seq_len;
    const uint64_t low = tahq_low_count(S, cfg->hi_permille);
    uint64_t marked = 0;
    /*@ assert shape->batch * S * C == tahq_elements(shape) <= 0x10000000000; */
    /*@ assert T * G == C && 1 <= T; */
    if (low > 0) {
        /*@ loop invariant 0 <= b <= shape->batch && marked == b * low;
          @ loop assigns b, marked, key_ws[0 .. S - 1], map[0 .. (tahq_rows(shape) + 7) / 8 - 1];
          @ loop variant shape->batch - b; */
        for (uint64_t b = 0; b < shape->batch; b++) {
            /*@ ghost entropy_token_step(b, shape->batch, S, C, low); */
            /*@ assert (b + 1) * S <= shape->batch * S; */
            /*@ loop invariant 0 <= s <= S;
              @ loop invariant \forall integer j; 0 <= j < s ==> key_ws[j] % 0x100000000 == j;
              @ loop invariant tahq_keys_ok(key_ws, s, S);
              @ loop assigns s, key_ws[0 .. S - 1];
              @ loop variant S - s; */
            for (uint64_t s = 0; s < S; s++) {
                /*@ ghost entropy_token_elem(b, s, shape->batch, S, C); */
                /*@ assert (b * S + s + 1) * C <= tahq_elements(shape); */
                /*@ assert (b * S + s) * C + C == (b * S + s + 1) * C; */
                const uint64_t unit = b * S + s; /* (named for the proof) */
                /*@ assert unit == b * S + s && unit * C + C <= 0x10000000000; */
                uint32_t key = 0;
                const tahq_status st = tahq_token_gain_key(cfg, x + unit * C, T, unit * C, &key);
                if (st != TAHQ_OK)
                    return st;
                put_key(key_ws + s, key, s);
            }
            marked += mark_lowest(key_ws, S, low, map, b * S);
        }
    }
    *n_low = marked;
    return TAHQ_OK;
}
