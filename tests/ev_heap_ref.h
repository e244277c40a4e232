/* ev_heap_ref.h — for tests/test_ev.c only: the event queue as it was before issue 32's grouped
 * queue (an indexed 4-ary min-heap of every event ordered by (t, seq), re-timing as a fresh push,
 * free ids reused lowest first since perfsim36: a binary min-heap of them here, last freed first
 * before), kept as the reference the grouped queue must match pop for pop. Not a queue for the
 * simulator: no growth limits, no error paths beyond NaN. */
#ifndef SC_EV_HEAP_REF_H
#define SC_EV_HEAP_REF_H

#include <stdint.h>
#include <stdlib.h>

#include "../sim/ev.h"

typedef struct evref_q {
    struct evref_ent {
        double t;
        uint64_t seq;
        int32_t id;
    } *heap;
    ev_event *node; /* payload by id (t, seq, id unused here) */
    uint32_t *pos;  /* heap index by id, UINT32_MAX when free */
    int32_t *free_ids; /* a binary min-heap of n_free ids */
    size_t n, cap;
    int32_t hw, n_free;
    uint64_t next_seq;
} evref_q;

static int evref_before(const struct evref_ent *x, const struct evref_ent *y)
{
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static void evref_place(evref_q *q, size_t i, struct evref_ent e)
{
    q->heap[i] = e;
    q->pos[e.id] = (uint32_t)i;
}

static void evref_up(evref_q *q, size_t i, struct evref_ent e)
{
    while (i > 0 && evref_before(&e, &q->heap[(i - 1) / 4])) {
        evref_place(q, i, q->heap[(i - 1) / 4]);
        i = (i - 1) / 4;
    }
    evref_place(q, i, e);
}

static void evref_down(evref_q *q, size_t i, struct evref_ent e)
{
    for (;;) {
        size_t c0 = 4 * i + 1, c = c0;
        if (c0 >= q->n)
            break;
        for (size_t k = c0 + 1; k < c0 + 4 && k < q->n; k++)
            if (evref_before(&q->heap[k], &q->heap[c]))
                c = k;
        if (!evref_before(&q->heap[c], &e))
            break;
        evref_place(q, i, q->heap[c]);
        i = c;
    }
    evref_place(q, i, e);
}

static void evref_settle(evref_q *q, size_t i, struct evref_ent e)
{
    if (i > 0 && evref_before(&e, &q->heap[(i - 1) / 4]))
        evref_up(q, i, e);
    else
        evref_down(q, i, e);
}

/* A reference queue for at most cap events queued at once. */
static evref_q evref_new(size_t cap)
{
    evref_q q = {0};
    q.cap = cap;
    q.heap = malloc(cap * sizeof *q.heap);
    q.node = malloc(cap * sizeof *q.node);
    q.pos = malloc(cap * sizeof *q.pos);
    q.free_ids = malloc(cap * sizeof *q.free_ids);
    return q;
}

static void evref_free(evref_q *q)
{
    free(q->heap);
    free(q->node);
    free(q->pos);
    free(q->free_ids);
}

/* The free ids' min-heap: put one, take the least. */
static void evref_id_put(evref_q *q, int32_t id)
{
    int32_t *h = q->free_ids, i = q->n_free++;
    for (; i > 0 && h[(i - 1) / 2] > id; i = (i - 1) / 2)
        h[i] = h[(i - 1) / 2];
    h[i] = id;
}

static int32_t evref_id_take(evref_q *q)
{
    int32_t *h = q->free_ids, top = h[0], last = h[--q->n_free], i = 0;
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= q->n_free)
            break;
        if (c + 1 < q->n_free && h[c + 1] < h[c])
            c++;
        if (h[c] >= last)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = last;
    return top;
}

static int32_t evref_push(evref_q *q, double t, int kind, int32_t a, int32_t b, uint32_t ver)
{
    int32_t i = q->n_free > 0 ? evref_id_take(q) : q->hw++;
    q->node[i] = (ev_event){.kind = kind, .a = a, .b = b, .ver = ver};
    evref_up(q, q->n++, (struct evref_ent){t, q->next_seq++, i});
    return i;
}

static void evref_retime(evref_q *q, int32_t id, double t, uint32_t ver)
{
    q->node[id].ver = ver;
    evref_settle(q, q->pos[id], (struct evref_ent){t, q->next_seq++, id});
}

static void evref_remove_at(evref_q *q, int32_t id)
{
    size_t i = q->pos[id];
    q->pos[id] = UINT32_MAX;
    evref_id_put(q, id);
    struct evref_ent last = q->heap[--q->n];
    if (i < q->n)
        evref_settle(q, i, last);
}

static int evref_pop(evref_q *q, ev_event *out)
{
    if (q->n == 0)
        return 0;
    struct evref_ent top = q->heap[0];
    *out = q->node[top.id];
    out->t = top.t;
    out->seq = top.seq;
    out->id = top.id;
    evref_remove_at(q, top.id);
    return 1;
}

#endif
