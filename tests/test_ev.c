/* test_ev.c — event queue order, tie-breaking, growth, and engine dispatch / stop.
 * Expected orders are derived by hand from the (t, push order) rule stated in sim/ev.h. */
#include <check.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>

#include "../base/err.h"
#include "../sim/ev.h"
#include "ev_heap_ref.h"
#include <float.h>
#include <string.h>

START_TEST(test_queue_order)
{
    /* Pushed t = 3, 1, 2, 0.5, 4 with a = push index 0..4; sorted by t: 0.5(a3) 1(a1) 2(a2)
     * 3(a0) 4(a4). */
    ev_queue *q = ev_queue_new(8);
    ck_assert_ptr_nonnull(q);
    const double t[5] = {3, 1, 2, 0.5, 4};
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(ev_push(q, t[i], 7, i, -i, (uint32_t)(10 + i)), 0);
    ck_assert_uint_eq(ev_len(q), 5);
    ck_assert_double_eq(ev_peek_time(q), 0.5);
    const int want[5] = {3, 1, 2, 0, 4};
    ev_event e;
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(ev_pop(q, &e), 1);
        ck_assert_int_eq(e.a, want[i]);
        ck_assert_int_eq(e.b, -want[i]);
        ck_assert_uint_eq(e.ver, (uint32_t)(10 + want[i]));
        ck_assert_uint_eq(e.seq, (uint64_t)want[i]); /* seq = push order, from 0 */
        ck_assert_int_eq(e.kind, 7);
        ck_assert_double_eq(e.t, t[want[i]]);
    }
    ck_assert_int_eq(ev_pop(q, &e), 0);
    ck_assert_uint_eq(ev_len(q), 0);
    ck_assert(isinf(ev_peek_time(q)));
    ck_assert_int_eq(ev_push(q, NAN, 0, 0, 0, 0), SC_EINPUT);
    ck_assert_uint_eq(ev_len(q), 0);
    ev_queue_free(q);
}
END_TEST

START_TEST(test_queue_ties)
{
    /* Six events at the same t = 1 pushed with a = 0..5 come out as 0..5; an event at t = 0
     * pushed last comes out first. */
    ev_queue *q = ev_queue_new(0);
    for (int i = 0; i < 6; i++)
        ev_push(q, 1.0, 0, i, 0, 0);
    ev_push(q, 0.0, 0, 99, 0, 0);
    ev_event e;
    ev_pop(q, &e);
    ck_assert_int_eq(e.a, 99);
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(ev_pop(q, &e), 1);
        ck_assert_int_eq(e.a, i);
    }
    ev_queue_free(q);
}
END_TEST

START_TEST(test_queue_growth)
{
    /* Capacity hint 2, 5000 events at t drawn from {0, ..., 9} (many ties): popped they must be
     * sorted by t and, within one t, by push index (a) — the heap grew 2 -> 8192 on the way. */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 42);
    ev_queue *q = ev_queue_new(2);
    enum { N = 5000 };
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(ev_push(q, (double)gsl_rng_uniform_int(r, 10), 1, i, 0, 0), 0);
    ck_assert_uint_eq(ev_len(q), N);
    ev_event prev = {.t = -1, .a = -1}, e;
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(ev_pop(q, &e), 1);
        ck_assert(e.t > prev.t || (e.t == prev.t && e.a > prev.a));
        prev = e;
    }
    ck_assert_int_eq(ev_pop(q, &e), 0);
    /* Interleaved pushes and pops keep the order too: push 3, pop 1, push 3 ... */
    double last = -1;
    int pushed = 0, popped = 0;
    for (int round = 0; round < 1000; round++) {
        for (int k = 0; k < 3; k++, pushed++)
            ev_push(q, last + 1 + gsl_rng_uniform(r) * 100, 0, pushed, 0, 0);
        ev_pop(q, &e);
        popped++;
        ck_assert(e.t >= last);
        last = e.t;
    }
    ck_assert_uint_eq(ev_len(q), (size_t)(pushed - popped));
    ev_queue_free(q);
    gsl_rng_free(r);
}
END_TEST

START_TEST(test_queue_retime_cancel)
{
    /* A t=1 (seq 0), B t=2 (seq 1), C t=3 (seq 2). Re-time C to 1: it gets seq 3, so it pops
     * after A (same t, earlier seq) and before B: A C B. Then, in a fresh queue, re-time A to 5
     * and cancel B: C A. */
    ev_queue *q = ev_queue_new(2);
    int32_t ia, ib, ic;
    ck_assert_int_eq(ev_push_id(q, 1, 0, 'A', 0, 0, &ia), 0);
    ck_assert_int_eq(ev_push_id(q, 2, 0, 'B', 0, 0, &ib), 0);
    ck_assert_int_eq(ev_push_id(q, 3, 0, 'C', 0, 0, &ic), 0);
    ck_assert_int_eq(ev_retime(q, ic, 1, 7), 0);
    ev_event e;
    const char want[3] = {'A', 'C', 'B'};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(ev_pop(q, &e), 1);
        ck_assert_int_eq(e.a, want[i]);
        if (e.a == 'C') {
            ck_assert_uint_eq(e.ver, 7);
            ck_assert_double_eq(e.t, 1);
            ck_assert_int_eq(e.id, ic);
        }
    }
    /* popped ids are free: re-timing or cancelling them is refused */
    ck_assert_int_eq(ev_retime(q, ic, 4, 0), SC_EINPUT);
    ck_assert_int_eq(ev_cancel(q, ia), SC_EINPUT);
    ck_assert_int_eq(ev_queued(q, ib), 0);
    ck_assert_int_eq(ev_push_id(q, 1, 0, 'A', 0, 0, &ia), 0);
    ck_assert_int_eq(ev_push_id(q, 2, 0, 'B', 0, 0, &ib), 0);
    ck_assert_int_eq(ev_push_id(q, 3, 0, 'C', 0, 0, &ic), 0);
    ck_assert_int_eq(ev_retime(q, ia, 5, 0), 0);
    ck_assert_int_eq(ev_retime(q, ia, NAN, 0), SC_EINPUT);
    ck_assert_int_eq(ev_cancel(q, ib), 0);
    ck_assert_uint_eq(ev_len(q), 2);
    ck_assert_int_eq(ev_pop(q, &e), 1);
    ck_assert_int_eq(e.a, 'C');
    ck_assert_int_eq(ev_pop(q, &e), 1);
    ck_assert_int_eq(e.a, 'A');
    ck_assert_double_eq(e.t, 5);
    ck_assert_int_eq(ev_pop(q, &e), 0);
    ck_assert_uint_eq(ev_retimed(q), 2);
    ck_assert_uint_eq(ev_cancelled(q), 1);
    ev_queue_free(q);
}
END_TEST

START_TEST(test_queue_retime_equals_lazy)
{
    /* 200 owners, each with at most one pending event; 20000 random steps: pop, re-time an
     * owner's event (earlier or later, times on a coarse grid so ties are frequent), cancel it,
     * or push one for an idle owner. The reference is the lazy scheme the simulator used before:
     * push a new copy with a bumped version and drop popped copies whose version is old. Both
     * must pop the same live events, in the same order, at the same times. */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    enum { OWNERS = 200, STEPS = 20000 };
    ev_queue *q = ev_queue_new(4), *lazy = ev_queue_new(4);
    int32_t id[OWNERS];
    uint32_t ver[OWNERS];
    for (int o = 0; o < OWNERS; o++) {
        id[o] = -1;
        ver[o] = 0;
    }
    double now = 0;
    long pops = 0, stale = 0;
    for (int step = 0; step < STEPS; step++) {
        int o = (int)gsl_rng_uniform_int(r, OWNERS);
        double t = now + (double)gsl_rng_uniform_int(r, 8) * 0.5;
        unsigned op = (unsigned)gsl_rng_uniform_int(r, 4);
        if (op == 0 && ev_len(q) > 0) {
            ev_event e, f;
            ck_assert_int_eq(ev_pop(q, &e), 1);
            for (;;) { /* the reference: skip stale copies */
                ck_assert_int_eq(ev_pop(lazy, &f), 1);
                if (f.ver == ver[f.a] && id[f.a] >= 0)
                    break;
                stale++;
            }
            ck_assert_int_eq(e.a, f.a);
            ck_assert_double_eq(e.t, f.t);
            ck_assert_int_eq(e.id, id[e.a]);
            id[e.a] = -1;
            now = e.t;
            pops++;
        } else if (id[o] >= 0 && op == 1) {
            ck_assert_int_eq(ev_cancel(q, id[o]), 0);
            id[o] = -1;
            ver[o]++; /* the lazy copy goes stale */
        } else if (id[o] >= 0) {
            ver[o]++;
            ck_assert_int_eq(ev_retime(q, id[o], t, ver[o]), 0);
            ck_assert_int_eq(ev_push(lazy, t, 0, o, 0, ver[o]), 0);
        } else {
            ver[o]++;
            ck_assert_int_eq(ev_push_id(q, t, 0, o, 0, ver[o], &id[o]), 0);
            ck_assert_int_eq(ev_push(lazy, t, 0, o, 0, ver[o]), 0);
        }
    }
    ck_assert(pops > 1000 && stale > 1000); /* both paths exercised */
    /* every stale copy the reference popped is one re-time or cancellation done in place */
    ck_assert_uint_ge(ev_retimed(q) + ev_cancelled(q), (uint64_t)stale);
    ev_queue_free(q);
    ev_queue_free(lazy);
    gsl_rng_free(r);
}
END_TEST

/* Engine fixtures: a log of dispatched (t, a) and handlers that chain or stop. */
typedef struct log_ctx {
    double t[64];
    int a[64];
    int n;
    int stop_at_a; /* return 1 when e->a equals this */
} log_ctx;

static int h_log(void *ctx, const ev_event *e, ev_engine *eng)
{
    log_ctx *c = ctx;
    ck_assert_double_eq(ev_engine_now(eng), e->t);
    c->t[c->n] = e->t;
    c->a[c->n++] = e->a;
    return e->a == c->stop_at_a ? 1 : 0;
}

/* Kind 1: re-schedule itself 0.25 s later until a reaches 3, each as kind 0 too. */
static int h_chain(void *ctx, const ev_event *e, ev_engine *eng)
{
    (void)ctx;
    if (e->a < 3) {
        ck_assert_int_eq(ev_engine_push(eng, e->t + 0.25, 1, e->a + 1, 0, 0), 0);
        ck_assert_int_eq(ev_engine_push(eng, e->t + 0.25, 0, 100 + e->a + 1, 0, 0), 0);
    }
    return 0;
}

START_TEST(test_engine_dispatch)
{
    /* Kind 1 at t = 0 (a = 0) chains kind 1 and kind 0 at 0.25, 0.5, 0.75 (a = 1..3); the log
     * (kind 0) sees a = 101, 102, 103 at 0.25, 0.5, 0.75 plus the a = 7 pushed at t = 0.5 before
     * running, which comes before 102 (pushed earlier, same t). Events: 4 chain + 4 log = 8. */
    ev_engine *eng = ev_engine_new(1);
    log_ctx lg = {.stop_at_a = -1};
    ck_assert_int_eq(ev_engine_register(eng, 0, h_log, &lg), 0);
    ck_assert_int_eq(ev_engine_register(eng, 1, h_chain, NULL), 0);
    ck_assert_int_eq(ev_engine_register(eng, -1, h_chain, NULL), SC_EINPUT);
    ck_assert_int_eq(ev_engine_push(eng, 0.0, 1, 0, 0, 0), 0);
    ck_assert_int_eq(ev_engine_push(eng, 0.5, 0, 7, 0, 0), 0);
    ck_assert_int_eq(ev_engine_run(eng, INFINITY), 0);
    ck_assert_int_eq(lg.n, 4);
    const int want_a[4] = {101, 7, 102, 103};
    const double want_t[4] = {0.25, 0.5, 0.5, 0.75};
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(lg.a[i], want_a[i]);
        ck_assert_double_eq(lg.t[i], want_t[i]);
    }
    ck_assert_uint_eq(ev_engine_events(eng), 8);
    ck_assert_double_eq(ev_engine_now(eng), 0.75);
    ck_assert_uint_eq(ev_engine_pending(eng), 0);
    /* No time travel. */
    ck_assert_int_eq(ev_engine_push(eng, 0.5, 0, 0, 0, 0), SC_EINPUT);
    ck_assert_int_eq(ev_engine_push(eng, NAN, 0, 0, 0, 0), SC_EINPUT);
    ev_engine_free(eng);
}
END_TEST

START_TEST(test_engine_stop)
{
    /* Events a = 0..9 at t = a. run(4.5) dispatches a = 0..4 (5 events), leaves 5 queued, now 4.
     * Then stop_at_a = 6: run(INF) dispatches 5 and 6 and returns 1 (the handler's value);
     * 7 events processed, 3 pending. A kind without a handler: SC_ERUNTIME, not counted. */
    ev_engine *eng = ev_engine_new(4);
    log_ctx lg = {.stop_at_a = -1};
    ev_engine_register(eng, 0, h_log, &lg);
    for (int i = 0; i < 10; i++)
        ev_engine_push(eng, (double)i, 0, i, 0, 0);
    ck_assert_int_eq(ev_engine_run(eng, 4.5), 0);
    ck_assert_int_eq(lg.n, 5);
    ck_assert_uint_eq(ev_engine_events(eng), 5);
    ck_assert_double_eq(ev_engine_now(eng), 4.0);
    ck_assert_uint_eq(ev_engine_pending(eng), 5);
    lg.stop_at_a = 6;
    ck_assert_int_eq(ev_engine_run(eng, INFINITY), 1);
    ck_assert_int_eq(lg.n, 7);
    ck_assert_uint_eq(ev_engine_events(eng), 7);
    ck_assert_double_eq(ev_engine_now(eng), 6.0);
    ck_assert_uint_eq(ev_engine_pending(eng), 3);
    ck_assert_int_eq(ev_engine_push(eng, 6.0, 5, 0, 0, 0), 0); /* kind 5: no handler */
    ck_assert_int_eq(ev_engine_run(eng, INFINITY), SC_ERUNTIME);
    ck_assert_uint_eq(ev_engine_events(eng), 7);
    ck_assert_uint_eq(ev_engine_pending(eng), 3);
    ck_assert_int_eq(ev_engine_run(eng, INFINITY), 0); /* 7, 8, 9 */
    ck_assert_int_eq(lg.n, 10);
    ck_assert_uint_eq(ev_engine_events(eng), 10);
    ev_engine_free(eng);
}
END_TEST

/* Issue 32 item 1: the prefetch hints (ev_engine_prefetch_pos / _entry) change nothing and
 * ignore ids that name no queued event (negative, never used, popped): three events at t = 3, 1,
 * 2 (ids 0, 1, 2) with hints on every id from -1 to 5 before and after a pop still pop as
 * 1, 2, 3 (a = 1, 2, 0), with 3 then 2 pending. */
START_TEST(test_engine_prefetch_hints)
{
    ev_engine *eng = ev_engine_new(2);
    log_ctx lg = {.stop_at_a = -1};
    ev_engine_register(eng, 0, h_log, &lg);
    int32_t id[3];
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(ev_engine_push_id(eng, i == 0 ? 3.0 : (double)i, 0, i, 0, 0, &id[i]), 0);
    for (int32_t k = -1; k <= 5; k++) {
        ev_engine_prefetch_pos(eng, k);
        ev_engine_prefetch_entry(eng, k);
    }
    ck_assert_uint_eq(ev_engine_pending(eng), 3);
    ck_assert_int_eq(ev_engine_run(eng, 1.5), 0);
    for (int32_t k = -1; k <= 5; k++) { /* id[1] is free now */
        ev_engine_prefetch_pos(eng, k);
        ev_engine_prefetch_entry(eng, k);
    }
    ck_assert_uint_eq(ev_engine_pending(eng), 2);
    ck_assert_int_eq(ev_engine_run(eng, INFINITY), 0);
    ck_assert_int_eq(lg.n, 3);
    const int want[3] = {1, 2, 0};
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(lg.a[i], want[i]);
    ev_engine_free(eng);
}
END_TEST

/* Issue 32 item 1: free ids are reused lowest first (perfsim36, sim/idpool.h; last freed first
 * before). Ids 0, 1, 2 at t = 2, 0, 1; popping frees 1 (t 0) then 2 (t 1); the next pushes get
 * 1, then 2, then the never used 3; 600 more pushes grow the queue past its capacity of 4 and
 * still pop in order. */
START_TEST(test_queue_free_ids_lowest)
{
    ev_queue *q = ev_queue_new(4);
    int32_t id;
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(ev_push_id(q, i == 0 ? 2.0 : i - 1.0, 0, i, 0, 0, &id), 0);
        ck_assert_int_eq(id, i);
    }
    ev_event e;
    ck_assert_int_eq(ev_pop(q, &e), 1);
    ck_assert_int_eq(e.id, 1);
    ck_assert_int_eq(ev_pop(q, &e), 1);
    ck_assert_int_eq(e.id, 2);
    const int32_t want[3] = {1, 2, 3};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(ev_push_id(q, 5.0 + i, 0, 10 + i, 0, 0, &id), 0);
        ck_assert_int_eq(id, want[i]);
    }
    for (int i = 0; i < 600; i++)
        ck_assert_int_eq(ev_push(q, 100.0 - i * 0.125, 0, 100 + i, 0, 0), 0);
    double last = -1;
    size_t n = 0;
    while (ev_pop(q, &e)) {
        ck_assert(e.t >= last);
        last = e.t;
        n++;
    }
    ck_assert_uint_eq(n, 604);
    ev_queue_free(q);
}
END_TEST

/* Issue 32 item 1: the grouped queue pops exactly what the old indexed heap (tests/ev_heap_ref.h)
 * pops, field for field (t to the bit, so -0 stays -0; seq; payload; id, since both reuse free
 * ids last freed first), on random sequences of pushes, pops, re-timings (earlier and later) and
 * cancellations whose times mix ties on a coarse grid, the current instant, +inf, 0 and -0, the
 * far future (1e300, DBL_MAX), continuous times and a pool of 3000 distinct values (so that
 * thousands of groups are queued at once, the time -> group table doubles and forgets groups).
 * Each seed grows the queue to thousands of events from a capacity of 4, then drains it. */
static double ref_time(gsl_rng *r, double now, const double *pool)
{
    switch (gsl_rng_uniform_int(r, 9)) {
    case 0:
    case 1:
        return now + (double)gsl_rng_uniform_int(r, 8) * 0.5;
    case 2:
        return now;
    case 3:
        return INFINITY;
    case 4:
        return gsl_rng_uniform_int(r, 2) ? 0.0 : -0.0;
    case 5:
        return gsl_rng_uniform_int(r, 2) ? 1e300 : DBL_MAX;
    case 6:
        return now + gsl_rng_uniform(r) * 100;
    default:
        return pool[gsl_rng_uniform_int(r, 3000)];
    }
}

static void ref_check_pop(ev_queue *q, evref_q *ref)
{
    ev_event e, f;
    int got = ev_pop(q, &e);
    /* checked without ck_assert on success: each passing assertion costs Check a write */
    if (got != evref_pop(ref, &f))
        ck_abort_msg("pop: %d events against the reference's %d", got, !got);
    if (got && (memcmp(&e.t, &f.t, sizeof e.t) || e.seq != f.seq || e.kind != f.kind || e.a != f.a ||
                e.b != f.b || e.ver != f.ver || e.id != f.id))
        ck_abort_msg("pop: t %g seq %llu a %d id %d against the reference's t %g seq %llu a %d id %d", e.t,
                     (unsigned long long)e.seq, e.a, e.id, f.t, (unsigned long long)f.seq, f.a, f.id);
}

/* ids[k] out of the unordered list (the last one takes its place). */
static void ids_drop(int32_t *ids, int *where, int *n, int k)
{
    ids[k] = ids[--*n];
    where[ids[k]] = k;
}

START_TEST(test_queue_matches_heap_ref)
{
    enum { STEPS = 60000, CAP = STEPS + 8 };
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    double *pool = malloc(3000 * sizeof *pool);
    int32_t *ids = malloc(CAP * sizeof *ids); /* queued ids, in no order */
    int *where = malloc(CAP * sizeof *where); /* index in ids[] by id      */
    size_t max_groups = 0;
    for (unsigned long seed = 1; seed <= 3; seed++) {
        gsl_rng_set(r, seed);
        for (int i = 0; i < 3000; i++)
            pool[i] = gsl_rng_uniform(r) * 1e4;
        ev_queue *q = ev_queue_new(4);
        evref_q ref = evref_new(CAP);
        double now = 0;
        int n_ids = 0;
        for (int step = 0; step < 2 * STEPS; step++) {
            int grow = step < STEPS;
            unsigned op = (unsigned)gsl_rng_uniform_int(r, 20);
            if (n_ids > 0 && op < (grow ? 4u : 12u)) { /* pop */
                double tp = ev_peek_time(q), tr = ref.heap[0].t;
                if (memcmp(&tp, &tr, sizeof tp))
                    ck_abort_msg("peek %g against %g", tp, tr);
                int32_t id = ref.heap[0].id;
                ref_check_pop(q, &ref);
                ids_drop(ids, where, &n_ids, where[id]);
                now = isfinite(tr) ? tr : now;
            } else if (n_ids > 0 && op < (grow ? 9u : 17u)) { /* re-time or cancel */
                int k = (int)gsl_rng_uniform_int(r, (unsigned long)n_ids);
                if (op % 4 == 0) {
                    if (ev_cancel(q, ids[k]))
                        ck_abort_msg("cancel %d refused", ids[k]);
                    evref_remove_at(&ref, ids[k]);
                    ids_drop(ids, where, &n_ids, k);
                } else {
                    double t = ref_time(r, now, pool);
                    uint32_t ver = (uint32_t)step;
                    if (ev_retime(q, ids[k], t, ver))
                        ck_abort_msg("re-time %d refused", ids[k]);
                    evref_retime(&ref, ids[k], t, ver);
                }
            } else if (grow || op < 19) { /* push */
                double t = ref_time(r, now, pool);
                int32_t id;
                int rc = ev_push_id(q, t, step % 5, step, -step, (uint32_t)step, &id);
                if (rc || id != evref_push(&ref, t, step % 5, step, -step, (uint32_t)step))
                    ck_abort_msg("push: rc %d, id %d not the reference's", rc, id);
                where[id] = n_ids;
                ids[n_ids++] = id;
            }
            if (ev_len(q) != ref.n)
                ck_abort_msg("%zu queued against the reference's %zu", ev_len(q), ref.n);
            if (ev_groups(q) > max_groups)
                max_groups = ev_groups(q);
        }
        while (ref.n > 0)
            ref_check_pop(q, &ref);
        ref_check_pop(q, &ref);
        ck_assert_uint_eq(ev_groups(q), 0);
        ev_queue_free(q);
        evref_free(&ref);
    }
    ck_assert_uint_gt(max_groups, 1024); /* past the table's first size: it doubled */
    free(pool);
    free(ids);
    free(where);
    gsl_rng_free(r);
}
END_TEST

/* Issue 32 item 1: groups by hand. 1000 events at t = 1 are one group; t = 2 and then t = 1 again
 * make two (the table still names t = 1's group); -0 then +0 are one value, popped in push
 * order with their own signs. A forgotten group: t = 0, 1, ..., 599 open 600 groups; the
 * 513th push (512 group ids used, half the table's 1024 slots) doubles the table and empties
 * it, so a second push at t = 0 opens a 601st group, and still pops right after the first
 * (a = 0, then a = 600, then 1, 2, ...). */
START_TEST(test_queue_groups)
{
    ev_queue *q = ev_queue_new(0);
    for (int i = 0; i < 1000; i++)
        ck_assert_int_eq(ev_push(q, 1.0, 0, i, 0, 0), 0);
    ck_assert_uint_eq(ev_groups(q), 1);
    ev_push(q, 2.0, 0, 1000, 0, 0);
    ev_push(q, 1.0, 0, 1001, 0, 0);
    ck_assert_uint_eq(ev_groups(q), 2);
    ev_push(q, -0.0, 0, 2000, 0, 0);
    ev_push(q, 0.0, 0, 2001, 0, 0);
    ck_assert_uint_eq(ev_groups(q), 3);
    ev_event e;
    ck_assert_int_eq(ev_pop(q, &e), 1);
    ck_assert(e.a == 2000 && signbit(e.t));
    ck_assert_int_eq(ev_pop(q, &e), 1);
    ck_assert(e.a == 2001 && e.t == 0 && !signbit(e.t));
    for (int i = 0; i < 1000; i++) {
        ck_assert_int_eq(ev_pop(q, &e), 1);
        ck_assert_int_eq(e.a, i);
    }
    ck_assert_int_eq(ev_pop(q, &e), 1);
    ck_assert_int_eq(e.a, 1001);
    ck_assert_int_eq(ev_pop(q, &e), 1);
    ck_assert_int_eq(e.a, 1000);
    ck_assert_uint_eq(ev_groups(q), 0);
    ev_queue_free(q);

    q = ev_queue_new(0);
    for (int i = 0; i < 600; i++)
        ev_push(q, (double)i, 0, i, 0, 0);
    ck_assert_uint_eq(ev_groups(q), 600);
    ev_push(q, 0.0, 0, 600, 0, 0);
    ck_assert_uint_eq(ev_groups(q), 601);
    const int first[3] = {0, 600, 1};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(ev_pop(q, &e), 1);
        ck_assert_int_eq(e.a, first[i]);
    }
    for (int i = 2; i < 600; i++) {
        ck_assert_int_eq(ev_pop(q, &e), 1);
        ck_assert_int_eq(e.a, i);
    }
    ev_queue_free(q);
}
END_TEST

Suite *ev_suite(void)
{
    Suite *s = suite_create("ev");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_queue_order);
    tcase_add_test(tc, test_queue_ties);
    tcase_add_test(tc, test_queue_growth);
    tcase_add_test(tc, test_queue_retime_cancel);
    tcase_add_test(tc, test_queue_retime_equals_lazy);
    tcase_add_test(tc, test_engine_dispatch);
    tcase_add_test(tc, test_engine_stop);
    tcase_add_test(tc, test_engine_prefetch_hints);
    tcase_add_test(tc, test_queue_free_ids_lowest);
    tcase_add_test(tc, test_queue_matches_heap_ref);
    tcase_add_test(tc, test_queue_groups);
    suite_add_tcase(s, tc);
    return s;
}
