/* analytic.h — the closed-form engine: the step time of an op graph (model/layout) under its
 * execution rules, evaluated as a max-plus recurrence over layer copies that jumps over runs of
 * identical copies and identical micro-steps once the state shifts uniformly (exact: the
 * recurrence is homogeneous, so a uniform shift repeats). Costs: model/cost. Microseconds per
 * configuration. Not here: contention between flows, jitter, stragglers (sim/). */
#ifndef SC_ANALYTIC_H
#define SC_ANALYTIC_H

#include "cost.h"
#include "layout.h"
#include "memory.h"

/* Durations of one layer copy's ops, seconds. */
typedef struct an_titem {
    int count;
    double comp;          /* compute (recompute + backward, or forward), incl. slowdown */
    double overlap_s;     /* of which the overlap bound (overlap_slowdown x min(own
                             collectives, compute)); the simulator runs comp - overlap_s
                             and applies the slowdown itself while collectives run      */
    int ng, nr, ni;
    double g[2], r[3];    /* gathers and reduces, in issue order                        */
    cost_coll gk[2], rk[3];
    int gs[2], rs[3];     /* their communication streams                                */
    double in[4];         /* inline collectives (layout.h), in issue order              */
    cost_coll ik[4];
    int is[4];
    double inl_f;         /* fraction of comp running beside the inline collectives     */
    int d;                /* prefetch depth of its pass                                 */
} an_titem;

typedef struct an_timed {
    int n_items;
    an_titem micro[LO_MAX_ITEMS], last[LO_MAX_ITEMS];
    int grad_accum, prefetch;
    int prefetch_var;     /* the backward's depth differs (then: per-item d, no jumps)  */
    int n_boundary;
    int b_is_opt[4];
    double b_dur[4];
    cost_coll b_kind[4];
} an_timed;

typedef struct an_result {
    double step_s;
    double compute_s;             /* forward + backward + recompute busy time            */
    double optimizer_s;
    double exposed_s[N_COLLS];    /* compute stream waiting on each collective kind      */
    double idle_s;                /* the rest of the step (0 in the analytic engine)     */
    double samples_per_step, samples_per_s, tokens_per_s;
    double model_tflops_per_gpu;  /* model FLOPs (no recompute) / step / GPU, 1e12/s     */
    double hw_tflops_per_gpu;     /* with recompute                                      */
    double mfu;                   /* model FLOP/s over dense peak                        */
    double comm_bytes;            /* per rank per step (ring volume)                     */
    mem_breakdown mem;
    double bubble_frac;           /* pipelines: the schedule's bubble in closed form
                                     (layout_pipe_bubble); 0 without a pipeline            */
} an_result;

/* ---- pipelines (analytic_pipe.c) ----------------------------------------------------------
 * Schedule rules, the same in both engines: each stage's rank runs its ops (layout_pipe_order)
 * in order on its compute stream; an op's duration is that of its virtual stage's op graph
 * (layout_pipe_stage) run by an_run, forward or backward, tensor-parallel collectives included;
 * a forward of virtual stage k > 0 starts once the forward of k - 1 has ended and its output has
 * arrived (a send of p2p_bytes per rank, not blocking the sender: Megatron-LM's batched
 * isend/irecv); a backward of k starts once the backward of k + 1 has ended and its gradient
 * has arrived (the last virtual stage: once its own forward has ended). A stage reduces each
 * model chunk's gradients over its data-parallel group (reduce-scatter with the distributed
 * optimizer, else all-reduce) once the chunk's last backward has ended, in that order on its
 * communication stream, beside its later ops (Megatron-LM's --overlap-grad-reduce; with one
 * chunk the reduce follows the stage's last op); after its last op and its reduces it runs Adam
 * on its shard and all-gathers the updated parameters (not overlapped); the step ends when the
 * last stage is done. */
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
    double reduce_s[LO_MAX_VSTAGES]; /* data-parallel reduce of each virtual stage's gradients */
    double opt_s[LO_MAX_STAGES], gather_s[LO_MAX_STAGES];
    cost_coll reduce_kind;        /* reduce-scatter (distributed optimizer) or all-reduce   */
} an_pipe_timed;

/* Durations of g's ops (g pipelined; w the workload it was built from). */
void an_pipe_time(const lo_graph *g, const wl *w, const spec_training *tr, const cost_calib *cal,
                  const spec_cluster *c, an_pipe_timed *out);
/* Buckets of a data-parallel collective of `bytes` (at least 1; as lo_buckets). */
int an_pipe_buckets(double bytes, double bucket_bytes);
/* The schedule's max-plus recurrence: fills step_s, compute_s, optimizer_s, exposed_s, idle_s
 * (the bubble and waits on sends), bubble_frac. Returns 0, or SC_ERUNTIME out of memory. */
int an_pipe_run(const an_pipe_timed *t, an_result *r);
/* Throughput fields for layout l (megatron: a micro-batch is the replica's, so a step is
 * micro_batch x grad_accum x N / (t p) samples and each GPU runs 1 / (t p) of their FLOPs). */
void an_derive_layout(const wl *w, const spec_training *tr, const spec_layout *l, const spec_cluster *c,
                      int n_ranks, an_result *r);

/* Durations of every op of g from the cost functions. */
void an_time(const lo_graph *g, const wl *w, const cost_calib *cal, const spec_cluster *c, an_timed *out);
/* Run the recurrence: fills step_s, compute_s, optimizer_s, exposed_s, idle_s. */
void an_run(const an_timed *t, an_result *r);
/* The same, copy by copy without jumping (the reference the jumps are tested against). */
void an_run_full(const an_timed *t, an_result *r);
/* Everything: graph, times, recurrence, throughput and memory. */
void an_predict(const wl *w, const spec_training *tr, const spec_layout *l, const spec_cluster *c, int nodes,
                const cost_calib *cal, an_result *r);
/* ---- sweeps: what configurations share, computed once ---------------------------------
 * A memo remembers, for one calibration and one cluster, per-layer compute times (by layer
 * shape and element size: every layout and node count without tensor parallelism shares them)
 * and collective times (by kind, bytes, pieces, group geometry and framework: repeated across
 * grad-accum values and layouts), and each graph's timings and volume (by workload, training
 * without grad_accum, layout and node count: a grad-accum axis re-runs only the recurrence;
 * pipelines, whose schedule depends on grad_accum, are not kept). Results are bit-identical to
 * an_time / an_predict (the same cost calls, looked up by exact keys). The calibration and cluster are keyed by address: their
 * contents must not change while a memo is used with them (an_memo_reset after changing them;
 * a different address resets it by itself). One memo per thread. NULL when out of memory. */
typedef struct an_memo an_memo;
an_memo *an_memo_new(void);
void an_memo_free(an_memo *m);
void an_memo_reset(an_memo *m);
/* Lookups and misses so far (layers, collectives), for benchmarks. */
void an_memo_stats(const an_memo *m, long *layer_hits, long *layer_misses, long *coll_hits, long *coll_misses);
/* an_time / an_predict through memo m (m NULL: exactly an_time / an_predict). */
void an_time_memo(const lo_graph *g, const wl *w, const cost_calib *cal, const spec_cluster *c, an_memo *m,
                  an_timed *out);
void an_predict_memo(an_memo *m, const wl *w, const spec_training *tr, const spec_layout *l, const spec_cluster *c,
                     int nodes, const cost_calib *cal, an_result *r);
/* wl_build(model, tr) through memo m: the memo's copy when it has built that model (same
 * bytes) under that training (grad_accum aside: the workload does not depend on it), valid
 * until the next call with m; m NULL: built into buf. Passed back to an_predict_memo, the
 * memo knows it without comparing it. */
const wl *an_memo_workload(an_memo *m, const spec_model *model, const spec_training *tr, wl *buf);

/* Throughput fields from step_s (shared with the simulator). */
void an_derive(const wl *w, const spec_training *tr, const spec_cluster *c, int n_ranks, an_result *r);

#endif
