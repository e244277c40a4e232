/* exec.c — the discrete-event executor (see exec.h; execution rules in model/layout.h), a plug of
 * the simulator driver (drive.h: network, events, RNG, flows). Its trace is written by
 * exec_trace.c, the symmetry it may exploit decided by exec_sym.c.
 *
 * One rank's state machine. The host walks the copies of the step's items (a cursor); the
 * compute stream runs one copy at a time; each communication stream is a FIFO of issued
 * collectives, one running at a time:
 *
 *   host_step(copy c) --- issue reduces of c-1, gathers of copies up to c + d (issue_lookahead)
 *        |
 *        v
 *   waiting --(gathers of c done: try_compute)--> computing c --(EV_COMP)--+
 *        ^                                           |  inline collectives: |
 *        |                                           |  phase 0 -> issue -> |
 *        |                                           |  phase 1 beside them |
 *        +------------------ copy_done(c) <----------+----------------------+
 *        |  (c == last copy)
 *        v
 *   boundary: try_boundary runs its ops in order (optimizer on the compute stream, collectives
 *             on the communication streams), then done.
 *
 *   a stream's collective: queued --(head, its dependency ended: kick_comm)--> arrived
 *     --(every member arrived: coll_arrive)--> EV_START after the latency --(on_start: ring
 *     flows over sim/net, through the driver, drive.h)--> running --(last flow ends: flow_done)-->
 *     coll_complete: each member's gather count, boundary index or inline count moves on, and
 *     its streams are kicked.
 *
 * While any of a rank's collectives runs, its compute is slowed by the calibrated interference
 * (comp_rerate re-times the end event in place). */
#include "exec.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "drive.h"
#include "ev.h"
#include "exec_trace.h"

#define MAXD 66
#define NS FW_STREAMS /* communication streams per rank */
_Static_assert(NS == TR_COMM_STREAMS, "one trace lane per communication stream (traces/schema.h)");

enum { EV_COMP, EV_START, EV_FLOW, EV_SAMPLE, EV_SOLVE };
enum { Q_GATHER, Q_REDUCE, Q_BOUNDARY, Q_INLINE };

typedef struct cursor {
    int m; /* micro-step (the last one has its own items)  */
    int i; /* item within the micro-step                   */
    int j; /* copy of that item (0 .. count-1)             */
} cursor;

typedef struct qop {
    const lo_coll *op;
    int type, slot;
    long seq;            /* issue number on its rank                                     */
    int dep_st;          /* -1, or the stream of the op it consumes (a reduce's previous) */
    long dep_seq;        /* ... and that op's issue number                                */
} qop;

/* One communication stream's queue: a FIFO ring of issued, not yet started collectives (grows
 * when communication falls behind: nothing throttles reduces). The stream's running op and its
 * flags are in rank_hot (cur_*, busy, active), its queue length there too (qn). */
typedef struct cqueue {
    qop *q;
    int qh, qcap;
} cqueue;

/* A rank's state, split by how often an event touches it (a collective's completion and start
 * walk every member, so what they touch is laid out per rank in as few cache lines as it fits):
 *   rank_hot  (s->hot, 64-byte aligned, stride s->hot_stride): two lines, then the gather
 *             counts: what kick_comm, coll_complete, coll_arrive's member loop, try_boundary
 *             and comp_rerate read or write on every event;
 *   rank_comp (s->rc, one line): the running compute's rate and clock, the arrival times and
 *             the skew sum, touched when a collective starts or a compute is re-timed;
 *   rank_cold (s->rk): the rest (queues, cursors, accumulators, the trace's times). */
typedef struct rank_hot {
    /* line 0: the streams as kick_comm and coll_complete read them */
    _Alignas(64) long done_seq[NS]; /* the last completed op per stream (FIFO: in order)  */
    long cur_seq[NS];     /* the running op's issue number                                */
    int qn[NS];           /* ops queued, not started                                     */
    uint8_t busy[NS];     /* an op taken from the queue                                  */
    uint8_t comp_busy;
    /* line 1 */
    uint8_t active[NS];   /* its collective running (an NCCL kernel)                     */
    uint8_t cur_type[NS], cur_slot[NS]; /* the running op's queue type and gather slot (< MAXD) */
    uint8_t last_kind;    /* kind of the last collective completed                       */
    uint8_t waiting;      /* the host reached copy c; compute waits for its gathers      */
    uint8_t in_boundary, done, b_inflight, copy_ready, post_done, comp_is_opt, phase;
    /* phase: compute of a copy with inline collectives, 0 before them, 1 beside; post_done:
     * the compute beside them ended; copy_ready: the last inline collective completed */
    int ipending;         /* inline collectives outstanding                              */
    long c;               /* next copy to compute                                        */
    int b_idx;            /* boundary op running or next                                 */
    int gpending[];       /* per gather slot (D, ring-indexed by copy): gathers outstanding */
} rank_hot;
_Static_assert(offsetof(rank_hot, active) == 64, "rank_hot: line 0 is the streams' 64 bytes");
_Static_assert(MAXD <= 256 && N_COLLS <= 256, "rank_hot: a gather slot and a collective kind fit a byte");

typedef struct rank_comp {
    _Alignas(64) double comp_rate; /* the running compute's speed (1, or slowed beside a collective) */
    double comp_rem, comp_mark; /* its work left (s at full speed) as of comp_mark      */
    uint32_t comp_ver;
    int32_t comp_ev;      /* its queued end event (re-timed in place), -1 = none        */
    double skew;
    double arrive_t[NS];  /* when the rank reached the running collective, per stream    */
} rank_comp;
_Static_assert(sizeof(rank_comp) == 64, "rank_comp: one cache line");

typedef struct rank_cold {
    cqueue cq[NS];
    long seq;             /* ops issued                                                  */
    cursor main, look;
    long lidx;            /* copy index of the look cursor (next gathers to issue)       */
    const lo_item *prev_item; /* copy c-1, whose reduces are issued at the next host step */
    const char *comp_name;
    double comp_start, comp_free; /* the running compute's start; when the stream last became free */
    double post_end;
    double start_t[NS];   /* when the running collective started, per stream (the trace)  */
    int *gkind;           /* per gather slot: the gathers' kind (in sim.gslots)          */
    double end_t, slow;
    double busy, opt, exposed[N_COLLS];
} rank_cold;

typedef struct group_st {
    int *members, n; /* members ascending, n of them; a quotient run keeps only the first
                        n_here + 1 (the represented ones and the next, their ring's last edge) */
    int n_here;      /* of which simulated (< sim.R): a prefix; n unless a quotient run   */
    int arrived, last_rank;
    double t_last;
    const lo_coll *op;
    int outstanding;
} group_st;

typedef struct sim {
    const lo_graph *g;
    const an_timed *t;
    const cost_calib *cal;
    const spec_cluster *c;
    const exec_opts *o;
    sim_drv drv; /* the driver (drive.h): network, event engine, RNG, flows; EV_FLOW, EV_SOLVE */
    int N;      /* ranks of the cluster                                                        */
    int G;      /* GPUs (ranks) per node                                                       */
    int d, D;   /* prefetch depth; gather slots per rank (d + 1, ring-indexed by copy)        */
    int S;      /* micro-steps simulated                                                       */
    int nics;   /* NICs per node                                                               */
    int R;      /* ranks simulated: N, or the represented ranks 0..R-1 of an exact-symmetric run */
    int orbit;  /* copies of each represented rank: N / R                                     */
    long per_micro, total; /* copies per micro-step; per step (the host's last copy + 1)        */
    unsigned char *hot; /* rank r's rank_hot at hot + r hot_stride (its gpending after it)     */
    size_t hot_stride;
    rank_comp *rc;
    rank_cold *rk;
    int *gslots; /* every rank's gkind: D ints per rank                                 */
    group_st *grp[NS][N_GROUPS]; /* per stream: ranks match their ops stream by stream   */
    group_st **made;             /* the groups whose members were listed (freed at the end): */
    int n_made, cap_made;        /* the tables above are touched only there                  */
    long *late; /* per rank: times it was the last to arrive */
    int *members_tmp; /* N ints: a group's members before they are copied at its own size */
    long collectives, n_done;
    sc_err *err;
    exec_tracer *tr; /* NULL unless a trace is written (sim/exec_trace.c) */
} sim;

/* ---- the graph as seen by a cursor ------------------------------------------------------ */
static const lo_micro *micro_of(const sim *s, int m) { return m == s->S - 1 ? &s->g->last : &s->g->micro; }
static const an_titem *titem(const sim *s, const cursor *c)
{
    return c->m == s->S - 1 ? &s->t->last[c->i] : &s->t->micro[c->i];
}
static const lo_item *litem(const sim *s, const cursor *c) { return &micro_of(s, c->m)->item[c->i]; }
static void next(const sim *s, cursor *c)
{
    if (++c->j >= litem(s, c)->count) {
        c->j = 0;
        if (++c->i >= s->g->micro.n_items) {
            c->i = 0;
            c->m++;
        }
    }
}

/* ---- groups ----------------------------------------------------------------------------- */
/* The group of kind k that rank r belongs to: the op graph's one definition (layout_group_index). */
static int group_id(const sim *s, lo_group_kind k, int r) { return layout_group_index(s->g, k, r); }

static group_st *group_of(sim *s, int st, lo_group_kind k, int r)
{
    if (!s->grp[st][k]) /* on first use: a stream or communicator the layout never uses costs nothing */
        s->grp[st][k] = calloc((size_t)s->N, sizeof(group_st));
    if (!s->grp[st][k])
        return NULL;
    group_st *gs = &s->grp[st][k][group_id(s, k, r)];
    if (!gs->members) { /* at the group's size: memory O(ranks + sum of group sizes) */
        if (s->n_made == s->cap_made) {
            int cap = s->cap_made ? 2 * s->cap_made : 64;
            group_st **m = realloc(s->made, sizeof *m * (size_t)cap);
            if (!m)
                return NULL;
            s->made = m;
            s->cap_made = cap;
        }
        int n = layout_group_members(s->g, k, r, s->members_tmp), here = 0;
        while (here < n && s->members_tmp[here] < s->R)
            here++;
        int keep = here < n ? here + 1 : n;
        gs->members = malloc(sizeof(int) * (size_t)(keep > 0 ? keep : 1));
        if (!gs->members)
            return NULL;
        memcpy(gs->members, s->members_tmp, sizeof(int) * (size_t)keep);
        gs->n = n;
        gs->n_here = here;
        s->made[s->n_made++] = gs;
    }
    return gs;
}

/* ---- compute stream --------------------------------------------------------------------- */
static rank_hot *hot_of(const sim *s, int r) { return (rank_hot *)(void *)(s->hot + (size_t)r * s->hot_stride); }

static int comm_active(const rank_hot *h)
{
    for (int i = 0; i < NS; i++)
        if (h->active[i])
            return 1;
    return 0;
}

static void comp_schedule(sim *s, int r, double now)
{
    rank_comp *m = &s->rc[r];
    m->comp_ver++;
    double end = now + m->comp_rem / m->comp_rate;
    int rc = m->comp_ev >= 0 ? ev_engine_retime(s->drv.eng, m->comp_ev, end, m->comp_ver)
                             : ev_engine_push_id(s->drv.eng, end, EV_COMP, r, 0, m->comp_ver, &m->comp_ev);
    if (rc)
        s->drv.err_rc = SC_ERUNTIME;
}

/* Start compute of `dur` seconds at full speed; slowed while a collective runs on the rank. */
static void comp_begin(sim *s, int r, double now, double dur, int is_opt, const char *name)
{
    rank_hot *h = hot_of(s, r);
    rank_comp *m = &s->rc[r];
    rank_cold *k = &s->rk[r];
    dur *= drv_jitter(&s->drv, s->o->jitter);
    dur *= k->slow;
    h->comp_busy = 1;
    h->comp_is_opt = (uint8_t)is_opt;
    k->comp_start = m->comp_mark = now;
    m->comp_rem = dur;
    k->comp_name = name;
    double sl = s->cal->overlap_slowdown.v;
    m->comp_rate = comm_active(h) && sl > 0 ? 1 / (1 + sl) : 1;
    comp_schedule(s, r, now);
}

/* The rank's communication became active or idle: rescale a running compute. */
static void comp_rerate(sim *s, int r, double now)
{
    rank_hot *h = hot_of(s, r);
    double sl = s->cal->overlap_slowdown.v;
    if (!h->comp_busy || sl <= 0)
        return;
    rank_comp *m = &s->rc[r];
    double rate = comm_active(h) ? 1 / (1 + sl) : 1;
    if (rate == m->comp_rate)
        return;
    m->comp_rem -= (now - m->comp_mark) * m->comp_rate;
    if (m->comp_rem < 0)
        m->comp_rem = 0;
    m->comp_mark = now;
    m->comp_rate = rate;
    comp_schedule(s, r, now);
}

static void kick_comm(sim *s, int r, double now);
static void try_boundary(sim *s, int r, double now);
static void copy_done(sim *s, int r, double now);

static void try_compute(sim *s, int r, double now)
{
    rank_hot *h = hot_of(s, r);
    if (!h->waiting || h->comp_busy || h->gpending[h->c % s->D])
        return;
    rank_cold *k = &s->rk[r];
    double wait = now - k->comp_free;
    if (wait > 0)
        k->exposed[k->gkind[h->c % s->D]] += wait;
    h->waiting = 0;
    const lo_item *it = litem(s, &k->main);
    const an_titem *ti = titem(s, &k->main); /* at full speed: comp_begin applies the slowdown */
    double dur = ti->comp - ti->overlap_s;
    h->phase = 0;
    comp_begin(s, r, now, ti->ni ? (1 - ti->inl_f) * dur : dur, 0, it->pass == LO_FWD ? "forward" : "backward");
}

/* Issue op on its stream; dep_st >= 0: it starts only after op dep_seq of that stream ended.
 * Returns its issue number. */
static long enqueue(sim *s, int r, const lo_coll *op, int type, int slot, int dep_st, long dep_seq)
{
    rank_cold *k = &s->rk[r];
    int *qn = &hot_of(s, r)->qn[op->stream];
    cqueue *c = &k->cq[op->stream];
    if (*qn == c->qcap) {
        int cap = c->qcap ? 2 * c->qcap : 8;
        qop *q = malloc(sizeof(qop) * (size_t)cap);
        if (!q) {
            s->drv.err_rc = SC_ERUNTIME;
            return 0;
        }
        for (int i = 0; i < *qn; i++)
            q[i] = c->q[(c->qh + i) % c->qcap];
        free(c->q);
        c->q = q;
        c->qh = 0;
        c->qcap = cap;
    }
    long seq = ++k->seq;
    c->q[(c->qh + (*qn)++) % c->qcap] = (qop){op, type, slot, seq, dep_st, dep_seq};
    return seq;
}

static int comm_idle(const rank_hot *h)
{
    for (int i = 0; i < NS; i++)
        if (h->busy[i] || h->qn[i])
            return 0;
    return 1;
}

/* Prefetch depth of the pass of the copy under cursor c (layout.h: the backward may differ). */
static int depth_at(const sim *s, const cursor *c)
{
    return fw_depth_pass(s->d, s->g->bwd_prefetch_p1, litem(s, c)->pass == LO_BWD);
}

/* Issue the gathers of every copy j not issued yet with j - d(j) <= upto. */
static void issue_lookahead(sim *s, int r, long upto)
{
    rank_cold *k = &s->rk[r];
    int *gpending = hot_of(s, r)->gpending;
    while (k->look.m < s->S && k->lidx - depth_at(s, &k->look) <= upto) {
        const lo_item *li = litem(s, &k->look);
        int slot = (int)(k->lidx % s->D);
        gpending[slot] = li->n_gather;
        long prev = 0;
        for (int i = 0; i < li->n_gather; i++) { /* in order: on another stream, after the previous */
            int dep = i && li->gather[i].stream != li->gather[i - 1].stream ? li->gather[i - 1].stream : -1;
            prev = enqueue(s, r, &li->gather[i], Q_GATHER, slot, dep, prev);
            k->gkind[slot] = (int)li->gather[i].kind;
        }
        next(s, &k->look);
        k->lidx++;
    }
}

/* The host reaches copy c (compute c-1 ended, or the step starts). */
static void host_step(sim *s, int r, double now)
{
    rank_cold *k = &s->rk[r];
    rank_hot *h = hot_of(s, r);
    if (k->prev_item) {
        long prev = 0;
        for (int i = 0; i < k->prev_item->n_reduce; i++) {
            const lo_coll *c = &k->prev_item->reduce[i];
            int dep = i && c->stream != c[-1].stream ? c[-1].stream : -1;
            prev = enqueue(s, r, c, Q_REDUCE, 0, dep, prev);
        }
    }
    k->prev_item = NULL;
    issue_lookahead(s, r, h->c); /* uniform depth d: exactly copy c + d */
    if (h->c < s->total) {
        h->waiting = 1;
        try_compute(s, r, now);
    } else {
        h->in_boundary = 1;
    }
    kick_comm(s, r, now);
    try_boundary(s, r, now);
}

/* ---- collectives ------------------------------------------------------------------------ */
/* What one member does when its collective on stream st completes. */
static void member_complete(sim *s, const group_st *gs, int st, int r, double now)
{
    rank_hot *h = hot_of(s, r);
    exec_trace_coll_span(s->tr, r, st, s->rk[r].start_t[st], now);
    h->busy[st] = h->active[st] = 0;
    h->done_seq[st] = h->cur_seq[st];
    h->last_kind = (uint8_t)gs->op->kind;
    comp_rerate(s, r, now);
    int slot = h->cur_slot[st];
    if (h->cur_type[st] == Q_GATHER) {
        if (--h->gpending[slot] == 0 && slot == h->c % s->D)
            try_compute(s, r, now);
    } else if (h->cur_type[st] == Q_BOUNDARY) {
        h->b_idx++;
        h->b_inflight = 0;
    } else if (h->cur_type[st] == Q_INLINE && --h->ipending == 0 && h->post_done) {
        rank_cold *k = &s->rk[r];
        if (now > k->post_end) /* by the kind whose exposure it is, as the recurrence books it */
            an_inline_book(titem(s, &k->main), now - k->post_end, k->exposed);
        h->copy_ready = 1;
    }
}

static void coll_complete(sim *s, group_st *gs, int st, double now)
{
    exec_trace_coll_begin(s->tr, gs->op);
    for (int i = 0; i < gs->n_here; i++)
        member_complete(s, gs, st, gs->members[i], now);
    /* after the loop above: moving on may start another collective on this same group */
    for (int i = 0; i < gs->n_here; i++) {
        rank_hot *h = hot_of(s, gs->members[i]);
        if (h->copy_ready) {
            h->copy_ready = 0;
            copy_done(s, gs->members[i], now);
        }
        kick_comm(s, gs->members[i], now);
        try_boundary(s, gs->members[i], now);
    }
}

static void coll_arrive(sim *s, int r, int st, const lo_coll *op, double now)
{
    group_st *gs = group_of(s, st, op->group, r);
    if (!gs) {
        s->drv.err_rc = SC_ERUNTIME;
        return;
    }
    if (gs->arrived == 0)
        gs->op = op;
    /* late: strictly after every other member (arrivals come in time order; a tie is no one's) */
    /* (ties within rounding, 1e-12 of the time, are ties: where a contended spine re-rates the
     * copies of one flow in another order, their ends differ in the last bits) */
    int late = gs->arrived > 0 && now - gs->t_last > 1e-12 * now;
    gs->arrived++;
    gs->t_last = now;
    gs->last_rank = r;
    s->rc[r].arrive_t[st] = now;
    if (gs->arrived < gs->n_here)
        return;
    /* everyone is here: the collective runs (a quotient run: the represented members; the others
     * are their copies and arrive with them). A group inside the represented ranks stands for
     * `orbit` copies of itself; one that spans the cluster is its own copy, and in it every
     * member's copies arrive together with it, so no one is strictly last. */
    gs->arrived = 0;
    int whole = gs->n_here == gs->n;
    s->collectives += whole ? s->orbit : 1;
    if (late && whole)
        s->late[gs->last_rank]++;
    for (int i = 0; i < gs->n_here; i++) {
        int q = gs->members[i];
        rank_comp *m = &s->rc[q];
        m->skew += now - m->arrive_t[st];
        s->rk[q].start_t[st] = now;
        hot_of(s, q)->active[st] = !gs->op->offload;
        comp_rerate(s, q, now);
    }
    const cost_group *geo = &s->g->group[gs->op->group];
    cost_algo algo;
    cost_coll_best(s->cal, gs->op->kind, gs->op->bytes, gs->op->chunks, geo, &algo);
    /* + the framework's per-collective bookkeeping (the rule both engines share: model/analytic.c
     * coll_time); the other streams' flows have the network meanwhile */
    double lat = cost_coll_latency(s->cal, gs->op->kind, algo, gs->op->chunks, geo) +
                 gs->op->chunks * s->cal->fw_coll_s[s->g->framework].v;
    int gid = group_id(s, gs->op->group, r);
    if (ev_engine_push(s->drv.eng, now + lat, EV_START, (int32_t)(st * N_GROUPS + (int)gs->op->group), gid, (uint32_t)algo))
        s->drv.err_rc = SC_ERUNTIME;
}

/* Start the head of each idle stream whose dependency has ended. */
static void kick_comm(sim *s, int r, double now)
{
    rank_hot *h = hot_of(s, r);
    for (int st = 0; st < NS; st++) {
        if (h->busy[st] || !h->qn[st])
            continue;
        cqueue *c = &s->rk[r].cq[st];
        const qop *q = &c->q[c->qh];
        if (q->dep_st >= 0 && h->done_seq[q->dep_st] < q->dep_seq)
            continue;
        const lo_coll *op = q->op;
        h->cur_seq[st] = q->seq;
        h->cur_type[st] = (uint8_t)q->type;
        h->cur_slot[st] = (uint8_t)q->slot;
        c->qh = (c->qh + 1) % c->qcap;
        h->qn[st]--;
        h->busy[st] = 1;
        coll_arrive(s, r, st, op, now);
    }
}

/* ---- the accumulation boundary ---------------------------------------------------------- */
static void try_boundary(sim *s, int r, double now)
{
    rank_hot *h = hot_of(s, r);
    if (!h->in_boundary || h->done || h->comp_busy || h->b_inflight || !comm_idle(h))
        return;
    rank_cold *k = &s->rk[r];
    if (h->b_idx == s->g->n_boundary) {
        h->done = 1;
        k->end_t = now;
        if (now > k->comp_free)
            k->exposed[h->last_kind] += now - k->comp_free;
        s->n_done++;
        return;
    }
    const lo_bop *b = &s->g->boundary[h->b_idx];
    h->b_inflight = 1;
    if (b->is_optimizer) {
        if (now > k->comp_free)
            k->exposed[h->last_kind] += now - k->comp_free;
        comp_begin(s, r, now, s->t->b_dur[h->b_idx], 1, "optimizer");
    } else {
        enqueue(s, r, &b->coll, Q_BOUNDARY, 0, -1, 0);
        kick_comm(s, r, now);
    }
}

/* ---- event handlers --------------------------------------------------------------------- */
/* Copy c is finished (its compute and its inline collectives): the host moves on. */
static void copy_done(sim *s, int r, double now)
{
    rank_cold *k = &s->rk[r];
    k->comp_free = now;
    k->prev_item = litem(s, &k->main);
    hot_of(s, r)->c++;
    next(s, &k->main);
    host_step(s, r, now);
}

/* The compute beside a copy's inline collectives ended: its tails go out (lo_item.inline_tail). */
static int post_end(sim *s, int r, const lo_item *it, double now)
{
    int n = 0;
    hot_of(s, r)->post_done = 1;
    s->rk[r].post_end = now;
    for (int i = 0; i < it->n_inline; i++)
        if ((it->inline_tail >> i) & 1u) {
            enqueue(s, r, &it->inl[i], Q_INLINE, 0, -1, 0);
            n++;
        }
    return n;
}

/* A copy's compute reached its inline collectives: they go out now (those that are not tails),
 * and the rest of the compute runs beside them. */
static void inline_begin(sim *s, int r, const an_titem *ti, double now)
{
    rank_hot *h = hot_of(s, r);
    const lo_item *it = litem(s, &s->rk[r].main);
    h->phase = 1;
    h->ipending = it->n_inline;
    h->post_done = 0;
    for (int i = 0; i < it->n_inline; i++)
        if (!((it->inline_tail >> i) & 1u))
            enqueue(s, r, &it->inl[i], Q_INLINE, 0, -1, 0);
    double post = ti->inl_f * (ti->comp - ti->overlap_s);
    if (post > 0)
        comp_begin(s, r, now, post, 0, it->pass == LO_FWD ? "forward" : "backward");
    else
        (void)post_end(s, r, it, now);
    kick_comm(s, r, now);
}

static int on_comp(void *ctx, const ev_event *e, ev_engine *eng)
{
    sim *s = ctx;
    int r = e->a;
    rank_hot *h = hot_of(s, r);
    rank_comp *m = &s->rc[r];
    rank_cold *k = &s->rk[r];
    if (e->ver != m->comp_ver || !h->comp_busy || e->id != m->comp_ev) {
        s->drv.stale++; /* never, with events re-timed in place: counted to prove it */
        return 0;
    }
    m->comp_ev = -1;
    double now = ev_engine_now(eng);
    h->comp_busy = 0;
    k->comp_free = now;
    exec_trace_compute(s->tr, r, k->comp_name, k->comp_start, now);
    if (h->comp_is_opt) {
        k->opt += now - k->comp_start;
        h->b_idx++;
        h->b_inflight = 0;
        try_boundary(s, r, now);
        return s->drv.err_rc;
    }
    k->busy += now - k->comp_start;
    const an_titem *ti = titem(s, &k->main);
    if (ti->ni && h->phase == 0) {
        inline_begin(s, r, ti, now);
        return s->drv.err_rc;
    }
    if (ti->ni) {
        if (post_end(s, r, litem(s, &k->main), now))
            kick_comm(s, r, now);
        if (h->ipending)
            return s->drv.err_rc;
    }
    copy_done(s, r, now);
    return s->drv.err_rc;
}

static int on_start(void *ctx, const ev_event *e, ev_engine *eng)
{
    sim *s = ctx;
    group_st *gs = &s->grp[e->a / N_GROUPS][e->a % N_GROUPS][e->b];
    const cost_group *geo = &s->g->group[gs->op->group];
    double bytes = cost_coll_edge_bytes_n(s->cal, gs->op->kind, (cost_algo)e->ver, gs->op->bytes, gs->op->chunks, geo);
    /* all the collective's flows start together: re-rated once (drive.h) */
    drv_batch f;
    drv_begin(&s->drv, &f, ((uint64_t)e->a << 32) | (uint32_t)e->b, ev_engine_now(eng));
    if (geo->transport == XPORT_NCCL)
        coll_ring_flows_fabric(gs->members, gs->n, gs->n_here, s->G, s->nics, &s->c->fabric, bytes, drv_add_flow, &f);
    else /* host / in-network: S per member, not ring edges */
        coll_xport_flows(geo, gs->op->kind, gs->members, gs->n_here, s->G, s->nics, gs->op->bytes, drv_add_flow, &f);
    if (drv_end(&f))
        return SC_ERUNTIME;
    gs->outstanding = f.n;
    if (!f.n)
        coll_complete(s, gs, e->a / N_GROUPS, f.now);
    return s->drv.err_rc;
}

/* The driver's callbacks (drive.h): a flow's trace span, and its collective's completion
 * (tag: the group's stream and kind << 32 | its index). */
static int flow_started(void *ctx, int id, int src, int dst, int ch, double now)
{
    return exec_trace_flow_start(((sim *)ctx)->tr, id, src, dst, ch, now);
}

static void flow_ended(void *ctx, int id, double now) { exec_trace_flow_end(((sim *)ctx)->tr, id, now); }

static int flow_done(void *ctx, uint64_t tag, double now)
{
    sim *s = ctx;
    int a = (int)(tag >> 32);
    group_st *gs = &s->grp[a / N_GROUPS][a % N_GROUPS][(uint32_t)tag];
    if (--gs->outstanding == 0)
        coll_complete(s, gs, a / N_GROUPS, now);
    return s->drv.err_rc;
}

static int on_sample(void *ctx, const ev_event *e, ev_engine *eng)
{
    sim *s = ctx;
    (void)e;
    double now = ev_engine_now(eng);
    exec_trace_sample(s->tr, s->drv.net, now);
    if (s->n_done < s->R && ev_engine_push(eng, now + s->o->sample_s, EV_SAMPLE, 0, 0, 0))
        return SC_ERUNTIME;
    return 0;
}

/* ---- set-up and run --------------------------------------------------------------------- */
static void sim_free(sim *s)
{
    if (s->rk)
        for (int r = 0; r < s->R; r++)
            for (int st = 0; st < NS; st++)
                free(s->rk[r].cq[st].q);
    free(s->rk);
    free(s->rc);
    free(s->hot);
    free(s->gslots);
    for (int i = 0; i < s->n_made; i++)
        free(s->made[i]->members);
    free(s->made);
    for (int st = 0; st < NS; st++)
        for (int k = 0; k < N_GROUPS; k++)
            free(s->grp[st][k]);
    free(s->late);
    free(s->members_tmp);
    exec_trace_free(s->tr);
    drv_close(&s->drv);
}

/* The ranks' state (rank_hot, rank_comp, rank_cold, the gather kinds), zeroed. 0, or -1 when
 * out of memory (sim_free frees what was allocated). */
static int sim_alloc_ranks(sim *s)
{
    size_t R = (size_t)s->R, line = 64;
    s->hot_stride = (offsetof(rank_hot, gpending) + sizeof(int) * (size_t)s->D + line - 1) / line * line;
    s->hot = aligned_alloc(line, R * s->hot_stride);
    s->rc = aligned_alloc(line, R * sizeof *s->rc);
    s->rk = calloc(R, sizeof *s->rk);
    s->gslots = calloc(R * (size_t)s->D, sizeof *s->gslots);
    if (!s->hot || !s->rc || !s->rk || !s->gslots)
        return -1;
    memset(s->hot, 0, R * s->hot_stride);
    memset(s->rc, 0, R * sizeof *s->rc);
    return 0;
}

/* The step's result from the simulated ranks (a quotient run: every other rank is a copy of one
 * of these): the slowest and first end, the means per rank, the counters. */
static void sim_collect(const sim *s, exec_result *res)
{
    res->step_s = 0;
    res->first_end_s = INFINITY;
    long most = -1;
    for (int r = 0; r < s->R; r++) {
        const rank_cold *k = &s->rk[r];
        if (k->end_t > res->step_s) {
            res->step_s = k->end_t;
            res->slowest_rank = r;
        }
        if (k->end_t < res->first_end_s)
            res->first_end_s = k->end_t;
        res->compute_s += k->busy / s->R;
        res->optimizer_s += k->opt / s->R;
        res->skew_s += s->rc[r].skew / s->R;
        for (int i = 0; i < N_COLLS; i++)
            res->exposed_s[i] += k->exposed[i] / s->R;
        if (s->late[r] > most) {
            most = s->late[r];
            res->latest_rank = r;
        }
    }
    res->latest_count = most;
    double acc = res->compute_s + res->optimizer_s;
    for (int i = 0; i < N_COLLS; i++)
        acc += res->exposed_s[i];
    res->idle_s = res->step_s - acc > 1e-9 * res->step_s ? res->step_s - acc : 0;
    res->collectives = s->collectives;
    res->events = ev_engine_events(s->drv.eng);
    res->stale = s->drv.stale;
    res->retimed = ev_engine_retimed(s->drv.eng);
    res->flows = s->drv.flows;
    res->ranks_simulated = s->R;
}

int exec_run(const lo_graph *g, const an_timed *t, const cost_calib *cal, const spec_cluster *c,
             const exec_opts *o, exec_result *res, sc_err *err)
{
    sim s;
    memset(&s, 0, sizeof s);
    memset(res, 0, sizeof *res);
    an_timed tt = *t;
    s.g = g;
    s.t = &tt;
    s.cal = cal;
    s.c = c;
    s.o = o;
    s.err = err;
    s.N = g->n_ranks;
    s.G = g->gpus_per_node;
    s.d = g->prefetch;
    s.D = s.d + 1;
    s.S = o->grad_accum > 0 ? o->grad_accum : g->grad_accum;
    tt.grad_accum = s.S;
    s.nics = c->nics_per_node;
    for (int i = 0; i < g->micro.n_items; i++)
        s.per_micro += g->micro.item[i].count;
    s.total = s.per_micro * s.S;
    if (s.d >= MAXD - 1)
        return sc_err_set(err, SC_EINPUT, "--prefetch", "", "expected a prefetch depth below %d, got %d", MAXD - 1, s.d);

    int unit = exec_symmetry_unit(g, c, o);
    if (unit < 0)
        return sc_err_set(err, SC_ERUNTIME, "simulator", "", "out of memory checking the layout's symmetry");
    s.R = unit * s.G;
    s.orbit = g->nodes / unit;
    net_params np = drv_net_params(cal);
    int rc = net_build_quotient(c, g->nodes, unit, &np, &s.drv.net, err);
    if (rc)
        return rc;
    if (c->innet.present) { /* the optimizer node updates elem_bytes-sized gradients */
        rc = net_set_update_rate(s.drv.net, c->innet.opt_params_per_s * g->elem_bytes);
        if (rc) { /* spec_load_cluster requires a positive rate: unreachable from a loaded spec */
            sim_free(&s);
            return sc_err_set(err, rc, c->source, "$.in_network_optimizer.optimizer_Gparams_per_s",
                              "expected a positive update rate, got %g B/s", c->innet.opt_params_per_s * g->elem_bytes);
        }
    }
    const drv_plug plug = {&s, flow_started, flow_ended, flow_done};
    int drv_rc = drv_open(&s.drv, s.drv.net, (size_t)s.R * 8, o->seed, EV_FLOW, EV_SOLVE, &plug);
    s.late = calloc((size_t)s.R, sizeof *s.late);
    s.members_tmp = malloc(sizeof(int) * (size_t)s.N);
    int ok = !drv_rc && !sim_alloc_ranks(&s) && s.late && s.members_tmp; /* grp: allocated by group_of */
    if (!ok) {
        sim_free(&s);
        return sc_err_set(err, SC_ERUNTIME, "simulator", "", "out of memory for %d ranks", s.N);
    }
    ev_engine_register(s.drv.eng, EV_COMP, on_comp, &s);
    ev_engine_register(s.drv.eng, EV_START, on_start, &s);
    ev_engine_register(s.drv.eng, EV_SAMPLE, on_sample, &s);
    for (int r = 0; r < s.R; r++) {
        s.rk[r].gkind = s.gslots + (size_t)r * (size_t)s.D;
        s.rk[r].slow = 1;
        s.rc[r].comp_ev = -1;
        for (int i = 0; i < o->n_stragglers; i++)
            if (o->straggler_rank[i] == r)
                s.rk[r].slow = o->straggler_factor[i];
    }
    if (o->trace) { /* the full simulation (exec_symmetry_unit): every traced rank is simulated */
        int n_traced = o->trace_ranks > 0 && o->trace_ranks < s.N ? o->trace_ranks : s.N;
        if (exec_trace_new(o->trace, n_traced, s.G, s.nics, NS, s.drv.net, o->sample_s, &s.tr)) {
            sim_free(&s);
            return sc_err_set(err, SC_ERUNTIME, "simulator", "", "out of memory");
        }
        if (o->sample_s > 0 && ev_engine_push(s.drv.eng, o->sample_s, EV_SAMPLE, 0, 0, 0)) {
            sim_free(&s);
            return sc_err_set(err, SC_ERUNTIME, "simulator", "", "out of memory");
        }
    }
    /* step start: every rank issues the gathers of copies 0..d-1, then reaches copy 0 */
    for (int r = 0; r < s.R; r++)
        issue_lookahead(&s, r, -1);
    for (int r = 0; r < s.R; r++)
        host_step(&s, r, 0);
    rc = s.drv.err_rc ? s.drv.err_rc : ev_engine_run(s.drv.eng, INFINITY);
    if (rc < 0 || s.drv.err_rc) {
        sim_free(&s);
        return sc_err_set(err, SC_ERUNTIME, "simulator", "", "internal error while simulating");
    }
    if (s.n_done != s.R) {
        sim_free(&s);
        return sc_err_set(err, SC_ERUNTIME, "simulator", "", "the step stalled: %ld of %d ranks finished",
                          s.n_done, s.R);
    }
    sim_collect(&s, res);
    sim_free(&s);
    return 0;
}

int exec_run_steady(const lo_graph *g, const an_timed *t, const cost_calib *cal, const spec_cluster *c,
                    const exec_opts *o, exec_result *r, sc_err *err)
{
    int S = o->grad_accum > 0 ? o->grad_accum : g->grad_accum;
    if (S <= 4 || o->jitter > 0 || o->trace)
        return exec_run(g, t, cal, c, o, r, err);
    exec_result a[3];
    exec_opts oo = *o;
    int rc;
    for (int i = 0; i < 3; i++) {
        oo.grad_accum = 2 + i;
        if ((rc = exec_run(g, t, cal, c, &oo, &a[i], err)))
            return rc;
    }
    double d1 = a[1].step_s - a[0].step_s, d2 = a[2].step_s - a[1].step_s;
    if (fabs(d2 - d1) > 1e-12 * a[2].step_s || a[1].slowest_rank != a[2].slowest_rank)
        return exec_run(g, t, cal, c, o, r, err);
    /* affine in the micro-step count: extrapolate every time-like field from 4 to S */
    double k = S - 4;
    *r = a[2];
#define EXTRA(f) r->f = a[2].f + k * (a[2].f - a[1].f)
    EXTRA(step_s);
    EXTRA(first_end_s);
    EXTRA(compute_s);
    EXTRA(optimizer_s);
    EXTRA(skew_s);
    EXTRA(idle_s);
    for (int i = 0; i < N_COLLS; i++)
        EXTRA(exposed_s[i]);
#undef EXTRA
    r->collectives = a[2].collectives + (long)k * (a[2].collectives - a[1].collectives);
    if (a[1].latest_rank != a[2].latest_rank)
        return exec_run(g, t, cal, c, o, r, err);
    r->latest_count = a[2].latest_count + (long)k * (a[2].latest_count - a[1].latest_count);
    r->events = a[0].events + a[1].events + a[2].events;
    r->stale = a[0].stale + a[1].stale + a[2].stale;
    r->retimed = a[0].retimed + a[1].retimed + a[2].retimed;
    return 0;
}
