/* plan.h — `plan`'s engine work on top of the search (predict/search): the grid of node counts,
 * layouts and micro-batch splits evaluated analytically, the candidates that fit ranked and
 * folded, the top ones confirmed with the simulator (and re-ranked within one engine), why the
 * winner wins with its ratios best against best on one engine, and the winner judged against the
 * runner-up on one engine. Not here: options, progress text, verdict wording and printing
 * (cli/plan.c), the engines themselves. */
#ifndef SC_PRED_PLAN_H
#define SC_PRED_PLAN_H

#include <stddef.h>

#include "search.h"

/* What to plan. Everything is only read; the pointers must outlive pl_run. */
typedef struct pl_request {
    const spec_cluster *cluster;
    const spec_model *model;
    const cost_calib *cal;
    const spec_training *training; /* the split it starts from and the framework            */
    const int *nodes;              /* node counts to try, n_nodes of them                   */
    int n_nodes;
    const spec_layout *layouts; /* explicit layouts (--layout), n_layouts of them             */
    int n_layouts;
    unsigned mask;              /* families (ps_family_mask) to enumerate; 0 = none            */
    const char *placement;      /* AxoNN placement, NULL = every one (ps_layouts)              */
    ps_objective objective;
    double global_batch;   /* sequences per step; 0 = micro_batch x grad_accum per replica  */
                           /* (GPUs / spec_layout_batch_share: the model's batch rule)      */
    double budget_usd_h;   /* only node counts within this price per hour; 0 = no budget    */
    double headroom_bytes; /* HBM kept free beyond the memory model's estimate              */
    double uncertainty;    /* fraction a cluster parameter may be off (the verdict)         */
    int uncertainty_set;   /* 1: as given; 0: 2 sd from a calibration that carries sds      */
    int confirm;           /* simulate the top `confirm` candidates                         */
    int threads;           /* threads for the grid and the confirmations, 0 = one per core  */
    /* progress (any may be NULL; library code prints nothing): every 256 candidates and at the
     * end of each node count; before the simulations; a top candidate left analytical (why) */
    void (*on_grid)(void *ctx, long tried, int node_index, int n_nodes, int nodes);
    void (*on_confirm)(void *ctx, int k);
    void (*on_skip)(void *ctx, const ps_cand *c, const char *why);
    void *ctx;
} pl_request;

/* The counts behind the plan's headline and its "no candidate" reason. */
typedef struct pl_stats {
    long tried;           /* candidates evaluated analytically                              */
    size_t n_oom;         /* of them, those that do not fit (with the headroom)             */
    long n_twins;         /* fitting ones folded into a row with identical numbers          */
    int over_budget;      /* node counts over the budget                                    */
    int no_split;         /* node counts the global batch does not split over               */
    int have_oom;         /* closest_oom is set                                             */
    ps_cand closest_oom;  /* the candidate closest to fitting (ps_oom_key)                  */
    char invalid_why[SC_ERR_TEXT]; /* why an explicit layout was left out, the first time; "" */
} pl_stats;

/* The winner against the runner-up, both on one engine (present when 2 or more fit). */
typedef struct pl_verdict {
    ps_judgement j;     /* ps_judge on the pair                                            */
    pred_engine engine; /* the engine both numbers come from                               */
    double uncertainty; /* the uncertainty used (the request's, or 2 sd of the winner's step) */
    int from_calib;     /* 1: the uncertainty is 2 sd from the calibration                  */
} pl_verdict;

typedef struct pl_plan pl_plan;

/* Plan: 0 and *out (free with pl_free), or an error (out of memory, an engine's error). A plan
 * with no candidate is not an error (pl_n is 0; pl_stats says why). */
int pl_run(const pl_request *q, pl_plan **out, sc_err *err) SC_MUST_CHECK;
void pl_free(pl_plan *p);

/* The candidates that fit, ranked: the simulated ones first (each engine ranked within itself),
 * twins folded; pl_cand(p, 0) is the recommendation. */
size_t pl_n(const pl_plan *p);
const ps_cand *pl_cand(const pl_plan *p, size_t i);
const pl_stats *pl_stats_of(const pl_plan *p);
/* Why the winner wins (its kind's row, with best-against-best ratios); "" when none fit. */
const char *pl_why(const pl_plan *p);
/* The top two judged, or NULL when fewer than two fit. */
const pl_verdict *pl_verdict_of(const pl_plan *p);

/* 1 when plan searches torchtitan's N-D FSDP2 families (ps_fsdp2_layouts) for a request with
 * this mask and framework: the mask has them and the framework is fsdp2 (torchtitan), or they
 * were named (a mask other than "all": under another framework "all" keeps the kinds' list, and
 * fw_check drops them where the framework does not run them). */
int pl_fsdp2_searched(unsigned mask, spec_framework f);

/* ---- best against best --------------------------------------------------------------------
 * The rival of `best` among all[0..n) that keep() accepts (never best itself): its best on
 * best's engine when keep() accepts any candidate on that engine (a simulated winner meets the
 * best simulated rival: simulated and analytical scores are never ranked against each other),
 * else its best on the other engine. NULL when keep() accepts none. */
const ps_cand *pl_best_rival(const ps_cand *all, size_t n, const ps_cand *best, ps_keep_fn keep, const void *ctx);

#endif
