/* SPDX-License-Identifier: MIT */ /* format.c - CRC-32C, header layout and payload sizes (SPEC §2.6, §8). */
#include "internal.h"

/* Reflected CRC-32C table for polynomial 0x82F63B78 (byte at a time). */
static const uint32_t crc32c_table[256] = {
    0x00000000u, 0xF26B8303u, 0xE13B70F7u, 0x1350F3F4u, 0xC79A971Fu, 0x35F1141Cu, 0x26A1E7E8u,
    0xD4CA64EBu, 0x8AD958CFu, 0x78B2DBCCu, 0x6BE22838u, 0x9989AB3Bu, 0x4D43CFD0u, 0xBF284CD3u,
    0xAC78BF27u, 0x5E133C24u, 0x105EC76Fu, 0xE235446Cu, 0xF165B798u, 0x030E349Bu, 0xD7C45070u,
    0x25AFD373u, 0x36FF2087u, 0xC494A384u, 0x9A879FA0u, 0x68EC1CA3u, 0x7BBCEF57u, 0x89D76C54u,
    0x5D1D08BFu, 0xAF768BBCu, 0xBC267848u, 0x4E4DFB4Bu, 0x20BD8EDEu, 0xD2D60DDDu, 0xC186FE29u,
    0x33ED7D2Au, 0xE72719C1u, 0x154C9AC2u, 0x061C6936u, 0xF477EA35u, 0xAA64D611u, 0x580F5512u,
    0x4B5FA6E6u, 0xB93425E5u, 0x6DFE410Eu, 0x9F95C20Du, 0x8CC531F9u, 0x7EAEB2FAu, 0x30E349B1u,
    0xC288CAB2u, 0xD1D83946u, 0x23B3BA45u, 0xF779DEAEu, 0x05125DADu, 0x1642AE59u, 0xE4292D5Au,
    0xBA3A117Eu, 0x4851927Du, 0x5B016189u, 0xA96AE28Au, 0x7DA08661u, 0x8FCB0562u, 0x9C9BF696u,
    0x6EF07595u, 0x417B1DBCu, 0xB3109EBFu, 0xA0406D4Bu, 0x522BEE48u, 0x86E18AA3u, 0x748A09A0u,
    0x67DAFA54u, 0x95B17957u, 0xCBA24573u, 0x39C9C670u, 0x2A993584u, 0xD8F2B687u, 0x0C38D26Cu,
    0xFE53516Fu, 0xED03A29Bu, 0x1F682198u, 0x5125DAD3u, 0xA34E59D0u, 0xB01EAA24u, 0x42752927u,
    0x96BF4DCCu, 0x64D4CECFu, 0x77843D3Bu, 0x85EFBE38u, 0xDBFC821Cu, 0x2997011Fu, 0x3AC7F2EBu,
    0xC8AC71E8u, 0x1C661503u, 0xEE0D9600u, 0xFD5D65F4u, 0x0F36E6F7u, 0x61C69362u, 0x93AD1061u,
    0x80FDE395u, 0x72966096u, 0xA65C047Du, 0x5437877Eu, 0x4767748Au, 0xB50CF789u, 0xEB1FCBADu,
    0x197448AEu, 0x0A24BB5Au, 0xF84F3859u, 0x2C855CB2u, 0xDEEEDFB1u, 0xCDBE2C45u, 0x3FD5AF46u,
    0x7198540Du, 0x83F3D70Eu, 0x90A324FAu, 0x62C8A7F9u, 0xB602C312u, 0x44694011u, 0x5739B3E5u,
    0xA55230E6u, 0xFB410CC2u, 0x092A8FC1u, 0x1A7A7C35u, 0xE811FF36u, 0x3CDB9BDDu, 0xCEB018DEu,
    0xDDE0EB2Au, 0x2F8B6829u, 0x82F63B78u, 0x709DB87Bu, 0x63CD4B8Fu, 0x91A6C88Cu, 0x456CAC67u,
    0xB7072F64u, 0xA457DC90u, 0x563C5F93u, 0x082F63B7u, 0xFA44E0B4u, 0xE9141340u, 0x1B7F9043u,
    0xCFB5F4A8u, 0x3DDE77ABu, 0x2E8E845Fu, 0xDCE5075Cu, 0x92A8FC17u, 0x60C37F14u, 0x73938CE0u,
    0x81F80FE3u, 0x55326B08u, 0xA759E80Bu, 0xB4091BFFu, 0x466298FCu, 0x1871A4D8u, 0xEA1A27DBu,
    0xF94AD42Fu, 0x0B21572Cu, 0xDFEB33C7u, 0x2D80B0C4u, 0x3ED04330u, 0xCCBBC033u, 0xA24BB5A6u,
    0x502036A5u, 0x4370C551u, 0xB11B4652u, 0x65D122B9u, 0x97BAA1BAu, 0x84EA524Eu, 0x7681D14Du,
    0x2892ED69u, 0xDAF96E6Au, 0xC9A99D9Eu, 0x3BC21E9Du, 0xEF087A76u, 0x1D63F975u, 0x0E330A81u,
    0xFC588982u, 0xB21572C9u, 0x407EF1CAu, 0x532E023Eu, 0xA145813Du, 0x758FE5D6u, 0x87E466D5u,
    0x94B49521u, 0x66DF1622u, 0x38CC2A06u, 0xCAA7A905u, 0xD9F75AF1u, 0x2B9CD9F2u, 0xFF56BD19u,
    0x0D3D3E1Au, 0x1E6DCDEEu, 0xEC064EEDu, 0xC38D26C4u, 0x31E6A5C7u, 0x22B65633u, 0xD0DDD530u,
    0x0417B1DBu, 0xF67C32D8u, 0xE52CC12Cu, 0x1747422Fu, 0x49547E0Bu, 0xBB3FFD08u, 0xA86F0EFCu,
    0x5A048DFFu, 0x8ECEE914u, 0x7CA56A17u, 0x6FF599E3u, 0x9D9E1AE0u, 0xD3D3E1ABu, 0x21B862A8u,
    0x32E8915Cu, 0xC083125Fu, 0x144976B4u, 0xE622F5B7u, 0xF5720643u, 0x07198540u, 0x590AB964u,
    0xAB613A67u, 0xB831C993u, 0x4A5A4A90u, 0x9E902E7Bu, 0x6CFBAD78u, 0x7FAB5E8Cu, 0x8DC0DD8Fu,
    0xE330A81Au, 0x115B2B19u, 0x020BD8EDu, 0xF0605BEEu, 0x24AA3F05u, 0xD6C1BC06u, 0xC5914FF2u,
    0x37FACCF1u, 0x69E9F0D5u, 0x9B8273D6u, 0x88D28022u, 0x7AB90321u, 0xAE7367CAu, 0x5C18E4C9u,
    0x4F48173Du, 0xBD23943Eu, 0xF36E6F75u, 0x0105EC76u, 0x12551F82u, 0xE03E9C81u, 0x34F4F86Au,
    0xC69F7B69u, 0xD5CF889Du, 0x27A40B9Eu, 0x79B737BAu, 0x8BDCB4B9u, 0x988C474Du, 0x6AE7C44Eu,
    0xBE2DA0A5u, 0x4C4623A6u, 0x5F16D052u, 0xAD7D5351u,
};

/* Ghost lemma functions, as in internal.h (the two shared ones are defined
 * here, their contracts are there). */
/*@ ghost void tahq_mul_mono(uint64_t a, uint64_t b, uint64_t c) { } */
/*@ ghost
  /@ requires hp <= 1000;
   @ assigns \nothing;
   @ ensures 0 <= tahq_low(n, hp) <= n;
   @ ensures c * tahq_low(n, hp) <= c * n; @/
  static void format_low_mono(uint64_t c, uint64_t n, uint32_t hp) { }
*/
/*@ ghost
  /@ requires 0 < b;
   @ assigns \nothing;
   @ ensures a <= m / b <==> a * b <= m; @/
  static void format_div_le(uint64_t a, uint64_t m, uint64_t b) { }
*/

/* One definition of SPEC §8.2 unfolded per ghost function: the provers find
 * each in a small goal but lose their way when a goal needs several. */
/*@ ghost
  /@ requires zo == tahq_zero_off(cfg, shape) && nt == tahq_ntiles(cfg, shape);
   @ requires ms == tahq_meta_size(cfg);
   @ assigns \nothing;
   @ ensures tahq_code_off(cfg, shape) == zo + 2 * (nt * ms); @/
  static void format_code_off_of(const tahq_config *cfg, const tahq_shape *shape, uint64_t zo,
                                 uint64_t nt, uint64_t ms) { }
*/
/*@ ghost
  /@ requires \valid_read(cfg) && nt == tahq_ntiles(cfg, shape);
   @ assigns \nothing;
   @ ensures low_tiles: tahq_low_tiles(cfg, shape, n_low) ==
   @   (tahq_per_row(cfg->alloc) ? n_low * (shape->channels / cfg->tile) : n_low);
   @ ensures code_bytes: tahq_code_bytes(cfg, shape, n_low) ==
   @   ((nt - tahq_low_tiles(cfg, shape, n_low)) * cfg->hi_bits +
   @    tahq_low_tiles(cfg, shape, n_low) * cfg->lo_bits) * (cfg->tile / 8); @/
  static void format_code_bytes_of(const tahq_config *cfg, const tahq_shape *shape,
                                   uint64_t n_low, uint64_t nt)
  {
    /@ assert tahq_tpr(cfg, shape) == shape->channels / cfg->tile; @/
  }
*/
/*@ ghost
  /@ requires co == tahq_code_off(cfg, shape) && cb == tahq_code_bytes(cfg, shape, n_low);
   @ assigns \nothing;
   @ ensures tahq_pivot_off(cfg, shape, n_low) == co + cb; @/
  static void format_pivot_off_of(const tahq_config *cfg, const tahq_shape *shape, uint64_t n_low,
                                  uint64_t co, uint64_t cb) { }
*/
/*@ ghost void tahq_payload_of(const tahq_config *cfg, const tahq_shape *shape, uint64_t n_low,
                               uint64_t n_flagged, uint64_t po, uint32_t lg) { } */

/*@ ghost
  /@ requires \valid_read(cfg);
   @ requires g == cfg->tile && hi == cfg->hi_bits && lo == cfg->lo_bits;
   @ requires alloc == cfg->alloc && meta == cfg->meta;
   @ requires batch == shape->batch && seq == shape->seq_len && ch == shape->channels;
   @ requires lay.tile_log2 == tahq_lg(g);
   @ requires lay.rows == batch * seq;
   @ requires lay.tiles_per_row == ch / g;
   @ requires lay.n_tiles == batch * seq * (ch / g);
   @ requires lay.map_bits == (tahq_per_row(alloc) ? batch * seq :
   @                            alloc == TAHQ_ALLOC_TILE ? batch * seq * (ch / g) : 0);
   @ requires lay.map_bytes == (lay.map_bits + 7) / 8;
   @ requires lay.flag_bytes == (lay.n_tiles + 7) / 8;
   @ requires lay.meta_bytes == (meta == TAHQ_META_FP32 ? 4 : 2);
   @ requires lay.zero_off == lay.map_bytes + lay.flag_bytes;
   @ requires lay.scale_off == lay.zero_off + lay.n_tiles * lay.meta_bytes;
   @ requires lay.code_off == lay.zero_off + 2 * (lay.n_tiles * lay.meta_bytes);
   @ requires lay.code_bytes ==
   @   ((lay.n_tiles - (tahq_per_row(alloc) ? n_low * (ch / g) : n_low)) * hi +
   @    (tahq_per_row(alloc) ? n_low * (ch / g) : n_low) * lo) * (g / 8);
   @ requires lay.pivot_off == lay.code_off + lay.code_bytes;
   @ requires lay.pivot_bytes == (n_flagged * lay.tile_log2 + 7) / 8;
   @ requires lay.payload_bytes == lay.pivot_off + lay.pivot_bytes;
   @ assigns \nothing;
   @ ensures lay.tile_log2 == tahq_lg(cfg->tile);
   @ ensures lay.rows == tahq_rows(shape);
   @ ensures lay.tiles_per_row == tahq_tpr(cfg, shape);
   @ ensures lay.n_tiles == tahq_ntiles(cfg, shape);
   @ ensures lay.map_bits == tahq_map_bits(cfg, shape);
   @ ensures lay.map_bytes == (lay.map_bits + 7) / 8;
   @ ensures lay.flag_bytes == (lay.n_tiles + 7) / 8;
   @ ensures lay.meta_bytes == tahq_meta_size(cfg);
   @ ensures lay.zero_off == tahq_zero_off(cfg, shape);
   @ ensures lay.scale_off == lay.zero_off + lay.n_tiles * lay.meta_bytes;
   @ ensures lay.code_off == tahq_code_off(cfg, shape);
   @ ensures lay.code_bytes == tahq_code_bytes(cfg, shape, n_low);
   @ ensures lay.pivot_off == tahq_pivot_off(cfg, shape, n_low);
   @ ensures lay.pivot_bytes == (n_flagged * lay.tile_log2 + 7) / 8;
   @ ensures lay.payload_bytes == tahq_payload(cfg, shape, n_low, n_flagged); @/
  static void format_layout_of_fields(tahq_layout lay, const tahq_config *cfg,
                                      const tahq_shape *shape, uint32_t g, uint32_t hi,
                                      uint32_t lo, tahq_alloc alloc, tahq_meta meta,
                                      uint32_t batch, uint32_t seq, uint32_t ch,
                                      uint64_t n_low, uint64_t n_flagged)
  {
    /@ assert lay.n_tiles == tahq_ntiles(cfg, shape); @/
    /@ assert lay.meta_bytes == tahq_meta_size(cfg); @/
    /@ assert lay.zero_off == tahq_zero_off(cfg, shape); @/
    format_code_off_of(cfg, shape, lay.zero_off, lay.n_tiles, lay.meta_bytes);
    /@ assert lay.code_off == tahq_code_off(cfg, shape); @/
    format_code_bytes_of(cfg, shape, n_low, lay.n_tiles);
    if (tahq_per_row(alloc)) {
      /@ assert tahq_low_tiles(cfg, shape, n_low) == n_low * (ch / g); @/
      /@ assert lay.code_bytes ==
       @   ((lay.n_tiles - tahq_low_tiles(cfg, shape, n_low)) * hi +
       @    tahq_low_tiles(cfg, shape, n_low) * lo) * (g / 8); @/
    } else {
      /@ assert tahq_low_tiles(cfg, shape, n_low) == n_low; @/
      /@ assert lay.code_bytes ==
       @   ((lay.n_tiles - tahq_low_tiles(cfg, shape, n_low)) * hi +
       @    tahq_low_tiles(cfg, shape, n_low) * lo) * (g / 8); @/
    }
    /@ assert lay.code_bytes == tahq_code_bytes(cfg, shape, n_low); @/
    format_pivot_off_of(cfg, shape, n_low, lay.code_off, lay.code_bytes);
    /@ assert lay.pivot_off == tahq_pivot_off(cfg, shape, n_low); @/
    tahq_payload_of(cfg, shape, n_low, n_flagged, lay.pivot_off, lay.tile_log2);
  }
*/

/*@ ghost
  /@ requires lay.tile_log2 == tahq_lg(cfg->tile);
   @ requires lay.rows == tahq_rows(shape);
   @ requires lay.tiles_per_row == tahq_tpr(cfg, shape);
   @ requires lay.n_tiles == tahq_ntiles(cfg, shape);
   @ requires lay.map_bits == tahq_map_bits(cfg, shape);
   @ requires lay.map_bytes == (lay.map_bits + 7) / 8;
   @ requires lay.flag_bytes == (lay.n_tiles + 7) / 8;
   @ requires lay.meta_bytes == tahq_meta_size(cfg);
   @ requires lay.zero_off == tahq_zero_off(cfg, shape);
   @ requires lay.scale_off == lay.zero_off + lay.n_tiles * lay.meta_bytes;
   @ requires lay.code_off == tahq_code_off(cfg, shape);
   @ requires lay.code_bytes == tahq_code_bytes(cfg, shape, n_low);
   @ requires lay.pivot_off == tahq_pivot_off(cfg, shape, n_low);
   @ requires lay.pivot_bytes == (n_flagged * lay.tile_log2 + 7) / 8;
   @ requires lay.payload_bytes == tahq_payload(cfg, shape, n_low, n_flagged);
   @ assigns \nothing;
   @ ensures tahq_layout_ok(lay, cfg, shape, n_low, n_flagged); @/
  static void format_layout_intro(tahq_layout lay, const tahq_config *cfg, const tahq_shape *shape,
                                  uint64_t n_low, uint64_t n_flagged) { }
*/

/*@ requires \valid_read(data + (0 .. n - 1));
  @ assigns \nothing; */
static uint32_t crc32c_bytes(uint32_t c, const uint8_t *data, size_t n)
{
    /*@ loop invariant 0 <= i <= n;
      @ loop assigns i, c;
      @ loop variant n - i; */
    for (size_t i = 0; i < n; i++)
        c = crc32c_table[(c ^ data[i]) & 0xFFu] ^ (c >> 8);
    return c;
}

/*@ requires \valid_read(data + (0 .. n - 1));
  @ assigns \nothing; */
uint32_t tahq_crc32c(uint32_t crc, const uint8_t *data, size_t n)
{
    uint32_t c = ~crc;
#ifdef TAHQ_HAVE_CRC32C_SSE42
    if (tahq_cpu_crc32c(&c, data, n)) /* the SSE4.2 instruction, cpu/ref_accel.c */
        return ~c;
#endif
    return ~crc32c_bytes(c, data, n);
}

/*@ requires hi_permille <= 1000;
  @ assigns \nothing;
  @ ensures \result == tahq_low(n, hi_permille) && \result <= n; */
uint64_t tahq_low_count(uint64_t n, uint32_t hi_permille)
{
    /* floor(n*k/1000) with n = 1000q + r: q*k + floor(r*k/1000), exact and
     * free of overflow for every 64-bit n (q*k <= n, r*k < 10^6). */
    const uint64_t k = 1000u - hi_permille;
    /*@ assert (n / 1000) * k <= (n / 1000) * 1000 && (n % 1000) * k <= (n % 1000) * 1000; */
    /*@ assert n * k == (n / 1000) * k * 1000 + (n % 1000) * k; */
    return (n / 1000u) * k + (n % 1000u) * k / 1000u;
}

/*@ requires \valid(cfg);
  @ assigns *cfg; */
void tahq_config_default(tahq_config *cfg)
{
    cfg->tile = 64;
    cfg->hi_bits = 4;
    cfg->lo_bits = 3;
    cfg->hi_permille = 800;
    cfg->alloc = TAHQ_ALLOC_TOKEN;
    cfg->tau = 2.0f;
    cfg->rounding = TAHQ_ROUND_NEAREST_EVEN;
    cfg->seed = 0;
    cfg->meta = TAHQ_META_FP16;
}

/*@ requires \valid(cfg);
  @ assigns *cfg; */
void tahq_config_plain(tahq_config *cfg, uint32_t tile, uint32_t bits)
{
    tahq_config_default(cfg);
    cfg->tile = tile;
    cfg->hi_bits = bits;
    cfg->lo_bits = bits;
    cfg->hi_permille = 1000;
    cfg->alloc = TAHQ_ALLOC_NONE;
    cfg->tau = tahq_float_of(0x7F800000u);
}

/*@ requires cfg == \null || \valid_read(cfg);
  @ assigns \nothing;
  @ ensures \result == TAHQ_OK || \result == TAHQ_ERR_NULL || \result == TAHQ_ERR_CONFIG;
  @ ensures \result == TAHQ_OK <==> cfg != \null && tahq_config_ok(cfg); */
tahq_status tahq_check_config(const tahq_config *cfg)
{
    if (!cfg)
        return TAHQ_ERR_NULL;
    if (cfg->tile < TAHQ_TILE_MIN || cfg->tile > TAHQ_TILE_MAX || tahq_tile_log2(cfg->tile) == 0)
        return TAHQ_ERR_CONFIG;
    if (cfg->hi_bits < 1 || cfg->hi_bits > TAHQ_BITS_MAX || cfg->lo_bits < 1 ||
        cfg->lo_bits > cfg->hi_bits)
        return TAHQ_ERR_CONFIG;
    if (cfg->hi_permille > 1000)
        return TAHQ_ERR_CONFIG;
    if ((unsigned)cfg->alloc > TAHQ_ALLOC_GAIN || (unsigned)cfg->rounding > TAHQ_ROUND_STOCHASTIC ||
        (unsigned)cfg->meta > TAHQ_META_FP32)
        return TAHQ_ERR_CONFIG;
    uint32_t tau = tahq_bits_of(cfg->tau);
    if ((tau & 0x80000000u) || (tau & 0x7FFFFFFFu) > 0x7F800000u)
        return TAHQ_ERR_CONFIG;
    return TAHQ_OK;
}

/*@ requires cfg == \null || \valid_read(cfg);
  @ requires tile_nonzero: cfg != \null ==> cfg->tile != 0; // else channels % 0 (see proofs/README.md)
  @ requires shape == \null || \valid_read(shape);
  @ assigns \nothing;
  @ ensures \result == TAHQ_OK || \result == TAHQ_ERR_NULL || \result == TAHQ_ERR_SHAPE;
  @ ensures \result == TAHQ_OK ==> cfg != \null && shape != \null;
  @ ensures cfg != \null && 8 <= cfg->tile ==> (\result == TAHQ_OK <==> shape != \null && tahq_shape_ok(cfg, shape)); */
tahq_status tahq_check_shape(const tahq_config *cfg, const tahq_shape *shape)
{
    if (!cfg || !shape)
        return TAHQ_ERR_NULL;
    if (shape->batch == 0 || shape->seq_len == 0 || shape->channels < cfg->tile ||
        shape->channels % cfg->tile != 0)
        return TAHQ_ERR_SHAPE;
    uint64_t rows = (uint64_t)shape->batch * shape->seq_len; /* < 2^64 */
    /*@ ghost format_div_le(rows, TAHQ_MAX_ELEMENTS, shape->channels); */
    if (rows > TAHQ_MAX_ELEMENTS / shape->channels)
        return TAHQ_ERR_SHAPE;
    /*@ assert rows * shape->channels <= 0x10000000000; */
    return TAHQ_OK;
}

/*@ requires \valid_read(cfg) && \valid_read(shape);
  @ requires tahq_config_ok(cfg) && tahq_shape_ok(cfg, shape);
  @ assigns \nothing;
  @ ensures \result == tahq_required_low(cfg, shape);
  @ ensures tahq_per_row(cfg->alloc) ==> \result <= tahq_rows(shape);
  @ ensures \result <= tahq_ntiles(cfg, shape); */
uint64_t tahq_required_low_units(const tahq_config *cfg, const tahq_shape *shape)
{
    uint64_t rows = (uint64_t)shape->batch * shape->seq_len;
    /*@ assert rows * shape->channels <= 0x10000000000 && shape->channels / cfg->tile <= shape->channels; */
    /*@ ghost tahq_mul_mono(shape->channels / cfg->tile, shape->channels, rows); */
    /*@ ghost tahq_mul_mono(1, shape->seq_len, shape->batch); */
    /*@ ghost tahq_mul_mono(1, shape->channels / cfg->tile, rows); */
    /*@ ghost format_low_mono(shape->batch, shape->seq_len, cfg->hi_permille); */
    /*@ ghost format_low_mono(rows, shape->channels / cfg->tile, cfg->hi_permille); */
    /*@ assert rows * (shape->channels / cfg->tile) <= 0x10000000000 && shape->batch <= rows; */
    switch (cfg->alloc) {
    case TAHQ_ALLOC_TOKEN:
    case TAHQ_ALLOC_GAIN:
        return (uint64_t)shape->batch * tahq_low_count(shape->seq_len, cfg->hi_permille);
    case TAHQ_ALLOC_TILE:
        return rows * tahq_low_count(shape->channels / cfg->tile, cfg->hi_permille);
    default:
        return 0;
    }
}

/* The layout from the configuration and shape fields passed by value: its
 * proof is about numbers only, with no memory to keep track of. */
/*@ requires tahq_valid_tile(g) && 1 <= hi <= 8 && 1 <= lo <= hi;
  @ requires 0 <= alloc <= 3 && 0 <= meta <= 2;
  @ requires batch >= 1 && seq >= 1 && ch >= g && ch % g == 0 && batch * seq * ch <= 0x10000000000;
  @ requires n_low <= (tahq_per_row(alloc) ? batch * seq : batch * seq * (ch / g));
  @ requires n_flagged <= batch * seq * (ch / g);
  @ assigns \nothing;
  @ ensures \result.tile_log2 == tahq_lg(g);
  @ ensures \result.rows == batch * seq;
  @ ensures \result.tiles_per_row == ch / g && \result.tiles_per_row >= 1;
  @ ensures \result.n_tiles == batch * seq * (ch / g);
  @ ensures \result.n_tiles == \result.rows * \result.tiles_per_row;
  @ ensures \result.n_tiles * g == batch * seq * ch && \result.n_tiles * g <= 0x10000000000;
  @ ensures \result.map_bits == (tahq_per_row(alloc) ? batch * seq :
  @                           alloc == TAHQ_ALLOC_TILE ? batch * seq * (ch / g) : 0);
  @ ensures \result.map_bytes == (\result.map_bits + 7) / 8;
  @ ensures \result.flag_bytes == (\result.n_tiles + 7) / 8;
  @ ensures \result.meta_bytes == (meta == TAHQ_META_FP32 ? 4 : 2);
  @ ensures \result.zero_off == \result.map_bytes + \result.flag_bytes;
  @ ensures \result.scale_off == \result.zero_off + \result.n_tiles * \result.meta_bytes;
  @ ensures \result.code_off == \result.zero_off + 2 * (\result.n_tiles * \result.meta_bytes);
  @ ensures \result.code_bytes ==
  @   ((\result.n_tiles - (tahq_per_row(alloc) ? n_low * (ch / g) : n_low)) * hi +
  @    (tahq_per_row(alloc) ? n_low * (ch / g) : n_low) * lo) * (g / 8);
  @ ensures \result.pivot_off == \result.code_off + \result.code_bytes;
  @ ensures \result.pivot_bytes == (n_flagged * \result.tile_log2 + 7) / 8;
  @ ensures \result.payload_bytes == \result.pivot_off + \result.pivot_bytes;
  @ ensures \result.payload_bytes <= 0x10000000000000; */
static tahq_layout layout_from_fields(uint32_t g, uint32_t hi, uint32_t lo, tahq_alloc alloc,
                                      tahq_meta meta, uint32_t batch, uint32_t seq, uint32_t ch,
                                      uint64_t n_low, uint64_t n_flagged)
{
    const uint32_t tile_log2 = tahq_tile_log2(g);
    /*@ ghost tahq_mul_mono(batch, 0xFFFFFFFF, seq); */
    const uint64_t rows = (uint64_t)batch * seq;
    /*@ assert rows == batch * seq; */
    const uint64_t tiles_per_row = ch / (uint64_t)g;
    /*@ assert tiles_per_row == ch / g && tiles_per_row <= ch; */
    /*@ ghost tahq_mul_mono(tiles_per_row, ch, rows); */
    /*@ assert rows * tiles_per_row <= 0x10000000000; */
    const uint64_t n_tiles = rows * tiles_per_row;
    /*@ assert n_tiles == batch * seq * (ch / g); */
    /*@ assert tiles_per_row * g == ch; */
    /*@ ghost tahq_mul_mono(tiles_per_row * g, ch, rows); */
    /*@ assert n_tiles * g == rows * ch && n_tiles * g <= 0x10000000000; */
    const uint64_t map_bits = tahq_per_row(alloc) ? rows : alloc == TAHQ_ALLOC_TILE ? n_tiles : 0;
    const uint64_t map_bytes = (map_bits + 7) / 8;
    const uint64_t flag_bytes = (n_tiles + 7) / 8;
    const uint64_t meta_bytes = tahq_meta_bytes(meta);
    /*@ ghost if (tahq_per_row(alloc))
      @   tahq_mul_mono(n_low, rows, tiles_per_row); */
    /*@ assert tahq_per_row(alloc) ==> n_low * tiles_per_row <= n_tiles; */
    const uint64_t low_tiles = tahq_per_row(alloc) ? n_low * tiles_per_row : n_low;
    /*@ assert low_tiles <= n_tiles <= 0x10000000000; */
    const uint64_t high_tiles = n_tiles - low_tiles;
    /*@ ghost tahq_mul_mono(meta_bytes, 4, n_tiles); */
    /*@ assert n_tiles * meta_bytes <= 0x40000000000; */
    const uint64_t zero_off = map_bytes + flag_bytes;
    /*@ assert zero_off <= 0x10000000000; */
    const uint64_t scale_off = zero_off + n_tiles * meta_bytes;
    const uint64_t code_off = scale_off + n_tiles * meta_bytes;
    /*@ assert code_off <= 0x90000000000; */
    /*@ ghost tahq_mul_mono(hi, 8, high_tiles); */
    const uint64_t hb = high_tiles * hi;
    /*@ assert hb <= 0x80000000000; */
    /*@ ghost tahq_mul_mono(lo, 8, low_tiles); */
    const uint64_t lb = low_tiles * lo;
    /*@ assert lb <= 0x80000000000; */
    const uint64_t gb = g / 8u;
    /*@ assert gb == g / 8 && gb <= 32; */
    /*@ ghost tahq_mul_mono(hb + lb, 0x100000000000, gb); */
    const uint64_t code_bytes = (hb + lb) * gb;
    /*@ assert code_bytes <= 0x2000000000000; */
    const uint64_t pivot_off = code_off + code_bytes;
    /*@ ghost tahq_mul_mono(n_flagged, 0x10000000000, tile_log2); */
    /*@ assert n_flagged * tile_log2 <= 0x80000000000; */
    const uint64_t pivot_bytes = (n_flagged * tile_log2 + 7) / 8;
    const uint64_t payload_bytes = pivot_off + pivot_bytes;
    tahq_layout lay;
    lay.tile_log2 = tile_log2;
    lay.rows = rows;
    lay.tiles_per_row = tiles_per_row;
    lay.n_tiles = n_tiles;
    lay.map_bits = map_bits;
    lay.map_bytes = map_bytes;
    lay.flag_bytes = flag_bytes;
    lay.meta_bytes = meta_bytes;
    lay.zero_off = zero_off;
    lay.scale_off = scale_off;
    lay.code_off = code_off;
    lay.code_bytes = code_bytes;
    lay.pivot_off = pivot_off;
    lay.pivot_bytes = pivot_bytes;
    lay.payload_bytes = payload_bytes;
    return lay;
}

/* tahq_layout_wf from its conjuncts, for a configuration passed by value:
 * each conjunct is then a goal of its own at the call. */
/*@ ghost
  /@ requires tahq_valid_tile(c.tile) && 1 <= c.lo_bits <= c.hi_bits <= 8 &&
   @   0 <= c.alloc <= 3 && 0 <= c.meta <= 2;
   @ requires lay.tile_log2 == tahq_lg(c.tile) && lay.tiles_per_row >= 1;
   @ requires lay.n_tiles == lay.rows * lay.tiles_per_row && lay.n_tiles * c.tile <= 0x10000000000;
   @ requires lay.map_bits == (tahq_per_row(c.alloc) ? lay.rows :
   @                           c.alloc == TAHQ_ALLOC_TILE ? lay.n_tiles : 0);
   @ requires lay.map_bytes == (lay.map_bits + 7) / 8 && lay.flag_bytes == (lay.n_tiles + 7) / 8 &&
   @   lay.meta_bytes == (c.meta == TAHQ_META_FP32 ? 4 : 2);
   @ requires lay.zero_off == lay.map_bytes + lay.flag_bytes &&
   @   lay.scale_off == lay.zero_off + lay.n_tiles * lay.meta_bytes &&
   @   lay.code_off == lay.scale_off + lay.n_tiles * lay.meta_bytes;
   @ requires lay.pivot_off == lay.code_off + lay.code_bytes &&
   @   lay.payload_bytes == lay.pivot_off + lay.pivot_bytes &&
   @   lay.payload_bytes <= 0x10000000000000;
   @ assigns \nothing;
   @ ensures tahq_layout_wf(lay, c); @/
  static void format_layout_wf_intro(tahq_layout lay, tahq_config c) { }
*/

/*@ requires \valid_read(cfg) && \valid_read(shape);
  @ requires tahq_config_ok(cfg) && tahq_shape_ok(cfg, shape);
  @ requires n_low <= (tahq_per_row(cfg->alloc) ? tahq_rows(shape) : tahq_ntiles(cfg, shape));
  @ requires n_flagged <= tahq_ntiles(cfg, shape);
  @ assigns \nothing;
  @ ensures tahq_layout_ok(\result, cfg, shape, n_low, n_flagged);
  @ ensures tahq_layout_wf(\result, *cfg);
  @ ensures \result.n_tiles * cfg->tile == tahq_elements(shape);
  @ ensures \result.payload_bytes <= 0x10000000000000; */
tahq_layout tahq_layout_compute(const tahq_config *cfg, const tahq_shape *shape, uint64_t n_low,
                                uint64_t n_flagged)
{
    const uint32_t g = cfg->tile, hi = cfg->hi_bits, lo = cfg->lo_bits;
    const tahq_alloc alloc = cfg->alloc;
    const tahq_meta meta = cfg->meta;
    const uint32_t batch = shape->batch, seq = shape->seq_len, ch = shape->channels;
    const tahq_layout lay =
        layout_from_fields(g, hi, lo, alloc, meta, batch, seq, ch, n_low, n_flagged);
    /*@ assert w1: tahq_valid_tile(g) && 1 <= lo <= hi <= 8 && 0 <= alloc <= 3 && 0 <= meta <= 2; */
    /*@ assert w2: lay.tile_log2 == tahq_lg(g) && lay.tiles_per_row >= 1; */
    /*@ assert w3: lay.n_tiles == lay.rows * lay.tiles_per_row && lay.n_tiles * g <= 0x10000000000; */
    /*@ assert w4: lay.map_bits == (tahq_per_row(alloc) ? lay.rows :
      @                    alloc == TAHQ_ALLOC_TILE ? lay.n_tiles : 0); */
    /*@ assert w5: lay.map_bytes == (lay.map_bits + 7) / 8 && lay.flag_bytes == (lay.n_tiles + 7) / 8 &&
      @   lay.meta_bytes == (meta == TAHQ_META_FP32 ? 4 : 2); */
    /*@ assert w6: lay.zero_off == lay.map_bytes + lay.flag_bytes &&
      @   lay.scale_off == lay.zero_off + lay.n_tiles * lay.meta_bytes &&
      @   lay.code_off == lay.scale_off + lay.n_tiles * lay.meta_bytes; */
    /*@ assert w7: lay.pivot_off == lay.code_off + lay.code_bytes &&
      @   lay.payload_bytes == lay.pivot_off + lay.pivot_bytes &&
      @   lay.payload_bytes <= 0x10000000000000; */
    /*@ ghost format_layout_of_fields(lay, cfg, shape, g, hi, lo, alloc, meta, batch, seq, ch,
      @                               n_low, n_flagged); */
    /*@ ghost format_layout_intro(lay, cfg, shape, n_low, n_flagged); */
    /*@ assert w8: cfg->tile == g && cfg->hi_bits == hi && cfg->lo_bits == lo &&
      @   cfg->alloc == alloc && cfg->meta == meta; */
    /*@ ghost format_layout_wf_intro(lay, *cfg); */
    return lay;
}

/*@ requires \valid_read(cfg) && tahq_config_ok(cfg) && \valid_read(shape) && \valid(dst + (0 .. 71));
  @ requires \separated(dst + (0 .. 71), cfg, shape);
  @ assigns dst[0 .. 71]; */
void tahq_header_write(uint8_t *dst, const tahq_config *cfg, const tahq_shape *shape,
                       uint64_t n_low, uint64_t n_flagged, uint64_t payload_bytes)
{
    /*@ loop invariant 0 <= i <= TAHQ_HEADER_BYTES;
      @ loop assigns i, dst[0 .. 71];
      @ loop variant TAHQ_HEADER_BYTES - i; */
    for (uint32_t i = 0; i < TAHQ_HEADER_BYTES; i++) /* (a memset) */
        dst[i] = 0;
    dst[0] = 'T'; /* TAHQ_MAGIC */
    dst[1] = 'A';
    dst[2] = 'H';
    dst[3] = 'Q';
    /* gain messages carry their own version (SPEC §8.1) */
    tahq_put_u16(dst + 4, (uint16_t)(cfg->alloc == TAHQ_ALLOC_GAIN ? TAHQ_GAIN_VERSION
                                                                   : TAHQ_FORMAT_VERSION));
    tahq_put_u16(dst + 6, (uint16_t)TAHQ_HEADER_BYTES);
    dst[8] = (uint8_t)tahq_tile_log2(cfg->tile);
    dst[9] = (uint8_t)cfg->hi_bits;
    dst[10] = (uint8_t)cfg->lo_bits;
    dst[11] = (uint8_t)cfg->alloc;
    dst[12] = (uint8_t)cfg->rounding;
    dst[13] = (uint8_t)cfg->meta;
    tahq_put_u16(dst + 14, (uint16_t)cfg->hi_permille);
    tahq_put_u32(dst + 16, tahq_bits_of(cfg->tau));
    tahq_put_u32(dst + 20, shape->batch);
    tahq_put_u32(dst + 24, shape->seq_len);
    tahq_put_u32(dst + 28, shape->channels);
    tahq_put_u64(dst + 32, cfg->seed);
    tahq_put_u64(dst + 40, n_low);
    tahq_put_u64(dst + 48, n_flagged);
    tahq_put_u64(dst + 56, payload_bytes);
}

/*@ requires \valid_read(msg + (0 .. TAHQ_HEADER_BYTES + payload_bytes - 1));
  @ requires payload_bytes <= SIZE_MAX;
  @ assigns \nothing; */
static uint32_t message_crc(const uint8_t *msg, uint64_t payload_bytes)
{
    uint32_t crc = tahq_crc32c(0, msg, 68);
    return tahq_crc32c(crc, msg + TAHQ_HEADER_BYTES, (size_t)payload_bytes);
}

/*@ requires \valid(msg + (0 .. TAHQ_HEADER_BYTES + payload_bytes - 1));
  @ requires payload_bytes <= SIZE_MAX;
  @ assigns msg[68 .. 71]; */
void tahq_header_seal(uint8_t *msg, uint64_t payload_bytes)
{
    tahq_put_u32(msg + 68, message_crc(msg, payload_bytes));
}

/*@ ghost
  /@ requires \valid_read(h);
   @ requires tahq_config_ok(&h->config) && tahq_shape_ok(&h->config, &h->shape);
   @ requires h->n_low == tahq_required_low(&h->config, &h->shape);
   @ requires h->n_low <= (tahq_per_row(h->config.alloc) ? tahq_rows(&h->shape) :
   @                       tahq_ntiles(&h->config, &h->shape));
   @ requires h->n_flagged <= tahq_ntiles(&h->config, &h->shape);
   @ requires h->payload_bytes == tahq_payload(&h->config, &h->shape, h->n_low, h->n_flagged);
   @ requires len == TAHQ_HEADER_BYTES + h->payload_bytes;
   @ assigns \nothing;
   @ ensures tahq_header_ok(h, len); @/
  static void format_header_intro(const tahq_header *h, size_t len) { }
*/

/* Fields of the header of a message that starts with the magic and the
 * version, read into *h and range-checked (SPEC §8.3); all but the CRC. */
/*@ requires len >= TAHQ_HEADER_BYTES && \valid_read(msg + (0 .. len - 1));
  @ requires \valid(h) && \separated(h, msg + (0 .. len - 1));
  @ assigns *h;
  @ ensures \result == TAHQ_OK ==> tahq_header_ok(h, len); */
static tahq_status parse_header_fields(const uint8_t *msg, size_t len, tahq_header *h)
{
    h->version = tahq_get_u16(msg + 4);
    if (msg[8] < 3 || msg[8] > 8 || msg[11] > TAHQ_ALLOC_GAIN || msg[12] > TAHQ_ROUND_STOCHASTIC ||
        msg[13] > TAHQ_META_FP32)
        return TAHQ_ERR_HEADER;
    /* alloc 3 if and only if version 3 (SPEC §8.1) */
    if ((msg[11] == TAHQ_ALLOC_GAIN) != (h->version == TAHQ_GAIN_VERSION))
        return TAHQ_ERR_HEADER;
    h->config.tile = 1u << msg[8];
    h->config.hi_bits = msg[9];
    h->config.lo_bits = msg[10];
    h->config.alloc = (tahq_alloc)msg[11];
    h->config.rounding = (tahq_rounding)msg[12];
    h->config.meta = (tahq_meta)msg[13];
    h->config.hi_permille = tahq_get_u16(msg + 14);
    h->config.tau = tahq_float_of(tahq_get_u32(msg + 16));
    h->config.seed = tahq_get_u64(msg + 32);
    h->shape.batch = tahq_get_u32(msg + 20);
    h->shape.seq_len = tahq_get_u32(msg + 24);
    h->shape.channels = tahq_get_u32(msg + 28);
    h->n_low = tahq_get_u64(msg + 40);
    h->n_flagged = tahq_get_u64(msg + 48);
    h->payload_bytes = tahq_get_u64(msg + 56);
    h->crc = tahq_get_u32(msg + 68);
    if (tahq_check_config(&h->config) != TAHQ_OK ||
        tahq_check_shape(&h->config, &h->shape) != TAHQ_OK)
        return TAHQ_ERR_HEADER;
    if (tahq_get_u32(msg + 64) != 0)
        return TAHQ_ERR_HEADER;
    if (h->n_low != tahq_required_low_units(&h->config, &h->shape))
        return TAHQ_ERR_HEADER;
    tahq_layout lay = tahq_layout_compute(&h->config, &h->shape, h->n_low, 0);
    if (h->n_flagged > lay.n_tiles)
        return TAHQ_ERR_HEADER;
    lay = tahq_layout_compute(&h->config, &h->shape, h->n_low, h->n_flagged);
    if (h->payload_bytes != lay.payload_bytes)
        return TAHQ_ERR_SIZE;
    if ((uint64_t)len - TAHQ_HEADER_BYTES < h->payload_bytes)
        return TAHQ_ERR_TRUNCATED;
    if ((uint64_t)len - TAHQ_HEADER_BYTES > h->payload_bytes)
        return TAHQ_ERR_SIZE;
    /*@ ghost format_header_intro(h, len); */
    return TAHQ_OK;
}

/*@ requires msg == \null || \valid_read(msg + (0 .. len - 1));
  @ requires hdr == \null || (\valid(hdr) && \separated(hdr, msg + (0 .. len - 1)));
  @ assigns *hdr;
  @ ensures \result == TAHQ_OK ==> tahq_header_ok(hdr, len); */
tahq_status tahq_parse_header_nocrc(const uint8_t *msg, size_t len, tahq_header *hdr)
{
    if (!msg || !hdr)
        return TAHQ_ERR_NULL;
    if (len < 4)
        return TAHQ_ERR_TRUNCATED;
    if (msg[0] != 'T' || msg[1] != 'A' || msg[2] != 'H' || msg[3] != 'Q') /* TAHQ_MAGIC */
        return TAHQ_ERR_MAGIC;
    if (len < 8)
        return TAHQ_ERR_TRUNCATED;
    const uint16_t version = tahq_get_u16(msg + 4);
    if ((version != TAHQ_FORMAT_VERSION && version != TAHQ_GAIN_VERSION) ||
        tahq_get_u16(msg + 6) != TAHQ_HEADER_BYTES)
        return TAHQ_ERR_VERSION;
    if (len < TAHQ_HEADER_BYTES)
        return TAHQ_ERR_TRUNCATED;
    /* The fields are checked in place, so that what the proof shows of them
     * holds of *hdr itself; a rejected message restores the caller's header. */
    const tahq_header saved = *hdr;
    tahq_status st = parse_header_fields(msg, len, hdr);
    if (st != TAHQ_OK)
        *hdr = saved;
    return st;
}

/* SPEC §8.4 steps 1-4: the header checks, then the CRC (the last check, so
 * a message with a wrong CRC and a bad field reports the field). */
/*@ requires msg == \null || \valid_read(msg + (0 .. len - 1));
  @ requires hdr == \null || (\valid(hdr) && \separated(hdr, msg + (0 .. len - 1)));
  @ assigns *hdr;
  @ ensures \result == TAHQ_OK ==> tahq_header_ok(hdr, len); */
tahq_status tahq_parse_header(const uint8_t *msg, size_t len, tahq_header *hdr)
{
    if (!msg || !hdr)
        return TAHQ_ERR_NULL;
    const tahq_header saved = *hdr;
    tahq_status st = tahq_parse_header_nocrc(msg, len, hdr);
    if (st != TAHQ_OK)
        return st;
    if (message_crc(msg, hdr->payload_bytes) != hdr->crc) {
        *hdr = saved;
        return TAHQ_ERR_CRC;
    }
    return TAHQ_OK;
}
