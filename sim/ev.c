/* ev.c — the event queue, ordered by (t, seq), with re-timing and cancellation in place, and the
 * dispatching engine. Events are grouped by time: a group holds events of one time value in seq
 * order (a doubly linked list through the events' records), and a 4-ary min-heap orders the
 * groups by (t, seq of the group's first event). A push or re-time to time t appends to the
 * newest group of value t when a small direct-mapped table (time -> group) still names it, else
 * opens a new group; since seqs only grow, an append keeps its group in seq order, and groups of
 * one value hold disjoint seq ranges in the order they were opened, so pops come out in exactly
 * (t, seq) order. The simulator queues thousands of events per time value (a collective's flows
 * end together; ranks compute in step), so most pushes, pops and re-timings are list operations
 * and the heap holds a few groups instead of every event (cost per event flat in the number
 * pending).
 * Each queued event has an id (a slot of the record table), so an owner can move or delete its
 * pending event without leaving a stale copy behind.
 * Not here: the meaning of event kinds. */
#include "ev.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/err.h"
#include "idpool.h"

#define NOPOS UINT32_MAX
#define NIL (-1)
#define ARITY 4
/* A heap entry's second key packs (seq << ID_BITS) | group: seqs are unique, so comparing the
 * packed word orders as seq alone, and an entry is 16 bytes. Bounds: 2^27 ids queued at once and
 * 2^37 pushes and re-timings per queue (over 7 hours at 5 M/s); past them push and re-time fail
 * with SC_ERUNTIME instead of misordering. Groups never outnumber queued events. */
#define ID_BITS 27
#define ID_MASK ((UINT64_C(1) << ID_BITS) - 1)
#define SEQ_MAX (UINT64_MAX >> ID_BITS)
#define ID_CAP ((size_t)1 << ID_BITS)
#define LINE 64
#define MAP_BITS0 10 /* 2^10 time -> group table slots at first; doubled past half the groups used */

/* Group heap entries carry their keys, so sifting reads one contiguous array. */
typedef struct ev_hent {
    double t;
    uint64_t key; /* seq of the group's first event << ID_BITS | group */
} ev_hent;

static int32_t ent_id(const ev_hent *e)
{
    return (int32_t)(e->key & ID_MASK);
}

/* One event's record by id (48 bytes): its key, payload and place in its group's list. */
typedef struct ev_node {
    double t;
    uint64_t seq;
    int32_t kind, a, b;
    uint32_t ver;
    int32_t next, prev; /* neighbours in its group's list (seq order), NIL at the ends */
    int32_t grp;        /* its group; NIL when the id is free                          */
    int32_t pad_;
} ev_node;

/* A group: queued events of one time value, head the lowest seq. */
typedef struct ev_grp {
    double t;
    int32_t head, tail;
    uint32_t n;
    uint32_t hpos; /* index in the group heap */
} ev_grp;

/* A slot of the time -> group table: the newest open group of value t (g NIL: none). */
typedef struct ev_map {
    double t;
    int32_t g;
} ev_map;

struct ev_queue {
    ev_hent *heap; /* groups; heap[0] is 3 entries into heap_mem, so that heap[1] starts a line */
    void *heap_mem;
    ev_node *node; /* cap entries; ids [0, hw) have been used                     */
    ev_grp *grp;   /* cap entries; group ids [0, ghw) have been used              */
    idp_pool free_ids; /* the free ids below hw, the lowest reused first (idpool.h: the events
                          queued together, a batch of flows' ends, take ascending records
                          in the order they will pop)                                      */
    int32_t *free_grp; /* cap entries: the same for group ids                               */
    ev_map *map;       /* map_n entries, a power of two                                    */
    size_t n, ng, cap, map_n;
    int32_t hw, ghw, n_gfree;
    int map_shift;
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

/* ---- queue: storage ------------------------------------------------------------------ */
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

/* An empty time -> group table of 2^bits slots (replacing the old one: a group it forgets is
 * still queued, later pushes of its time open a newer group, which keeps the order). */
static int map_alloc(ev_queue *q, int bits)
{
    size_t n = (size_t)1 << bits;
    ev_map *m = malloc(n * sizeof *m);
    if (!m)
        return SC_ERUNTIME;
    for (size_t i = 0; i < n; i++)
        m[i] = (ev_map){0, NIL};
    free(q->map);
    q->map = m;
    q->map_n = n;
    q->map_shift = 64 - bits;
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
    int hrc = heap_alloc(q, q->cap, 0), mrc = map_alloc(q, MAP_BITS0);
    q->node = malloc(q->cap * sizeof *q->node);
    q->grp = malloc(q->cap * sizeof *q->grp);
    int frc = idp_reserve(&q->free_ids, (int32_t)((q->cap + 63) / 64));
    q->free_grp = malloc(q->cap * sizeof *q->free_grp);
    if (hrc || mrc || frc || !q->node || !q->grp || !q->free_grp) {
        ev_queue_free(q);
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
    free(q->grp);
    idp_free_all(&q->free_ids);
    free(q->free_grp);
    free(q->map);
    free(q);
}

/* Every array to cap entries (the heap first: each step leaves the queue consistent). */
static int grow(ev_queue *q)
{
    if (q->cap >= ID_CAP) /* ids are ID_BITS wide: 2^27 queued at once at most */
        return SC_ERUNTIME;
    size_t cap = q->cap * 2 < ID_CAP ? q->cap * 2 : ID_CAP;
    if (heap_alloc(q, cap, q->ng))
        return SC_ERUNTIME;
    ev_node *nd = realloc(q->node, cap * sizeof *nd);
    if (!nd)
        return SC_ERUNTIME; /* heap is larger, cap unchanged: still consistent */
    q->node = nd;
    ev_grp *gr = realloc(q->grp, cap * sizeof *gr);
    if (!gr)
        return SC_ERUNTIME;
    q->grp = gr;
    if (idp_reserve(&q->free_ids, (int32_t)((cap + 63) / 64)))
        return SC_ERUNTIME;
    int32_t *fg = realloc(q->free_grp, cap * sizeof *fg);
    if (!fg)
        return SC_ERUNTIME;
    q->free_grp = fg;
    q->cap = cap;
    return 0;
}

/* ---- queue: the group heap ----------------------------------------------------------- */
static int before(const ev_hent *x, const ev_hent *y)
{
    return x->t < y->t || (x->t == y->t && x->key < y->key);
}

static void place(ev_queue *q, size_t i, ev_hent e)
{
    q->heap[i] = e;
    q->grp[ent_id(&e)].hpos = (uint32_t)i;
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

static void sift_down(ev_queue *q, size_t i, ev_hent e)
{
    size_t n = q->ng;
    for (;;) {
        size_t c0 = ARITY * i + 1;
        if (c0 >= n)
            break;
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

/* ---- queue: groups ------------------------------------------------------------------- */
/* The table slot of time value t (0 and -0 are one value: they compare equal). */
static size_t map_slot(const ev_queue *q, double t)
{
    uint64_t bits = 0;
    if (t != 0)
        memcpy(&bits, &t, sizeof bits);
    return (size_t)((bits * UINT64_C(0x9E3779B97F4A7C15)) >> q->map_shift);
}

/* A new group of value t whose first event has seq `seq`, queued in the heap and named in the
 * table as the newest group of its value. Room: groups <= queued events <= cap. */
static int32_t grp_open(ev_queue *q, double t, uint64_t seq, size_t slot)
{
    int32_t g = q->n_gfree > 0 ? q->free_grp[--q->n_gfree] : q->ghw++;
    q->grp[g] = (ev_grp){t, NIL, NIL, 0, 0};
    sift_up(q, q->ng++, (ev_hent){t, seq << ID_BITS | (uint64_t)g});
    q->map[slot] = (ev_map){t, g};
    return g;
}

/* Group g has lost its last event: out of the heap and the table, its id free. */
static void grp_close(ev_queue *q, int32_t g)
{
    size_t slot = map_slot(q, q->grp[g].t);
    if (q->map[slot].g == g)
        q->map[slot].g = NIL;
    size_t i = q->grp[g].hpos;
    ev_hent last = q->heap[--q->ng];
    if (i < q->ng) {
        if (i > 0 && before(&last, &q->heap[(i - 1) / ARITY]))
            sift_up(q, i, last);
        else
            sift_down(q, i, last);
    }
    q->free_grp[q->n_gfree++] = g;
}

/* Event id (t and seq set, seq the largest so far) at the tail of the newest group of its time
 * value, opened when the table names none. */
static void link_in(ev_queue *q, int32_t id)
{
    ev_node *nd = &q->node[id];
    size_t slot = map_slot(q, nd->t);
    int32_t g = q->map[slot].g;
    if (g == NIL || !(q->map[slot].t == nd->t))
        g = grp_open(q, nd->t, nd->seq, slot);
    ev_grp *gr = &q->grp[g];
    nd->grp = g;
    nd->next = NIL;
    nd->prev = gr->tail;
    if (gr->tail != NIL)
        q->node[gr->tail].next = id;
    else
        gr->head = id;
    gr->tail = id;
    gr->n++;
}

/* Event id out of its group's list; the group closed when it empties. */
static void link_out(ev_queue *q, int32_t id)
{
    ev_node *nd = &q->node[id];
    int32_t g = nd->grp;
    ev_grp *gr = &q->grp[g];
    if (nd->prev != NIL)
        q->node[nd->prev].next = nd->next;
    else
        gr->head = nd->next;
    if (nd->next != NIL)
        q->node[nd->next].prev = nd->prev;
    else
        gr->tail = nd->prev;
    if (--gr->n == 0)
        grp_close(q, g);
}

/* The table doubled (and emptied) once the groups ever used pass half its slots. */
static int map_fit(ev_queue *q)
{
    if ((size_t)q->ghw < q->map_n / 2 || q->map_n >= ID_CAP)
        return 0;
    return map_alloc(q, 64 - q->map_shift + 1);
}

/* ---- queue: operations --------------------------------------------------------------- */
int ev_push_id(ev_queue *q, double t, int kind, int32_t a, int32_t b, uint32_t ver, int32_t *id)
{
    if (isnan(t))
        return SC_EINPUT;
    if (q->next_seq > SEQ_MAX)
        return SC_ERUNTIME;
    if (q->free_ids.n == 0 && (size_t)q->hw == q->cap && grow(q))
        return SC_ERUNTIME;
    if (map_fit(q))
        return SC_ERUNTIME;
    int32_t i;
    if (q->free_ids.n > 0) {
        i = idp_take(&q->free_ids);
        /* a completion's flows queue together: the next push's record is fetched */
        int32_t nx = idp_peek(&q->free_ids);
        if (nx >= 0)
            __builtin_prefetch(&q->node[nx], 1);
    } else {
        i = q->hw++;
    }
    ev_node *nd = &q->node[i];
    nd->t = t;
    nd->seq = q->next_seq++;
    nd->kind = kind;
    nd->a = a;
    nd->b = b;
    nd->ver = ver;
    link_in(q, i);
    q->n++;
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
    return id >= 0 && id < q->hw && q->node[id].grp != NIL;
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
    if (map_fit(q))
        return SC_ERUNTIME;
    link_out(q, id);
    ev_node *nd = &q->node[id];
    nd->ver = ver;
    nd->t = t;
    nd->seq = q->next_seq++; /* ordered as if pushed now */
    link_in(q, id);
    q->retimed++;
    return 0;
}

static void release(ev_queue *q, int32_t id)
{
    q->node[id].grp = NIL;
    idp_put(&q->free_ids, id);
    q->n--;
}

int ev_cancel(ev_queue *q, int32_t id)
{
    if (!id_ok(q, id))
        return SC_EINPUT;
    link_out(q, id);
    release(q, id);
    q->cancelled++;
    return 0;
}

/* The earliest queued event's id (the queue is not empty). */
static int32_t first_id(const ev_queue *q)
{
    return q->grp[ent_id(&q->heap[0])].head;
}

int ev_pop(ev_queue *q, ev_event *out)
{
    if (q->n == 0)
        return 0;
    int32_t id = first_id(q);
    const ev_node *nd = &q->node[id];
    *out = (ev_event){.t = nd->t, .seq = nd->seq, .kind = nd->kind, .a = nd->a, .b = nd->b, .ver = nd->ver, .id = id};
    link_out(q, id);
    release(q, id);
    /* the next pop reads the new first event's record: fetched while this event is handled
     * (at 16k+ ranks the record table is past the caches; ordering is not touched) */
    if (q->n > 0)
        __builtin_prefetch(&q->node[first_id(q)]);
    return 1;
}

double ev_peek_time(const ev_queue *q)
{
    return q->n ? q->node[first_id(q)].t : INFINITY;
}

size_t ev_len(const ev_queue *q)
{
    return q->n;
}

size_t ev_groups(const ev_queue *q)
{
    return q->ng;
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
    const ev_node *nd = &q->node[first_id(q)];
    *kind = nd->kind;
    *a = nd->a;
    return 1;
}

void ev_engine_prefetch_pos(const ev_engine *eng, int32_t id)
{
    if (id >= 0 && id < eng->q->hw)
        __builtin_prefetch(&eng->q->node[id], 1);
}

void ev_engine_prefetch_entry(const ev_engine *eng, int32_t id)
{
    const ev_queue *q = eng->q;
    if (id >= 0 && id < q->hw && q->node[id].grp != NIL) {
        const ev_node *nd = &q->node[id];
        if (nd->prev != NIL)
            __builtin_prefetch(&q->node[nd->prev], 1);
        if (nd->next != NIL)
            __builtin_prefetch(&q->node[nd->next], 1);
        __builtin_prefetch(&q->grp[nd->grp], 1);
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
