/*
 * oatree — an OpenAPI document as a read-only tree in one arena, for
 * tools/openapi.
 *
 * A large API description (a megabyte, thousands of operations) read into
 * jansson values costs a malloc and a hash table per object; the reader
 * needs none of that: it walks the document once, follows $refs, and makes
 * values only for the schemas a tool list shows.  So the text is read
 * into nodes laid out in a few large blocks, keys and texts copied once
 * into them, objects kept in their order with a sorted index when large.
 *
 * Two fast readers cover the common shapes: strict JSON (what jansson
 * reads, the same values) and a subset of YAML (block mappings and
 * sequences, flow collections on one line, plain, quoted and block
 * scalars, comments).  Each declines (NULL) anything outside what it
 * reads exactly like the full readers would: duplicate keys, anchors,
 * tags, tabs, multi-line plain or flow text, numbers jansson would refuse,
 * very deep nesting...  The caller then reads the text with jansson or
 * dsl/yaml, which also produce the errors, and turns that value into a
 * tree with oat_from_value(), which keeps each node's value (`src`) so
 * errors can be placed with dsl/yaml's marks.  tests/unit/openapi.c and
 * fuzz/fuzz_openapi.c check that an accepted text gives the value the full
 * reader gives.
 */
#ifndef SL_TOOLS_OATREE_H
#define SL_TOOLS_OATREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/value.h"

enum { OAT_NULL, OAT_TRUE, OAT_FALSE, OAT_INT, OAT_REAL, OAT_STR, OAT_ARR, OAT_OBJ };

typedef struct oat_node oat_node;
typedef struct oat_pair oat_pair;

struct oat_node {
    uint8_t kind;              /* OAT_* */
    uint32_t n;                /* a text's bytes; an array's or object's entries */
    union {
        const char *s;         /* NUL-terminated, valid UTF-8, no NUL inside */
        oat_node *a;
        oat_pair *o;
        json_int_t i;
        double r;
    } u;
    uint32_t *ix;              /* objects of more than a few keys: a hash table of entries */
    const sl_value *src;       /* made by oat_from_value: the value it came from */
};

struct oat_pair {
    const char *k;
    uint32_t kn;
    oat_node v;
};

typedef struct oat_tree oat_tree;

/* NULL: declined (the caller reads the text another way). */
oat_tree *oat_parse_json(const char *text, size_t len);
oat_tree *oat_parse_yaml(const char *text, size_t len);
/* Any JSON text as a value (new), as json_loadb(JSON_DECODE_ANY) reads it
 * (which it falls back to), or NULL for text that is not JSON: a tool's
 * answer. */
sl_value *oat_json_loads(const char *text, size_t len);
/* The tree of a value (which must outlive the tree: nodes point at it). */
oat_tree *oat_from_value(const sl_value *v);
void oat_free(oat_tree *t);

const oat_node *oat_root(const oat_tree *t);
/* An object's value under key, or NULL (also for a non-object). */
const oat_node *oat_get(const oat_node *obj, const char *key);
/* A text node's text, or NULL. */
static inline const char *oat_str(const oat_node *n)
{
    return n && n->kind == OAT_STR ? n->u.s : NULL;
}
static inline bool oat_is(const oat_node *n, int kind)
{
    return n && n->kind == kind;
}

/* The node as a new value (whole subtree). */
sl_value *oat_value(const oat_node *n);

/* Building in a tree after reading (openapi's synthesized schemas):
 * memory that lives as long as the tree. */
void *oat_alloc(oat_tree *t, size_t n);
char *oat_strdup(oat_tree *t, const char *s, size_t n);

#endif
