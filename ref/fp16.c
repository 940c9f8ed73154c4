/* SPDX-License-Identifier: MIT */ /* fp16.c - binary16 / bfloat16 conversions and the metadata grid (SPEC §2.2),
 * exported: each is the scalar core's (tahq_core.h), which cpu/ and
 * kernels/ call too, under the contract of the core's form. */
#include "internal.h"

/*@ assigns \nothing; */
uint16_t tahq_f32_to_f16(float x)
{
    return tahq_core_f32_to_f16(x);
}

/*@ assigns \nothing; */
float tahq_f16_to_f32(uint16_t h)
{
    return tahq_core_f16_to_f32(h);
}

/*@ assigns \nothing; */
uint16_t tahq_f32_to_bf16(float x)
{
    return tahq_core_f32_to_bf16(x);
}

/*@ assigns \nothing; */
float tahq_bf16_to_f32(uint16_t h)
{
    return tahq_core_bf16_to_f32(h);
}

/*@ requires meta <= TAHQ_META_FP32;
  @ assigns \nothing;
  @ ensures meta != TAHQ_META_FP32 ==> \result <= 0xFFFF; */
uint32_t tahq_meta_bits(tahq_meta meta, float v)
{
    return tahq_core_meta_bits(meta, v);
}

/*@ assigns \nothing; */
float tahq_meta_value(tahq_meta meta, uint32_t bits)
{
    return tahq_core_meta_value(meta, bits);
}

/*@ assigns \nothing;
  @ ensures \result == (meta == TAHQ_META_FP32 ? 4 : 2); */
uint32_t tahq_meta_bytes(tahq_meta meta)
{
    return meta == TAHQ_META_FP32 ? 4u : 2u;
}

/*@ requires meta <= TAHQ_META_FP32;
  @ assigns \nothing;
  @ ensures meta != TAHQ_META_FP32 ==> \result <= 0xFFFF; */
uint32_t tahq_meta_round_down_bits(tahq_meta meta, float x)
{
    return tahq_core_meta_round_down_bits(meta, x);
}

/*@ requires meta <= TAHQ_META_FP32;
  @ assigns \nothing;
  @ ensures meta != TAHQ_META_FP32 ==> \result <= 0xFFFF; */
uint32_t tahq_meta_round_up_bits(tahq_meta meta, float x)
{
    return tahq_core_meta_round_up_bits(meta, x);
}

/*@ requires meta <= TAHQ_META_FP32;
  @ assigns \nothing; */
float tahq_meta_round_down(tahq_meta meta, float x)
{
    return tahq_core_meta_round_down(meta, x);
}

/*@ requires meta <= TAHQ_META_FP32;
  @ assigns \nothing; */
float tahq_meta_round_up(tahq_meta meta, float x)
{
    return tahq_core_meta_round_up(meta, x);
}

/*@ requires meta <= TAHQ_META_FP32;
  @ assigns \nothing;
  @ ensures meta != TAHQ_META_FP32 ==> \result <= 0xFFFF; */
uint32_t tahq_meta_scale_bits(tahq_meta meta, float w, uint32_t levels)
{
    return tahq_core_meta_scale_bits(meta, w, levels);
}
