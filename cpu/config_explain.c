/* SPDX-License-Identifier: MIT */
/* config_explain.c - tahq_config_explain: which configuration field
 * tahq_check_config refuses, its allowed range and the value given.
 *
 * Outside ref/ on purpose: the proved reference keeps its one status code
 * per refusal (SPEC §3.3), and the text here is for people, not for the
 * format. The status returned is always tahq_check_config's, so the two
 * can never disagree about whether a configuration is valid; the field
 * checks below follow its order, so the field named is the first one it
 * refuses. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tahq.h"

static void say(char *buf, size_t n, const char *fmt, ...)
{
    if (!buf || n == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}

static int is_power_of_two(uint32_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

tahq_status tahq_config_explain(const tahq_config *cfg, char *buf, size_t n)
{
    say(buf, n, "%s", "");
    const tahq_status st = tahq_check_config(cfg);
    if (st == TAHQ_OK)
        return st;
    if (!cfg) {
        say(buf, n, "config: a NULL pointer, need a tahq_config");
        return st;
    }
    const unsigned alloc = (unsigned)cfg->alloc, rounding = (unsigned)cfg->rounding,
                   meta = (unsigned)cfg->meta;
    if (cfg->tile < TAHQ_TILE_MIN || cfg->tile > TAHQ_TILE_MAX || !is_power_of_two(cfg->tile))
        say(buf, n, "tile: must be a power of two %u..%u, got %u", TAHQ_TILE_MIN, TAHQ_TILE_MAX,
            cfg->tile);
    else if (cfg->hi_bits < 1 || cfg->hi_bits > TAHQ_BITS_MAX)
        say(buf, n, "hi_bits: must be 1..%u, got %u", TAHQ_BITS_MAX, cfg->hi_bits);
    else if (cfg->lo_bits < 1 || cfg->lo_bits > cfg->hi_bits)
        say(buf, n, "lo_bits: must be 1..hi_bits (%u), got %u", cfg->hi_bits, cfg->lo_bits);
    else if (cfg->hi_permille > 1000)
        say(buf, n, "hi_permille: must be 0..1000 (permille), got %u", cfg->hi_permille);
    else if (alloc > TAHQ_ALLOC_GAIN)
        say(buf, n, "alloc: must be 0..3 (none, token, tile, gain), got %u", alloc);
    else if (rounding > TAHQ_ROUND_STOCHASTIC)
        say(buf, n, "rounding: must be 0..1 (nearest, stochastic), got %u", rounding);
    else if (meta > TAHQ_META_FP32)
        say(buf, n, "meta: must be 0..2 (fp16, bf16, fp32), got %u", meta);
    else if (isnan(cfg->tau) || signbit(cfg->tau))
        /* -0 is refused too (SPEC §3.3: the sign bit must be clear) */
        say(buf, n, "tau: must be a number >= +0 or +inf, got %g", (double)cfg->tau);
    else
        /* unreachable while the checks above mirror tahq_check_config */
        say(buf, n, "configuration: %s", tahq_strerror(st));
    return st;
}
