/* pipe.c — the discrete-event executor of pipelined layouts (exec_pipe_run in exec.h; schedule
 * rules in model/analytic_pipe.h). Stages are simulated op by op in their schedule order; the ranks
 * of one stage run the same ops at the same time (their tensor-parallel collectives stay inside
 * a node's NVLink, timed into each op by the stage's op graph), so a stage is one compute
 * stream here, while every send between stages and every data-parallel collective of the
 * boundary is lowered to flows of all its ranks on the cluster's network (sim/net), where they
 * share NICs and switches: a plug of the simulator driver (drive.h: network, events, RNG,
 * flows), as exec.c is. Traces follow traces/schema.h (one process per node, lanes per rank).
 * Where the data-parallel replicas are exact copies (exec_pipe_symmetry_unit), only the first u
 * nodes of each stage send and reduce, over the quotient network of a relabelled cluster (prank).
 * Not here: the op graph, the cost functions, the sharing rule. */
#include "exec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../traces/schema.h"
#include "coll.h"
#include "drive.h"
#include "ev.h"

enum { PV_OP, PV_XSTART, PV_FLOW, PV_SOLVE, PV_BSTART, PV_OPT, PV_HOLD, PV_EMB };
enum { B_NONE, B_REDUCE, B_EMB, B_OPT, B_GATHER, B_DONE };
#define TAG_XFER (1ull << 62)
#define TAG_BND (2ull << 62)

typedef struct xfer {
    int outstanding;
    double t0; /* when it was sent (traces) */
    int bwd, mb, k_dst; /* the op its arrival unblocks */
    int s_src, s_dst;
    int hold;  /* a blocking send (an_pipe_timed.p2p_hold_s): s_src's stream waits for it */
} xfer;

typedef struct pstage {
    int idx, busy, phase, outstanding;
    int rq_head, rq_tail;  /* chunks whose gradients are complete, waiting to be reduced      */
    int r_active, r_done;  /* the chunk being reduced (-1: none); chunks reduced so far       */
    double cur_bytes;      /* S of the data-parallel collective in flight                    */
    int cur_pieces;        /* its NCCL calls (buckets), as boundary_coll priced it           */
    double coll_t0;        /* when it was issued (traces)                                    */
    double slow, op_start, phase_start, end_t;
    double first_end;      /* end of the stage's first op (hides --overlap-param-gather)     */
    double busy_s, opt_s, exposed[N_COLLS];
} pstage;

typedef struct psim {
    const lo_graph *g;
    const an_pipe_timed *t;
    const cost_calib *cal;
    const exec_opts *o;
    sim_drv drv; /* the driver (drive.h): network, event engine, RNG, flows; PV_FLOW, PV_SOLVE */
    int p, V, m, n_ops, G, nics, S; /* S: ranks per stage (t x dp) */
    int b, u;          /* exact symmetry: nodes per stage, of which simulated (u < b); 0, 0: full */
    int S_rep;         /* ranks per stage simulated: u G, or S                                  */
    double bucket_bytes;        /* the parameter all-gather's bucket (parameter dtype)          */
    double reduce_bucket_bytes; /* the gradient reduce's, as layout_tensor.c prices it (reduce_dtype:
                                   Megatron's default counts elements, the same buckets in any
                                   dtype; a given bucket_MB is bytes of the reduced gradient)  */
    const spec_fabric *fab; /* the node's NVLink fabric: rings use every link (coll.h)       */
    lo_pipe sched;     /* the schedule simulated (its m: the step's micro-batches)              */
    lo_pipe_op *ops;
    int *lastidx;      /* per stage and chunk: the index of its last backward in the order */
    int *rq;           /* per stage: v slots of the reduce queue                            */
    double *fin, *bin; /* arrival of the input of F(i, k) / B(i, k); NAN: not yet */
    xfer *x;
    int n_x, cap_x;
    pstage *st;
    int n_done;
    long collectives;
} psim;

/* ---- traces, in the one layout of traces/schema.h: pid = node, a block of lanes per rank; the
 * S ranks of a stage move together and carry the same spans. Compute stream: forward, backward
 * and the optimizer (cat compute); communication stream 0: the boundary's data-parallel
 * collectives, each from its issue to its last flow ("all-reduce gradients chunk 0 ..."), and a
 * tied head's embedding all-reduce on stages 0 and p - 1 ("all-reduce word-embedding gradients",
 * its emb_s, after the two have met); 1: the
 * activations a rank receives, 2: the gradients, each from its send to its arrival ("send ...",
 * cat collective: read as another collective). */
enum { PT_BOUNDARY = TR_STREAM_COMM, PT_ACTS = TR_STREAM_COMM + 1, PT_GRADS = TR_STREAM_COMM + 2 };

static void stage_span(psim *s, int q, int stream, const char *name, const char *cat, double t0, double t1)
{
    if (!s->o->trace || !(t1 >= t0))
        return;
    for (int j = 0; j < s->S; j++) {
        int r = q * s->S + j;
        tr_span_at(s->o->trace, r / s->G, TR_TID(r % s->G, stream), name, cat, t0, t1, NULL);
    }
}

/* The names of the nodes (with the stages they hold) and of every rank's four lanes. */
static void trace_names(psim *s, int n_ranks)
{
    tr_writer *w = s->o->trace;
    char name[96];
    for (int node = 0; node * s->G < n_ranks; node++) {
        int r1 = (node + 1) * s->G < n_ranks ? (node + 1) * s->G - 1 : n_ranks - 1;
        int q0 = node * s->G / s->S, q1 = r1 / s->S;
        if (q0 == q1)
            snprintf(name, sizeof name, "node %d (pipeline stage %d)", node, q0);
        else
            snprintf(name, sizeof name, "node %d (pipeline stages %d-%d)", node, q0, q1);
        tr_process_name(w, node, name);
    }
    static const char *const LANE[] = {"compute", "comm: data-parallel boundary", "comm 1: activations received",
                                       "comm 2: gradients received"};
    static const int STREAM[] = {TR_STREAM_COMPUTE, PT_BOUNDARY, PT_ACTS, PT_GRADS};
    for (int r = 0; r < n_ranks; r++)
        for (int i = 0; i < 4; i++) {
            snprintf(name, sizeof name, "rank %d %s (stage %d)", r, LANE[i], r / s->S);
            tr_thread_name(w, r / s->G, TR_TID(r % s->G, STREAM[i]), name);
        }
}

/* Exact symmetry (exec_pipe_symmetry_unit): the rank that stands for GPU r in the relabelled
 * cluster, where node q b + k u + r' becomes k p u + q u + r' and rotating every stage's nodes by
 * u is the shift by p u nodes that net_build_quotient divides by. The identity in a full run. */
static int prank(const psim *s, int r)
{
    if (!s->u)
        return r;
    int node = r / s->G, q = node / s->b, n = node % s->b;
    return ((n / s->u) * s->p * s->u + q * s->u + n % s->u) * s->G + r % s->G;
}

static void try_stage(psim *s, int q, double now);
static void boundary_next(psim *s, int q, double now);
static void kick_reduce(psim *s, int q, double now);
static void bnd_coll_done(psim *s, int q, double now);

static const lo_pipe_op *cur_op(const psim *s, int q) { return &s->ops[(size_t)q * s->n_ops + s->st[q].idx]; }

static void try_stage(psim *s, int q, double now)
{
    pstage *k = &s->st[q];
    if (k->busy || k->idx >= s->n_ops)
        return;
    const lo_pipe_op *op = cur_op(s, q);
    int v = layout_pipe_vstage(&s->g->pipe, q, op->chunk);
    double ready = (op->bwd ? s->bin : s->fin)[(size_t)v * s->m + op->mb];
    if (isnan(ready))
        return;
    const an_pipe_op_t *d = op->bwd ? &s->t->bwd[v] : &s->t->fwd[v];
    double dur = d->dur * k->slow;
    dur *= drv_jitter(&s->drv, s->o->jitter);
    double gth = an_pipe_op_gather(s->t, op->bwd, v, s->V); /* the walk's rule */
    dur += gth;
    k->exposed[COLL_ALLGATHER] += gth;
    k->busy = 1;
    k->op_start = now;
    k->busy_s += d->busy;
    for (int i = 0; i < N_COLLS; i++)
        k->exposed[i] += d->exposed[i];
    if (ev_engine_push(s->drv.eng, now + dur, PV_OP, q, 0, 0))
        s->drv.err_rc = SC_ERUNTIME;
}

/* Send the output (or input gradient) of op `op` of virtual stage v on stage q onwards; `hold`:
 * stage q's stream waits for it (an_pipe_op_holds). */
static void send(psim *s, int q, const lo_pipe_op *op, int v, int hold, double now)
{
    int vd = op->bwd ? v - 1 : v + 1;
    if (s->n_x == s->cap_x) {
        int cap = s->cap_x ? 2 * s->cap_x : 64;
        xfer *nx = realloc(s->x, sizeof *nx * (size_t)cap);
        if (!nx) {
            s->drv.err_rc = SC_ERUNTIME;
            return;
        }
        s->x = nx;
        s->cap_x = cap;
    }
    xfer *x = &s->x[s->n_x];
    *x = (xfer){0, now, op->bwd, op->mb, vd, q, vd % s->p, hold};
    if (ev_engine_push(s->drv.eng, now + s->t->p2p_lat_s, PV_XSTART, s->n_x, 0, 0))
        s->drv.err_rc = SC_ERUNTIME;
    s->n_x++;
}

static void xfer_done(psim *s, int xi, double now)
{
    xfer *x = &s->x[xi];
    if (s->o->trace) {
        char name[64];
        snprintf(name, sizeof name, "send %s of mb %d from stage %d", x->bwd ? "gradient" : "activation", x->mb,
                 x->s_src);
        stage_span(s, x->s_dst, x->bwd ? PT_GRADS : PT_ACTS, name, TR_CAT_COLLECTIVE, x->t0, now);
    }
    (x->bwd ? s->bin : s->fin)[(size_t)x->k_dst * s->m + x->mb] = now;
    try_stage(s, x->s_dst, now);
    /* a blocking send: its sender runs on after the host synchronize (an_pipe_walk's hold) */
    if (x->hold && ev_engine_push(s->drv.eng, now + s->t->p2p_sync_s, PV_HOLD, x->s_src, 0, 0))
        s->drv.err_rc = SC_ERUNTIME;
}

/* Stage q's stream is free again at `now`: its next op, or the boundary after its last. */
static void stage_resume(psim *s, int q, double now)
{
    pstage *k = &s->st[q];
    k->busy = 0;
    if (k->idx == s->n_ops) {
        k->phase_start = now;
        boundary_next(s, q, now);
    } else {
        try_stage(s, q, now);
    }
}

static int on_hold(void *ctx, const ev_event *e, ev_engine *eng)
{
    psim *s = ctx;
    stage_resume(s, e->a, ev_engine_now(eng));
    return s->drv.err_rc;
}

static int on_op(void *ctx, const ev_event *e, ev_engine *eng)
{
    psim *s = ctx;
    int q = e->a;
    double now = ev_engine_now(eng);
    pstage *k = &s->st[q];
    const lo_pipe_op *op = cur_op(s, q);
    int v = layout_pipe_vstage(&s->g->pipe, q, op->chunk);
    int held = 0; /* a blocking send keeps the stream busy until it arrives (on_hold) */
    if (op->bwd && k->idx == s->lastidx[(size_t)q * s->g->pipe.v + op->chunk]) {
        /* the chunk's gradients are complete: queue its data-parallel reduce */
        s->rq[(size_t)q * s->g->pipe.v + k->rq_tail++] = op->chunk;
        kick_reduce(s, q, now);
    }
    if (s->o->trace) {
        char name[48];
        snprintf(name, sizeof name, "%s mb %d chunk %d", op->bwd ? "backward" : "forward", op->mb, op->chunk);
        stage_span(s, q, TR_STREAM_COMPUTE, name, TR_CAT_COMPUTE, k->op_start, now);
    }
    if (!op->bwd && v == s->V - 1)
        s->bin[(size_t)v * s->m + op->mb] = now; /* the loss: its own backward may start */
    else if (op->bwd ? v > 0 : v < s->V - 1) {
        held = an_pipe_op_holds(s->t, &s->sched, q, k->idx);
        send(s, q, op, v, held, now);
    }
    if (k->idx == 0)
        k->first_end = now;
    k->idx++;
    if (!held)
        stage_resume(s, q, now);
    return s->drv.err_rc;
}

static int on_xstart(void *ctx, const ev_event *e, ev_engine *eng)
{
    psim *s = ctx;
    int xi = e->a;
    xfer *x = &s->x[xi];
    drv_batch f;
    drv_begin(&s->drv, &f, TAG_XFER | (uint64_t)xi, ev_engine_now(eng));
    double bytes = s->t->p2p_bytes; /* per rank, as an_pipe_time_comm priced it */
    for (int j = 0; j < s->S_rep; j++) { /* a quotient run: the represented ranks' sends */
        int a = prank(s, x->s_src * s->S + j), b = prank(s, x->s_dst * s->S + j);
        if (a / s->G == b / s->G) {
            drv_add_flow(&f, a, b, 0, bytes);
        } else {
            for (int ch = 0; ch < s->nics; ch++)
                drv_add_flow(&f, a, b, ch, bytes / s->nics);
        }
    }
    if (drv_end(&f))
        return SC_ERUNTIME;
    x->outstanding = f.n;
    if (!f.n)
        xfer_done(s, xi, f.now);
    return s->drv.err_rc;
}

/* The data-parallel collective of a boundary phase of stage q: latency, then ring flows of its
 * t groups (members s*S + j + i*t, i < dp). Returns 0 when there is none. */
static int boundary_coll(psim *s, int q, cost_coll kind, double S, double bucket, int units, double now)
{
    const lo_pipe *pp = &s->g->pipe;
    if (pp->dp < 2 || S <= 0)
        return 0;
    s->st[q].cur_bytes = S;
    s->st[q].coll_t0 = now;
    const cost_group *geo = &s->g->group[GRP_AX3];
    cost_algo algo;
    int ch = layout_pipe_calls(S, bucket, units); /* FSDP2's units, or the caller's bucket in the collective's dtype */
    s->st[q].cur_pieces = ch;
    cost_coll_best(s->cal, kind, S, ch, geo, &algo);
    double lat = cost_coll_latency(s->cal, kind, algo, ch, geo);
    if (ev_engine_push(s->drv.eng, now + lat, PV_BSTART, q, (int32_t)kind, (uint32_t)algo))
        s->drv.err_rc = SC_ERUNTIME;
    s->collectives += s->g->layout.t;
    return 1;
}


/* Start the next queued chunk reduce of stage q if its communication stream is free. */
static void kick_reduce(psim *s, int q, double now)
{
    pstage *k = &s->st[q];
    const lo_pipe *pp = &s->g->pipe;
    cost_coll kind = s->g->layout.zero1 ? COLL_REDUCESCATTER : COLL_ALLREDUCE;
    if (s->t->reduce_after_flush && k->phase < B_REDUCE)
        return; /* Megatron-LM v2.x: the reduces wait for the flush (boundary_next) */
    while (k->r_active < 0 && k->rq_head < k->rq_tail) {
        int c = s->rq[(size_t)q * pp->v + k->rq_head++];
        const double er = s->g->sched.reduce_elem_bytes; /* gradients as reduced (reduce_dtype) */
        int vk = layout_pipe_vstage(pp, q, c);
        if (boundary_coll(s, q, kind, pp->vstage_params[vk] * er, s->reduce_bucket_bytes, pp->vstage_units[vk], now))
            k->r_active = c;
        else
            k->r_done++;
    }
}

/* A tied head's word-embedding all-reduce (an_pipe_timed.emb_s, priced there: one home): stages 0
 * and p - 1 wait in B_EMB for each other; the second to arrive starts it for both. 0: stage q does
 * not take part (go on to the optimizer), 1: it waits or all-reduces. */
static int emb_wait(psim *s, int q, double now)
{
    const int last = s->p - 1;
    if (!(s->t->emb_s > 0) || (q != 0 && q != last))
        return 0;
    const int other = q ? 0 : last;
    if (s->st[other].phase != B_EMB)
        return 1; /* the other stage is still reducing: it starts the all-reduce when it arrives */
    for (int j = 0; j < 2; j++)
        if (ev_engine_push(s->drv.eng, now + s->t->emb_s, PV_EMB, j ? other : q, 0, 0))
            s->drv.err_rc = SC_ERUNTIME;
    s->collectives += 2 * s->g->layout.t;
    return 1;
}

static void boundary_next(psim *s, int q, double now)
{
    pstage *k = &s->st[q];
    const int zero1 = s->g->layout.zero1;
    for (;;) {
        /* account the phase that just ended (traced: the optimizer here, the collectives as
           they end, bnd_coll_done) */
        if (k->phase == B_OPT)
            stage_span(s, q, TR_STREAM_COMPUTE, "optimizer", TR_CAT_COMPUTE, k->phase_start, now);
        if (k->phase == B_REDUCE)
            k->exposed[zero1 ? COLL_REDUCESCATTER : COLL_ALLREDUCE] += now - k->phase_start;
        else if (k->phase == B_EMB && now > k->phase_start) { /* the wait for the other stage before
                                                                   it is idle (as an_pipe_run) */
            stage_span(s, q, PT_BOUNDARY, "all-reduce word-embedding gradients", TR_CAT_COLLECTIVE, now - s->t->emb_s, now);
            k->exposed[COLL_ALLREDUCE] += s->t->emb_s;
        } else if (k->phase == B_GATHER) {
            /* --overlap-param-gather: the next step's first forward hides up to first_end of it
               (the same rule as an_pipe_run) */
            double d = now - k->phase_start;
            if (s->t->gather_overlap)
                now = k->phase_start + (d = d > k->first_end ? d - k->first_end : 0);
            k->exposed[COLL_ALLGATHER] += d;
        }
        else if (k->phase == B_OPT)
            k->opt_s += now - k->phase_start;
        k->phase++;
        k->phase_start = now;
        if (k->phase == B_REDUCE) {
            if (s->t->reduce_after_flush)
                kick_reduce(s, q, now);
            if (k->r_done < s->g->pipe.v)
                return; /* chunk reduces still running: the last one's end moves on */
        } else if (k->phase == B_EMB) {
            if (emb_wait(s, q, now))
                return;
        } else if (k->phase == B_OPT) {
            if (ev_engine_push(s->drv.eng, now + s->t->opt_s[q] * k->slow, PV_OPT, q, 0, 0))
                s->drv.err_rc = SC_ERUNTIME;
            return;
        } else if (k->phase == B_GATHER) {
            const lo_pipe *pp = &s->g->pipe;
            if (zero1 && boundary_coll(s, q, COLL_ALLGATHER, pp->stage_params[q] * s->g->elem_bytes, s->bucket_bytes,
                                       pp->stage_units[q], now))
                return;
        } else {
            k->end_t = now;
            s->n_done++;
            return;
        }
    }
}

static int on_bstart(void *ctx, const ev_event *e, ev_engine *eng)
{
    psim *s = ctx;
    int q = e->a;
    cost_coll kind = (cost_coll)e->b;
    const lo_pipe *pp = &s->g->pipe;
    const cost_group *geo = &s->g->group[GRP_AX3];
    double S = s->st[q].cur_bytes;
    /* issued in buckets as boundary_coll priced it: that many NCCL calls of S / buckets, each
       with its own chunk efficiency (exec.c on_start does the same) */
    int ch = s->st[q].cur_pieces;
    double edge = cost_coll_edge_bytes_n(s->cal, kind, (cost_algo)e->ver, S, ch, geo);
    int t = s->g->layout.t, dp = pp->dp;
    int *mem = malloc(sizeof(int) * (size_t)dp);
    if (!mem)
        return SC_ERUNTIME;
    drv_batch f;
    drv_begin(&s->drv, &f, TAG_BND | (uint64_t)q, ev_engine_now(eng));
    for (int j = 0; j < t; j++) {
        for (int i = 0; i < dp; i++)
            mem[i] = prank(s, q * s->S + j + i * t);
        /* a quotient run: the edges leaving the represented members, the first u G / t */
        coll_ring_flows_fabric(mem, dp, s->u ? s->S_rep / t : dp, s->G, s->nics, s->fab, edge, drv_add_flow, &f);
    }
    free(mem);
    if (drv_end(&f))
        return SC_ERUNTIME;
    s->st[q].outstanding = f.n;
    if (!f.n)
        bnd_coll_done(s, q, f.now);
    return s->drv.err_rc;
}

/* A data-parallel collective of stage q finished: a chunk reduce, or the boundary's gather. */
static void bnd_coll_done(psim *s, int q, double now)
{
    pstage *k = &s->st[q];
    if (s->o->trace) {
        char name[96];
        const char *kind = k->r_active < 0 ? "all-gather parameters" : s->g->layout.zero1 ? "reduce-scatter gradients"
                                                                                          : "all-reduce gradients";
        if (k->r_active < 0)
            snprintf(name, sizeof name, "%s dp %.1f MB", kind, k->cur_bytes / 1e6);
        else
            snprintf(name, sizeof name, "%s chunk %d dp %.1f MB", kind, k->r_active, k->cur_bytes / 1e6);
        stage_span(s, q, PT_BOUNDARY, name, TR_CAT_COLLECTIVE, k->coll_t0, now);
    }
    if (k->r_active < 0) {
        boundary_next(s, q, now);
        return;
    }
    k->r_active = -1;
    k->r_done++;
    kick_reduce(s, q, now);
    if (k->phase == B_REDUCE && k->r_done == s->g->pipe.v)
        boundary_next(s, q, now);
}

static int on_opt(void *ctx, const ev_event *e, ev_engine *eng)
{
    psim *s = ctx;
    boundary_next(s, e->a, ev_engine_now(eng));
    return s->drv.err_rc;
}

/* The driver's callback (drive.h): a flow of a send or of a stage's boundary collective ended. */
static int flow_done(void *ctx, uint64_t tag, double now)
{
    psim *s = ctx;
    int obj = (int)(tag & 0xffffffffu);
    if ((tag & (3ull << 62)) == TAG_XFER) {
        if (--s->x[obj].outstanding == 0)
            xfer_done(s, obj, now);
    } else if (--s->st[obj].outstanding == 0) {
        bnd_coll_done(s, obj, now);
    }
    return s->drv.err_rc;
}

static void psim_free(psim *s)
{
    free(s->ops);
    free(s->lastidx);
    free(s->rq);
    free(s->fin);
    free(s->x);
    free(s->st);
    drv_close(&s->drv);
}

/* Each stage's op order, the index of each chunk's last backward, its straggler factor; the
 * event handlers. */
static void stages_init(psim *s, const lo_pipe *pp, const exec_opts *o)
{
    s->sched = *pp;
    s->sched.m = s->m;
    for (int q = 0; q < s->p; q++) {
        layout_pipe_order(&s->sched, q, s->ops + (size_t)q * s->n_ops);
        for (int i = 0; i < s->n_ops; i++) {
            const lo_pipe_op *op = &s->ops[(size_t)q * s->n_ops + i];
            if (op->bwd)
                s->lastidx[(size_t)q * pp->v + op->chunk] = i;
        }
        s->st[q].r_active = -1;
        s->st[q].slow = 1;
        for (int i = 0; i < o->n_stragglers; i++)
            if (o->straggler_rank[i] / s->S == q && o->straggler_factor[i] > s->st[q].slow)
                s->st[q].slow = o->straggler_factor[i];
    }
    ev_engine_register(s->drv.eng, PV_OP, on_op, s);
    ev_engine_register(s->drv.eng, PV_XSTART, on_xstart, s);
    ev_engine_register(s->drv.eng, PV_BSTART, on_bstart, s);
    ev_engine_register(s->drv.eng, PV_OPT, on_opt, s);
    ev_engine_register(s->drv.eng, PV_EMB, on_opt, s); /* the embedding all-reduce ended: on to the optimizer */
    ev_engine_register(s->drv.eng, PV_HOLD, on_hold, s);
}

int exec_pipe_run(const lo_graph *g, const wl *w, const spec_training *tr, const cost_calib *cal,
                  const spec_cluster *c, const exec_opts *o, exec_result *res, sc_err *err)
{
    psim s;
    memset(&s, 0, sizeof s);
    memset(res, 0, sizeof *res);
    int budget_rc = an_pipe_budget(&g->layout, o->grad_accum > 0 ? o->grad_accum : g->pipe.m, 1, err);
    if (budget_rc)
        return budget_rc;
    an_pipe_timed *t = malloc(sizeof *t);
    if (!t)
        return sc_err_set(err, SC_ERUNTIME, "simulator", "", "out of memory");
    an_pipe_time(g, w, tr, cal, c, t);
    const lo_pipe *pp = &g->pipe;
    s.g = g;
    s.t = t;
    s.cal = cal;
    s.o = o;
    s.p = pp->p;
    s.V = pp->n_vstages;
    s.m = o->grad_accum > 0 ? o->grad_accum : pp->m;
    t->pipe.m = s.m;
    s.n_ops = 2 * s.m * pp->v;
    s.G = g->gpus_per_node;
    s.nics = c->nics_per_node;
    s.fab = &c->fabric;
    s.S = g->n_ranks / s.p;
    s.bucket_bytes = fw_dp_bucket_bytes(tr, g->pipe.dp, g->layout.overlap, g->elem_bytes);
    s.reduce_bucket_bytes = fw_dp_bucket_bytes(tr, g->pipe.dp, g->layout.overlap, g->sched.reduce_elem_bytes);
    int unit = exec_pipe_symmetry_unit(g, c, o);
    if (unit < g->nodes) { /* stages of whole nodes (exec_pipe_symmetry_unit) */
        s.b = s.S / s.G;
        s.u = unit / s.p;
    }
    s.S_rep = s.u ? s.u * s.G : s.S;
    net_params np = drv_net_params(cal);
    int rc = net_build_quotient(c, g->nodes, unit < g->nodes ? unit : g->nodes, &np, &s.drv.net, err);
    if (rc) {
        free(t);
        return rc;
    }
    const drv_plug plug = {&s, NULL, NULL, flow_done};
    int drv_rc = drv_open(&s.drv, s.drv.net, (size_t)s.p * 64, o->seed, PV_FLOW, PV_SOLVE, &plug);
    s.ops = malloc(sizeof *s.ops * (size_t)s.n_ops * (size_t)s.p);
    s.fin = malloc(sizeof(double) * (size_t)s.V * (size_t)s.m * 2);
    s.st = calloc((size_t)s.p, sizeof *s.st);
    s.lastidx = malloc(sizeof(int) * (size_t)s.p * (size_t)pp->v);
    s.rq = malloc(sizeof(int) * (size_t)s.p * (size_t)pp->v);
    if (drv_rc || !s.ops || !s.fin || !s.st || !s.lastidx || !s.rq) {
        psim_free(&s);
        free(t);
        return sc_err_set(err, SC_ERUNTIME, "simulator", "", "out of memory for %d stages", s.p);
    }
    s.bin = s.fin + (size_t)s.V * s.m;
    for (size_t i = 0; i < (size_t)s.V * s.m * 2; i++)
        s.fin[i] = NAN;
    for (int i = 0; i < s.m; i++)
        s.fin[i] = 0; /* virtual stage 0 reads its micro-batches at once */
    stages_init(&s, pp, o);
    if (o->trace)
        trace_names(&s, g->n_ranks);
    for (int q = 0; q < s.p; q++)
        try_stage(&s, q, 0);
    rc = s.drv.err_rc ? s.drv.err_rc : ev_engine_run(s.drv.eng, INFINITY);
    if (rc < 0 || s.drv.err_rc || s.n_done != s.p) {
        int done = s.n_done;
        psim_free(&s);
        free(t);
        if (rc < 0 || s.drv.err_rc)
            return sc_err_set(err, SC_ERUNTIME, "simulator", "", "internal error while simulating the pipeline");
        return sc_err_set(err, SC_ERUNTIME, "simulator", "", "the pipeline stalled: %d of %d stages finished", done, s.p);
    }
    res->step_s = 0;
    res->first_end_s = INFINITY;
    for (int q = 0; q < s.p; q++) {
        const pstage *k = &s.st[q];
        if (k->end_t > res->step_s) {
            res->step_s = k->end_t;
            res->slowest_rank = q * s.S;
        }
        if (k->end_t < res->first_end_s)
            res->first_end_s = k->end_t;
        res->compute_s += k->busy_s / s.p;
        res->optimizer_s += k->opt_s / s.p;
        for (int i = 0; i < N_COLLS; i++)
            res->exposed_s[i] += k->exposed[i] / s.p;
    }
    res->latest_rank = res->slowest_rank;
    double acc = res->compute_s + res->optimizer_s;
    for (int i = 0; i < N_COLLS; i++)
        acc += res->exposed_s[i];
    res->idle_s = res->step_s - acc > 1e-9 * res->step_s ? res->step_s - acc : 0;
    res->collectives = s.collectives;
    res->events = ev_engine_events(s.drv.eng);
    res->stale = s.drv.stale;
    res->retimed = ev_engine_retimed(s.drv.eng);
    res->flows = s.drv.flows;
    res->ranks_simulated = unit < g->nodes ? unit * s.G : g->n_ranks;
    psim_free(&s);
    free(t);
    return 0;
}
