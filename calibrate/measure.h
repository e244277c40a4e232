/* measure.h — measurements written by shardcast-bench (schema in calibrate/README.md) or
 * published nccl-tests sweeps, loaded and validated. Not here: the fit and the calibration it
 * writes (fit.h), running the benchmarks (calibrate/bench) or predicting measured steps
 * (cli/validate.c). */
#ifndef SC_MEASURE_H
#define SC_MEASURE_H

#include <jansson.h>

#include "../model/cost.h"
#include "../model/layout.h"
#include "step.h"

typedef struct cal_coll_m {
    cost_coll kind;
    lo_group_kind group;
    int n, k, m, concurrent;
    double bytes, time_s;
    int algo;            /* nccl_algo the run was forced to (NCCL_ALGO / NVLS off), -1 = NCCL's choice */
    char cluster[64];    /* published sweeps: the cluster the point was measured on ("" = the file's) */
    char source[32];     /* published sweeps: the source key of the point                        */
} cal_coll_m;

typedef struct cal_gemm_m {
    double m, n, k, batch, elem_bytes, time_s;
    int isolated; /* timed as one call (host launch inside the time), not back to back */
} cal_gemm_m;

typedef struct cal_membw_m {
    double bytes, time_s;
} cal_membw_m;

/* One interference entry: a GEMM alone and with concurrent traffic on the same GPU. */
typedef struct cal_interf_m {
    char concurrent[32];  /* "nccl-allreduce" | "nccl-allgather" | "nccl-reducescatter" | "memcpy-d2d" */
    int nccl;             /* 1: the traffic was an NCCL collective; 0: device copies standing in */
    int ranks;
    double m, n, k, bytes;
    double t_alone_s, t_overlapped_s; /* per GEMM                                            */
    double coverage;      /* part of the overlapped GEMMs the traffic spanned, 0..1 (1 if absent) */
} cal_interf_m;

typedef struct cal_step_m {
    spec_layout layout;
    char layout_str[64];
    cal_step_shape shape; /* the step measured (step.h)                                       */
    double elem_bytes, step_s;
    double op_s[N_COLLS + 1]; /* per collective kind, then compute; < 0 when not given */
} cal_step_m;

typedef struct cal_meas {
    char path[4096];
    char backend[16], device[128], date[64], note[256];
    int ranks, nodes, ranks_per_node;
    int n_coll, n_gemm, n_membw, n_interf, n_step;
    cal_coll_m *coll;
    cal_gemm_m *gemm;
    cal_membw_m *membw;
    cal_interf_m *interf;
    cal_step_m *step;
} cal_meas;

/* Loads shardcast-measurements/1 (the harness) and published-collectives/1 (published
 * nccl-tests sweeps, ../shared/reference/collectives: every entry a collective with its cluster
 * and source; a note naming NCCL_ALGO=Ring or NCCL_NVLS_ENABLE=0 forces the ring). */
int cal_meas_load(const char *path, cal_meas **out, sc_err *err) SC_MUST_CHECK;
/* The same from a document already in memory (what `calibrate import` is about to write, checked
 * with the loader's rules); `source` names it in errors. */
int cal_meas_from_json(json_t *root, const char *source, cal_meas **out, sc_err *err) SC_MUST_CHECK;
/* Keep only the collectives measured on `cluster` (published sweeps); returns how many remain. */
int cal_meas_keep_cluster(cal_meas *m, const char *cluster);

/* Whether a measured GEMM's time is mostly the host's launch: timed as one isolated call on a GPU
 * and under CAL_LAUNCH_BOUND_S. Such a row cannot test or fit the model's back-to-back GEMM time
 * (validate shows it unscored, calibrate fit leaves it out). */
#define CAL_LAUNCH_BOUND_S 100e-6
int cal_gemm_launch_bound(const cal_meas *m, const cal_gemm_m *g);
void cal_meas_free(cal_meas *m);
/* Do the measurements fit the cluster (each group's m at most its GPUs per node)? Called by
 * cal_fit; callers that read cal_meas_group directly call it first. */
int cal_meas_check(const cal_meas *m, const spec_cluster *c, sc_err *err) SC_MUST_CHECK;

/* Cost-model group geometry of a measured collective (local GPUs 0..m-1). */
void cal_meas_group(const spec_cluster *c, const cal_coll_m *x, cost_group *g);

#endif
