/* eval.h — what predict, sweep and plan share on top of the front door (predict/eval): the
 * calibration named by the options, one point evaluated from the CLI's setup, the spread from a
 * calibration's uncertainties, and the CSV columns of a result.
 * Not here: the evaluation itself (predict/eval), presentation of any one command. */
#ifndef SC_CLI_EVAL_H
#define SC_CLI_EVAL_H

#include <stdio.h>

#include "../predict/eval.h" /* the engines' result types (cli/ reaches sim/ and model/analytic* only through predict/) */
#include "common.h"

typedef pred_engine cli_engine;
#define ENGINE_MODEL PRED_MODEL
#define ENGINE_SIM PRED_SIM

typedef struct cli_calib {
    cost_calib cal;
    char path[4096]; /* "" = built-in defaults */
} cli_calib;

/* --calibration F, else configs/calibrations/<cluster>.json, else built-in defaults. */
int cli_calib_load(const cli_setup *s, const char *arg, cli_calib *out, sc_err *err) SC_MUST_CHECK;

/* One prediction: the front door's pred_result plus what the commands add. */
typedef struct cli_point {
    int nodes, gpus;
    spec_layout layout;
    spec_training training;
    cli_engine engine;
    an_result r;
    exec_result sim;  /* engine sim: spread, slowest rank, stragglers                       */
    double step_sd;  /* 1 sd of step_s from the calibration's uncertainties (0 = none)      */
    double weak_eff; /* per-GPU throughput relative to the smallest node count (NAN if n/a) */
} cli_point;

/* so: simulator options (NULL = defaults); used with ENGINE_SIM only. */
int cli_eval(const cli_setup *s, const cli_calib *cal, cli_engine engine, const exec_opts *so,
             const spec_training *tr, int nodes, const spec_layout *l, cli_point *out, sc_err *err) SC_MUST_CHECK;
/* The same, the analytical engine going through a sweep memo (analytic.h; NULL = none): for
 * the points of one grid with one calibration and cluster that do not change meanwhile. */
int cli_eval_memo(const cli_setup *s, const cli_calib *cal, cli_engine engine, const exec_opts *so,
                  const spec_training *tr, int nodes, const spec_layout *l, an_memo *memo, cli_point *out,
                  sc_err *err) SC_MUST_CHECK;

/* Simulator options shared by predict and sweep: --jitter, --straggler, --seed, --symmetry. Returns 1 if
 * opt was one of them, 0 if not, <0 on a bad value. */
#define CLI_SIM_LONGOPTS                                                                           \
    {"jitter", required_argument, 0, 3000}, {"straggler", required_argument, 0, 3001},            \
        {"seed", required_argument, 0, 3002}, {"symmetry", required_argument, 0, 3003}
#define CLI_SIM_HELP                                                                               \
    "  --jitter F             simulator: compute times vary by a relative sd F (e.g. 0.02)\n"     \
    "  --straggler R:F        simulator: rank R computes F x slower (repeatable)\n"               \
    "  --seed N               simulator: seed of the jitter RNG (default 1)\n"                    \
    "  --symmetry on|off      simulator: where every node's timeline is a copy of a few nodes'\n" \
    "                         (no jitter, straggler or trace; regular groups), simulate only\n"  \
    "                         those, exactly (default on); off: every rank\n"
int cli_sim_opt(exec_opts *so, int opt, const char *arg, sc_err *err) SC_MUST_CHECK;

/* Does the calibration carry uncertainties (any sd > 0)? */
int cli_calib_has_sd(const cost_calib *c);
/* Spread of the step time when the calibration's parameters are drawn from their normal
 * distributions (sd = their standard errors; GSL RNG, seeded, `samples` draws, analytical
 * model): the standard deviation of the step time, s. */
double cli_step_spread(const cli_setup *s, const cli_calib *cal, const spec_training *tr, int nodes,
                       const spec_layout *l, int samples, unsigned long seed);

/* CSV header line and one row (no newline handling beyond the trailing '\n'). */
void cli_csv_header(FILE *f);
void cli_csv_row(FILE *f, const cli_setup *s, const cli_point *p);

/* What one simulator run of this point costs, estimated before it starts from the ranks it will
 * simulate and the ops and cross-node flows of one of them (events x a time per event measured
 * on this machine: bench/RESULTS.md, "issue 32 item 4"):
 * seconds and bytes. l: the layout, whose exact symmetry (under so, NULL = defaults) may leave
 * fewer ranks to simulate (predict/eval.h, pred_sim_ranks); NULL: every rank, an upper bound. */
void cli_sim_estimate(const cli_setup *s, const spec_training *tr, int nodes, const spec_layout *l,
                      const exec_opts *so, double *t_s, double *bytes);
/* The memory a run may use: the address-space limit, else half the physical memory, in bytes. */
double cli_mem_budget(void);
/* 0 if the simulator run fits limit_s (<= 0: no limit) and the memory budget; else SC_EINPUT with
 * the estimate, the budget and how to go on (`go_on`, e.g. "--sim-limit-s 0"). */
int cli_sim_budget(const cli_setup *s, const spec_training *tr, int nodes, const spec_layout *l, const exec_opts *so,
                   double limit_s, const char *go_on, sc_err *err) SC_MUST_CHECK;

int cli_parse_engine(const char *arg, cli_engine *out, sc_err *err) SC_MUST_CHECK;
const char *cli_engine_name(cli_engine e);

#endif
