/* test_config_explain.c - tahq_config_explain: for a configuration with one
 * field out of range, the status equals tahq_check_config's and the text
 * names that field, its range and the value; a valid configuration gives
 * TAHQ_OK and ""; the text is cut to the buffer and always terminated. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tahq.h"

static int failures;

static void expect(const char *what, const tahq_config *cfg, tahq_status want_st,
                   const char *want_text)
{
    char buf[256];
    memset(buf, 'x', sizeof buf);
    tahq_status st = tahq_config_explain(cfg, buf, sizeof buf);
    if (st != want_st || st != tahq_check_config(cfg) || strcmp(buf, want_text) != 0) {
        fprintf(stderr, "FAIL %s: status %d (check_config %d, want %d), text '%s', want '%s'\n",
                what, (int)st, (int)tahq_check_config(cfg), (int)want_st, buf, want_text);
        failures++;
    }
}

int main(void)
{
    tahq_config base;
    tahq_config_default(&base);
    expect("default", &base, TAHQ_OK, "");

    tahq_config c;
    c = base, c.tile = 48;
    expect("tile 48", &c, TAHQ_ERR_CONFIG, "tile: must be a power of two 8..256, got 48");
    c = base, c.tile = 4;
    expect("tile 4", &c, TAHQ_ERR_CONFIG, "tile: must be a power of two 8..256, got 4");
    c = base, c.tile = 512;
    expect("tile 512", &c, TAHQ_ERR_CONFIG, "tile: must be a power of two 8..256, got 512");
    c = base, c.hi_bits = 9;
    expect("hi_bits 9", &c, TAHQ_ERR_CONFIG, "hi_bits: must be 1..8, got 9");
    c = base, c.hi_bits = 0;
    expect("hi_bits 0", &c, TAHQ_ERR_CONFIG, "hi_bits: must be 1..8, got 0");
    c = base, c.lo_bits = 5;
    expect("lo_bits 5", &c, TAHQ_ERR_CONFIG, "lo_bits: must be 1..hi_bits (4), got 5");
    c = base, c.lo_bits = 0;
    expect("lo_bits 0", &c, TAHQ_ERR_CONFIG, "lo_bits: must be 1..hi_bits (4), got 0");
    c = base, c.hi_permille = 1001;
    expect("hi_permille", &c, TAHQ_ERR_CONFIG, "hi_permille: must be 0..1000 (permille), got 1001");
    c = base, c.alloc = (tahq_alloc)4;
    expect("alloc", &c, TAHQ_ERR_CONFIG, "alloc: must be 0..3 (none, token, tile, gain), got 4");
    c = base, c.rounding = (tahq_rounding)2;
    expect("rounding", &c, TAHQ_ERR_CONFIG, "rounding: must be 0..1 (nearest, stochastic), got 2");
    c = base, c.meta = (tahq_meta)3;
    expect("meta", &c, TAHQ_ERR_CONFIG, "meta: must be 0..2 (fp16, bf16, fp32), got 3");
    c = base, c.tau = -1.0f;
    expect("tau -1", &c, TAHQ_ERR_CONFIG, "tau: must be a number >= +0 or +inf, got -1");
    c = base, c.tau = -0.0f;
    expect("tau -0", &c, TAHQ_ERR_CONFIG, "tau: must be a number >= +0 or +inf, got -0");
    c = base, c.tau = NAN;
    expect("tau nan", &c, TAHQ_ERR_CONFIG, "tau: must be a number >= +0 or +inf, got nan");
    c = base, c.tau = INFINITY;
    expect("tau inf", &c, TAHQ_OK, "");
    /* two fields off: the first in tahq_check_config's order is named */
    c = base, c.tile = 48, c.hi_bits = 9;
    expect("tile and hi_bits", &c, TAHQ_ERR_CONFIG, "tile: must be a power of two 8..256, got 48");
    expect("NULL", NULL, TAHQ_ERR_NULL, "config: a NULL pointer, need a tahq_config");

    /* a short buffer gets the start of the text, terminated */
    char small[6];
    c = base, c.tile = 48;
    if (tahq_config_explain(&c, small, sizeof small) != TAHQ_ERR_CONFIG || strcmp(small, "tile:") != 0) {
        fprintf(stderr, "FAIL short buffer: '%s'\n", small);
        failures++;
    }
    /* no buffer: the status alone */
    if (tahq_config_explain(&c, NULL, 0) != TAHQ_ERR_CONFIG) {
        fprintf(stderr, "FAIL NULL buffer\n");
        failures++;
    }
    if (failures)
        return 1;
    printf("config_explain: every refused field named with its range and value\n");
    return 0;
}
