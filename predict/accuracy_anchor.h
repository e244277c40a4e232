/* accuracy_anchor.h — cases as the measured runs of `calibrate anchor`, and `accuracy
 * --anchored`: per source, per cluster and framework with at least three runs, anchor the stack
 * parameters (calibrate/anchor.h) on the run of median GPU count and predict the others; the
 * error of each held-out run, MAPE and bias per source and overall.
 * Not here: printing (cli/accuracy_anchor.c), the fit (calibrate/anchor.c). */
#ifndef SC_PRED_ACCURACY_ANCHOR_H
#define SC_PRED_ACCURACY_ANCHOR_H

#include "../calibrate/anchor.h"
#include "accuracy.h"

/* A loaded, runnable case as an anchor run: its specs (pointers into c) and its measured step,
 * s: the predicted step x predicted tokens/s / measured tokens/s (the tokens of a step do not
 * depend on the calibration). SC_EINPUT when the case cannot run (unsupported, impossible). */
int acc_case_anchor_run(const acc_case *c, cal_anchor_run *out, sc_err *err) SC_MUST_CHECK;

#define ACC_ANCHOR_MAX_SOURCES 64

/* One source's anchored figures. */
typedef struct acc_anchor_src {
    char source_id[128];
    int groups;        /* cluster x framework groups with >= 3 runs                      */
    int n;             /* held-out runs predicted                                          */
    double mape;       /* mean |error|, fraction                                           */
    double bias;       /* median error (> 0: too optimistic), fraction                     */
    double shipped_mape; /* the same held-out runs with the shipped calibration            */
    char anchors[256]; /* the anchor runs' names, comma-separated (truncated)              */
} acc_anchor_src;

#define ACC_ANCHOR_MAX_RUNS 1024

/* One held-out run: what --json lists, to see where a source's error comes from. */
typedef struct acc_anchor_held {
    char name[128];
    char anchor[128];  /* the run its group was anchored on                                */
    int src;           /* index into src[]                                                 */
    double error;      /* anchored: predicted / measured tokens/s per GPU - 1             */
    double shipped;    /* the same with the shipped calibration                           */
} acc_anchor_held;

typedef struct acc_anchor_sum {
    int n_src;
    acc_anchor_src src[ACC_ANCHOR_MAX_SOURCES];
    int n;             /* held-out runs over all sources */
    double mape, bias, shipped_mape;
    int n_held;        /* runs listed in held (the first ACC_ANCHOR_MAX_RUNS of n)          */
    acc_anchor_held held[ACC_ANCHOR_MAX_RUNS];
} acc_anchor_sum;

/* Run the anchored evaluation on suite s (model engine; cases already loaded). */
int acc_anchored(const acc_suite *s, acc_anchor_sum *out, sc_err *err) SC_MUST_CHECK;

#endif
