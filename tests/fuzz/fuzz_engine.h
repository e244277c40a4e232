/* fuzz_engine.h — what the "through the engine" targets share (fuzz_ds_engine, fuzz_fw_engine):
 * a parsed training and layout taken as `predict` takes them (framework check, the point's
 * checks, the pipeline budget) to both engines on a shipped cluster and model, each result
 * checked finite (pred_eval_finite: a NaN or Inf is SC_ERUNTIME, a finding). Work is capped
 * below the CLI's budgets so that one input stays well inside libFuzzer's -timeout under
 * ASan: points over the cap are skipped, not findings. Not a test of the answers. */
#ifndef SC_FUZZ_ENGINE_H
#define SC_FUZZ_ENGINE_H

#include "fuzz_common.h"

#include "../../model/analytic_pipe.h"
#include "../../model/framework.h"
#include "../../predict/eval.h"

/* Per-input caps (fuzzing only): the simulator's ranks x layers x simulated micro-steps
 * (cli/eval.c prices one at 4.3 us in a release build), and a pipeline's stages x chunks x
 * micro-batches (analytic_pipe.c: 1.1 us a unit analytically, 51 us simulated). */
#define FZ_SIM_UNITS 20000.0
#define FZ_PIPE_UNITS_MODEL 65536.0
#define FZ_PIPE_UNITS_SIM 2048.0

/* A shipped calibration for cluster i (fz_cluster's order), loaded once (defaults if absent). */
static inline const cost_calib *fz_calib(int i)
{
    static const char *const names[] = {"p4d.24xlarge", "p3dn.24xlarge", "luwu-8x100g"};
    static cost_calib k[3];
    static int state[3];
    if (!state[i] && fz_cluster(i)) {
        char path[512];
        sc_err err;
        snprintf(path, sizeof path, "%s/calibrations/%s.json", fz_configs(), names[i]);
        if (cost_calib_load(path, &k[i], &err))
            cost_calib_defaults(fz_cluster(i), &k[i]);
        state[i] = 1;
    }
    return state[i] ? &k[i] : NULL;
}

static inline double fz_pipe_units(const spec_layout *l, int m)
{
    if (l->kind != LAYOUT_MEGATRON || l->pp <= 1)
        return 0;
    return (double)l->pp * (l->vp > 1 ? l->vp : 1) * m;
}

/* Both engines on cluster ci at `nodes`, the shipped gpt3-13b (fz_model). */
static inline void fz_engines(const spec_training *tr0, const spec_layout *l, int ci, int nodes)
{
    const spec_cluster *c = fz_cluster(ci);
    const cost_calib *k = fz_calib(ci);
    const spec_model *m = fz_model();
    if (!c || !k || !m)
        return;
    spec_training tr = *tr0;
    sc_err err;
    if (fw_check(tr.framework, l, &err))
        return;
    if (!tr.precision_given && tr.precision == PREC_BF16 && !strcmp(c->gpu.arch, "volta"))
        tr.precision = PREC_FP16; /* as the CLI does (cli/common.c) */
    pred_input in = {c, m, &tr, nodes, l, k, NULL};
    int rc = pred_check(&in, "fuzz", &err);
    FZ_EXPECT(rc);
    if (rc || fz_pipe_units(l, tr.grad_accum) > FZ_PIPE_UNITS_MODEL)
        return;
    pred_result r;
    FZ_EXPECT(pred_eval_finite(&in, PRED_MODEL, NULL, &r, &err));
    if (fz_pipe_units(l, tr.grad_accum) > FZ_PIPE_UNITS_SIM || an_pipe_budget(l, tr.grad_accum, 1, &err))
        return;
    int micro = tr.grad_accum < 3 ? tr.grad_accum : 3; /* exec_run_steady simulates a few */
    double units = (double)pred_sim_ranks(&in, NULL) * m->layers * (micro > 0 ? micro : 1);
    if (units > FZ_SIM_UNITS)
        return;
    FZ_EXPECT(pred_eval_finite(&in, PRED_SIM, NULL, &r, &err));
}

#endif
