/* search.h — plan's search on top of the front door (predict/eval): the candidate layouts of a
 * cluster and model, one candidate evaluated and scored under an objective, the ranking, the
 * folding of candidates with identical numbers, and how sensitive the choice between the top two
 * is to the cluster's parameters ("too close to call", "a tie", "robust").
 * Not here: options, progress and printing (cli/plan.c), the engines themselves. */
#ifndef SC_PRED_SEARCH_H
#define SC_PRED_SEARCH_H

#include <stddef.h>

#include "../model/memory.h"
#include "eval.h"

/* What plan maximises: samples/s, or fewest dollars per million samples. */
typedef enum { PS_THROUGHPUT, PS_COST } ps_objective;

/* One evaluated candidate. */
typedef struct ps_cand {
    pred_result pt;
    double usd_per_msample; /* $ per million samples: price/h x nodes / 3600 / samples/s x 1e6 */
    double score;           /* higher is better: samples/s, or -usd_per_msample            */
    int confirmed;          /* evaluated with the simulator                                 */
    int twins;              /* candidates with identical numbers folded into this one       */
} ps_cand;

/* Layout families (`plan --layouts`), one per spec_layout_kind; a family stands for every valid
 * member. Bit k of a mask is family k. */
#define PS_FAM(k) (1u << (k))
int ps_n_families(void);
const char *ps_family_name(int k);
/* A comma-separated list of family names (or "all") as a mask; 0 when it is not one. */
unsigned ps_family_mask(const char *list);

/* torchtitan's N-D FSDP2 layouts (spec_layout.c's fsdp2:dp=D,t=T[,p=P] grammar, kind zero3) are
 * two families after the kinds (their bits follow the kinds' bits): "fsdp2-tp", FSDP2 over dp x
 * tensor parallelism t (p = 1), and "fsdp2-pp", FSDP2 over dp x t x pipeline stages p. */
enum { PS_FSDP2_TP, PS_FSDP2_PP, PS_N_FSDP2 };
/* The bit of family PS_FSDP2_TP / _PP in a mask (PS_FAM(kinds + which)); both: ps_fsdp2_families. */
unsigned ps_fsdp2_bit(int which);
unsigned ps_fsdp2_families(void);
/* 1 when l is one of those N-D layouts (zero3 with t > 1 or p > 1). */
int ps_is_fsdp2_nd(const spec_layout *l);

/* The N-D FSDP2 layouts of the families in mask on `nodes` nodes of cluster c for model m,
 * appended to out[n..max); returns the new count. fsdp2-tp: t in {2, 4, 8} dividing the GPUs per
 * node (torchtitan's TP inside a node), asynctp=1 beside asynctp=0 only when `compiled` (async TP
 * needs torch.compile: cli/common.c's note, layout_tensor.c). fsdp2-pp: t in {1, 2, 4, 8} as
 * above, p >= 2 dividing the layers and the N / t GPUs, schedule 1f1b, and interleaved-1f1b
 * where 2p divides the layers (even stages; GPipe left out: 1F1B's bubble with more memory). Each
 * passes spec_layout_check and spec_layout_check_model. Context parallelism is not searched. */
int ps_fsdp2_layouts(const spec_cluster *c, const spec_model *m, int nodes, unsigned mask, int compiled,
                     spec_layout *out, int n, int max);
/* 1 when plan skips training t for an N-D FSDP2 layout l with a pipeline: fewer micro-batches per
 * step (grad_accum) than stages in all (p x stages per rank: torchtitan's build_pipeline_schedule
 * warns "may result in a bubble"), or the interleaved schedule with grad_accum not a multiple of
 * p (spec_layout_check_training refuses it). 0 otherwise, and for every other layout. */
int ps_pipe_split_bad(const spec_layout *l, const spec_training *t);

/* Every layout of the families in mask worth trying on `nodes` nodes of cluster c for model m
 * (placement: only this AxoNN placement, NULL = every one that changes a communicator), at most
 * max into out; returns the count. */
int ps_layouts(const spec_cluster *c, const spec_model *m, int nodes, unsigned mask, const char *placement,
               spec_layout *out, int max);
/* An AxoNN layout in its canonical spelling on N GPUs (d implicit, the first placement with the
 * same communicators); other kinds are left alone. */
void ps_canon_axonn(spec_layout *l, int N);

/* Evaluate one candidate with engine e (default simulator options) and score it; the result must
 * be finite (pred_eval_finite). 0 or an error. */
int ps_eval(const spec_cluster *c, const spec_model *m, const cost_calib *cal, ps_objective obj, pred_engine e,
            int nodes, const spec_layout *l, const spec_training *tr, ps_cand *out, sc_err *err)
    SC_MUST_CHECK;
/* The same sharing a sweep memo across the points of one grid (the analytical engine: layer and
 * collective times; memo NULL = none; same calibration and cluster for every point). */
int ps_eval_memo(const spec_cluster *c, const spec_model *m, const cost_calib *cal, ps_objective obj, pred_engine e,
                 int nodes, const spec_layout *l, const spec_training *tr, an_memo *memo, ps_cand *out, sc_err *err)
    SC_MUST_CHECK;
/* ---- the grid on every core ---------------------------------------------------------------
 * One point of plan's grid: a node count, a layout, and the training it runs with (the
 * micro-batch split). */
typedef struct ps_point {
    int nodes;
    spec_layout layout;
    spec_training training;
} ps_point;

/* Threads for a grid's analytical evaluations, each with its own sweep memo (an_memo: one per
 * thread), kept across calls so that a grid evaluated node count by node count shares layer and
 * collective times as one memo did. threads <= 0: one per online core. NULL when out of memory. */
typedef struct ps_grid ps_grid;
ps_grid *ps_grid_new(int threads);
void ps_grid_free(ps_grid *g);
int ps_grid_threads(const ps_grid *g);
/* Evaluate pts[0..n) with the analytical engine (ps_eval_memo) into out[0..n) on up to the
 * grid's threads: each takes runs of consecutive points from a shared counter, through its own
 * memo. A memo changes no result (analytic.h) and every point has its own slot, so out is
 * bit-identical to a loop over the points on one thread, whatever the split. Returns 0, or the
 * error of the first point (in order) that failed, in *err, as that loop would; *n_ok (may be
 * NULL) receives how many leading points succeeded (n when all did); slots after a failure are
 * unspecified. The cluster, model and calibration are only read (the same for every point).
 * The memos know the calibration and cluster by address: one changed in place between two calls
 * on the same grid gives stale times (as with any an_memo); use a new grid, or a copy. */
int ps_grid_eval(ps_grid *g, const spec_cluster *c, const spec_model *m, const cost_calib *cal, ps_objective obj,
                 const ps_point *pts, size_t n, ps_cand *out, size_t *n_ok, sc_err *err) SC_MUST_CHECK;

/* Order of "closest" among candidates that do not fit: short on the GPU first, by how much; then
 * those that fit the GPU but not a host / NVMe / in-network tier, by that shortage (lower is
 * closer). */
double ps_oom_key(const mem_breakdown *m);
/* The score (higher is better) and a positive figure of merit (samples/s, or million samples
 * per $) of a candidate under obj. */
double ps_score(ps_objective obj, const ps_cand *c);
double ps_merit(ps_objective obj, const ps_cand *c);
/* Keep `headroom` bytes of HBM free beyond the memory model's estimate: a candidate that fits
 * only without them does not fit; one short already is short by the headroom more. */
void ps_headroom(ps_cand *c, double hbm_bytes, double headroom_bytes);

/* qsort order: best score first; on a tie, less memory per GPU, then fewer nodes. */
int ps_cmp(const void *a, const void *b);
/* In a sorted array, fold candidates with identical numbers (same score, nodes, micro-batch, step
 * time and memory) into the first of them (its twins count); returns the count kept. */
size_t ps_fold_twins(ps_cand *cs, size_t n);

/* The cluster parameters the choice may hinge on, 0..PS_N_SENS-1. */
#define PS_N_SENS 3
const char *ps_sens_name(int k); /* "inter-node (NIC) bandwidth", "NVLink bandwidth", "GPU peak FLOP/s" */

/* How much must one cluster parameter change for the runner-up b to beat the winner a? Scales NIC
 * bandwidth, NVLink bandwidth (and PCIe) and peak FLOP/s by 1/4 to 4 (2^(1/8) steps, then 8
 * bisections on the log scale) and moves the ratio merit(a)/merit(b) by how much each one's
 * analytical merit changes: what both depend on alike cancels. Returns the parameter (0..2) with
 * the smallest change that reorders them and its factor in *f_out, or -1 when none within 4x. */
int ps_sensitivity(const spec_cluster *c, const spec_model *m, const cost_calib *cal, ps_objective obj,
                   const ps_cand *a, const ps_cand *b, double *f_out);

typedef enum {
    PS_TOO_CLOSE, /* a change within the uncertainty reorders the top two                  */
    PS_TIE,       /* the runner-up is less than 1% behind and nothing within it reorders   */
    PS_ROBUST     /* only a change beyond the uncertainty (or none within 4x) reorders     */
} ps_verdict;

/* The comparison of the winner a with the runner-up b. */
typedef struct ps_judgement {
    ps_verdict verdict;
    double gap_pct; /* 100 (merit(a)/merit(b) - 1)                                     */
    int sens;       /* ps_sensitivity's parameter, -1 = none within 4x                  */
    double factor;  /* its factor (1 when none)                                          */
} ps_judgement;

/* The verdict from its parts (uncertainty: a fraction, e.g. 0.10). */
ps_verdict ps_verdict_of(double gap_pct, int sens, double factor, double uncertainty);
/* A change by factor f as a percentage of the parameter: a rise by 25%, a drop by 20%. */
double ps_pct_change(double f);
/* Judge a against b (ps_sensitivity, then ps_verdict_of). */
void ps_judge(const spec_cluster *c, const spec_model *m, const cost_calib *cal, ps_objective obj,
              const ps_cand *a, const ps_cand *b, double uncertainty, ps_judgement *out);

/* ---- fair ratios: best against best, on one engine ------------------------------------------ */

/* The best (highest score) of all[0..n) that keep() accepts (ctx passed through), or NULL. */
typedef int (*ps_keep_fn)(const ps_cand *c, const void *ctx);
const ps_cand *ps_best_where(const ps_cand *all, size_t n, ps_keep_fn keep, const void *ctx);

/* a and b as compared: both on one engine. */
typedef struct ps_pair {
    ps_cand a, b;
    pred_engine engine; /* the engine both numbers come from              */
    double ratio;       /* a's samples/s over b's, both from that engine   */
} ps_pair;

/* Put a and b on one engine and take the ratio of their samples/s. Same engine already: as they
 * are. Otherwise the analytical one is re-run with the simulator when sim_ok, else the simulated
 * one is re-run with the analytical model: never a simulated number over an analytical one. */
int ps_pair_same_engine(const spec_cluster *c, const spec_model *m, const cost_calib *cal, ps_objective obj,
                        const ps_cand *a, const ps_cand *b, int sim_ok, ps_pair *out, sc_err *err) SC_MUST_CHECK;
/* "both simulated" or "both analytical". */
const char *ps_engine_both(pred_engine e);

#endif
