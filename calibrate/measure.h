/* measure.h — measurements written by shardcast-bench (schema in calibrate/README.md), loaded
 * and validated; the fit of the cost model to them (GSL least squares); and the calibration file
 * written from the fit. Not here: running the benchmarks (calibrate/bench) or predicting
 * measured steps (cli/validate.c). */
#ifndef SC_MEASURE_H
#define SC_MEASURE_H

#include "../model/cost.h"
#include "../model/layout.h"

typedef struct cal_coll_m {
    cost_coll kind;
    lo_group_kind group;
    int n, k, m, concurrent;
    double bytes, time_s;
} cal_coll_m;

typedef struct cal_gemm_m {
    double m, n, k, batch, elem_bytes, time_s;
} cal_gemm_m;

typedef struct cal_membw_m {
    double bytes, time_s;
} cal_membw_m;

typedef struct cal_step_m {
    spec_layout layout;
    char layout_str[64];
    int layers, hidden, ffn, seq_len, micro_batch, grad_accum;
    double elem_bytes, step_s;
    double op_s[N_COLLS + 1]; /* per collective kind, then compute; < 0 when not given */
} cal_step_m;

typedef struct cal_meas {
    char path[4096];
    char backend[16], device[128], date[64], note[256];
    int ranks, nodes, ranks_per_node;
    int n_coll, n_gemm, n_membw, n_step;
    cal_coll_m *coll;
    cal_gemm_m *gemm;
    cal_membw_m *membw;
    cal_step_m *step;
} cal_meas;

int cal_meas_load(const char *path, cal_meas **out, sc_err *err);
void cal_meas_free(cal_meas *m);

/* What the fit found: residual per group of measurements, points used, parameters it could not
 * determine (taken from the base calibration). */
typedef struct cal_fit_report {
    int coll_points, gemm_points, membw_points;
    double coll_rms_rel, gemm_rms_rel;   /* RMS relative residual                       */
    char undetermined[256];              /* comma-separated names, "" if none            */
    char at_bound[256];                  /* latencies the fit held at 0 (they came out
                                            negative unconstrained), "" if none          */
    int intra_tier;                      /* cost_tier the intra-node collectives used     */
} cal_fit_report;

/* Fit the cost model on cluster c to m. Parameters the measurements cannot determine come
 * from `base` when given (and are listed in the report), else the fit is refused (SC_EINPUT
 * naming the parameter). */
int cal_fit(const cal_meas *m, const spec_cluster *c, const cost_calib *base, const char *base_name,
            cost_calib *out, cal_fit_report *rep, sc_err *err);

/* Write a calibration JSON (configs/calibrations schema, every value with sd and source). */
int cal_calib_write(const char *path, const cost_calib *cal, const cal_fit_report *rep, const cal_meas *m,
                    const char *base_name, sc_err *err);

/* Cost-model group geometry of a measured collective (local GPUs 0..m-1). */
void cal_meas_group(const spec_cluster *c, const cal_coll_m *x, cost_group *g);

#endif
