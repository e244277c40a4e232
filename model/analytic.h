/* analytic.h — the closed-form engine: the step time of an op graph (model/layout) under its
 * execution rules, evaluated as a max-plus recurrence over layer copies that jumps over runs of
 * identical copies and identical micro-steps once the state shifts uniformly (exact: the
 * recurrence is homogeneous, so a uniform shift repeats). Costs: model/cost. Microseconds per
 * configuration. Not here: contention between flows, jitter, stragglers (sim/).
 * Three files, one way: analytic.c (the recurrence, the sweep memo, throughput) and
 * analytic_pipe.c (pipelines: sends, boundary, the schedule; analytic_pipe.h) call neither each
 * other nor up; analytic_predict.c (an_predict, an_pipe_time, an_derive_layout) calls both. The
 * result type is analytic_result.h, below both. analytic_mesh.c, below analytic.c, times a copy's
 * inline collectives per local index where an NVLink mesh's groups of an axis differ. */
#ifndef SC_ANALYTIC_H
#define SC_ANALYTIC_H

#include "analytic_pipe.h"
#include "analytic_result.h"
#include "cost.h"
#include "layout.h"
#include "memory.h"

#define AN_MAX_LEADS 8 /* lead classes kept per item (an_titem.lead) */

/* Durations of one layer copy's ops, seconds. The per-collective arrays are set below ng, nr
 * and ni only (an_time leaves the rest unwritten): read no further. */
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
    double in[LO_MAX_INLINE];         /* inline collectives (layout.h), in issue order              */
    cost_coll ik[LO_MAX_INLINE];
    int is[LO_MAX_INLINE];
    int itl[LO_MAX_INLINE];           /* 1: issued when the compute ends (lo_item.inline_tail)             */
    double ix[LO_MAX_INLINE];         /* its own exposed part where nothing contends: a tail's whole time, a
                                         paired one's max(0, copy - hidden GEMM part) summed over its pairs
                                         (pair_hidden), 0 unpaired: an_inline_book's weights */
    unsigned iun;         /* bit k: inline collective k is unpaired and issued beside the compute */
    double inl_f;         /* fraction of comp running beside the inline collectives     */
    int d;                /* prefetch depth of its pass                                 */
    /* per collective above: its latency part (the time of a 1-byte one, s) and the tier whose
     * bandwidth it uses (1: the network, its group spans nodes; 0: inside a node). Streams
     * share a tier's bandwidth (an_run): latency parts overlap, bandwidth parts queue. */
    double glat[2], rlat[3], ilat[LO_MAX_INLINE];
    int gtier[2], rtier[3], itier[LO_MAX_INLINE];
    /* ... and its share weight on that tier: the flows it puts on one of a node's NICs at once
     * (the groups of its shape running together, one ring edge out of each node each: the
     * group's `concurrent`), 1 inside a node (one edge per member link). The simulator's
     * max-min sharing gives each flow an equal part of a link. */
    double gw[2], rw[3], iw[LO_MAX_INLINE];
    /* network collectives (tier 1) whose group has one member per node: each local index runs
     * its own copy, so one whose copy ended earlier (lead below) starts it earlier */
    unsigned char gnet[2], rnet[3];
    /* On an NVLink mesh whose groups of an axis differ (analytic_mesh.c): each local index's
     * own chain of the inline collectives. igain: the sum of in[] less the slowest index's chain
     * (0 where one index is slowest on every axis). lead[0..nlead-1]: ascending, how much
     * earlier (s) the local indices of a class end the copy than the slowest (lead[0] = 0),
     * lead_f[i] the fraction of local indices with a lead at most lead[i]; nlead 0: all alike. */
    int nlead;
    double igain;
    double lead[AN_MAX_LEADS], lead_f[AN_MAX_LEADS]; /* the last fields: set below nlead only */
} an_titem;

/* Books x, the time a copy of ti waits for its inline collectives after its compute (both
 * engines' one figure), into exposed[] by the kind of the collective whose exposure it is:
 * each collective its own part (ti->ix) while x covers them (scaled down where it does not),
 * the rest under the last unpaired collective issued beside the compute, or where there is
 * none spread over the parts (under the last collective where every part is 0). Adds only:
 * step times do not depend on it. */
void an_inline_book(const an_titem *ti, double x, double *exposed);

typedef struct an_timed {
    int n_items;
    an_titem micro[LO_MAX_ITEMS], last[LO_MAX_ITEMS];
    int grad_accum, prefetch;
    int prefetch_var;     /* the backward's depth differs (then: per-item d, no jumps)  */
    double slow_dyn;      /* > 0: the overlap slowdown an_run applies from the streams'
                             state (compute slowed while a collective runs, as the
                             simulator), each copy's comp - overlap_s being its work at full
                             speed; 0: comp (with its per-copy bound) as it is            */
    int n_boundary;
    int b_is_opt[4];
    double b_dur[4];
    cost_coll b_kind[4];
} an_timed;

/* Durations of every op of g from the cost functions. */
void an_time(const lo_graph *g, const wl *w, const cost_calib *cal, const spec_cluster *c, an_timed *out);
/* Run the recurrence: fills step_s, compute_s, optimizer_s, exposed_s, idle_s. */
void an_run(const an_timed *t, an_result *r);
/* The same, copy by copy without jumping (the reference the jumps are tested against). */
void an_run_full(const an_timed *t, an_result *r);
/* Everything: graph, times, recurrence (or the pipeline schedule), throughput and memory
 * (analytic_predict.c, as an_pipe_time and an_derive_layout). */
void an_predict(const wl *w, const spec_training *tr, const spec_layout *l, const spec_cluster *c, int nodes,
                const cost_calib *cal, an_result *r);
/* Durations of g's ops (g pipelined; w the workload it was built from): each virtual stage's
 * graph (layout_pipe_stage) through an_time and an_run, forward and backward, then the sends and
 * the boundary (an_pipe_time_comm). */
void an_pipe_time(const lo_graph *g, const wl *w, const spec_training *tr, const cost_calib *cal,
                  const spec_cluster *c, an_pipe_timed *out);
/* Throughput fields for layout l (megatron: a micro-batch is the replica's, so a step is
 * micro_batch x grad_accum x N / (t p) samples and each GPU runs 1 / (t p) of their FLOPs). */
void an_derive_layout(const wl *w, const spec_training *tr, const spec_layout *l, const spec_cluster *c,
                      int n_ranks, an_result *r);
/* ---- sweeps: what configurations share, computed once ---------------------------------
 * A memo remembers, for one calibration and one cluster, per-layer compute times (by layer
 * shape and element size: every layout and node count without tensor parallelism shares them)
 * and collective times (by kind, bytes, pieces, group geometry and framework: repeated across
 * grad-accum values and layouts), and each graph's timings and volume (by workload, training
 * without grad_accum, layout and node count: a grad-accum axis re-runs only the recurrence, from
 * the graph's kept walk of its first two micro-steps where that grad_accum allows;
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
/* an_time / an_predict through memo m (m NULL: exactly an_time / an_predict). an_predict_memo
 * returns 0, or SC_ERUNTIME when a pipelined step's walk ran out of memory (step_s NaN). */
void an_time_memo(const lo_graph *g, const wl *w, const cost_calib *cal, const spec_cluster *c, an_memo *m,
                  an_timed *out);
int an_predict_memo(an_memo *m, const wl *w, const spec_training *tr, const spec_layout *l, const spec_cluster *c,
                    int nodes, const cost_calib *cal, an_result *r);
/* wl_build(model, tr) through memo m: the memo's copy when it has built that model (same
 * fields) under that training (grad_accum aside: the workload does not depend on it), valid
 * until the next call with m; m NULL: built into buf. Passed back to an_predict_memo, the
 * memo knows it without comparing it. */
const wl *an_memo_workload(an_memo *m, const spec_model *model, const spec_training *tr, wl *buf);
/* The memo's key comparisons: every field equal (strings to their end), padding never read. */
int an_training_same(const spec_training *a, const spec_training *b);
int an_model_same(const spec_model *a, const spec_model *b);
/* The memo's graph table, for an_predict_memo (analytic_predict.c, above this file): a graph's
 * timings and volumes kept across grad_accum, which changes only the recurrence's micro-step
 * count. an_memo_graph_run: when (w, tr without grad_accum, l, nodes) is kept, runs the
 * recurrence at tr's grad_accum into r (with comm_bytes and mem, the memory plan kept with the
 * graph where mem_plan_by_accum allows) and returns the graph's rank count; else -1, and slot
 * names where an_memo_graph_keep will keep it: that times g into the slot, runs the recurrence
 * into r (with comm_bytes and mem) and keeps it. Not for pipelined graphs. */
typedef struct an_memo_slot {
    void *e; /* the table's entry */
    int wi;
} an_memo_slot;
int an_memo_graph_run(an_memo *m, const wl *w, const spec_training *tr, const spec_layout *l, const spec_cluster *c,
                      int nodes, const cost_calib *cal, an_memo_slot *slot, an_result *r);
void an_memo_graph_keep(an_memo *m, an_memo_slot *slot, const lo_graph *g, const wl *w, const spec_training *tr,
                        const spec_layout *l, int nodes, const cost_calib *cal, const spec_cluster *c, an_result *r);

/* Throughput fields from step_s (shared with the simulator). */
void an_derive(const wl *w, const spec_training *tr, const spec_cluster *c, int n_ranks, an_result *r);

#endif
