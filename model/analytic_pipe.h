/* analytic_pipe.h — the closed-form engine's pipeline half: the sends between stages, the
 * data-parallel boundary of each stage, and the schedule as a max-plus recurrence over every
 * stage's op order. The stages' op durations come from above (an_pipe_time in analytic.h runs
 * each virtual stage's graph through the recurrence of analytic.c); this half calls only cost,
 * layout and nothing of analytic.h. Not here: contention between sends or with the boundary's
 * collectives (sim/pipe.c). */
#ifndef SC_ANALYTIC_PIPE_H
#define SC_ANALYTIC_PIPE_H

#include "analytic_result.h"
#include "cost.h"
#include "layout.h"

/* Schedule rules, the same in both engines: each stage's rank runs its ops (layout_pipe_order)
 * in order on its compute stream; an op's duration is that of its virtual stage's op graph
 * (layout_pipe_stage) run by an_run, forward or backward, tensor-parallel collectives included;
 * a forward of virtual stage k > 0 starts once the forward of k - 1 has ended and its output has
 * arrived (a send of p2p_bytes per rank; it does not block the sender (Megatron-Core's
 * overlap_p2p_comm) except where fw_mg_p2p_blocking says the framework waits for it
 * (an_pipe_op_holds): Megatron-LM v2.x and Megatron-Core's 1F1B after every op that sends,
 * Megatron-Core's interleaved 1F1B after its warm-up forwards, its last steady backward and its
 * cool-down backwards; the stage then runs its next op p2p_hold_s after the op that sent); a
 * backward of k starts once the backward of k + 1 has ended and its gradient
 * has arrived (the last virtual stage: once its own forward has ended); an op that received its
 * input runs recv_gather_s longer (Megatron-LM v2.5's scatter-gather: the pieces all-gathered
 * on the receiver's stream first, counted as exposed all-gather). A stage reduces each
 * model chunk's gradients over its data-parallel group (reduce-scatter with the distributed
 * optimizer, else all-reduce) once the chunk's last backward has ended, in that order on its
 * communication stream, beside its later ops (Megatron-LM's --overlap-grad-reduce; with one
 * chunk the reduce follows the stage's last op; Megatron-LM v2.x: every reduce after the
 * stage's last op, reduce_after_flush); after its last op and its reduces it runs Adam
 * on its shard and all-gathers the updated parameters (not overlapped, except with
 * --overlap-param-gather: gather_overlap below); the step ends when the last stage is done. */
typedef struct an_pipe_op_t {
    double dur;                   /* forward or backward of one micro-batch, s             */
    double busy;                  /* of which compute                                      */
    double exposed[N_COLLS];      /* of which tensor-parallel collectives not hidden       */
} an_pipe_op_t;

typedef struct an_pipe_timed {
    lo_pipe pipe;
    an_pipe_op_t fwd[LO_MAX_VSTAGES], bwd[LO_MAX_VSTAGES];
    double p2p_s;                 /* one send between neighbouring stages, s               */
    double p2p_lat_s;             /* its latency part                                      */
    double p2p_Bps;               /* its bandwidth part (one rank pair), B/s               */
    double p2p_bytes;             /* what each rank sends (pipe.p2p_bytes / send_div), B   */
    double p2p_hold_s;            /* blocking sends (fw_mg_p2p_blocking): how long a stage's
                                     stream waits after each op whose output or input gradient
                                     it sends before its next op: p2p_s + p2p_sync_s; 0 when the
                                     sends overlap the sender's later ops                     */
    double p2p_sync_s;            /* of which the host synchronize after the send, s       */
    int hold_edges;               /* FW_P2P_BLOCK_EDGES (Megatron-Core's interleaved schedule):
                                     only the ops outside the steady phase hold (an_pipe_op_holds) */
    double recv_gather_s;         /* scatter-gather sends (send_div > 1): the all-gather of the
                                     t pieces over the tensor-parallel group that a receiving
                                     op runs on its stream before it starts, s; 0 otherwise   */
    double reduce_s[LO_MAX_VSTAGES]; /* data-parallel reduce of each virtual stage's gradients */
    double opt_s[LO_MAX_STAGES], gather_s[LO_MAX_STAGES];
    cost_coll reduce_kind;        /* reduce-scatter (distributed optimizer) or all-reduce   */
    int gather_overlap;           /* --overlap-param-gather (fw_param_gather_overlap): a stage's
                                     all-gather hidden, up to its length, behind the next step's
                                     start of that stage: the pipeline fill before its first op
                                     and that op (its first forward), i.e. the end of that op */
    int reduce_after_flush;       /* fw_mg_reduce_after_flush: a stage's reduces start after its
                                     last op (and its hold), not as each chunk's gradients end */
    double emb_s;                 /* a tied head (lo_pipe.tied_params): the all-reduce of the
                                     word-embedding gradient between stage 0 and stage p - 1
                                     (two ranks, in the gradients' dtype), after both stages'
                                     data-parallel reduces and before their optimizer steps, s;
                                     0 untied (an_pipe_tied_s) */
} an_pipe_timed;

/* The all-gather an op of virtual stage k (of V) runs before it starts: recv_gather_s where the op
 * received its input from a neighbour (a forward past the first virtual stage, a backward before
 * the last), 0 otherwise. The one rule of the walk, the closed form and sim/pipe.c. */
static inline double an_pipe_op_gather(const an_pipe_timed *t, int bwd, int k, int V)
{
    return (bwd ? k < V - 1 : k > 0) ? t->recv_gather_s : 0;
}

/* 1 where op n (its index in layout_pipe_order) of stage s of schedule pp holds the stage for
 * p2p_hold_s after it, if it sends: every op of a blocking framework (hold_edges 0); with
 * hold_edges, the warm-up forwards (n < w, w = layout_pipe_warmup), the last steady backward and
 * the cool-down backwards (n >= 2 m v - w - 1): Megatron-Core waits for those sends before the
 * next op, the steady phase's only after the op of the other direction that follows
 * (framework.c fw_mg_p2p_blocking; hidden while that op outlasts the send: not priced). The one
 * rule of the walk, the closed form and sim/pipe.c. */
static inline int an_pipe_op_holds(const an_pipe_timed *t, const lo_pipe *pp, int s, int n)
{
    if (!(t->p2p_hold_s > 0))
        return 0;
    if (!t->hold_edges)
        return 1;
    int w = layout_pipe_warmup(pp, s);
    return n < w || n >= 2 * pp->m * pp->v - w - 1;
}

/* The sends and the boundary of g's pipeline (g pipelined): pipe, p2p_s, p2p_lat_s, p2p_Bps,
 * p2p_bytes, p2p_hold_s, p2p_sync_s, hold_edges, recv_gather_s,
 * reduce_s, reduce_kind, reduce_after_flush, opt_s, gather_s, emb_s; fwd and bwd zeroed (an_pipe_time fills them). */
void an_pipe_time_comm(const lo_graph *g, const spec_training *tr, const cost_calib *cal, const spec_cluster *c,
                       an_pipe_timed *out);
/* Buckets of a data-parallel collective of `bytes` (at least 1; as lo_buckets). */
int an_pipe_buckets(double bytes, double bucket_bytes);
/* The schedule's max-plus recurrence: fills step_s, compute_s, optimizer_s, exposed_s, idle_s
 * (the bubble and waits on sends), bubble_frac. The steady state in closed form: time and
 * memory independent of the micro-batch count (short probes extrapolated where the totals are
 * affine in m, analytic_pipe.c), equal to an_pipe_walk to rounding. Returns 0, or SC_ERUNTIME
 * out of memory. */
int an_pipe_run(const an_pipe_timed *t, an_result *r) SC_MUST_CHECK;
/* The same by walking every op of every micro-batch (time and memory O(p v m)): the oracle
 * an_pipe_run is tested against, and what it runs when m is small. */
int an_pipe_walk(const an_pipe_timed *t, an_result *r) SC_MUST_CHECK;
/* The closed form alone: 1 and r filled where it applies (m past its probes' cost and the
 * probes affine), 0 where an_pipe_run walks instead, SC_ERUNTIME out of memory. */
int an_pipe_closed(const an_pipe_timed *t, an_result *r) SC_MUST_CHECK;
/* 0 when walking layout l's pipeline over m micro-batches fits the engine's budget (sim: the
 * simulator's, else the analytical engine's) or l is not pipelined, or the analytical engine
 * closes its steady state (1F1B and interleaved: an_pipe_closed); else SC_EINPUT naming the
 * stages x chunks x micro-batches, the cap and how to go on. */
int an_pipe_budget(const spec_layout *l, int m, int sim, sc_err *err) SC_MUST_CHECK;

#endif
