/* accuracy_fit.h — the framework host costs no public measurement gives (cost_calib.fw_hook_s:
 * the host time per framework hook invocation), fitted to the end-to-end cases of validation/
 * under leave-one-source-out, as issue 27's rules allow a stack value only: for every source s,
 * fit on the other sources and predict s with that value; the all-sources fit is what
 * `predict` ships (model/calib.c), never what `accuracy` reports a source's error with.
 * The fit: per framework one value, a 1-D minimisation (a log-spaced grid, then GSL's Brent
 * `gsl_min` inside the best bracket) of the macro-weighted mean squared log(predicted/measured)
 * over the framework's cases the value acts on (each source weighs 1 in total), analytical
 * engine, bounded to a stated physical range. Also the stored table (configs/fitted/
 * framework-host.json): writing it, reading it, and putting its held-out values into a suite.
 * Not here: printing (cli/accuracy_fit.c); the per-collective cost fw_coll_s (not fitted: it
 * acts on the same cases as the hook cost, so one framework's cases cannot tell them apart). */
#ifndef SC_PRED_ACCURACY_FIT_H
#define SC_PRED_ACCURACY_FIT_H

#include "accuracy.h"

#define ACC_FIT_MAX_SRC 64
#define ACC_FIT_SCHEMA "shardcast-fitted-host/1"
#define ACC_FIT_STATUS "fitted (leave-one-source-out)"

typedef enum {
    ACC_FIT_FITTED,       /* fitted; its held-out error is no worse than the estimate's        */
    ACC_FIT_UNDETERMINED, /* the cases cannot tell (no case it acts on in two sources, or a
                             flat objective): the estimate is kept                               */
    ACC_FIT_REJECTED      /* fitted, but the held-out error is worse than the estimate's: the
                             estimate is kept (issue 27: no worse than what it replaces)         */
} acc_fit_status;

/* One held-out source. Errors are fractions (predicted / measured - 1) over the source's cases
 * of the framework that run: before with the estimate, after with fit_s (the value fitted
 * without this source). */
typedef struct acc_fit_fold {
    char source[128];
    int n;           /* the source's cases of the framework that run                        */
    int n_act;       /* of which the value acts on                                          */
    int determined;  /* the other sources determine a value                                  */
    double fit_s;    /* fitted on the other sources, s (the estimate when not determined)    */
    double value_s;  /* what `accuracy` predicts this source with, s                         */
    double mape_before, bias_before, mape_after, bias_after;
} acc_fit_fold;

/* One fitted value: a framework's hook cost. */
typedef struct acc_fit_param {
    spec_framework fw;
    double estimate_s;     /* the value it replaces (the former [estimate]), s                */
    double lo_s, hi_s;     /* physical range, s                                               */
    const char *range_why; /* why that range (static text)                                    */
    acc_fit_status status;
    double fit_s;          /* fitted on every source, s                                       */
    double value_s;        /* what predict ships: fit_s when fitted, else the estimate, s     */
    double objective;      /* the all-sources objective at fit_s                              */
    int n_fold;            /* sources the value acts on (the all-sources fit's "fitted on")   */
    acc_fit_fold fold[ACC_FIT_MAX_SRC];
    double held_mape_before, held_mape_after; /* macro over folds, fractions                  */
} acc_fit_param;

/* The fitted host costs as stored (or just fitted). */
typedef struct acc_fit_table {
    int n;
    acc_fit_param p[N_FRAMEWORKS];
    char date[32];
} acc_fit_table;

/* The frameworks whose hook cost is fitted, in order (FW_IDEAL has none; FSDP1's 20 us comes
 * from a published CPU profile, model/calib.c, and is not fitted). */
int acc_fit_frameworks(const spec_framework **out);

/* Minimise f over x in [lo, hi]: a grid of n_grid points, then Brent (gsl_min) inside the
 * bracket around the best one (the best grid point when it is an end: held at the bound).
 * *fmin the minimum, *frange max - min over the grid (0: flat). 0, or SC_ERUNTIME. */
int acc_fit_min1(double (*f)(double x, void *ctx), void *ctx, double lo, double hi, int n_grid, double *xmin,
                 double *fmin, double *frange, sc_err *err) SC_MUST_CHECK;

/* Fit framework fw's hook cost over the cases of s (analytical engine), leave-one-source-out.
 * The cases' calibrations are restored before it returns. */
int acc_fit_host(acc_suite *s, spec_framework fw, acc_fit_param *out, sc_err *err) SC_MUST_CHECK;

/* The value table t gives case c's framework for c's source: the held-out value when the fit
 * saw that source, else the all-sources value (a fit that never saw it). 0 when t has none. */
int acc_fit_value_for(const acc_fit_table *t, const acc_case *c, double *out_s);
/* Put those values into every case of s (cal.fw_hook_s of the case's framework). */
void acc_fit_apply(acc_suite *s, const acc_fit_table *t);

/* Write t (atomic) with the command that regenerates it; read it back (SC_EINPUT naming the
 * file, JSON path, expected and found). */
int acc_fit_write(const char *path, const acc_fit_table *t, const char *command, sc_err *err) SC_MUST_CHECK;
int acc_fit_load(const char *path, acc_fit_table *t, sc_err *err) SC_MUST_CHECK;

const char *acc_fit_status_name(acc_fit_status st);

#endif
