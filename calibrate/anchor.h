/* anchor.h — `calibrate anchor`: a few stack parameters (compute-kernel efficiency as the stack
 * runs them, the framework's per-hook overhead, the network's bandwidth efficiency) fitted by GSL
 * least squares to measured training steps of the user's own job, every other value from a base
 * calibration; the fitted calibration written as the base's file plus an "anchor" object
 * (model/calib_anchor.h) that predict, sweep and plan read back.
 * Not here: reading case files or training logs (cli/calanchor.c, calibrate/trainlog.h), the
 * analytical model it predicts the runs with (model/analytic.h). */
#ifndef SC_CAL_ANCHOR_H
#define SC_CAL_ANCHOR_H

#include "../model/calib_anchor.h"
#include "../model/cost.h"
#include "../model/spec.h"

#define CAL_ANCHOR_MAX_RUNS 64

/* One measured run of the job, as loaded specs (the caller owns them). */
typedef struct cal_anchor_run {
    char name[128];                /* for messages and the record                          */
    char file[1024];               /* the case file or log it came from                    */
    const spec_cluster *cluster;
    const spec_model *model;
    const spec_training *training; /* its framework is the stack whose overhead is fitted    */
    const spec_layout *layout;
    int nodes;
    double step_s;                 /* measured step time, s                                  */
    double spread_rel;             /* relative spread of the measurement (0: not known)      */
    /* a step the specs above cannot describe (the harness's, calibrate/step.h): its prediction
     * with calibration k, s; NULL: the analytical model of cluster, model, training, layout */
    double (*step_fn)(const void *ctx, const cost_calib *k);
    const void *step_ctx;
} cal_anchor_run;

typedef struct cal_anchor_report {
    int n_runs;
    int n_free;                    /* parameters fitted (not held)                            */
    int dof;                       /* runs - parameters fitted                                */
    double rms;                    /* RMS relative residual of the fitted calibration         */
    double s_rel;                  /* the relative scale the standard errors were taken at:
                                      sqrt(chi^2 / dof), else the runs' measured spread, else 0 */
    char sd_from[128];             /* what s_rel is                                           */
    double base_step_s[CAL_ANCHOR_MAX_RUNS]; /* the base calibration's prediction per run, s    */
    double pred_step_s[CAL_ANCHOR_MAX_RUNS]; /* the anchored one's, s                            */
    double resid[CAL_ANCHOR_MAX_RUNS];       /* anchored prediction / measured - 1               */
} cal_anchor_report;

/* Fit the stack parameters to n runs (1 <= n <= CAL_ANCHOR_MAX_RUNS, all on one cluster and one
 * framework) starting from base: at most one parameter per run (compute first, then the
 * network, then the framework overhead), each bounded to its physical range (a value past a
 * bound is held there; one the runs cannot tell is held at the base value, with status
 * undetermined). out receives base with the fitted values and out->anchor filled. */
int cal_anchor_fit(const cal_anchor_run *runs, int n, const cost_calib *base, cost_calib *out,
                   cal_anchor_report *rep, sc_err *err) SC_MUST_CHECK;

/* Write the anchored calibration: the base file (base_path, whose values the anchor replaces
 * on loading) with name, source and an "anchor" object recording the parameters, the runs and
 * the residuals. Atomic. */
int cal_anchor_write(const char *path, const char *base_path, const cost_calib *out, const cal_anchor_report *rep,
                     const cal_anchor_run *runs, int n, sc_err *err) SC_MUST_CHECK;

/* The fraction of the GPU's datasheet dense peak (BF16/FP16; FP8's for an FP8 run, into
 * *peak_flops, FLOP/s) that run r's measured step implies for the model's FLOPs alone (MFU);
 * above 1 the measurement is impossible. 0 when it cannot be told (a harness step). */
double cal_anchor_implied_mfu(const cal_anchor_run *r, const cost_calib *k, double *peak_flops);

/* The run the fitted calibration reproduces worst, when it does not reproduce it: the index of
 * the run whose |residual| most exceeds what its own measurement allows, -1 when every run is
 * within it. Allowed: 2 x the run's measured spread (sd / median, a log's); without one, 2 x the
 * fit's residual scale rep->s_rel where a parameter was fitted with dof left (with nothing
 * fitted s_rel is the residual itself); else none beyond the fit's convergence
 * (1e-6: a parameter that fitted leaves ~1e-10), i.e. a run held off by a bound or by nothing
 * fitted. *allowed receives that run's allowance (a fraction). */
int cal_anchor_unreproduced(const cal_anchor_report *rep, const cal_anchor_run *runs, int n, double *allowed);

/* What stack parameter `which` is, in words. */
const char *cal_anchor_label(int which);

/* The step of one run predicted (analytical model, or its step_fn) with calibration k, s. */
double cal_anchor_predict(const cal_anchor_run *run, const cost_calib *k);

/* The harness's measured steps (measurements' "steps", calibrate/step.h) as runs on cluster c:
 * runs[i] for each step whose ranks match the cluster's GPUs per node (others skipped: the
 * count fitted into *n, at most max); ctx receives what their step_fn reads (the caller keeps m,
 * c and ctx alive while the runs are used). */
#include "measure.h"
typedef struct cal_anchor_step_ctx {
    const cal_step_m *step;
    const spec_cluster *c;
    int nodes;
} cal_anchor_step_ctx;
void cal_anchor_steps(const cal_meas *m, const spec_cluster *c, cal_anchor_run *runs, cal_anchor_step_ctx *ctx,
                      int max, int *n);

#endif
