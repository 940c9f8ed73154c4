/* SPDX-License-Identifier: MIT */
/* test_config_explain.c - tahq_config_explain: for a configuration with one
 * field out of range, the status equals tahq_check_config's and the text
 * names that field, its range and the value; a valid configuration gives
 * TAHQ_OK and ""; the text is cut to the buffer and always terminated. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tahq.h"
#include "tutil.h"

static void expect(const char *what, const tahq_config *cfg, tahq_status want_st,
                   const char *want_text)
{
    char buf[256];
    memset(buf, 'x', sizeof buf);
    tahq_status st = tahq_config_explain(cfg, buf, sizeof buf);
    CHECKF(st == want_st && st == tahq_check_config(cfg) && strcmp(buf, want_text) == 0,
           "%s: status %d (check_config %d, want %d), text '%s', want '%s'", what, (int)st,
           (int)tahq_check_config(cfg), (int)want_st, buf, want_text);
}

/* the field a case sets (to a double: every field's values fit one) */
typedef enum field {
    F_TILE,
    F_HI_BITS,
    F_LO_BITS,
    F_HI_PERMILLE,
    F_ALLOC,
    F_ROUNDING,
    F_META,
    F_TAU
} field;

static void set_field(tahq_config *c, field f, double v)
{
    switch (f) {
    case F_TILE:
        c->tile = (uint32_t)v;
        break;
    case F_HI_BITS:
        c->hi_bits = (uint32_t)v;
        break;
    case F_LO_BITS:
        c->lo_bits = (uint32_t)v;
        break;
    case F_HI_PERMILLE:
        c->hi_permille = (uint32_t)v;
        break;
    case F_ALLOC:
        c->alloc = (tahq_alloc)(int)v;
        break;
    case F_ROUNDING:
        c->rounding = (tahq_rounding)(int)v;
        break;
    case F_META:
        c->meta = (tahq_meta)(int)v;
        break;
    case F_TAU:
        c->tau = (float)v;
        break;
    }
}

int main(void)
{
    tahq_config base;
    tahq_config_default(&base);
    expect("default", &base, TAHQ_OK, "");

    /* one field off at a time */
    static const struct {
        field f;
        double value;
        const char *text;
    } cases[] = {
        {F_TILE, 48, "tile: must be a power of two 8..256, got 48"},
        {F_TILE, 4, "tile: must be a power of two 8..256, got 4"},
        {F_TILE, 512, "tile: must be a power of two 8..256, got 512"},
        {F_HI_BITS, 9, "hi_bits: must be 1..8, got 9"},
        {F_HI_BITS, 0, "hi_bits: must be 1..8, got 0"},
        {F_LO_BITS, 5, "lo_bits: must be 1..hi_bits (4), got 5"},
        {F_LO_BITS, 0, "lo_bits: must be 1..hi_bits (4), got 0"},
        {F_HI_PERMILLE, 1001, "hi_permille: must be 0..1000 (permille), got 1001"},
        {F_ALLOC, 4, "alloc: must be 0..3 (none, token, tile, gain), got 4"},
        {F_ROUNDING, 2, "rounding: must be 0..1 (nearest, stochastic), got 2"},
        {F_META, 3, "meta: must be 0..2 (fp16, bf16, fp32), got 3"},
        {F_TAU, -1.0, "tau: must be a number >= +0 or +inf, got -1"},
        {F_TAU, -0.0, "tau: must be a number >= +0 or +inf, got -0"},
        {F_TAU, NAN, "tau: must be a number >= +0 or +inf, got nan"},
        {F_TAU, INFINITY, ""},
    };
    tahq_config c;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        c = base;
        set_field(&c, cases[i].f, cases[i].value);
        expect(cases[i].text[0] ? cases[i].text : "valid", &c,
               cases[i].text[0] ? TAHQ_ERR_CONFIG : TAHQ_OK, cases[i].text);
    }
    /* two fields off: the first in tahq_check_config's order is named */
    c = base, c.tile = 48, c.hi_bits = 9;
    expect("tile and hi_bits", &c, TAHQ_ERR_CONFIG, "tile: must be a power of two 8..256, got 48");
    expect("NULL", NULL, TAHQ_ERR_NULL, "config: a NULL pointer, need a tahq_config");

    /* a short buffer gets the start of the text, terminated */
    char small[6];
    c = base, c.tile = 48;
    CHECKF(tahq_config_explain(&c, small, sizeof small) == TAHQ_ERR_CONFIG &&
               strcmp(small, "tile:") == 0,
           "short buffer: '%s'", small);
    /* no buffer: the status alone */
    CHECKF(tahq_config_explain(&c, NULL, 0) == TAHQ_ERR_CONFIG, "NULL buffer");
    return t_finish("config_explain", "every refused field named with its range and value");
}
