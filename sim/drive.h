/* drive.h — the one simulator driver both executors plug into (exec.c: ranks and their
 * streams; pipe.c: pipeline stages): the network, the event engine and the RNG, flows added in
 * batches that are re-rated once, their completion events, and the end-of-instant re-rating of
 * the flows that ended together. An executor registers its own event kinds for its state
 * machine and is called back per flow (started, ended, done: with the tag it gave the flow).
 * Not here: what a flow means to a collective or a send (the executors), the sharing rule
 * (net.c), how completion events are re-timed (flowev.c). */
#ifndef SC_DRIVE_H
#define SC_DRIVE_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

#include "../model/cost.h"
#include "ev.h"
#include "net.h"

/* What the executor is told about its flows (ctx: its state). flow_started and flow_ended may be
 * NULL (traces only); flow_done is the completion of a flow tagged `tag` at `now` and returns 0
 * or a negative error, as an event handler does. */
typedef struct drv_plug {
    void *ctx;
    int (*flow_started)(void *ctx, int id, int src, int dst, int ch, double now);
    void (*flow_ended)(void *ctx, int id, double now);
    int (*flow_done)(void *ctx, uint64_t tag, double now);
} drv_plug;

typedef struct sim_drv {
    net_t *net;
    ev_engine *eng;
    gsl_rng *rng;
    drv_plug plug;
    int flow_kind, instant_kind; /* the driver's two event kinds in eng                        */
    int instant_pending;         /* flows ended at this instant wait for the end-of-instant event */
    int err_rc;                  /* a failure inside a callback (SC_ERUNTIME), else 0          */
    uint64_t flows;              /* flows started                                             */
    uint64_t stale;              /* completion events popped that no longer applied (0: they are
                                    re-timed in place; counted to prove it)                     */
} sim_drv;

/* The network's efficiencies from a calibration. */
net_params drv_net_params(const cost_calib *cal);

/* Take net (built by the executor; freed by drv_close even on failure), make an engine of
 * ev_cap events and an MT19937 seeded with seed, register the driver's handlers under
 * flow_kind and instant_kind (the executor's own kinds are the others). 0, or SC_ERUNTIME. */
int drv_open(sim_drv *d, net_t *net, size_t ev_cap, unsigned long seed, int flow_kind, int instant_kind,
             const drv_plug *plug);
void drv_close(sim_drv *d);

/* A jitter factor for one compute span: 1 + jitter x N(0, 1), at least 0 (1 for jitter 0,
 * drawing nothing). */
double drv_jitter(sim_drv *d, double jitter);

/* Flows started together (one collective, one send): drv_begin, drv_add_flow per flow (the
 * callback sim/coll.h's lowering takes, ctx = the batch), drv_end. They are re-rated once, at
 * drv_end, or at the end of the instant when flows ended at it are waiting. */
typedef struct drv_batch {
    sim_drv *d;
    uint64_t tag;
    double now;
    int n;   /* flows added */
    int own; /* this batch closes the network's batch (no end-of-instant re-rating pending) */
} drv_batch;
void drv_begin(sim_drv *d, drv_batch *b, uint64_t tag, double now);
void drv_add_flow(void *batch, int src, int dst, int ch, double bytes);
int drv_end(drv_batch *b);

#endif
