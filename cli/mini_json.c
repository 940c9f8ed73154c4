/* mini_json.c - see mini_json.h. */
#include "mini_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct jp {
    const char *p, *end, *start;
    json_doc *doc;
    int depth;
} jp;

static int jerr(jp *j, const char *msg)
{
    if (!j->doc->err[0])
        snprintf(j->doc->err, sizeof j->doc->err, "%s at byte %ld", msg,
                 (long)(j->p - j->start));
    return -1;
}

static void ws(jp *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
        ++j->p;
}

static void node_free(json_node *n)
{
    while (n) {
        json_node *next = n->next;
        node_free(n->child);
        free(n->str);
        free(n->key);
        free(n);
        n = next;
    }
}

static int parse_string(jp *j, char **out)
{
    /* *j->p == '"' */
    ++j->p;
    size_t cap = 16, n = 0;
    char *s = malloc(cap);
    if (!s)
        return jerr(j, "out of memory");
    while (1) {
        if (j->p >= j->end) {
            free(s);
            return jerr(j, "unterminated string");
        }
        char c = *j->p++;
        if (c == '"')
            break;
        if ((unsigned char)c < 0x20) {
            free(s);
            return jerr(j, "control character in string");
        }
        if (c == '\\') {
            if (j->p >= j->end) {
                free(s);
                return jerr(j, "bad escape");
            }
            char e = *j->p++;
            switch (e) {
            case '"': case '\\': case '/': c = e; break;
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': {
                unsigned v = 0;
                for (int k = 0; k < 4; ++k) {
                    char h = j->p < j->end ? *j->p++ : 'x';
                    v <<= 4;
                    if (h >= '0' && h <= '9') v |= (unsigned)(h - '0');
                    else if (h >= 'a' && h <= 'f') v |= (unsigned)(h - 'a' + 10);
                    else if (h >= 'A' && h <= 'F') v |= (unsigned)(h - 'A' + 10);
                    else { free(s); return jerr(j, "bad \\u escape"); }
                }
                if (v == 0 || v > 0x7f) {
                    free(s);
                    return jerr(j, "non-ASCII \\u escape not supported");
                }
                c = (char)v;
                break;
            }
            default:
                free(s);
                return jerr(j, "bad escape");
            }
        }
        if (n + 2 > cap) {
            cap *= 2;
            char *t = realloc(s, cap);
            if (!t) {
                free(s);
                return jerr(j, "out of memory");
            }
            s = t;
        }
        s[n++] = c;
    }
    s[n] = '\0';
    *out = s;
    return 0;
}

static int parse_value(jp *j, json_node **out);

static int parse_container(jp *j, json_node *n, char close)
{
    ++j->p;
    ws(j);
    json_node **tail = &n->child;
    if (j->p < j->end && *j->p == close) {
        ++j->p;
        return 0;
    }
    while (1) {
        char *key = NULL;
        ws(j);
        if (close == '}') {
            if (j->p >= j->end || *j->p != '"')
                return jerr(j, "expected member name");
            if (parse_string(j, &key))
                return -1;
            ws(j);
            if (j->p >= j->end || *j->p != ':') {
                free(key);
                return jerr(j, "expected ':'");
            }
            ++j->p;
        }
        json_node *c = NULL;
        int rc = parse_value(j, &c);
        if (c) {
            /* linked even when parse_value failed part-way, so that the
             * caller's node_free releases it and its children */
            c->key = key;
            *tail = c;
            tail = &c->next;
            n->count++;
        } else {
            free(key);
        }
        if (rc)
            return -1;
        ws(j);
        if (j->p < j->end && *j->p == ',') {
            ++j->p;
            continue;
        }
        if (j->p < j->end && *j->p == close) {
            ++j->p;
            return 0;
        }
        return jerr(j, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int parse_value(jp *j, json_node **out)
{
    ws(j);
    if (j->p >= j->end)
        return jerr(j, "unexpected end");
    if (++j->depth > 64)
        return jerr(j, "nesting too deep");
    json_node *n = calloc(1, sizeof *n);
    if (!n)
        return jerr(j, "out of memory");
    *out = n;
    int rc = 0;
    char c = *j->p;
    if (c == '{') {
        n->type = JSON_OBJ;
        rc = parse_container(j, n, '}');
    } else if (c == '[') {
        n->type = JSON_ARR;
        rc = parse_container(j, n, ']');
    } else if (c == '"') {
        n->type = JSON_STR;
        rc = parse_string(j, &n->str);
    } else if (j->end - j->p >= 4 && memcmp(j->p, "true", 4) == 0) {
        n->type = JSON_BOOL;
        n->num = 1;
        j->p += 4;
    } else if (j->end - j->p >= 5 && memcmp(j->p, "false", 5) == 0) {
        n->type = JSON_BOOL;
        j->p += 5;
    } else if (j->end - j->p >= 4 && memcmp(j->p, "null", 4) == 0) {
        n->type = JSON_NULL;
        j->p += 4;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        const char *s = j->p;
        /* (a NUL byte must end the number: strchr finds the terminator) */
        while (j->p < j->end && *j->p != '\0' &&
               (strchr("+-.eE", *j->p) || (*j->p >= '0' && *j->p <= '9')))
            ++j->p;
        size_t len = (size_t)(j->p - s);
        n->type = JSON_NUM;
        n->str = malloc(len + 1);
        if (!n->str)
            return jerr(j, "out of memory");
        memcpy(n->str, s, len);
        n->str[len] = '\0';
        char *e = NULL;
        n->num = strtod(n->str, &e);
        if (!e || *e)
            rc = jerr(j, "bad number");
    } else {
        rc = jerr(j, "unexpected character");
    }
    --j->depth;
    return rc;
}

int json_parse(json_doc *doc, const char *text, size_t len)
{
    doc->root = NULL;
    doc->err[0] = '\0';
    jp j = {text, text + len, text, doc, 0};
    json_node *root = NULL;
    int rc = parse_value(&j, &root);
    if (rc == 0) {
        ws(&j);
        if (j.p != j.end)
            rc = jerr(&j, "trailing characters");
    }
    if (rc) {
        node_free(root);
        return -1;
    }
    doc->root = root;
    return 0;
}

void json_free(json_doc *doc)
{
    node_free(doc->root);
    doc->root = NULL;
}

const json_node *json_get(const json_node *obj, const char *key)
{
    if (!obj || obj->type != JSON_OBJ)
        return NULL;
    for (const json_node *c = obj->child; c; c = c->next)
        if (c->key && strcmp(c->key, key) == 0)
            return c;
    return NULL;
}

int json_get_str(const json_node *obj, const char *key, const char **s)
{
    const json_node *n = json_get(obj, key);
    if (!n || n->type != JSON_STR)
        return -1;
    *s = n->str;
    return 0;
}

int json_get_u64(const json_node *obj, const char *key, uint64_t *v)
{
    const json_node *n = json_get(obj, key);
    if (!n || n->type != JSON_NUM || !n->str)
        return -1;
    uint64_t r = 0;
    const char *p = n->str;
    if (!*p)
        return -1;
    for (; *p; ++p) {
        if (*p < '0' || *p > '9' || r > (UINT64_MAX - 9) / 10)
            return -1;
        r = r * 10 + (uint64_t)(*p - '0');
    }
    *v = r;
    return 0;
}
