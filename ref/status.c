/* SPDX-License-Identifier: MIT */ /* status.c - texts of the error codes (SPEC §9). */
#include "tahq.h"

static const char *const status_names[TAHQ_STATUS_COUNT] = {
    "ok",         "err_null",   "err_config",    "err_shape",   "err_nonfinite",
    "err_range",  "err_buffer", "err_truncated", "err_magic",   "err_version",
    "err_header", "err_size",   "err_crc",       "err_payload",
};

static const char *const status_texts[TAHQ_STATUS_COUNT] = {
    "success",
    "a required pointer is NULL",
    "configuration field out of range",
    "shape invalid for the configuration (C must be a multiple of the tile, B*S*C <= 2^40)",
    "input contains NaN or infinity",
    "value out of range (|x| >= 2^64, or zero-point/scale overflows the metadata type)",
    "output or workspace buffer too small",
    "message truncated",
    "not a tahq message (bad magic)",
    "unsupported format version or header size",
    "header field out of range or inconsistent",
    "payload size disagrees with the header or the message length",
    "CRC-32C mismatch (message corrupted)",
    "payload inconsistent (precision map, flags, padding or metadata values)",
};

/*@ assigns \nothing;
  @ ensures \result != \null; */
const char *tahq_strerror(int status)
{
    if (status < 0 || status >= TAHQ_STATUS_COUNT)
        return "unknown tahq status";
    return status_texts[status];
}

/*@ assigns \nothing;
  @ ensures \result != \null; */
const char *tahq_status_name(int status)
{
    if (status < 0 || status >= TAHQ_STATUS_COUNT)
        return "err_unknown";
    return status_names[status];
}
