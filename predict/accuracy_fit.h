/* accuracy_fit.h — the framework host costs no public measurement gives (cost_calib.fw_hook_s:
 * the host time per framework hook invocation; fw_coll_s: per collective issued), fitted to the end-to-end cases of validation/
 * under leave-one-source-out, as issue 27's rules allow a stack value only: for every source s,
 * fit on the other sources and predict s with that value; the all-sources fit is what
 * `predict` ships (model/calib.c), never what `accuracy` reports a source's error with.
 * The fit: per framework one value, a 1-D minimisation (a log-spaced grid, then GSL's Brent
 * `gsl_min` inside the best bracket) of the macro-weighted mean squared log(predicted/measured)
 * over the framework's cases the value acts on (each source weighs 1 in total), analytical
 * engine, bounded to a stated physical range. Also the stored table (configs/fitted/
 * framework-host.json): writing it, reading it, and putting its held-out values into a suite.
 * Each value is fitted alone (1-D), the framework's other fitted value at its estimate.
 * Not here: printing (cli/accuracy_fit.c). */
#ifndef SC_PRED_ACCURACY_FIT_H
#define SC_PRED_ACCURACY_FIT_H

#include "accuracy.h"

#define ACC_FIT_MAX_SRC 64
#define ACC_FIT_SCHEMA "shardcast-fitted-host/1"
#define ACC_FIT_STATUS "fitted (leave-one-source-out)"
/* The held-out gain a fit must bring: the accuracy guard's tolerance (cli/accuracy_report.c
 * CHECK_TOL_PTS, 0.5 points of MAPE): a smaller change is what the guard calls noise. */
#define ACC_FIT_GAIN_MIN 0.005
/* The most a fit may worsen any one held-out source's MAPE: issue 27's "no source worse by more
 * than 2 points than before without a stated reason" (a fitted value states none: it stands for
 * whatever the model lacks). */
#define ACC_FIT_SOURCE_WORSE_MAX 0.02

typedef enum {
    ACC_FIT_FITTED,       /* fitted; held out, it lowers the mean MAPE over sources by at least
                             ACC_FIT_GAIN_MIN                                                     */
    ACC_FIT_UNDETERMINED, /* the cases cannot tell (no case it acts on in two sources, or a
                             flat objective): the estimate is kept                               */
    ACC_FIT_REJECTED,     /* fitted, but held out it is worse than the estimate, better by less
                             than ACC_FIT_GAIN_MIN, or worse on one source by more than
                             ACC_FIT_SOURCE_WORSE_MAX: the estimate is kept (issue 27: no worse
                             than what it replaces)                                              */
    ACC_FIT_BOUND         /* the fit on every source is at an end of the physical range: the
                             cases ask for a value the mechanism cannot have; the estimate kept */
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

/* Which host cost: per hook invocation (cost_calib.fw_hook_s, key "hook_us") or per collective
 * issued (fw_coll_s, key "collective_us", as in a calibration file's "frameworks" object). */
typedef enum { ACC_FIT_HOOK, ACC_FIT_COLL, ACC_FIT_N_KEYS } acc_fit_key;

/* One fitted value: a framework's host cost. */
typedef struct acc_fit_param {
    spec_framework fw;
    acc_fit_key key;
    double estimate_s;     /* the value it replaces (the former [estimate]), s                */
    double lo_s, hi_s;     /* physical range, s                                               */
    char range_why[512];   /* why that range                                                  */
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
    acc_fit_param p[N_FRAMEWORKS * ACC_FIT_N_KEYS];
    char date[32];
} acc_fit_table;

/* The values fitted, in order: i from 0 to acc_fit_n_targets() - 1 (FW_IDEAL has none; FSDP1's
 * hook cost, 20 us, comes from a published CPU profile, model/calib.c, and is not fitted). */
int acc_fit_n_targets(void);
void acc_fit_target(int i, spec_framework *fw, acc_fit_key *key);
/* "hook_us" | "collective_us"; the slot of cal it names for framework fw. */
const char *acc_fit_key_name(acc_fit_key key);
cost_param *acc_fit_slot(cost_calib *cal, spec_framework fw, acc_fit_key key);

/* Minimise f over x in [lo, hi]: a grid of n_grid points, then Brent (gsl_min) inside the
 * bracket around the best one (the best grid point when it is an end: held at the bound).
 * *fmin the minimum, *frange max - min over the grid (0: flat). 0, or SC_ERUNTIME. */
int acc_fit_min1(double (*f)(double x, void *ctx), void *ctx, double lo, double hi, int n_grid, double *xmin,
                 double *fmin, double *frange, sc_err *err) SC_MUST_CHECK;

/* Fit framework fw's host cost `key` over the cases of s (analytical engine), leave-one-source-out.
 * The cases' calibrations are restored before it returns. */
int acc_fit_host(acc_suite *s, spec_framework fw, acc_fit_key key, acc_fit_param *out, sc_err *err) SC_MUST_CHECK;

/* The value `key` table t gives case c's framework for c's source: the held-out value when the fit
 * saw that source, else the all-sources value (a fit that never saw it). 0 when t has none. */
int acc_fit_value_for(const acc_fit_table *t, const acc_case *c, acc_fit_key key, double *out_s);
/* Put those values into every case of s (its calibration's slot of its framework). */
void acc_fit_apply(acc_suite *s, const acc_fit_table *t);

/* Write t (atomic) with the command that regenerates it; read it back (SC_EINPUT naming the
 * file, JSON path, expected and found). */
int acc_fit_write(const char *path, const acc_fit_table *t, const char *command, sc_err *err) SC_MUST_CHECK;
int acc_fit_load(const char *path, acc_fit_table *t, sc_err *err) SC_MUST_CHECK;

const char *acc_fit_status_name(acc_fit_status st);

#endif
