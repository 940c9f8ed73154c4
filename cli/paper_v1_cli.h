/* SPDX-License-Identifier: MIT */
/* paper_v1_cli.h - tahq encode/decode --profile paper-v1 (cmd_paper_v1.c). */
#ifndef TAHQ_CLI_PAPER_V1_H
#define TAHQ_CLI_PAPER_V1_H

#include <stdint.h>
#include "codec_ops.h"

/* 1 if v (the value of --profile) is paper-v1, else -1 after printing a
 * usage error. */
int paper_v1_profile(const char *v);
/* tahq encode / decode --profile paper-v1, with the options and arguments
 * cmd_encode / cmd_decode parsed; their --help texts. */
/* threads > 1: the fast codec (tahq_paper_v1_encode_parallel / _decode_parallel,
 * the same bytes and floats); 1: the reference. */
int paper_v1_encode(const enc_opts *o, const char **pos, int npos, int json, uint32_t threads);
int paper_v1_decode(const enc_opts *o, const char **pos, int npos, int json, uint32_t threads);
void paper_v1_encode_help(void);
void paper_v1_decode_help(void);

#endif
