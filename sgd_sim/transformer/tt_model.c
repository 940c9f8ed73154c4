/* SPDX-License-Identifier: MIT */
/* tt_model.c - both instantiations of the transformer (tt_model.inc): float
 * for training, double for the gradient checks. */
#include "tt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

int tt_fault = 0;

#define tt_mix64 sim_mix64
/* tensor identities for the initialisation (independent of the stage split) */
#define TT_ID_WTE 1u
#define TT_ID_WPE 2u
#define TT_ID_BLOCK(l) (UINT64_C(100) + UINT64_C(16) * (uint64_t)(l))

const char *tt_config_check(const tt_config *cfg)
{
    if (cfg->V < 2 || cfg->V > 65536)
        return "vocabulary size must be in 2..65536";
    if (cfg->C < 1 || cfg->C > 8192)
        return "channels must be in 1..8192";
    if (cfg->NH < 1 || cfg->C % cfg->NH)
        return "heads must divide the channels";
    if (cfg->T < 1 || cfg->T > 8192)
        return "context must be in 1..8192";
    if (cfg->L < 1 || cfg->L > 256)
        return "blocks must be in 1..256";
    return NULL;
}

size_t tt_model_params(const tt_config *cfg)
{
    return (size_t)cfg->V * cfg->C + (size_t)cfg->T * cfg->C +
           (size_t)cfg->L * TT_BLOCK_PARAMS(cfg->C) + 2 * (size_t)cfg->C;
}

#define REAL float
#define TT(name) tt_##name##_f
#define GEMM sim_sgemm
#define EXP expf
#define LOG logf
#define SQRT sqrtf
#define TANH tanhf
#include "tt_model.inc"
#undef REAL
#undef TT
#undef GEMM
#undef EXP
#undef LOG
#undef SQRT
#undef TANH
#undef TT_LN_EPS
#undef TT_GELU_S
#undef TT_GELU_A

#define REAL double
#define TT(name) tt_##name##_d
#define GEMM sim_dgemm
#define EXP exp
#define LOG log
#define SQRT sqrt
#define TANH tanh
#include "tt_model.inc"
