/* ev.c — indexed 4-ary min-heap event queue ordered by (t, seq), with re-timing and
 * cancellation in place, and the dispatching engine. 4-ary: half the depth of a binary heap, and
 * the four children of a slot are 16-byte entries in one 64-byte cache line (the array is placed
 * so that slots 4i+1..4i+4 start a line), so each level of a sift-down (most re-timings move an
 * event later) reads one line.
 * Each queued event has an id (a slot of a node table that records its heap position), so an
 * owner can move or delete its pending event in O(log n) instead of leaving a stale copy behind.
 * Not here: the meaning of event kinds. */
#include "ev.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/err.h"

#define NOPOS UINT32_MAX
#define ARITY 4
/* An entry's second key packs (seq << ID_BITS) | id: seqs are unique, so comparing the packed
 * word orders as seq alone, and an entry is 16 bytes. Bounds: 2^27 ids queued at once (4 GiB of
 * queue) and 2^37 pushes and re-timings per queue (over 7 hours at 5 M/s); past them push and
 * re-time fail with SC_ERUNTIME instead of misordering. */
#define ID_BITS 27
#define ID_MASK ((UINT64_C(1) << ID_BITS) - 1)
#define SEQ_MAX (UINT64_MAX >> ID_BITS)
#define ID_CAP ((size_t)1 << ID_BITS)
#define LINE 64

/* Heap entries carry their keys, so sifting reads one contiguous array; the payload stays in
 * the node table, indexed by id, and is touched only on push and pop. */
typedef struct ev_hent {
    double t;
    uint64_t key; /* seq << ID_BITS | id */
} ev_hent;

static int32_t ent_id(const ev_hent *e)
{
    return (int32_t)(e->key & ID_MASK);
}

/* Payload by id, touched on push and pop only; the heap positions live apart (pos[]), so the
 * position updates of a sift write a dense array of 4-byte slots (struct of arrays). */
typedef struct ev_node {
    int32_t kind, a, b;
    uint32_t ver;
} ev_node;

struct ev_queue {
    ev_hent *heap; /* heap[0] is 3 entries into heap_mem, so that heap[1] starts a line  */
    void *heap_mem;
    ev_node *node; /* cap entries; ids [0, hw) have been used                     */
    uint32_t *pos; /* cap entries: index in heap, NOPOS when the id is free       */
    int32_t *free_ids; /* cap entries: a stack of the free ids below hw, last freed on top (an
                          array, not a list through node[]: the next ids to reuse are known
                          ahead, so their slots are fetched while a batch of pushes runs)   */
    size_t n, cap;
    int32_t hw, n_free;
    uint64_t next_seq;
    uint64_t retimed, cancelled;
};

typedef struct ev_slot {
    ev_handler h;
    void *ctx;
} ev_slot;

struct ev_engine {
    ev_queue *q;
    ev_slot *handlers; /* indexed by kind, n_handlers entries (h == NULL: none)          */
    int n_handlers;
    double now;
    uint64_t events;
};

/* ---- queue --------------------------------------------------------------------------- */
#define HEAP_PAD (LINE / sizeof(ev_hent) - 1) /* entries before heap[0] in its block */

/* A heap array for cap entries placed as described above, the first n copied from old. */
static int heap_alloc(ev_queue *q, size_t cap, size_t n)
{
    size_t bytes = (cap + HEAP_PAD) * sizeof(ev_hent);
    void *mem = aligned_alloc(LINE, (bytes + LINE - 1) / LINE * LINE);
    if (!mem)
        return SC_ERUNTIME;
    ev_hent *h = (ev_hent *)mem + HEAP_PAD;
    if (n)
        memcpy(h, q->heap, n * sizeof *h);
    free(q->heap_mem);
    q->heap_mem = mem;
    q->heap = h;
    return 0;
}

ev_queue *ev_queue_new(size_t capacity)
{
    ev_queue *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->cap = capacity ? capacity : 64;
    if (q->cap > ID_CAP)
        q->cap = ID_CAP;
    int hrc = heap_alloc(q, q->cap, 0);
    q->node = malloc(q->cap * sizeof *q->node);
    q->pos = malloc(q->cap * sizeof *q->pos);
    q->free_ids = malloc(q->cap * sizeof *q->free_ids);
    if (hrc || !q->node || !q->pos || !q->free_ids) {
        free(q->heap_mem);
        free(q->node);
        free(q->pos);
        free(q->free_ids);
        free(q);
        return NULL;
    }
    return q;
}

void ev_queue_free(ev_queue *q)
{
    if (!q)
        return;
    free(q->heap_mem);
    free(q->node);
    free(q->pos);
    free(q->free_ids);
    free(q);
}

static int before(const ev_hent *x, const ev_hent *y)
{
    return x->t < y->t || (x->t == y->t && x->key < y->key);
}

static void place(ev_queue *q, size_t i, ev_hent e)
{
    q->heap[i] = e;
    q->pos[ent_id(&e)] = (uint32_t)i;
}

static void sift_up(ev_queue *q, size_t i, ev_hent e)
{
    while (i > 0) {
        size_t p = (i - 1) / ARITY;
        if (!before(&e, &q->heap[p]))
            break;
        place(q, i, q->heap[p]);
        i = p;
    }
    place(q, i, e);
}

/* The 16 grandchildren of slot i, four lines from 16 i + 5 (line-aligned as heap[1] is), fetched
 * while its children are compared, so that the next level's line is on its way whichever child
 * wins (at 8k+ ranks the lower levels are past the L2). A macro: gcc 12 finds a function that
 * only prefetches "pure" and deletes its calls. Ordering is not touched. */
#define PREFETCH_GRANDCHILDREN(q, i)                                                              \
    do {                                                                                          \
        size_t g0_ = ARITY * (ARITY * (i) + 1) + 1;                                               \
        if (g0_ + 3 * ARITY < (q)->n) {                                                           \
            const ev_hent *g_ = (q)->heap + g0_;                                                  \
            __builtin_prefetch(g_);                                                               \
            __builtin_prefetch(g_ + ARITY);                                                       \
            __builtin_prefetch(g_ + 2 * ARITY);                                                   \
            __builtin_prefetch(g_ + 3 * ARITY);                                                   \
        }                                                                                         \
    } while (0)

static void sift_down(ev_queue *q, size_t i, ev_hent e)
{
    size_t n = q->n;
    for (;;) {
        size_t c0 = ARITY * i + 1;
        if (c0 >= n)
            break;
        PREFETCH_GRANDCHILDREN(q, i);
        size_t end = c0 + ARITY < n ? c0 + ARITY : n, c = c0;
        for (size_t k = c0 + 1; k < end; k++)
            if (before(&q->heap[k], &q->heap[c]))
                c = k;
        if (!before(&q->heap[c], &e))
            break;
        place(q, i, q->heap[c]);
        i = c;
    }
    place(q, i, e);
}

/* Put e (already holding its new key) at heap index i, moving it up or down. */
static void resettle(ev_queue *q, size_t i, ev_hent e)
{
    if (i > 0 && before(&e, &q->heap[(i - 1) / ARITY]))
        sift_up(q, i, e);
    else
        sift_down(q, i, e);
}

static int grow(ev_queue *q)
{
    if (q->cap >= ID_CAP) /* ids are ID_BITS wide: 2^27 queued at once at most */
        return SC_ERUNTIME;
    size_t cap = q->cap * 2 < ID_CAP ? q->cap * 2 : ID_CAP;
    if (heap_alloc(q, cap, q->n))
        return SC_ERUNTIME;
    ev_node *nd = realloc(q->node, cap * sizeof *nd);
    if (!nd)
        return SC_ERUNTIME; /* heap is larger, cap unchanged: still consistent */
    q->node = nd;
    uint32_t *ps = realloc(q->pos, cap * sizeof *ps);
    if (!ps)
        return SC_ERUNTIME;
    q->pos = ps;
    int32_t *fi = realloc(q->free_ids, cap * sizeof *fi);
    if (!fi)
        return SC_ERUNTIME;
    q->free_ids = fi;
    q->cap = cap;
    return 0;
}

int ev_push_id(ev_queue *q, double t, int kind, int32_t a, int32_t b, uint32_t ver, int32_t *id)
{
    if (isnan(t))
        return SC_EINPUT;
    if (q->next_seq > SEQ_MAX)
        return SC_ERUNTIME;
    if (q->n_free == 0 && (size_t)q->hw == q->cap && grow(q))
        return SC_ERUNTIME;
    int32_t i;
    if (q->n_free > 0) {
        i = q->free_ids[--q->n_free];
        /* a completion's flows queue together: the slots of the pushes 3 ahead are fetched */
        if (q->n_free >= 3) {
            __builtin_prefetch(&q->node[q->free_ids[q->n_free - 3]], 1);
            __builtin_prefetch(&q->pos[q->free_ids[q->n_free - 3]], 1);
        }
    } else {
        i = q->hw++;
    }
    q->node[i] = (ev_node){kind, a, b, ver};
    ev_hent e = {t, q->next_seq++ << ID_BITS | (uint64_t)i};
    sift_up(q, q->n++, e);
    if (id)
        *id = i;
    return 0;
}

int ev_push(ev_queue *q, double t, int kind, int32_t a, int32_t b, uint32_t ver)
{
    return ev_push_id(q, t, kind, a, b, ver, NULL);
}

static int id_ok(const ev_queue *q, int32_t id)
{
    return id >= 0 && id < q->hw && q->pos[id] != NOPOS;
}

int ev_queued(const ev_queue *q, int32_t id)
{
    return id_ok(q, id);
}

int ev_retime(ev_queue *q, int32_t id, double t, uint32_t ver)
{
    if (isnan(t) || !id_ok(q, id))
        return SC_EINPUT;
    if (q->next_seq > SEQ_MAX)
        return SC_ERUNTIME;
    q->node[id].ver = ver;
    size_t i = q->pos[id];
    ev_hent e = {t, q->next_seq++ << ID_BITS | (uint64_t)id}; /* ordered as if pushed now */
    resettle(q, i, e);
    q->retimed++;
    return 0;
}

static void release(ev_queue *q, int32_t id)
{
    q->pos[id] = NOPOS;
    q->free_ids[q->n_free++] = id;
}

int ev_cancel(ev_queue *q, int32_t id)
{
    if (!id_ok(q, id))
        return SC_EINPUT;
    size_t i = q->pos[id];
    release(q, id);
    ev_hent last = q->heap[--q->n];
    if (i < q->n)
        resettle(q, i, last);
    q->cancelled++;
    return 0;
}

int ev_pop(ev_queue *q, ev_event *out)
{
    if (q->n == 0)
        return 0;
    ev_hent top = q->heap[0];
    int32_t id = ent_id(&top);
    const ev_node *nd = &q->node[id];
    *out = (ev_event){.t = top.t, .seq = top.key >> ID_BITS, .kind = nd->kind, .a = nd->a, .b = nd->b,
                      .ver = nd->ver, .id = id};
    release(q, id);
    ev_hent last = q->heap[--q->n];
    if (q->n > 0) {
        sift_down(q, 0, last);
        /* the next pop reads the new top's payload: fetched while this event is handled (at
         * 16k+ ranks the node table is past the caches; ordering is not touched) */
        __builtin_prefetch(&q->node[ent_id(&q->heap[0])]);
    }
    return 1;
}

double ev_peek_time(const ev_queue *q)
{
    return q->n ? q->heap[0].t : INFINITY;
}

size_t ev_len(const ev_queue *q)
{
    return q->n;
}

uint64_t ev_retimed(const ev_queue *q)
{
    return q->retimed;
}

uint64_t ev_cancelled(const ev_queue *q)
{
    return q->cancelled;
}

/* ---- engine -------------------------------------------------------------------------- */
ev_engine *ev_engine_new(size_t capacity)
{
    ev_engine *eng = calloc(1, sizeof *eng);
    if (!eng)
        return NULL;
    eng->q = ev_queue_new(capacity);
    if (!eng->q) {
        free(eng);
        return NULL;
    }
    return eng;
}

void ev_engine_free(ev_engine *eng)
{
    if (!eng)
        return;
    ev_queue_free(eng->q);
    free(eng->handlers);
    free(eng);
}

int ev_engine_register(ev_engine *eng, int kind, ev_handler h, void *ctx)
{
    if (kind < 0 || !h)
        return SC_EINPUT;
    if (kind >= eng->n_handlers) {
        if (kind == INT32_MAX)
            return SC_ERUNTIME;
        int n = kind + 1;
        ev_slot *s = realloc(eng->handlers, (size_t)n * sizeof *s);
        if (!s)
            return SC_ERUNTIME;
        for (int k = eng->n_handlers; k < n; k++)
            s[k] = (ev_slot){NULL, NULL};
        eng->handlers = s;
        eng->n_handlers = n;
    }
    eng->handlers[kind] = (ev_slot){h, ctx};
    return 0;
}

int ev_engine_push(ev_engine *eng, double t, int kind, int32_t a, int32_t b, uint32_t ver)
{
    return ev_engine_push_id(eng, t, kind, a, b, ver, NULL);
}

int ev_engine_push_id(ev_engine *eng, double t, int kind, int32_t a, int32_t b, uint32_t ver, int32_t *id)
{
    if (isnan(t) || t < eng->now)
        return SC_EINPUT;
    return ev_push_id(eng->q, t, kind, a, b, ver, id);
}

int ev_engine_retime(ev_engine *eng, int32_t id, double t, uint32_t ver)
{
    if (isnan(t) || t < eng->now)
        return SC_EINPUT;
    return ev_retime(eng->q, id, t, ver);
}

int ev_engine_cancel(ev_engine *eng, int32_t id)
{
    return ev_cancel(eng->q, id);
}

int ev_engine_run(ev_engine *eng, double t_stop)
{
    ev_event e;
    while (eng->q->n > 0 && eng->q->heap[0].t <= t_stop) {
        ev_pop(eng->q, &e);
        eng->now = e.t;
        if (e.kind < 0 || e.kind >= eng->n_handlers || !eng->handlers[e.kind].h)
            return SC_ERUNTIME;
        eng->events++;
        int rc = eng->handlers[e.kind].h(eng->handlers[e.kind].ctx, &e, eng);
        if (rc)
            return rc;
    }
    return 0;
}

int ev_engine_peek(const ev_engine *eng, int *kind, int32_t *a)
{
    const ev_queue *q = eng->q;
    if (q->n == 0)
        return 0;
    const ev_node *nd = &q->node[ent_id(&q->heap[0])];
    *kind = nd->kind;
    *a = nd->a;
    return 1;
}

void ev_engine_prefetch_pos(const ev_engine *eng, int32_t id)
{
    if (id >= 0 && id < eng->q->hw)
        __builtin_prefetch(&eng->q->pos[id]);
}

void ev_engine_prefetch_entry(const ev_engine *eng, int32_t id)
{
    const ev_queue *q = eng->q;
    if (id >= 0 && id < q->hw && q->pos[id] != NOPOS) {
        __builtin_prefetch(&q->heap[q->pos[id]]);
        __builtin_prefetch(&q->node[id], 1);
    }
}

double ev_engine_now(const ev_engine *eng)
{
    return eng->now;
}

uint64_t ev_engine_events(const ev_engine *eng)
{
    return eng->events;
}

uint64_t ev_engine_retimed(const ev_engine *eng)
{
    return eng->q->retimed + eng->q->cancelled;
}

size_t ev_engine_pending(const ev_engine *eng)
{
    return eng->q->n;
}
