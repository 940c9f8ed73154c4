/* SPDX-License-Identifier: MIT */
/* conform_diff.c - where a candidate's format-1 message first differs from
 * the expected one, named by field (ref/SPEC.md §8): the header fields other
 * than the CRC, then the payload sections (precision map, gate flags,
 * zero-points, scales, codes, pivots) down to the element with both values,
 * then the length, and the CRC last. The CRC covers the whole message, so it
 * differs whenever anything else does; naming it first would hide the field
 * that is wrong. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "conform.h"
#include "tahq_core.h"
#include "golden_common.h"
#include "util.h"

/* The header's fields at the scalar core's offsets (SPEC §8.1), widths in
 * bytes. */
static const struct {
    unsigned off, size;
    const char *name;
} hdr_fields[] = {
    {TAHQ_HDR_MAGIC, 4, "header.magic"},
    {TAHQ_HDR_VERSION, 2, "header.version"},
    {TAHQ_HDR_HEADER_BYTES, 2, "header.header_bytes"},
    {TAHQ_HDR_TILE_LOG2, 1, "header.k"},
    {TAHQ_HDR_HI_BITS, 1, "header.hi_bits"},
    {TAHQ_HDR_LO_BITS, 1, "header.lo_bits"},
    {TAHQ_HDR_ALLOC, 1, "header.alloc"},
    {TAHQ_HDR_ROUNDING, 1, "header.rounding"},
    {TAHQ_HDR_META, 1, "header.meta"},
    {TAHQ_HDR_HI_PERMILLE, 2, "header.hi_permille"},
    {TAHQ_HDR_TAU, 4, "header.tau"},
    {TAHQ_HDR_BATCH, 4, "header.B"},
    {TAHQ_HDR_SEQ_LEN, 4, "header.S"},
    {TAHQ_HDR_CHANNELS, 4, "header.C"},
    {TAHQ_HDR_SEED, 8, "header.seed"},
    {TAHQ_HDR_N_LOW, 8, "header.n_low"},
    {TAHQ_HDR_N_FLAGGED, 8, "header.n_flagged"},
    {TAHQ_HDR_PAYLOAD_BYTES, 8, "header.payload_bytes"},
    {TAHQ_HDR_RESERVED, 4, "header.reserved"},
    {TAHQ_HDR_CRC, 4, "header.crc"},
};

/* A little-endian header field of 1, 2, 4 or 8 bytes. */
static uint64_t get_le(const uint8_t *p, unsigned n)
{
    switch (n) {
    case 1:
        return p[0];
    case 2:
        return tahq_get_u16(p);
    case 4:
        return tahq_get_u32(p);
    default:
        return tahq_get_u64(p);
    }
}

/* The b-bit field (b <= 32) starting at stream bit `bit` of the section at
 * byte `off` of m[len] (SPEC §8.3, LSB first). -1 if it is not all inside. */
static int get_bits(const uint8_t *m, size_t len, uint64_t off, uint64_t bit, uint32_t b,
                    uint32_t *v)
{
    uint64_t last = off + (bit + b - 1) / 8;
    if (b == 0 || b > 32 || last >= len)
        return -1;
    uint32_t r = 0;
    for (uint32_t j = 0; j < b; ++j) {
        uint64_t p = bit + j;
        r |= (uint32_t)((m[off + p / 8] >> (p % 8)) & 1u) << j;
    }
    *v = r;
    return 0;
}

/* "0.0123 (0x21c8)" for metadata value bits of the given type. */
static void meta_text(char *buf, size_t n, tahq_meta meta, const uint8_t *m, size_t len,
                      uint64_t off, uint32_t mb)
{
    if (off + mb > len) {
        snprintf(buf, n, "(past the end of the message)");
        return;
    }
    uint32_t bits = tahq_get_meta_bits(m + off, meta);
    snprintf(buf, n, "%.9g (0x%0*" PRIx32 ")", (double)tahq_meta_value(meta, bits), (int)(2 * mb),
             bits);
}

static void field_text(char *buf, size_t n, const uint8_t *m, size_t len, uint64_t off,
                       uint64_t bit, uint32_t b)
{
    uint32_t v;
    if (get_bits(m, len, off, bit, b, &v))
        snprintf(buf, n, "(past the end of the message)");
    else
        snprintf(buf, n, "%" PRIu32, v);
}

/* Bits of the candidate's own CRC: 1 if it is the CRC-32C of its bytes. */
static int own_crc_valid(const uint8_t *got, size_t glen)
{
    if (glen < TAHQ_HEADER_BYTES)
        return 0;
    uint32_t c = tahq_crc32c(0, got, TAHQ_HDR_CRC);
    c = tahq_crc32c(c, got + TAHQ_HEADER_BYTES, glen - TAHQ_HEADER_BYTES);
    return c == tahq_get_u32(got + TAHQ_HDR_CRC);
}

/* The element-level description of the first differing payload byte i
 * (bit j of it is the first differing bit). */
static void payload_element(const uint8_t *exp, size_t elen, const uint8_t *got, size_t glen,
                            size_t i, unsigned j, const char *section, int64_t tile, char *buf,
                            size_t n)
{
    tahq_header h;
    buf[0] = '\0';
    if (tahq_parse_header(exp, elen, &h) != TAHQ_OK)
        return;
    golden_layout L;
    golden_layout_of(&h, &L);
    char a[96], b[96];
    if (strcmp(section, "precision_map") == 0) {
        uint64_t q = (i - L.map_off) * 8 + j;
        const char *unit = cli_alloc_per_row(h.config.alloc) ? "row" : "tile";
        if (q >= L.map_bits) {
            snprintf(buf, n, "padding bit %" PRIu64 " after the map: expected 0, got 1",
                     q - L.map_bits);
        } else {
            int e = (exp[L.map_off + q / 8] >> (q % 8)) & 1;
            snprintf(buf, n, "%s %" PRIu64 ": expected %s, got %s", unit, q,
                     e ? "1 (low)" : "0 (high)", e ? "0 (high)" : "1 (low)");
        }
    } else if (strcmp(section, "gate_flags") == 0) {
        uint64_t q = (i - L.flags_off) * 8 + j;
        if (q >= L.N) {
            snprintf(buf, n, "padding bit %" PRIu64 " after the flags: expected 0, got 1", q - L.N);
        } else {
            int e = (exp[L.flags_off + q / 8] >> (q % 8)) & 1;
            snprintf(buf, n, "tile %" PRIu64 ": expected %s, got %s", q,
                     e ? "flagged" : "not flagged", e ? "not flagged" : "flagged");
        }
    } else if ((strcmp(section, "zero_points") == 0 || strcmp(section, "scales") == 0) &&
               tile >= 0) {
        uint64_t off = (section[0] == 'z' ? L.zp_off : L.sc_off) + (uint64_t)tile * L.mb;
        meta_text(a, sizeof a, h.config.meta, exp, elen, off, L.mb);
        meta_text(b, sizeof b, h.config.meta, got, glen, off, L.mb);
        snprintf(buf, n, "expected %s, got %s", a, b);
    } else if (strcmp(section, "codes") == 0 && tile >= 0) {
        uint64_t pos = L.codes_off;
        uint32_t w = h.config.hi_bits;
        for (uint64_t t = 0; t <= (uint64_t)tile; ++t) {
            w = golden_tile_is_low(exp, &h, &L, t) ? h.config.lo_bits : h.config.hi_bits;
            if (t < (uint64_t)tile)
                pos += (uint64_t)L.G * w / 8;
        }
        uint64_t q = (i - pos) * 8 + j, e = q / w;
        field_text(a, sizeof a, exp, elen, pos, e * w, w);
        field_text(b, sizeof b, got, glen, pos, e * w, w);
        snprintf(buf, n, "element %" PRIu64 ": expected code %s, got %s", e, a, b);
    } else if (strcmp(section, "pivots") == 0) {
        uint64_t q = (i - L.piv_off) * 8 + j, p = q / L.k;
        if (p >= h.n_flagged || tile < 0) {
            snprintf(buf, n, "padding bits after the pivots: expected 0");
        } else {
            field_text(a, sizeof a, exp, elen, L.piv_off, p * L.k, L.k);
            field_text(b, sizeof b, got, glen, L.piv_off, p * L.k, L.k);
            snprintf(buf, n, "expected pivot %s, got %s", a, b);
        }
    }
}

int conform_diff_message(const uint8_t *exp, size_t elen, const uint8_t *got, size_t glen,
                         char *detail, size_t n, const char **field, int64_t *tile)
{
    *tile = -1;
    *field = NULL;
    if (elen == glen && memcmp(exp, got, elen) == 0) {
        snprintf(detail, n, "%zu bytes identical", elen);
        return 1;
    }
    size_t m = elen < glen ? elen : glen;
    if (elen < TAHQ_HEADER_BYTES) {
        /* not a message (a damaged set): bytes only */
        size_t i = 0;
        while (i < m && exp[i] == got[i])
            ++i;
        *field = "length";
        if (i < m)
            snprintf(detail, n,
                     "first difference at byte %zu: expected 0x%02x, got 0x%02x (the "
                     "expected message is shorter than a header)",
                     i, exp[i], got[i]);
        else
            snprintf(detail, n, "length: expected %zu bytes, got %zu", elen, glen);
        return 0;
    }
    size_t hend = m < TAHQ_HDR_CRC ? m : TAHQ_HDR_CRC;
    size_t i = 0;
    while (i < hend && exp[i] == got[i])
        ++i;
    int crc_differs =
        m < TAHQ_HEADER_BYTES || memcmp(exp + TAHQ_HDR_CRC, got + TAHQ_HDR_CRC, 4) != 0;
    char crc_note[160] = "";
    if (glen >= TAHQ_HEADER_BYTES && elen >= TAHQ_HEADER_BYTES) {
        int own = own_crc_valid(got, glen);
        if (crc_differs)
            snprintf(crc_note, sizeof crc_note, "; header.crc differs too (the candidate's CRC %s)",
                     own ? "is right over its own bytes" : "does not match its own bytes");
        else if (!own)
            snprintf(crc_note, sizeof crc_note,
                     "; header.crc is the expected one, which does not match the candidate's "
                     "bytes");
    }
    if (i < hend) {
        /* a header field before the CRC */
        size_t f = 0;
        while (f + 1 < sizeof hdr_fields / sizeof hdr_fields[0] &&
               i >= hdr_fields[f].off + hdr_fields[f].size)
            ++f;
        unsigned fo = hdr_fields[f].off, fs = hdr_fields[f].size;
        char ev[64], gv[64];
        snprintf(ev, sizeof ev, "%" PRIu64, get_le(exp + fo, fs));
        if (fo + fs <= glen)
            snprintf(gv, sizeof gv, "%" PRIu64, get_le(got + fo, fs));
        else
            snprintf(gv, sizeof gv, "(past the end of the message)");
        *field = hdr_fields[f].name;
        snprintf(detail, n,
                 "first difference at byte %zu: expected 0x%02x, got 0x%02x, in %s (byte %u of "
                 "%u): expected %s, got %s%s%s",
                 i, exp[i], got[i], hdr_fields[f].name, (unsigned)(i - fo), fs, ev, gv,
                 elen != glen ? "; lengths differ" : "", crc_note);
        return 0;
    }
    /* the payload */
    for (i = TAHQ_HEADER_BYTES; i < m && exp[i] == got[i]; ++i)
        ;
    if (i < m) {
        size_t ndiff = 0;
        for (size_t k = i; k < m; ++k)
            ndiff += exp[k] != got[k];
        unsigned j = 0;
        while (j < 7 && !(((exp[i] ^ got[i]) >> j) & 1))
            ++j;
        char where[256], elem[320];
        const char *section = "payload";
        golden_locate(exp, elen, i, where, sizeof where, &section, tile);
        payload_element(exp, elen, got, glen, i, j, section, *tile, elem, sizeof elem);
        *field = section;
        snprintf(detail, n,
                 "first difference at byte %zu: expected 0x%02x, got 0x%02x, in %s%s%s; %zu of "
                 "%zu common payload bytes differ%s%s",
                 i, exp[i], got[i], where, elem[0] ? ": " : "", elem, ndiff, m - TAHQ_HEADER_BYTES,
                 elen != glen ? "; lengths differ" : "", crc_note);
        return 0;
    }
    if (elen != glen) {
        *field = "length";
        snprintf(detail, n, "length: expected %zu bytes, got %zu (the first %zu bytes agree%s)%s",
                 elen, glen, m, m > TAHQ_HDR_CRC ? ", the CRC aside" : "", crc_note);
        return 0;
    }
    /* everything but the CRC is identical */
    *field = "header.crc";
    size_t c = TAHQ_HDR_CRC;
    while (c < TAHQ_HDR_CRC + 3 && exp[c] == got[c])
        ++c;
    snprintf(detail, n,
             "first difference at byte %zu: expected 0x%02x, got 0x%02x, in header.crc: "
             "expected 0x%08" PRIx64 ", got 0x%08" PRIx64 "; every other byte is identical "
             "(the candidate's CRC %s)",
             c, exp[c], got[c], get_le(exp + TAHQ_HDR_CRC, 4), get_le(got + TAHQ_HDR_CRC, 4),
             own_crc_valid(got, glen) ? "is right over its own bytes"
                                      : "does not match its own bytes");
    return 0;
}
