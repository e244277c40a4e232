/* ev.c — binary min-heap event queue ordered by (t, seq) and the dispatching engine.
 * Not here: the meaning of event kinds, cancellation (callers compare ev_event.ver instead). */
#include "ev.h"

#include <math.h>
#include <stdlib.h>

#include "../model/err.h"

struct ev_queue {
    ev_event *heap;
    size_t n, cap;
    uint64_t next_seq;
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
ev_queue *ev_queue_new(size_t capacity)
{
    ev_queue *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->cap = capacity ? capacity : 64;
    q->heap = malloc(q->cap * sizeof *q->heap);
    if (!q->heap) {
        free(q);
        return NULL;
    }
    return q;
}

void ev_queue_free(ev_queue *q)
{
    if (!q)
        return;
    free(q->heap);
    free(q);
}

static int before(const ev_event *x, const ev_event *y)
{
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

int ev_push(ev_queue *q, double t, int kind, int32_t a, int32_t b, uint32_t ver)
{
    if (isnan(t))
        return SC_EINPUT;
    if (q->n == q->cap) {
        if (q->cap > SIZE_MAX / 2 / sizeof *q->heap)
            return SC_ERUNTIME;
        size_t cap = q->cap * 2;
        ev_event *h = realloc(q->heap, cap * sizeof *h);
        if (!h)
            return SC_ERUNTIME;
        q->heap = h;
        q->cap = cap;
    }
    ev_event e = {.t = t, .seq = q->next_seq++, .kind = kind, .a = a, .b = b, .ver = ver};
    size_t i = q->n++;
    while (i > 0) { /* sift up */
        size_t p = (i - 1) / 2;
        if (!before(&e, &q->heap[p]))
            break;
        q->heap[i] = q->heap[p];
        i = p;
    }
    q->heap[i] = e;
    return 0;
}

int ev_pop(ev_queue *q, ev_event *out)
{
    if (q->n == 0)
        return 0;
    *out = q->heap[0];
    ev_event last = q->heap[--q->n];
    size_t i = 0, n = q->n;
    for (;;) { /* sift down the former last element from the root */
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(&q->heap[c + 1], &q->heap[c]))
            c++;
        if (!before(&q->heap[c], &last))
            break;
        q->heap[i] = q->heap[c];
        i = c;
    }
    if (n > 0)
        q->heap[i] = last;
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
    if (isnan(t) || t < eng->now)
        return SC_EINPUT;
    return ev_push(eng->q, t, kind, a, b, ver);
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

double ev_engine_now(const ev_engine *eng)
{
    return eng->now;
}

uint64_t ev_engine_events(const ev_engine *eng)
{
    return eng->events;
}

size_t ev_engine_pending(const ev_engine *eng)
{
    return eng->q->n;
}
