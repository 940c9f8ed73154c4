/* fuzz_json.c - libFuzzer harness for the golden-manifest reader
 * (cli/mini_json.c) and the configuration parser of the manifest
 * (cli/golden_common.c: golden_config_parse on every object of the tree). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "golden_common.h"
#include "mini_json.h"

static size_t walk(const json_node *n, int depth)
{
    size_t seen = 0;
    if (depth > 200)
        abort(); /* the reader limits nesting to 64 */
    for (; n; n = n->next) {
        seen++;
        if ((n->type == JSON_STR || n->type == JSON_NUM) && !n->str)
            abort();
        if (n->type == JSON_OBJ) {
            tahq_config cfg;
            char err[160];
            if (golden_config_parse(n, &cfg, err, sizeof err) == 0)
                (void)tahq_check_config(&cfg);
            else if (memchr(err, '\0', sizeof err) == NULL)
                abort();
            const char *s;
            uint64_t v;
            (void)json_get_str(n, "id", &s);
            (void)json_get_u64(n, "count", &v);
            for (const json_node *c = n->child; c; c = c->next)
                if (!c->key)
                    abort();
        }
        size_t kids = walk(n->child, depth + 1);
        if (kids != n->count)
            abort();
    }
    return seen;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_doc doc;
    if (json_parse(&doc, (const char *)data, size) == 0) {
        if (!doc.root || walk(doc.root, 0) != 1)
            abort();
        json_free(&doc);
    } else if (doc.root || doc.err[0] == '\0') {
        abort();
    }
    return 0;
}
