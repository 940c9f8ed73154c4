/* SPDX-License-Identifier: MIT */
/* fuzz_json.c - libFuzzer harness for the golden-manifest reader: the
 * document as tahq conform loads it (golden_json_load: jansson with
 * duplicate names and deep nesting refused, golden/kit/golden_common.c), then the
 * typed member accessors and the configuration parsers of the manifest
 * (golden_config_parse, golden_pv1_config_parse) on every object. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "golden_common.h"
#include "golden_paper_v1.h"

static size_t walk(const json_t *n, int depth)
{
    size_t seen = 1;
    if (depth > GOLDEN_MAX_DEPTH)
        abort(); /* golden_json_load refuses deeper documents */
    if (json_is_object(n)) {
        tahq_config cfg;
        tahq_paper_v1_config pcfg;
        char err[160];
        if (golden_config_parse(n, &cfg, err, sizeof err) == 0)
            (void)tahq_check_config(&cfg);
        else if (memchr(err, '\0', sizeof err) == NULL)
            abort();
        if (golden_pv1_config_parse(n, &pcfg, err, sizeof err) != 0 &&
            memchr(err, '\0', sizeof err) == NULL)
            abort();
        const char *s;
        uint64_t v;
        if (golden_json_str(n, "id", &s) == 0 && !s)
            abort();
        if (golden_json_u64(n, "count", &v) == 0 && v > (uint64_t)INT64_MAX)
            abort();
        const char *k;
        json_t *m;
        json_object_foreach((json_t *)n, k, m)
        {
            if (!k || !m)
                abort();
            seen += walk(m, depth + 1);
        }
    } else if (json_is_array(n)) {
        size_t i;
        json_t *m;
        json_array_foreach(n, i, m)
        {
            if (!m)
                abort();
            seen += walk(m, depth + 1);
        }
    } else if (json_is_string(n) && !json_string_value(n)) {
        abort();
    }
    return seen;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    err[0] = '\0';
    json_t *doc = golden_json_load((const char *)data, size, err, sizeof err);
    if (doc) {
        if (walk(doc, 0) == 0)
            abort();
        json_decref(doc);
    } else if (err[0] == '\0' || memchr(err, '\0', sizeof err) == NULL) {
        abort();
    }
    return 0;
}
