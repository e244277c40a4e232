/* eval.c — the CLI side of one evaluation: calibration options, the setup handed to the front
 * door (predict/eval), the spread, CSV columns (see eval.h). */
#include "eval.h"

#include "../model/calib_anchor.h"
#include "../model/calib_params.h"
#include "../predict/results.h"

#include <ctype.h>
#include <errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* --interference off: no compute slowdown beside NCCL kernels, whatever the calibration says. */
static int interference(const cli_setup *s, cli_calib *out, int rc)
{
    if (!rc && s->no_interference)
        out->cal.overlap_slowdown = (cost_param){0, 0};
    return rc;
}

static int calib_load(const cli_setup *s, const char *arg, cli_calib *out, sc_err *err);

/* An anchored calibration used for another cluster than its runs': say so (issue 29). */
static int anchored_elsewhere(const cli_setup *s, cli_calib *out, int rc)
{
    if (!rc && out->cal.anchor.on && strcmp(out->cal.anchor.cluster, s->cluster.name))
        fprintf(stderr,
                "shardcast: note: %s is anchored on runs on %s, not on %s: its stack parameters (compute "
                "efficiency, framework overhead, network efficiency) were fitted there\n",
                out->path[0] ? out->path : "the calibration", out->cal.anchor.cluster, s->cluster.name);
    /* offloaded or not, as its runs were (accuracy --anchored anchors the two kinds apart) */
    const cost_anchor *a = &out->cal.anchor;
    for (int i = 0; !rc && a->on && i < s->n_layouts; i++) {
        int off = s->layouts[i].kind == LAYOUT_ZERO3_OFFLOAD;
        if ((off && !a->host_runs) || (!off && a->host_runs == a->n_runs)) {
            const char *name = out->path[0] ? out->path : "the calibration";
            if (off)
                fprintf(stderr,
                        "shardcast: note: %s was anchored on runs without offload: zero3-offload's optimizer "
                        "step on the host is nothing its stack parameters describe\n", name);
            else
                fprintf(stderr,
                        "shardcast: note: %s was anchored on zero3-offload runs only: their host optimizer step "
                        "may be folded into its compute level, which %s does not have\n", name,
                        spec_layout_str(&s->layouts[i], (char[64]){0}, 64));
            break;
        }
    }
    return rc;
}

int cli_calib_load(const cli_setup *s, const char *arg, cli_calib *out, sc_err *err)
{
    return anchored_elsewhere(s, out, interference(s, out, calib_load(s, arg, out, err)));
}

static int calib_load(const cli_setup *s, const char *arg, cli_calib *out, sc_err *err)
{
    memset(out, 0, sizeof *out);
    const char *roots[2] = {s->config_roots[0], s->config_roots[1]};
    return pred_calib_load(&s->cluster, arg, roots, 2, &out->cal, out->path, sizeof out->path, err);
}

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
static double cli_sim_events(const cli_setup *s, const spec_training *tr, int nodes, const spec_layout *l, double ranks)
{
    double per_rank = 0;
    if (l) {
        pred_input in = {&s->cluster, &s->model, tr, nodes, l, NULL, NULL};
        per_rank = pred_sim_rank_events(&in);
    }
    int micro = tr->grad_accum < 3 ? tr->grad_accum : 3; /* the steady-state run simulates a few */
    if (!(per_rank > 0)) /* no graph: the older rank x layer figure, as events */
        per_rank = s->model.layers * SIM_S_PER_RANK_LAYER / SIM_S_PER_EVENT;
    return ranks * (micro > 0 ? micro : 1) * per_rank;
}

void cli_sim_estimate(const cli_setup *s, const spec_training *tr, int nodes, const spec_layout *l,
                      const exec_opts *so, double *t_s, double *bytes)
{
    double all = (double)nodes * s->cluster.gpus_per_node, ranks = all;
    if (l) { /* the ranks the simulator will run: fewer where the step is exactly symmetric */
        pred_input in = {&s->cluster, &s->model, tr, nodes, l, NULL, NULL};
        ranks = pred_sim_ranks(&in, so);
    }
    *t_s = cli_sim_events(s, tr, nodes, l, ranks) * SIM_S_PER_EVENT;
    *bytes = SIM_BYTES_BASE + ranks * SIM_BYTES_PER_RANK + (ranks < all ? all * SIM_BYTES_PER_CLUSTER_RANK : 0);
}

double cli_mem_budget(void)
{
    double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE) / 2;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (double)rl.rlim_cur < phys)
        return (double)rl.rlim_cur;
    return phys > 0 ? phys : INFINITY;
}

int cli_sim_budget(const cli_setup *s, const spec_training *tr, int nodes, const spec_layout *l, const exec_opts *so,
                   double limit_s, const char *go_on, sc_err *err)
{
    double t, b, mem = cli_mem_budget();
    cli_sim_estimate(s, tr, nodes, l, so, &t, &b);
    if (limit_s > 0 && t > limit_s)
        return sc_err_set(err, SC_EINPUT, "budget", "",
                          "simulating %d GPUs (%d nodes) would take about %.0f s, over the limit of %.0f s; "
                          "--engine model answers in microseconds, or %s goes on",
                          nodes * s->cluster.gpus_per_node, nodes, t, limit_s, go_on);
    if (limit_s > 0 && b > mem)
        return sc_err_set(err, SC_EINPUT, "budget", "",
                          "simulating %d GPUs (%d nodes) needs about %.0f MiB, over the %.0f MiB this process may "
                          "use; --engine model needs none, or %s goes on",
                          nodes * s->cluster.gpus_per_node, nodes, b / 1048576, mem / 1048576, go_on);
    return 0;
}

int cli_parse_engine(const char *arg, cli_engine *out, sc_err *err)
{
    if (pred_engine_parse(arg, out))
        return sc_err_set(err, SC_EINPUT, "--engine", "", "expected model or sim, got \"%s\"", arg);
    return 0;
}

const char *cli_engine_name(cli_engine e) { return pred_engine_name(e); }

int cli_sim_opt(exec_opts *so, int opt, const char *arg, sc_err *err)
{
    char *end;
    switch (opt) {
    case 3000:
        so->jitter = strtod(arg, &end);
        if (end == arg || *end || !(so->jitter >= 0 && so->jitter < 1))
            return sc_err_set(err, SC_EINPUT, "--jitter", "", "expected a relative sd from 0 to 1, got \"%s\"", arg);
        return 1;
    case 3001: {
        int r;
        double f;
        char tail;
        if (so->n_stragglers >= EXEC_MAX_STRAGGLERS)
            return sc_err_set(err, SC_EINPUT, "--straggler", "", "expected at most %d stragglers", EXEC_MAX_STRAGGLERS);
        if (sscanf(arg, "%d:%lf%c", &r, &f, &tail) != 2 || r < 0 || !(f >= 1 && f < 1e6))
            return sc_err_set(err, SC_EINPUT, "--straggler", "", "expected RANK:FACTOR with FACTOR >= 1, got \"%s\"", arg);
        so->straggler_rank[so->n_stragglers] = r;
        so->straggler_factor[so->n_stragglers++] = f;
        return 1;
    }
    case 3002:
        errno = 0;
        so->seed = strtoul(arg, &end, 10);
        if (errno || end == arg || *end || !isdigit((unsigned char)arg[0]))
            return sc_err_set(err, SC_EINPUT, "--seed", "", "expected a non-negative integer, got \"%s\"", arg);
        return 1;
    case 3003:
        if (strcmp(arg, "on") && strcmp(arg, "off"))
            return sc_err_set(err, SC_EINPUT, "--symmetry", "", "expected on or off, got \"%s\"", arg);
        so->full = !strcmp(arg, "off");
        return 1;
    }
    return 0;
}

/* The front door's result (finite: pred_eval_finite) plus what the commands add. */
int cli_eval(const cli_setup *s, const cli_calib *cal, cli_engine engine, const exec_opts *so,
             const spec_training *tr, int nodes, const spec_layout *l, cli_point *out, sc_err *err)
{
    return cli_eval_memo(s, cal, engine, so, tr, nodes, l, NULL, out, err);
}

int cli_eval_memo(const cli_setup *s, const cli_calib *cal, cli_engine engine, const exec_opts *so,
                  const spec_training *tr, int nodes, const spec_layout *l, an_memo *memo, cli_point *out,
                  sc_err *err)
{
    memset(out, 0, sizeof *out);
    out->weak_eff = NAN;
    pred_input in = {&s->cluster, &s->model, tr, nodes, l, &cal->cal, memo};
    pred_result res;
    int rc = pred_eval_finite(&in, engine, so, &res, err);
    if (rc)
        return rc;
    out->nodes = res.nodes;
    out->gpus = res.gpus;
    out->layout = res.layout;
    out->training = res.training;
    out->engine = res.engine;
    out->r = res.r;
    out->sim = res.sim;
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

int cli_calib_has_sd(const cost_calib *c)
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

double cli_step_spread(const cli_setup *s, const cli_calib *cal, const spec_training *tr, int nodes,
                       const spec_layout *l, int samples, unsigned long seed)
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
    wl_build(&s->model, tr, &w);
    for (int i = 0; i < samples; i++) {
        cost_calib k = cal->cal;
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
        an_predict(&w, tr, l, &s->cluster, nodes, &k, &r);
        t[i] = r.step_s;
    }
    double sd = gsl_stats_sd(t, 1, (size_t)samples);
    gsl_rng_free(rng);
    free(t);
    return sd;
}

/* The CSV columns are predict/results' table; the CLI adds only its setup's names. */
void cli_csv_header(FILE *f) { res_csv_header(f); }

void cli_csv_row(FILE *f, const cli_setup *s, const cli_point *p)
{
    pred_result r = {.engine = p->engine, .nodes = p->nodes, .gpus = p->gpus, .layout = p->layout,
                     .training = p->training, .r = p->r, .sim = p->sim};
    res_point pt = {s->cluster.name, s->model.name, &r, p->weak_eff};
    res_csv_row(f, &pt);
}
