/* calib_params.h — the one table of a calibration's top-level parameters: where each lives in
 * the JSON file (object path and key), which cost_calib field it fills, its unit and bounds,
 * whether it carries an uncertainty, which measurements determine it and how the fit reports it.
 * Reading (model/calib.c), writing a fitted calibration (calibrate/fit.c), the fit's report
 * (cli/calfit.c) and the spread of a prediction (cli/eval.c) walk it; a new top-level parameter
 * is added here once. The nested "kernels", "nccl" and "frameworks" objects have a second table
 * (calib_nested below) that reading and writing walk the same way.
 * Not here: the two non-numeric keys, $.kernels.fused_attention (a name) and the "nccl"
 * object's per-protocol sanity rules (model/calib.c). */
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

/* The object that switches d off in c, or NULL: "$.kernels" for the roofline's GEMM terms
 * (cost.c uses the kernel models while c has them), "$.nccl" for the plain ring/tree's NVLink
 * hop, base latencies and tree factor (collectives and pipeline sends use NCCL's constants).
 * Shipped files mark such values "INACTIVE while ..." in their source; calibrate fit does too. */
const char *calib_param_off_by(const cost_calib *c, const calib_param_def *d);

/* ---- the nested objects ------------------------------------------------------------------ */

/* How a nested value is stored in cost_calib. */
typedef enum {
    CALIB_DOUBLE, /* a double (kern_calib, nccl_params)            */
    CALIB_PARAM,  /* a cost_param: value and sd (the frameworks')  */
    CALIB_FLAG,   /* an int, 0 or 1 (the "nccl" switches)          */
} calib_store;

/* One value of the "kernels", "nccl" or "frameworks" object. model/calib.c reads "kernels" and
 * "frameworks" by walking these rows (the "nccl" object keeps its own reader for its
 * per-protocol objects; test_calib checks it reads back every row); calibrate/fit.c writes every
 * row, so a fitted calibration keeps all of them. */
typedef struct calib_nested_def {
    const char *path;   /* JSON path of its object: "$.kernels", "$.nccl.base_latency_us.ring"     */
    const char *key;    /* its key there: "gemm_fixed_us", "Simple"                                 */
    size_t offset;      /* offsetof(cost_calib, kern.gemm_fixed_s)                                  */
    calib_store store;
    double file_per_si; /* file units per SI unit (1e6 for _us keys, 1/1024 for _KiB, else 1)       */
    int allow_zero;     /* 0 is a valid value                                                       */
    double max;         /* largest valid value (INFINITY: none)                                     */
    int optional;       /* read only when present; written only when > 0 (else required, written)   */
} calib_nested_def;

/* The table: "kernels" (in reading order), "nccl", "frameworks"; n receives its length. */
const calib_nested_def *calib_nested(int *n);
/* The value d describes in c (a cost_param's .v; a flag is returned as 0 or 1). */
double calib_nested_get(const cost_calib *c, const calib_nested_def *d);
/* Sets it (a cost_param's .v and .sd; sd is ignored for the other stores). */
void calib_nested_set(cost_calib *c, const calib_nested_def *d, double v, double sd);

#endif
