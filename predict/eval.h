/* eval.h — the library's front door for one point: a loaded cluster, model and training, a node
 * count, a layout and a calibration, evaluated with either engine (analytical model or
 * simulator) into one result type. predict, sweep, plan and the accuracy suite all call it.
 * Not here: option parsing, printing, CSV columns (cli/), plan's search. */
#ifndef SC_PRED_EVAL_H
#define SC_PRED_EVAL_H

#include <stddef.h>

#include "../model/analytic.h"
#include "../model/cost.h"
#include "../model/spec.h"
#include "../sim/exec.h"

typedef enum { PRED_MODEL, PRED_SIM } pred_engine;
#define PRED_N_ENGINES 2

/* One point of a study, as loaded specs (the caller owns them; nothing is copied but read). */
typedef struct pred_input {
    const spec_cluster *cluster;
    const spec_model *model;
    const spec_training *training;
    int nodes;
    const spec_layout *layout;
    const cost_calib *cal;
    an_memo *memo;        /* analytical engine: a sweep memo shared by the points of one grid
                             (same cal and cluster; analytic.h), or NULL                     */
} pred_input;

/* What either engine predicts for a point. */
typedef struct pred_result {
    pred_engine engine;
    int nodes, gpus;      /* gpus = nodes x the cluster's GPUs per node                     */
    spec_layout layout;
    spec_training training;
    an_result r;          /* step time, throughput, breakdown, memory (both engines)       */
    exec_result sim;      /* simulator only: spread, slowest rank, events (zero for model)  */
} pred_result;

/* Evaluate in with engine e. so: simulator options (NULL = defaults: no jitter, seed 1); the
 * analytical engine ignores it. Checks the layout against the cluster and node count
 * (spec_layout_check) and straggler ranks; returns 0, or an error (SC_EINPUT for a layout or
 * option that does not fit the point, SC_ERUNTIME when the simulator fails). */
int pred_eval(const pred_input *in, pred_engine e, const exec_opts *so, pred_result *out, sc_err *err)
    SC_MUST_CHECK;
/* How many ranks the simulator would run for this point under so (NULL = defaults): the whole
 * cluster's, or the represented ranks of an exact-symmetric run (sim/exec.h,
 * exec_symmetry_unit); pipelines and anything that fails the point's checks count every rank.
 * For estimating a run before it starts: builds the op graph, simulates nothing. */
int pred_sim_ranks(const pred_input *in, const exec_opts *so);
/* The events one simulated rank is estimated to dispatch per micro-step, for estimating a run
 * before it starts: from its ops and the flows of its collectives that span nodes in the last
 * micro-step of the op graph (a count with two fitted weights: eval.c). 0 when the point fails
 * its checks or the graph cannot be allocated. Builds the graph, simulates nothing. */
double pred_sim_rank_events(const pred_input *in);
/* pred_eval, then: no table, CSV or JSON carries NaN or Inf, so a result that holds one is an
 * internal error (SC_ERUNTIME) naming the step which produced it (issue 19). */
int pred_eval_finite(const pred_input *in, pred_engine e, const exec_opts *so, pred_result *out, sc_err *err)
    SC_MUST_CHECK;
/* pred_eval_finite's check of a result pred_eval gave: 0, or SC_ERUNTIME naming the field. */
int pred_check_finite(const pred_input *in, const pred_result *out, sc_err *err) SC_MUST_CHECK;

/* Is the point possible at all: node count on this cluster (spec_nodes_check, `source` names
 * the file or option in errors), layout on the cluster and node count, layout on the model
 * (tensor splits), the training on the cluster (spec_training_check: a precision the GPU has).
 * 0 or SC_EINPUT. */
int pred_check(const pred_input *in, const char *source, sc_err *err) SC_MUST_CHECK;

/* The calibration of a point: `name` (a calibration name or file; "defaults": the built-in ones) when given, else
 * calibrations/<cluster name>.json under the config roots (spec_resolve), else the built-in
 * defaults for the cluster. path receives the file used ("" for the defaults). */
int pred_calib_load(const spec_cluster *c, const char *name, const char *const *roots, int n_roots,
                    cost_calib *out, char *path, size_t path_len, sc_err *err) SC_MUST_CHECK;

/* "model" | "sim"; parse accepts "model", "analytic" and "sim" (0, or -1 when unknown). */
const char *pred_engine_name(pred_engine e);
int pred_engine_parse(const char *s, pred_engine *out) SC_MUST_CHECK;

#endif
