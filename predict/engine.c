/* engine.c — the engines' work the commands ask for beyond one point (see engine.h): the spread
 * from a calibration's uncertainties, the simulator's cost estimate and budget, one op graph's
 * step on the simulator, a step's shape, the sweep memo. Moved here from cli/eval.c, cli/validate.c
 * and cli/calanchor.c (issue 26 item 4) so that cli/ reaches the engines through predict/ only. */
#include "engine.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../model/calib_anchor.h"
#include "../model/calib_params.h"

/* The run's time is its events x the time per event. Events: the simulated ranks x the micro-steps
 * run x the events per rank and micro-step (predict/eval.h, pred_sim_rank_events; fitted there).
 * SIM_S_PER_EVENT: the median wall time per event of the 16 full runs at 256 GPUs in
 * bench/RESULTS.md, "Issue 32 item 4" (0.68-2.2 us; 2 shared cores, load average ~10). Memory:
 * per rank 3 KiB, from mics:p=8 on 1,024 to 16,384 p4d nodes (bench/memscale.py;
 * bench/RESULTS.md); plus, per rank of the cluster, the group tables and member lists an
 * exact-symmetric run still sizes by it (address space, mostly untouched). An estimate to warn
 * with, not a prediction. */
#define SIM_S_PER_EVENT 1.06e-6
/* Without a layout or a graph: the rank x layer figure of issue 22 (mics:p=8 on p4d, 4.3 us). */
#define SIM_S_PER_RANK_LAYER 4.3e-6
#define SIM_BYTES_PER_RANK 3072.0
#define SIM_BYTES_PER_CLUSTER_RANK 512.0
#define SIM_BYTES_BASE (32.0 * 1048576)

/* The events a run of this point with `ranks` simulated ranks is estimated to dispatch. */
static double sim_events(const pred_input *in, double ranks)
{
    double per_rank = in->layout ? pred_sim_rank_events(in) : 0;
    int micro = in->training->grad_accum < 3 ? in->training->grad_accum : 3; /* the steady-state run simulates a few */
    if (!(per_rank > 0)) /* no graph: the older rank x layer figure, as events */
        per_rank = in->model->layers * SIM_S_PER_RANK_LAYER / SIM_S_PER_EVENT;
    return ranks * (micro > 0 ? micro : 1) * per_rank;
}

void pred_sim_estimate(const spec_cluster *c, const spec_model *m, const spec_training *tr, int nodes,
                       const spec_layout *l, const exec_opts *so, double *t_s, double *bytes)
{
    double all = (double)nodes * c->gpus_per_node, ranks = all;
    pred_input in = {c, m, tr, nodes, l, NULL, NULL};
    if (l) /* the ranks the simulator will run: fewer where the step is exactly symmetric */
        ranks = pred_sim_ranks(&in, so);
    *t_s = sim_events(&in, ranks) * SIM_S_PER_EVENT;
    *bytes = SIM_BYTES_BASE + ranks * SIM_BYTES_PER_RANK + (ranks < all ? all * SIM_BYTES_PER_CLUSTER_RANK : 0);
}

double pred_mem_budget(void)
{
    double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE) / 2;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (double)rl.rlim_cur < phys)
        return (double)rl.rlim_cur;
    return phys > 0 ? phys : INFINITY;
}

int pred_sim_budget(const spec_cluster *c, const spec_model *m, const spec_training *tr, int nodes,
                    const spec_layout *l, const exec_opts *so, double limit_s, const char *go_on, sc_err *err)
{
    double t, b, mem = pred_mem_budget();
    pred_sim_estimate(c, m, tr, nodes, l, so, &t, &b);
    if (limit_s > 0 && t > limit_s)
        return sc_err_set(err, SC_EINPUT, "budget", "",
                          "simulating %d GPUs (%d node%s) would take about %.0f s, over the limit of %.0f s; "
                          "--engine model answers in microseconds, or %s goes on",
                          nodes * c->gpus_per_node, nodes, nodes == 1 ? "" : "s", t, limit_s, go_on);
    if (limit_s > 0 && b > mem)
        return sc_err_set(err, SC_EINPUT, "budget", "",
                          "simulating %d GPUs (%d node%s) needs about %.0f MiB, over the %.0f MiB this process may "
                          "use; --engine model needs none, or %s goes on",
                          nodes * c->gpus_per_node, nodes, nodes == 1 ? "" : "s", b / 1048576, mem / 1048576, go_on);
    return 0;
}

/* Every cost_param of a calibration that carries an uncertainty, in the table's order
 * (model/calib_params.h; the spread draws them in this order). */
static int all_params(cost_calib *c, cost_param **out)
{
    int n_defs, n = 0;
    const calib_param_def *d = calib_params(&n_defs);
    for (int i = 0; i < n_defs; i++)
        if (d[i].uncertain)
            out[n++] = calib_param_at(c, &d[i]);
    return n;
}

int pred_calib_has_sd(const cost_calib *c)
{
    cost_calib k = *c;
    cost_param *p[32];
    int n = all_params(&k, p);
    for (int i = 0; i < n; i++)
        if (p[i]->sd > 0)
            return 1;
    for (int w = 0; w < COST_N_STACK && c->anchor.on; w++) /* anchored stack parameters */
        if (c->anchor.p[w].sd > 0)
            return 1;
    return 0;
}

double pred_step_spread(const spec_cluster *c, const spec_model *m, const cost_calib *cal, const spec_training *tr,
                        int nodes, const spec_layout *l, int samples, unsigned long seed)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    double *t = malloc(sizeof(double) * (size_t)samples);
    if (!rng || !t) {
        gsl_rng_free(rng);
        free(t);
        return NAN;
    }
    gsl_rng_set(rng, seed);
    wl w;
    wl_build(m, tr, &w);
    for (int i = 0; i < samples; i++) {
        cost_calib k = *cal;
        cost_param *p[32];
        int n = all_params(&k, p);
        for (int j = 0; j < n; j++)
            if (p[j]->sd > 0) {
                double v = p[j]->v + gsl_ran_gaussian(rng, p[j]->sd);
                p[j]->v = v > 1e-3 * p[j]->v ? v : 1e-3 * p[j]->v; /* stay physical */
            }
        /* an anchor's compute factor and framework overhead (its network efficiency is the
         * table's, drawn above) */
        for (int a = 0; a < COST_N_STACK && k.anchor.on; a++)
            if (a != COST_STACK_NET && k.anchor.p[a].sd > 0) {
                double v = k.anchor.p[a].v + gsl_ran_gaussian(rng, k.anchor.p[a].sd);
                cost_anchor_set(&k, a, v > 1e-3 * k.anchor.p[a].v ? v : 1e-3 * k.anchor.p[a].v);
            }
        an_result r;
        an_predict(&w, tr, l, c, nodes, &k, &r);
        t[i] = r.step_s;
    }
    double sd = gsl_stats_sd(t, 1, (size_t)samples);
    gsl_rng_free(rng);
    free(t);
    return sd;
}

int pred_graph_sim_step(const lo_graph *g, const wl *w, const cost_calib *cal, const spec_cluster *c, double *step_s,
                        sc_err *err)
{
    an_timed t;
    an_time(g, w, cal, c, &t);
    exec_opts eo = {0};
    exec_result er;
    int rc = exec_run(g, &t, cal, c, &eo, &er, err);
    if (!rc)
        *step_s = er.step_s;
    return rc;
}

void pred_step_shape(const spec_model *m, const spec_training *t, const spec_layout *l, const spec_cluster *c,
                     int nodes, an_result *out)
{
    wl w;
    wl_build(m, t, &w);
    cost_calib k;
    cost_calib_defaults(c, &k);
    an_predict(&w, t, l, c, nodes, &k, out);
}

an_memo *pred_memo_new(void) { return an_memo_new(); }

void pred_memo_free(an_memo *m) { an_memo_free(m); }
