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
} an_result;

/* Durations of every op of g from the cost functions. */
void an_time(const lo_graph *g, const wl *w, const cost_calib *cal, const spec_cluster *c, an_timed *out);
/* Run the recurrence: fills step_s, compute_s, optimizer_s, exposed_s, idle_s. */
void an_run(const an_timed *t, an_result *r);
/* The same, copy by copy without jumping (the reference the jumps are tested against). */
void an_run_full(const an_timed *t, an_result *r);
/* Everything: graph, times, recurrence, throughput and memory. */
void an_predict(const wl *w, const spec_training *tr, const spec_layout *l, const spec_cluster *c, int nodes,
                const cost_calib *cal, an_result *r);
/* Throughput fields from step_s (shared with the simulator). */
void an_derive(const wl *w, const spec_training *tr, const spec_cluster *c, int n_ranks, an_result *r);

#endif
