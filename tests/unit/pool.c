/*
 * pool — the variable pool: set/get by selector path, layers (child reads
 * fall through to the parent, child writes stay local), assignment to the
 * nearest layer holding a node, and concurrent readers and writers.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/pool.h"
#include "tap.h"
#include "util.h"

/* Splits "a.b.c" into parts (in place) and gets it. */
static sl_value *get_path(sl_pool *p, const char *path)
{
    static char buf[256];
    const char *parts[16];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", path);
    for (char *s = strtok(buf, "."); s && n < 16; s = strtok(NULL, "."))
        parts[n++] = s;
    return sl_pool_get(p, parts, n);
}

static void get_is(sl_pool *p, const char *path, const char *want_json, const char *what)
{
    sl_value *got = get_path(p, path);
    if (!want_json) {
        char *g = show(got);
        CHECK(got == NULL, "%s: %s is absent (got %s)", what, path, g);
        free(g);
        json_decref(got);
        return;
    }
    sl_value *want = J(want_json);
    char *g = show(got);
    CHECK(got && sl_value_equal(got, want), "%s: %s is %s (got %s)", what, path, want_json, g);
    free(g);
    json_decref(want);
    json_decref(got);
}

static void test_basic(void)
{
    sl_pool *p = sl_pool_new(NULL);
    get_is(p, "n1.x", NULL, "empty pool");
    sl_pool_set_node(p, "n1", J("{\"x\": 1, \"obj\": {\"a\": {\"b\": [10, 20, {\"c\": \"deep\"}]}}, "
                                "\"list\": [\"p\", \"q\"], \"s\": \"text\", \"nul\": null}"));
    get_is(p, "n1.x", "1", "set_node");
    get_is(p, "n1.obj.a.b", "[10, 20, {\"c\": \"deep\"}]", "nested object path");
    get_is(p, "n1.obj.a.b.1", "20", "array index path");
    get_is(p, "n1.obj.a.b.2.c", "\"deep\"", "object inside array");
    get_is(p, "n1.list.0", "\"p\"", "index 0");
    get_is(p, "n1.list.2", NULL, "index past the end");
    get_is(p, "n1.list.-1", NULL, "negative index");
    get_is(p, "n1.list.x", NULL, "non-numeric index into an array");
    get_is(p, "n1.list.1x", NULL, "index with trailing junk");
    get_is(p, "n1.s.len", NULL, "path into a string");
    get_is(p, "n1.x.y", NULL, "path into a number");
    get_is(p, "n1.missing", NULL, "missing variable");
    get_is(p, "n2.x", NULL, "missing node");
    get_is(p, "n1.nul", "null", "a null variable is present");
    {
        const char *parts[] = {"n1"};
        CHECK(sl_pool_get(p, parts, 1) == NULL, "a one-part selector gets nothing");
    }

    sl_pool_set(p, "n1", "y", json_string("new"));
    get_is(p, "n1.y", "\"new\"", "set adds a variable");
    get_is(p, "n1.x", "1", "set keeps the node's other variables");
    sl_pool_set(p, "n1", "x", json_integer(2));
    get_is(p, "n1.x", "2", "set replaces a variable");
    sl_pool_set(p, "fresh", "v", json_true());
    get_is(p, "fresh.v", "true", "set on a node not yet in the pool");

    /* Published values are immutable: a reader's reference survives a set. */
    sl_value *held = sl_pool_node(p, "n1");
    sl_pool_set(p, "n1", "x", json_integer(3));
    CHECK(held && json_integer_value(json_object_get(held, "x")) == 2,
          "a node object held by a reader does not change under a later set");
    json_decref(held);
    get_is(p, "n1.x", "3", "but new reads see the new value");

    sl_value *sel = J("[\"n1\", \"obj\", \"a\", \"b\", \"0\"]");
    sl_value *v = sl_pool_get_sel(p, sel);
    CHECK(v && json_integer_value(v) == 10, "get_sel with a 5-part selector");
    json_decref(v);
    json_decref(sel);
    sel = J("[\"n1\"]");
    CHECK(sl_pool_get_sel(p, sel) == NULL, "get_sel with one part gets nothing");
    json_decref(sel);
    sel = J("[\"n1\", 5]");
    CHECK(sl_pool_get_sel(p, sel) == NULL, "get_sel with a non-text part gets nothing");
    json_decref(sel);
    sel = J("\"n1.x\"");
    CHECK(sl_pool_get_sel(p, sel) == NULL, "get_sel with a string selector gets nothing");
    json_decref(sel);
    CHECK(sl_pool_get_sel(p, NULL) == NULL, "get_sel(NULL) gets nothing");

    /* set_node replaces the whole output object */
    sl_pool_set_node(p, "n1", J("{\"only\": 1}"));
    get_is(p, "n1.only", "1", "set_node again");
    get_is(p, "n1.x", NULL, "set_node replaces, not merges");

    /* the caller's reference from get is its own */
    v = get_path(p, "n1.only");
    sl_pool_free(p);
    CHECK(v && json_integer_value(v) == 1, "a value from get outlives the pool");
    json_decref(v);
}

static void test_layers(void)
{
    sl_pool *root = sl_pool_new(NULL);
    sl_pool_set_node(root, "sys", J("{\"query\": \"hi\"}"));
    sl_pool_set_node(root, "conversation", J("{\"count\": 0}"));
    sl_pool_set_node(root, "loop1", J("{\"acc\": 1}"));
    sl_pool_set_node(root, "shared", J("{\"v\": \"root\"}"));

    sl_pool *child = sl_pool_new(root);
    sl_pool *grand = sl_pool_new(child);
    get_is(grand, "sys.query", "\"hi\"", "grandchild reads the root");
    sl_pool_set_node(child, "iter1", J("{\"item\": \"a\", \"index\": 0}"));
    get_is(grand, "iter1.item", "\"a\"", "grandchild reads the child");
    get_is(root, "iter1.item", NULL, "the root does not see the child's node");

    sl_pool_set(child, "shared", "v", json_string("child"));
    get_is(child, "shared.v", "\"child\"", "a child write shadows the parent");
    get_is(root, "shared.v", "\"root\"", "the parent keeps its value");

    /* sibling layers (parallel iteration rounds) never see each other */
    sl_pool *sib = sl_pool_new(root);
    sl_pool_set_node(sib, "iter1", J("{\"item\": \"b\", \"index\": 1}"));
    get_is(sib, "iter1.item", "\"b\"", "sibling layer has its own item");
    get_is(grand, "iter1.item", "\"a\"", "and the other branch keeps its own");

    /* assign goes to the nearest layer holding the node */
    CHECK(sl_pool_assign(grand, "conversation", "count", json_integer(5)) == 0,
          "assign to a root node from a grandchild succeeds");
    get_is(root, "conversation.count", "5", "assign wrote to the root layer");
    sl_value *cnode = sl_pool_node(grand, "conversation");
    CHECK(cnode && json_object_size(cnode) == 1, "assign did not copy the node into a lower layer");
    json_decref(cnode);
    sl_pool_set_node(child, "loop1", J("{\"acc\": 100}"));
    CHECK(sl_pool_assign(grand, "loop1", "acc", json_integer(101)) == 0,
          "assign to a node held by two layers");
    get_is(child, "loop1.acc", "101", "assign picked the nearest layer (the child)");
    get_is(root, "loop1.acc", "1", "and left the farther layer alone");
    CHECK(sl_pool_assign(grand, "loop1", "other", json_string("x")) == 0,
          "assign a new variable name to an existing node");
    get_is(child, "loop1.other", "\"x\"", "the new variable is in that layer");
    get_is(child, "loop1.acc", "101", "its other variables stay");
    CHECK(sl_pool_assign(grand, "nobody", "x", json_integer(1)) == -1,
          "assign to a node no layer has returns -1");
    get_is(grand, "nobody.x", NULL, "and writes nothing");
    CHECK(sl_pool_assign(root, "iter1", "item", json_string("z")) == -1,
          "assign from a parent does not reach into a child layer");

    sl_value *n = sl_pool_node(grand, "sys");
    CHECK(n && json_is_object(n) && json_object_get(n, "query"), "node() reads through layers");
    json_decref(n);
    CHECK(sl_pool_node(root, "iter1") == NULL, "node() does not look down");

    sl_pool_free(grand);
    sl_pool_free(sib);
    get_is(child, "iter1.index", "0", "freeing a child layer leaves the others");
    sl_pool_free(child);
    get_is(root, "conversation.count", "5", "the root keeps assigned values after children go");
    sl_pool_free(root);
    sl_pool_free(NULL);
    CHECK(1, "sl_pool_free(NULL) is harmless");
}

/* ---- threads ---- */

#define WRITERS 4
#define READERS 4
#define ROUNDS 2000

typedef struct {
    sl_pool *p;
    int id;
    int bad;
} worker;

/* Each writer owns node "w<id>" and writes {"n": i, "twice": 2*i}; readers
 * check that any object they see is consistent (twice == 2 * n) and that n
 * never goes backwards. */
static void *writer_main(void *arg)
{
    worker *w = arg;
    char node[16];
    snprintf(node, sizeof node, "w%d", w->id);
    for (int i = 0; i < ROUNDS; i++) {
        sl_pool_set_node(w->p, node, json_pack("{s:i,s:i}", "n", i, "twice", 2 * i));
        sl_pool_set(w->p, node, "tag", json_integer(i));
        if (sl_pool_assign(w->p, "counter", node, json_integer(i)) < 0)
            w->bad++;
    }
    return NULL;
}

static void *reader_main(void *arg)
{
    worker *w = arg;
    long last[WRITERS];
    for (int k = 0; k < WRITERS; k++)
        last[k] = -1;
    for (int i = 0; i < ROUNDS * 2; i++) {
        for (int k = 0; k < WRITERS; k++) {
            char node[16];
            snprintf(node, sizeof node, "w%d", k);
            sl_value *o = sl_pool_node(w->p, node);
            if (!o)
                continue;
            json_int_t n = json_integer_value(json_object_get(o, "n"));
            json_int_t t = json_integer_value(json_object_get(o, "twice"));
            if (t != 2 * n || n < last[k])
                w->bad++;
            last[k] = (long)n;
            json_decref(o);
            const char *parts[] = {"sys", "query"};
            sl_value *q = sl_pool_get(w->p, parts, 2);
            if (!q || strcmp(json_string_value(q), "stable"))
                w->bad++;
            json_decref(q);
        }
    }
    return NULL;
}

static void test_threads(void)
{
    sl_pool *root = sl_pool_new(NULL);
    sl_pool_set_node(root, "sys", J("{\"query\": \"stable\"}"));
    sl_pool_set_node(root, "counter", json_object());
    sl_pool *layer = sl_pool_new(root);
    pthread_t th[WRITERS + READERS];
    worker ws[WRITERS + READERS];
    for (int i = 0; i < WRITERS + READERS; i++) {
        ws[i].p = layer;
        ws[i].id = i < WRITERS ? i : i - WRITERS;
        ws[i].bad = 0;
        pthread_create(&th[i], NULL, i < WRITERS ? writer_main : reader_main, &ws[i]);
    }
    int bad = 0;
    for (int i = 0; i < WRITERS + READERS; i++) {
        pthread_join(th[i], NULL);
        bad += ws[i].bad;
    }
    CHECK(bad == 0, "%d writers and %d readers on one layer: every read consistent (%d bad)",
          WRITERS, READERS, bad);
    int final_ok = 0;
    for (int k = 0; k < WRITERS; k++) {
        char path[32];
        snprintf(path, sizeof path, "w%d", k);
        const char *parts[] = {path, "n"};
        sl_value *v = sl_pool_get(layer, parts, 2);
        const char *tp[] = {path, "tag"};
        sl_value *t = sl_pool_get(layer, tp, 2);
        const char *cp[] = {"counter", path};
        sl_value *c = sl_pool_get(root, cp, 2);
        if (v && json_integer_value(v) == ROUNDS - 1 && t && json_integer_value(t) == ROUNDS - 1 &&
            c && json_integer_value(c) == ROUNDS - 1)
            final_ok++;
        json_decref(v);
        json_decref(t);
        json_decref(c);
    }
    CHECK(final_ok == WRITERS, "final values are the last ones written, incl. concurrent "
          "assigns to one shared node (%d/%d)", final_ok, WRITERS);
    sl_pool_free(layer);
    sl_pool_free(root);
}

int main(void)
{
    test_basic();
    test_layers();
    test_threads();
    return tap_done();
}
