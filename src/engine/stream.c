#include "engine/stream.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "tmpl/ref.h"

/* ---- the plan ---- */

/* One piece of a template: a plain run, or a reference. */
typedef struct {
    const char *text;   /* plain run (borrowed from the node's data), or NULL */
    size_t len;
    char **parts;       /* reference: its selector (one allocation with the strings) */
    int n;
    int src;            /* parts[0]'s node when it is in the same graph, else -1 */
    int slot;           /* the stream of [src, parts[1]] (n == 2), else -1 */
} seg;

typedef struct {
    int node;
    int scope;          /* its container, or -1 */
    const char *id;
    bool is_end;
    seg *segs;
    int nsegs, segcap;
    int *blockers;      /* assigners that write a variable the template shows */
    int nblockers;
} resp;

/* A variable some template shows whole: its pieces may be streamed. */
typedef struct {
    int node;
    const char *var;    /* borrowed from a seg's parts */
    int next;           /* the node's next slot, or -1 */
} slot;

struct sl_stream_plan {
    /* the graph's arrays (they stay put when an sl_graph is copied) */
    const sl_gnode *nodes;
    const sl_gedge *edges;
    int nnodes, nedges;
    resp *resp;         /* sorted by (scope, id) */
    int nresp;
    int *resp_of;       /* per node: its index in resp, or -1 */
    slot *slots;
    int nslots, slotcap;
    int *slot_head;     /* per node: its first slot, or -1 */
    unsigned char *edge_blocks; /* per edge: its source blocks every template */
};

static int find_slot(const sl_stream_plan *p, int node, const char *var)
{
    for (int k = p->slot_head[node]; k >= 0; k = p->slots[k].next)
        if (!strcmp(p->slots[k].var, var))
            return k;
    return -1;
}

static seg *add_seg(resp *r)
{
    if (r->nsegs == r->segcap) {
        r->segcap = r->segcap ? r->segcap * 2 : 4;
        r->segs = sl_xrealloc(r->segs, (size_t)r->segcap * sizeof *r->segs);
    }
    seg *s = &r->segs[r->nsegs++];
    memset(s, 0, sizeof *s);
    s->src = s->slot = -1;
    return s;
}

typedef struct {
    sl_stream_plan *p;
    const sl_graph *g;
    resp *r;
} build;

static void add_ref(build *b, const char *const *parts, int n)
{
    sl_stream_plan *p = b->p;
    const sl_graph *g = b->g;
    seg *s = add_seg(b->r);
    size_t bytes = (size_t)n * sizeof *s->parts;
    for (int i = 0; i < n; i++)
        bytes += strlen(parts[i]) + 1;
    s->parts = sl_xmalloc(bytes);
    char *o = (char *)(s->parts + n);
    for (int i = 0; i < n; i++) {
        size_t l = strlen(parts[i]) + 1;
        memcpy(o, parts[i], l);
        s->parts[i] = o;
        o += l;
    }
    s->n = n;
    int src = sl_graph_find(g, parts[0]);
    if (src < 0 || g->nodes[src].parent != b->r->scope)
        return;
    s->src = src;
    if (n != 2)
        return;
    s->slot = find_slot(p, src, parts[1]);
    if (s->slot >= 0)
        return;
    if (p->nslots == p->slotcap) {
        p->slotcap = p->slotcap ? p->slotcap * 2 : 8;
        p->slots = sl_xrealloc(p->slots, (size_t)p->slotcap * sizeof *p->slots);
    }
    p->slots[p->nslots] = (slot){src, s->parts[1], p->slot_head[src]};
    p->slot_head[src] = s->slot = p->nslots++;
}

static int add_piece(void *ud, const char *lit, size_t len, const char *const *parts, int n)
{
    build *b = ud;
    if (lit) {
        seg *s = add_seg(b->r);
        s->text = lit;
        s->len = len;
    } else {
        add_ref(b, parts, n);
    }
    return 0;
}

/* An end node's outputs as a template: each output's selector, "\n"
 * between them, no trailing "\n" (graphon's Template.from_end_outputs). */
static void end_template(build *b, const sl_value *outputs)
{
    for (size_t i = 0; i < json_array_size(outputs); i++) {
        if (i > 0) {
            seg *s = add_seg(b->r);
            s->text = "\n";
            s->len = 1;
        }
        const sl_value *sel = json_object_get(json_array_get(outputs, i), "value_selector");
        const char *parts[SL_REF_MAX_PARTS];
        int n = 0;
        for (size_t k = 0; k < json_array_size(sel) && n < SL_REF_MAX_PARTS; k++)
            if ((parts[n] = json_string_value(json_array_get(sel, k))) != NULL)
                n++;
        if (n && (size_t)n == json_array_size(sel))
            add_ref(b, parts, n);
    }
    resp *r = b->r;
    if (r->nsegs && r->segs[r->nsegs - 1].text)
        r->nsegs--;
}

/* Whether an assigner writes a variable the template shows (graphon's
 * blocks_variable_output): both the [scope, name] of a written selector
 * and of a reference. */
static bool writes_shown(const resp *r, const sl_value *data)
{
    const sl_value *items = json_object_get(data, "items");
    size_t nitems = json_array_size(items);
    for (size_t i = 0; i <= nitems; i++) {
        const sl_value *sel = i < nitems
            ? json_object_get(json_array_get(items, i), "variable_selector")
            : json_object_get(data, "assigned_variable_selector");
        const char *a = json_string_value(json_array_get(sel, 0));
        const char *b = json_string_value(json_array_get(sel, 1));
        if (!a || !b)
            continue;
        for (int k = 0; k < r->nsegs; k++) {
            const seg *s = &r->segs[k];
            if (s->n >= 2 && !strcmp(s->parts[0], a) && !strcmp(s->parts[1], b))
                return true;
        }
    }
    return false;
}

static int by_scope_id(const void *a, const void *b)
{
    const resp *x = a, *y = b;
    if (x->scope != y->scope)
        return x->scope < y->scope ? -1 : 1;
    return strcmp(x->id, y->id);
}

static bool is_response(const sl_gnode *n)
{
    return !strcmp(n->type, "answer") || !strcmp(n->type, "end");
}

/* Nodes whose outgoing edges hold back every template behind them: graphon's
 * BRANCH (fail-branch nodes are promoted to it), CONTAINER and RESPONSE
 * execution types. */
static bool blocks_all(const sl_gnode *n)
{
    static const char *const types[] = {"if-else", "question-classifier", "iteration", "loop",
                                        "answer", "end", NULL};
    if (n->on_error == SL_ON_ERROR_BRANCH)
        return true;
    for (const char *const *t = types; *t; t++)
        if (!strcmp(n->type, *t))
            return true;
    return false;
}

sl_stream_plan *sl_stream_plan_new(const sl_graph *g)
{
    int nresp = 0, nassign = 0;
    for (int i = 0; i < g->nnodes; i++) {
        nresp += is_response(&g->nodes[i]);
        nassign += !strcmp(g->nodes[i].type, "assigner");
    }
    if (!nresp)
        return NULL;
    sl_stream_plan *p = sl_xcalloc(1, sizeof *p);
    p->nodes = g->nodes;
    p->edges = g->edges;
    p->nnodes = g->nnodes;
    p->nedges = g->nedges;
    p->resp = sl_xcalloc((size_t)nresp, sizeof *p->resp);
    p->resp_of = sl_xmalloc(((size_t)g->nnodes + 1) * sizeof *p->resp_of);
    p->slot_head = sl_xmalloc(((size_t)g->nnodes + 1) * sizeof *p->slot_head);
    for (int i = 0; i < g->nnodes; i++) {
        p->slot_head[i] = -1;
        if (is_response(&g->nodes[i]))
            p->resp[p->nresp++].node = i;
    }
    int *assigners = sl_xmalloc(((size_t)nassign + 1) * sizeof *assigners);
    nassign = 0;
    for (int i = 0; i < g->nnodes; i++)
        if (!strcmp(g->nodes[i].type, "assigner"))
            assigners[nassign++] = i;
    for (int i = 0; i < p->nresp; i++) {
        resp *r = &p->resp[i];
        const sl_gnode *n = &g->nodes[r->node];
        build b = {p, g, r};
        r->scope = n->parent;
        r->id = n->id;
        r->is_end = !strcmp(n->type, "end");
        if (r->is_end) {
            end_template(&b, json_object_get(n->data, "outputs"));
        } else {
            const char *text = json_string_value(json_object_get(n->data, "answer"));
            sl_ref_pieces(text ? text : "", add_piece, &b);
        }
        for (int k = 0; k < nassign; k++) {
            const sl_gnode *a = &g->nodes[assigners[k]];
            if (a->parent != n->parent || !writes_shown(r, a->data))
                continue;
            r->blockers = sl_xrealloc(r->blockers, (size_t)(r->nblockers + 1) * sizeof(int));
            r->blockers[r->nblockers++] = assigners[k];
        }
    }
    free(assigners);
    qsort(p->resp, (size_t)p->nresp, sizeof *p->resp, by_scope_id);
    for (int i = 0; i < g->nnodes; i++)
        p->resp_of[i] = -1;
    for (int i = 0; i < p->nresp; i++)
        p->resp_of[p->resp[i].node] = i;
    p->edge_blocks = sl_xcalloc((size_t)g->nedges + 1, 1);
    for (int e = 0; e < g->nedges; e++)
        p->edge_blocks[e] = blocks_all(&g->nodes[g->edges[e].src]);
    return p;
}

void sl_stream_plan_free(sl_stream_plan *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->nresp; i++) {
        for (int k = 0; k < p->resp[i].nsegs; k++)
            free(p->resp[i].segs[k].parts);
        free(p->resp[i].segs);
        free(p->resp[i].blockers);
    }
    free(p->resp);
    free(p->resp_of);
    free(p->slots);
    free(p->slot_head);
    free(p->edge_blocks);
    free(p);
}

/* ---- a coordinator ---- */

/* What a node streamed for one slot: the pieces, in order. */
typedef struct {
    sl_buf text;
    size_t *ends;       /* piece i is text[ends[i-1] .. ends[i]) */
    int n, cap;
    bool closed;        /* the node finished */
} pieces;

struct sl_stream {
    const sl_stream_plan *p;
    sl_stream_io io;
    int root;
    int first, count;   /* this graph's responses: p->resp[first .. first + count) */
    /* Reachability: reach[k] marks the nodes reachable from the root over
     * edges that are taken or do not block.  Set 0 serves the templates
     * no assigner holds back; each other set serves one that one does. */
    int nsets;
    int *set_of;        /* per response (local index): its set */
    int *set_resp;      /* per set > 0: its response (local index) */
    unsigned char *reach;
    unsigned char *taken;   /* per edge */
    unsigned char *started; /* per response: its session started */
    int *wait;          /* started sessions waiting their turn, oldest first */
    int wh, wt;
    int active;         /* the streaming session (local index), or -1 */
    int seg;            /* its current segment */
    int pos;            /* pieces of that segment's stream already sent */
    pieces *bufs;       /* per plan slot */
    int *fresh;         /* sessions reached by the current step */
    int nfresh;
    int *stack;
};

/* The first response of a scope or a later one (responses are sorted). */
static int first_of_scope(const sl_stream_plan *p, int scope)
{
    int lo = 0, hi = p->nresp;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (p->resp[mid].scope < scope)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

sl_stream *sl_stream_new(const sl_stream_plan *p, int scope, int root, const sl_stream_io *io)
{
    if (!p)
        return NULL;
    int first = first_of_scope(p, scope), end = first_of_scope(p, scope + 1);
    if (end == first)
        return NULL;
    int count = end - first, nsets = 1;
    for (int i = first; i < end; i++)
        nsets += p->resp[i].nblockers > 0;
    /* One allocation for all of it: a server makes a coordinator per run. */
    size_t nn = (size_t)p->nnodes + 1, nints = 4 * (size_t)count + 1 + nn;
    size_t bytes = (size_t)nsets * nn + (size_t)p->nedges + 1 + (size_t)count;
    char *mem = sl_xcalloc(1, sizeof(sl_stream) + ((size_t)p->nslots + 1) * sizeof(pieces) +
                                  nints * sizeof(int) + bytes);
    sl_stream *st = (sl_stream *)mem;
    st->bufs = (pieces *)(st + 1);
    st->set_of = (int *)(st->bufs + p->nslots + 1);
    st->set_resp = st->set_of + count;
    st->wait = st->set_resp + count + 1;
    st->fresh = st->wait + count;
    st->stack = st->fresh + count;
    st->reach = (unsigned char *)(st->stack + nn);
    st->taken = st->reach + (size_t)nsets * nn;
    st->started = st->taken + p->nedges + 1;
    st->p = p;
    st->io = *io;
    st->root = root;
    st->first = first;
    st->count = count;
    st->nsets = 1;
    for (int i = 0; i < count; i++)
        if (p->resp[first + i].nblockers) {
            st->set_of[i] = st->nsets;
            st->set_resp[st->nsets++] = i;
        }
    for (int k = 0; k < p->nslots; k++)
        sl_buf_init(&st->bufs[k].text, 0);
    st->active = -1;
    return st;
}

void sl_stream_free(sl_stream *st)
{
    if (!st)
        return;
    for (int k = 0; k < st->p->nslots; k++) {
        sl_buf_release(&st->bufs[k].text);
        free(st->bufs[k].ends);
    }
    free(st);
}

bool sl_stream_wants(const sl_stream *st, int node, const char *var)
{
    return st && find_slot(st->p, node, var) >= 0;
}

/* Whether edge e holds back the templates of reach set k until taken. */
static bool blocks(const sl_stream *st, int k, int e)
{
    const sl_stream_plan *p = st->p;
    if (p->edge_blocks[e])
        return true;
    if (k == 0)
        return false;
    const resp *r = &p->resp[st->first + st->set_resp[k]];
    int src = p->edges[e].src;
    for (int i = 0; i < r->nblockers; i++)
        if (r->blockers[i] == src)
            return true;
    return false;
}

/* Adds v and what it reaches over free edges to set k; the sessions of
 * that set reached on the way join st->fresh. */
static void reach_from(sl_stream *st, int k, int v)
{
    const sl_stream_plan *p = st->p;
    unsigned char *in = st->reach + (size_t)k * ((size_t)p->nnodes + 1);
    if (in[v])
        return;
    int sp = 0;
    in[v] = 1;
    st->stack[sp++] = v;
    while (sp) {
        int u = st->stack[--sp];
        int r = p->resp_of[u];
        if (r >= 0) { /* a response node: of this graph, since edges stay in it */
            r -= st->first;
            if (st->set_of[r] == k && !st->started[r])
                st->fresh[st->nfresh++] = r;
        }
        const sl_gnode *n = &p->nodes[u];
        for (int i = 0; i < n->nout; i++) {
            int e = n->out[i], d = p->edges[e].dst;
            if (!in[d] && (st->taken[e] || !blocks(st, k, e))) {
                in[d] = 1;
                st->stack[sp++] = d;
            }
        }
    }
}

static void emit_value(sl_stream *st, const seg *s, const sl_value *v)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_ref_markdown(v, &b);  /* Dify streams a value's Segment.markdown */
    if (b.len)
        st->io.emit(st->io.ud, (const char *const *)s->parts, s->n, b.data, b.len);
    sl_buf_release(&b);
}

/* Sends what the active session can send.  At the end (`final`) nothing
 * more will come, so it sends everything.  True when the session is done. */
static bool advance(sl_stream *st, bool final)
{
    const sl_stream_plan *p = st->p;
    const resp *r = &p->resp[st->first + st->active];
    const char *id = r->id;
    for (; st->seg < r->nsegs; st->seg++, st->pos = 0) {
        const seg *s = &r->segs[st->seg];
        if (s->text) {
            const char *sel[2] = {id, "answer"};
            st->io.emit(st->io.ud, sel, 2, s->text, s->len);
            continue;
        }
        if (s->src >= 0 && st->io.skipped(st->io.ud, s->src))
            continue;
        if (s->slot >= 0) {
            pieces *b = &st->bufs[s->slot];
            for (; st->pos < b->n; st->pos++) {
                size_t from = st->pos ? b->ends[st->pos - 1] : 0;
                st->io.emit(st->io.ud, (const char *const *)s->parts, 2, b->text.data + from,
                            b->ends[st->pos] - from);
            }
            if (b->n && (b->closed || final))
                continue;
            if (b->n)
                return false;
            /* nothing streamed: the value shows once it is there */
        }
        sl_value *v = st->io.get(st->io.ud, (const char *const *)s->parts, s->n);
        if (v) {
            emit_value(st, s, v);
            json_decref(v);
        } else if (!final) {
            return false;
        } else if (!r->is_end) {
            sl_buf path;
            sl_buf_init(&path, 0);
            for (int i = 0; i < s->n; i++)
                sl_buf_addf(&path, "%s%s", i ? "." : "", s->parts[i]);
            st->io.emit(st->io.ud, (const char *const *)s->parts, s->n, path.data, path.len);
            sl_buf_release(&path);
        }
    }
    return true;
}

static void flush(sl_stream *st)
{
    while (st->active >= 0 && advance(st, false)) {
        st->active = st->wh < st->wt ? st->wait[st->wh++] : -1;
        st->seg = st->pos = 0;
    }
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Starts the sessions reached by one step, in node id order (responses
 * are sorted by id, so by local index). */
static void start_fresh(sl_stream *st)
{
    if (!st->nfresh)
        return;
    qsort(st->fresh, (size_t)st->nfresh, sizeof *st->fresh, int_cmp);
    for (int i = 0; i < st->nfresh; i++) {
        st->started[st->fresh[i]] = 1;
        st->wait[st->wt++] = st->fresh[i];
    }
    st->nfresh = 0;
    if (st->active < 0) {
        st->active = st->wait[st->wh++];
        st->seg = st->pos = 0;
    }
    flush(st);
}

void sl_stream_begin(sl_stream *st)
{
    for (int k = 0; k < st->nsets; k++)
        reach_from(st, k, st->root);
    start_fresh(st);
}

void sl_stream_chunk(sl_stream *st, int node, const char *var, const char *text, size_t len)
{
    int k = find_slot(st->p, node, var);
    if (k < 0 || !len)
        return;
    pieces *b = &st->bufs[k];
    if (b->closed || sl_buf_add(&b->text, text, len) < 0)
        return;
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 16;
        b->ends = sl_xrealloc(b->ends, (size_t)b->cap * sizeof *b->ends);
    }
    b->ends[b->n++] = b->text.len;
    /* only a session reading this stream can move on */
    if (st->active >= 0) {
        const resp *r = &st->p->resp[st->first + st->active];
        if (st->seg < r->nsegs && r->segs[st->seg].slot == k)
            flush(st);
    }
}

void sl_stream_done(sl_stream *st, int node)
{
    for (int k = st->p->slot_head[node]; k >= 0; k = st->p->slots[k].next)
        st->bufs[k].closed = true;
    flush(st);
}

void sl_stream_taken(sl_stream *st, int e)
{
    const sl_stream_plan *p = st->p;
    int u = p->edges[e].src, v = p->edges[e].dst;
    size_t stride = (size_t)p->nnodes + 1;
    st->taken[e] = 1;
    for (int k = 0; k < st->nsets; k++) {
        const unsigned char *in = st->reach + (size_t)k * stride;
        if (in[u] && !in[v] && blocks(st, k, e))
            reach_from(st, k, v);
    }
    start_fresh(st);
}

void sl_stream_finish(sl_stream *st)
{
    while (st->active >= 0) {
        advance(st, true);
        st->active = st->wh < st->wt ? st->wait[st->wh++] : -1;
        st->seg = st->pos = 0;
    }
}
