/* eval.c — the CLI side of one evaluation: calibration options, the setup handed to the front
 * door (predict/eval), the spread, CSV columns (see eval.h). */
#include "eval.h"

#include "../model/calib_anchor.h"
#include "../model/calib_params.h"
#include "../predict/engine.h"
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

/* --nccl-algo / --nccl-proto: the run's NCCL_ALGO / NCCL_PROTO=Simple, in both engines (their
 * collectives are priced and chosen by cost_coll_best). */
static int nccl_pin(const cli_setup *s, cli_calib *out, int rc)
{
    if (!rc && s->nccl_algo)
        out->cal.nccl.pin_algo = s->nccl_algo;
    if (!rc && s->nccl_simple)
        out->cal.nccl.simple_only = 1;
    return rc;
}

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
        int off = spec_layout_states_at(s->layouts[i].kind) == SPEC_AT_HOST;
        if ((off && !a->host_runs) || (!off && a->host_runs == a->n_runs)) {
            const char *name = out->path[0] ? out->path : "the calibration";
            if (off)
                fprintf(stderr,
                        "shardcast: note: %s was anchored on runs without offload: %s's optimizer "
                        "step on the host is nothing its stack parameters describe\n", name,
                        spec_layout_kind_name(s->layouts[i].kind));
            else
                fprintf(stderr,
                        "shardcast: note: %s was anchored on offloaded runs only (zero3-offload, zero2-offload): "
                        "their host optimizer step may be folded into its compute level, which %s does not have\n",
                        name, spec_layout_str(&s->layouts[i], (char[64]){0}, 64));
            break;
        }
    }
    return rc;
}

/* A calibration made for a shipped cluster of another GPU architecture (--calibration dgx-h100
 * for an A100 cluster): its kernel efficiencies describe that GPU; said, as it was silent. */
static int other_arch(const cli_setup *s, cli_calib *out, int rc)
{
    const char *made_for = out->cal.cluster;
    if (rc || !out->path[0] || !made_for[0] || !strcmp(made_for, s->cluster.name))
        return rc;
    char path[4096];
    sc_err quiet;
    spec_cluster *c = malloc(sizeof *c);
    if (c && !cli_resolve(s, "clusters", made_for, path, sizeof path, &quiet) && !spec_load_cluster(path, c, &quiet) &&
        strcmp(c->gpu.arch, s->cluster.gpu.arch))
        fprintf(stderr,
                "shardcast: note: %s was made for %s (%s, %s), not for %s's %s GPUs: its kernel and link "
                "efficiencies describe that machine\n",
                out->path, made_for, c->gpu.name, c->gpu.arch, s->cluster.name, s->cluster.gpu.arch);
    free(c);
    return rc;
}

int cli_calib_load(const cli_setup *s, const char *arg, cli_calib *out, sc_err *err)
{
    return other_arch(s, out,
                      anchored_elsewhere(s, out, nccl_pin(s, out, interference(s, out, calib_load(s, arg, out, err)))));
}

static int calib_load(const cli_setup *s, const char *arg, cli_calib *out, sc_err *err)
{
    memset(out, 0, sizeof *out);
    if (arg && !*arg) /* --calibration "": said for the option, not the configs folder */
        return sc_err_set(err, SC_EINPUT, "--calibration", "", "expected a name or a path, got nothing");
    const char *roots[2] = {s->config_roots[0], s->config_roots[1]};
    return pred_calib_load(&s->cluster, arg, roots, 2, &out->cal, out->path, sizeof out->path, err);
}

void cli_sim_estimate(const cli_setup *s, const spec_training *tr, int nodes, const spec_layout *l,
                      const exec_opts *so, double *t_s, double *bytes)
{
    pred_sim_estimate(&s->cluster, &s->model, tr, nodes, l, so, t_s, bytes);
}

double cli_mem_budget(void) { return pred_mem_budget(); }

int cli_sim_budget(const cli_setup *s, const spec_training *tr, int nodes, const spec_layout *l, const exec_opts *so,
                   double limit_s, const char *go_on, sc_err *err)
{
    return pred_sim_budget(&s->cluster, &s->model, tr, nodes, l, so, limit_s, go_on, err);
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
            return sc_err_set(err, SC_EINPUT, "--jitter", "", "expected a relative sd from 0 to below 1, got \"%s\"", arg);
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

int cli_calib_has_sd(const cost_calib *c) { return pred_calib_has_sd(c); }

double cli_step_spread(const cli_setup *s, const cli_calib *cal, const spec_training *tr, int nodes,
                       const spec_layout *l, int samples, unsigned long seed)
{
    return pred_step_spread(&s->cluster, &s->model, &cal->cal, tr, nodes, l, samples, seed);
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
