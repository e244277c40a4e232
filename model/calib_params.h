/* calib_params.h — the one table of a calibration's top-level parameters: where each lives in
 * the JSON file (object path and key), which cost_calib field it fills, its unit and bounds,
 * whether it carries an uncertainty, which measurements determine it and how the fit reports it.
 * Reading (model/calib.c), writing a fitted calibration (calibrate/fit.c), the fit's report
 * (cli/calfit.c) and the spread of a prediction (cli/eval.c) walk it; a new top-level parameter
 * is added here once.
 * Not here: the "kernels", "nccl" and "frameworks" objects (read by model/calib.c directly). */
#ifndef SC_CALIB_PARAMS_H
#define SC_CALIB_PARAMS_H

#include <stddef.h>

#include "cost.h"

/* The measurements of `shardcast-bench` that determine a parameter when `calibrate fit` runs. */
typedef enum {
    CALIB_FROM_BASE,   /* none: always the base calibration's (or the defaults')             */
    CALIB_FROM_COLL,   /* the collectives (links of the tiers they span, ring base latency)  */
    CALIB_FROM_GEMM,   /* the GEMMs                                                          */
    CALIB_FROM_MEMBW,  /* the memory copies                                                  */
    CALIB_FROM_INTERF, /* GEMMs beside traffic                                               */
} calib_source;

typedef struct calib_param_def {
    const char *path;  /* JSON path of its object: "$.gpu", "$.links.nvlink", "$.algorithms.tree" */
    const char *key;   /* its key there: "gemm_efficiency"                                        */
    size_t offset;     /* offsetof(cost_calib, field)                                             */
    double file_per_si; /* file units per SI unit: 1e6 for the _us keys, else 1 (read: x / it)    */
    int allow_zero;    /* 0 is a valid value                                                      */
    double max;        /* largest valid value (INFINITY: none)                                    */
    int optional;      /* read only when present (else required)                                  */
    int uncertain;     /* drawn from N(v, sd) by the spread of a prediction                       */
    calib_source from; /* the measurements that determine it                                      */
    int tier;          /* the cost_tier of a "$.links" row, -1 for the others                      */
    int report;        /* its place in `calibrate fit`'s report, ascending (the rows of the link
                          tiers share one: only the tier the cluster's collectives used is shown);
                          0: not reported                                                         */
    const char *label; /* its name there: "GEMM efficiency" (NULL when not reported)               */
    const char *unit;  /* its unit there, after the value times file_per_si: "us", "of peak", ""   */
} calib_param_def;

/* The table in file order (gpu, links per tier, algorithms); n receives its length. */
const calib_param_def *calib_params(int *n);
/* The field of c that d describes. */
cost_param *calib_param_at(cost_calib *c, const calib_param_def *d);

#endif
