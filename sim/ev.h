/* ev.h — the discrete-event core: a queue of timestamped events (grouped by time value, a heap
 * over the groups) with deterministic tie-breaking (same time: push order), re-timing and
 * cancellation in place (so no stale copy is ever popped), and an engine that dispatches them to
 * one handler per kind.
 * Not here: what an event means (the executor), flows and links (net), randomness (callers). */
#ifndef SC_EV_H
#define SC_EV_H

#include <stddef.h>
#include <stdint.h>

/* One event. Ordered by (t, seq); seq is assigned by the queue in push order, so two events at
 * the same time pop in the order they were pushed and every run is reproducible. */
typedef struct ev_event {
    double t;     /* simulated time, s                                                     */
    uint64_t seq; /* push order within its queue (assigned by ev_push, starts at 0)       */
    int kind;     /* what happened; selects the engine's handler (>= 0)                    */
    int32_t a, b; /* payload, meaning chosen by the kind (rank, stream, flow id, ...)      */
    uint32_t ver; /* payload version (net_flow_version): a check, events are re-timed in place */
    int32_t id;   /* the id it was queued under; free again once popped                   */
} ev_event;

/* ---- queue --------------------------------------------------------------------------- */
typedef struct ev_queue ev_queue;

/* A queue with room for `capacity` events before it grows (0 = a small default); NULL when out
 * of memory. Its tables double as needed. */
ev_queue *ev_queue_new(size_t capacity);
void ev_queue_free(ev_queue *q);
/* 0; SC_ERUNTIME when growing fails or would pass 2^27 queued events, or after 2^37 pushes and
 * re-timings (the queue is unchanged); SC_EINPUT when t is NaN. */
int ev_push(ev_queue *q, double t, int kind, int32_t a, int32_t b, uint32_t ver);
/* The same, and *id (when not NULL) names the queued event until it is popped or cancelled;
 * ids are small integers (reused afterwards), so owners can keep them in arrays. */
int ev_push_id(ev_queue *q, double t, int kind, int32_t a, int32_t b, uint32_t ver, int32_t *id);
/* Move queued event id to time t (earlier or later) with payload version ver. It is ordered
 * exactly as a fresh push would be now: (t, a new seq), so a run that re-times events pops the
 * same events in the same order as one that pushed new copies and dropped the old ones.
 * 0; SC_EINPUT when t is NaN or id is not queued; SC_ERUNTIME after 2^37 pushes and re-timings. */
int ev_retime(ev_queue *q, int32_t id, double t, uint32_t ver);
/* Delete queued event id. 0; SC_EINPUT when id is not queued. */
int ev_cancel(ev_queue *q, int32_t id);
/* 1 when id names a queued event. */
int ev_queued(const ev_queue *q, int32_t id);
/* Re-timings and cancellations so far (each one a stale event a lazy queue would have popped). */
uint64_t ev_retimed(const ev_queue *q);
uint64_t ev_cancelled(const ev_queue *q);
/* 1 and the earliest event in *out (removed), or 0 when empty. */
int ev_pop(ev_queue *q, ev_event *out);
/* Time of the earliest event, INFINITY when empty. */
double ev_peek_time(const ev_queue *q);
size_t ev_len(const ev_queue *q);
/* Groups queued: at least the number of distinct time values queued, more when a value's newest
 * group was no longer in the time -> group table when it was pushed again (order is kept). */
size_t ev_groups(const ev_queue *q);

/* ---- engine -------------------------------------------------------------------------- */
typedef struct ev_engine ev_engine;

/* Called for each event of its kind, with the clock already at e->t. Return 0 to go on, a
 * positive value to stop cleanly, a negative sc error code to abort; ev_engine_run returns it. */
typedef int (*ev_handler)(void *ctx, const ev_event *e, ev_engine *eng);

/* An engine at time 0 with no handlers; `capacity` as for ev_queue_new. NULL when out of memory. */
ev_engine *ev_engine_new(size_t capacity);
void ev_engine_free(ev_engine *eng);
/* Handle events of `kind` (>= 0) with h(ctx, ...); replaces an earlier handler. 0, SC_EINPUT for a
 * negative kind or NULL h, SC_ERUNTIME when out of memory. */
int ev_engine_register(ev_engine *eng, int kind, ev_handler h, void *ctx);
/* Schedule an event. 0; SC_EINPUT when t is NaN or earlier than ev_engine_now (no time travel);
 * SC_ERUNTIME when out of memory. */
int ev_engine_push(ev_engine *eng, double t, int kind, int32_t a, int32_t b, uint32_t ver);
/* The same, with the event's id in *id (as ev_push_id): valid until its handler is called
 * (the id is free again by then) or it is cancelled. */
int ev_engine_push_id(ev_engine *eng, double t, int kind, int32_t a, int32_t b, uint32_t ver, int32_t *id);
/* ev_retime / ev_cancel on the engine's queue; re-timing to before ev_engine_now is SC_EINPUT. */
int ev_engine_retime(ev_engine *eng, int32_t id, double t, uint32_t ver);
int ev_engine_cancel(ev_engine *eng, int32_t id);
/* Re-timings plus cancellations so far: the stale events a lazy queue would have popped. */
uint64_t ev_engine_retimed(const ev_engine *eng);
/* Pop and dispatch events with t <= t_stop (INFINITY: until the queue is empty) in (t, seq)
 * order. Returns 0 when the queue is empty or the next event lies after t_stop (it stays queued);
 * a handler's non-zero return (that event counts as processed); SC_ERUNTIME for an event whose
 * kind has no handler (consumed, not counted). The clock stays at the last popped event's time. */
int ev_engine_run(ev_engine *eng, double t_stop);
/* The next event's kind and a, without taking it: 1, or 0 when none is queued (for a handler to
 * prefetch what the next one will touch). */
int ev_engine_peek(const ev_engine *eng, int *kind, int32_t *a);
/* Hints for an owner about to re-time or cancel event id (a queued one, or nothing is done): the
 * first fetches its record, the second (once the record is cached) its neighbours in the queue
 * and its group. Neither changes anything. */
void ev_engine_prefetch_pos(const ev_engine *eng, int32_t id);
void ev_engine_prefetch_entry(const ev_engine *eng, int32_t id);
/* Current simulated time, s: the time of the last dispatched event (0 before any). */
double ev_engine_now(const ev_engine *eng);
/* Events dispatched so far, over all runs. */
uint64_t ev_engine_events(const ev_engine *eng);
/* Events still queued. */
size_t ev_engine_pending(const ev_engine *eng);

#endif
