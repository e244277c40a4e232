/* fit.h — the cost model fitted to measurements (GSL least squares), what the fit found, and the
 * calibration file written from it. Not here: loading the measurements (measure.h), the
 * `calibrate fit` command (cli/calfit.c). */
#ifndef SC_CAL_FIT_H
#define SC_CAL_FIT_H

#include "../model/calib_params.h"
#include "measure.h"

/* What the fit found: residual per group of measurements, points used, parameters it could not
 * determine (taken from the base calibration). */
typedef struct cal_fit_report {
    int coll_points, gemm_points, membw_points;
    double coll_rms_rel, gemm_rms_rel;   /* RMS relative residual                       */
    char undetermined[256];              /* comma-separated names, "" if none            */
    char at_bound[256];                  /* parameters held at a physical bound: latencies
                                            that came out negative (at 0: "name"), efficiencies
                                            that ran away past 1 ("name at 1"), a network
                                            hop fitted below the intra-node one, which no
                                            ring step pays ("name at the intra-node hop
                                            latency"), "" if none */
    unsigned held;                       /* the parameters in at_bound, one bit each (ask
                                            cal_fit_held with a calib_params row)            */
    unsigned weak;                       /* collective-fit parameters held at the base's value
                                            because their sd was not below the value (named
                                            in undetermined), one bit each                  */
    int gemm_weak;                       /* GEMM overhead held likewise (1), or at 0 (2)     */
    int gemm_isolated;                   /* GEMM rows left out: isolated launch-bound calls
                                            (measure.h cal_gemm_launch_bound)               */
    int intra_tier;                      /* cost_tier the intra-node collectives used     */
    /* overlap_slowdown from the interference entries (0 points: kept from the base)          */
    int interf_points;                   /* entries it is the median of                    */
    int interf_dropped;                  /* entries left out: coverage < CAL_MIN_COVERAGE   */
    int interf_fallback;                 /* 1: no NCCL entries, device-copy ones used       */
    int interf_negative;                 /* entries with a negative factor (noise)          */
    double interf_median;                /* median factor before holding it at >= 0         */
    char interf_kind[32];                /* their concurrent traffic, or "nccl-*" if mixed   */
    /* with an "nccl" base: which of its constants the collectives fitted (1) and their
     * standard errors (SI): intra/net hop (Simple), ring base (Simple), net floor, tree bw   */
    int nccl_fitted[5];
    double nccl_sd[5];
} cal_fit_report;

/* Interference entries whose traffic spanned less of the overlapped GEMMs are not used. */
#define CAL_MIN_COVERAGE 0.95

/* The built-in defaults a fit starts from without a base (and `--base defaults`): the cluster's
 * defaults with the roofline as the compute model (no kernel models), since such a fit
 * measures the GEMMs and fits the roofline's terms, which kernel models would switch off. */
void cal_fit_defaults(const spec_cluster *c, cost_calib *k);

/* Fit the cost model on cluster c to m. Parameters the measurements cannot determine come
 * from `base` when given (and are listed in the report), else the fit is refused (SC_EINPUT
 * naming the parameter). */
int cal_fit(const cal_meas *m, const spec_cluster *c, const cost_calib *base, const char *base_name,
            cost_calib *out, cal_fit_report *rep, sc_err *err) SC_MUST_CHECK;

/* 1 when the fit held the parameter of table row d (model/calib_params.h) at a physical bound
 * (it is named in rep->at_bound), else 0. */
int cal_fit_held(const cal_fit_report *rep, const calib_param_def *d);

/* Write a calibration JSON (configs/calibrations schema, every value with sd and source). */
int cal_calib_write(const char *path, const cost_calib *cal, const cal_fit_report *rep, const cal_meas *m,
                    const char *base_name, sc_err *err) SC_MUST_CHECK;

#endif
