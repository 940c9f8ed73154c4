/* mini_json.h - a small JSON reader (RFC 8259 subset: no \u escapes beyond
 * ASCII) for the golden-vector manifest. The whole document is parsed into a
 * tree of nodes owned by one json_doc. */
#ifndef TAHQ_CLI_MINI_JSON_H
#define TAHQ_CLI_MINI_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef enum { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ } json_type;

typedef struct json_node {
    json_type type;
    double num;               /* JSON_NUM (and JSON_BOOL: 0 or 1) */
    char *str;                /* JSON_STR value; number text for JSON_NUM */
    char *key;                /* member name when the node is an object member */
    struct json_node *child;  /* first element / member */
    struct json_node *next;   /* next sibling */
    size_t count;             /* number of children */
} json_node;

typedef struct json_doc {
    json_node *root;
    char err[160];
} json_doc;

/* Parse text[len]; 0 on success, -1 with doc->err set. */
int json_parse(json_doc *doc, const char *text, size_t len);
void json_free(json_doc *doc);

/* Member of an object (NULL if absent or obj is not an object). */
const json_node *json_get(const json_node *obj, const char *key);
/* Typed accessors: 0 on success, -1 if absent or of another type. */
int json_get_str(const json_node *obj, const char *key, const char **s);
int json_get_u64(const json_node *obj, const char *key, uint64_t *v); /* integer number */

#endif
