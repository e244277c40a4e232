/* engine.h — the engines' work the commands ask for beyond one point (eval.h): the spread of the
 * step time from a calibration's uncertainties, what a simulator run will cost and whether it
 * fits a budget, one op graph's step on the simulator (validate's comparison), a step's samples
 * and tokens, and the sweep memo. cli/ reaches the engines (sim/, model/analytic*) only through
 * predict/ (tools/archcheck.py). Not here: option parsing or printing (cli/). */
#ifndef SC_PRED_ENGINE_H
#define SC_PRED_ENGINE_H

#include "eval.h"

/* Spread of the step time when the calibration's parameters are drawn from their normal
 * distributions (sd = their standard errors; GSL RNG, seeded, `samples` draws, analytical
 * model): the standard deviation of the step time, s. NAN when out of memory. */
double pred_step_spread(const spec_cluster *c, const spec_model *m, const cost_calib *cal, const spec_training *tr,
                        int nodes, const spec_layout *l, int samples, unsigned long seed);
/* Does the calibration carry uncertainties (any sd > 0)? */
int pred_calib_has_sd(const cost_calib *c);

/* What one simulator run of this point costs, estimated before it starts from the ranks it will
 * simulate and the layers per micro-step (fitted on this machine: bench/RESULTS.md, "Scale"):
 * seconds and bytes. l: the layout, whose exact symmetry (under so, NULL = defaults) may leave
 * fewer ranks to simulate (pred_sim_ranks); NULL: every rank, an upper bound. */
void pred_sim_estimate(const spec_cluster *c, const spec_model *m, const spec_training *tr, int nodes,
                       const spec_layout *l, const exec_opts *so, double *t_s, double *bytes);
/* The memory a run may use: the address-space limit, else half the physical memory, in bytes. */
double pred_mem_budget(void);
/* 0 if the simulator run fits limit_s (<= 0: no limit) and the memory budget; else SC_EINPUT with
 * the estimate, the budget and how to go on (`go_on`, e.g. "--sim-limit-s 0"). */
int pred_sim_budget(const spec_cluster *c, const spec_model *m, const spec_training *tr, int nodes,
                    const spec_layout *l, const exec_opts *so, double limit_s, const char *go_on, sc_err *err)
    SC_MUST_CHECK;

/* One op graph's step time on the simulator (default options), timed with calibration cal on
 * cluster c, into *step_s; 0 or the simulator's error. */
int pred_graph_sim_step(const lo_graph *g, const wl *w, const cost_calib *cal, const spec_cluster *c, double *step_s,
                        sc_err *err) SC_MUST_CHECK;
/* One step of the job shape by the analytical model with c's default calibration (samples and
 * tokens per step do not depend on the calibration). */
void pred_step_shape(const spec_model *m, const spec_training *t, const spec_layout *l, const spec_cluster *c,
                     int nodes, an_result *out);
/* A sweep memo for the analytical engine (analytic.h): NULL when out of memory (none). */
an_memo *pred_memo_new(void);
void pred_memo_free(an_memo *m);

#endif
