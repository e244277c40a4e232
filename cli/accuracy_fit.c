/* accuracy_fit.c — `shardcast accuracy --fit-host FILE` (fit the framework hook costs
 * leave-one-source-out and write configs/fitted/framework-host.json), `--fitted FILE` (the table
 * whose held-out values the cases are predicted with; the shipped one by default) and the
 * report's "Fitted values (leave-one-source-out)" section.
 * Not here: the fit and the table's format (predict/accuracy_fit.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "accuracy_int.h"
#include "common.h"

#define FITTED_REL "fitted/framework-host.json"

int cli_acc_fitted_load(cli_acc_run *r, const char *const *roots, int n_roots)
{
    sc_err err;
    const char *opt = r->o->fitted;
    if (opt && !strcmp(opt, "none"))
        return 0;
    if (opt) {
        snprintf(r->fit_path, sizeof r->fit_path, "%s", opt);
        snprintf(r->fit_shown, sizeof r->fit_shown, "%s", opt);
    } else {
        snprintf(r->fit_shown, sizeof r->fit_shown, "configs/%s", FITTED_REL); /* the shipped table beside the configs; none there: the built-in values */
        struct stat st;
        int k = 0;
        while (k < n_roots && (snprintf(r->fit_path, sizeof r->fit_path, "%.4000s/%s", roots[k], FITTED_REL),
                               stat(r->fit_path, &st) != 0))
            k++;
        if (k == n_roots) {
            r->fit_path[0] = '\0';
            return 0;
        }
    }
    int rc = acc_fit_load(r->fit_path, &r->fit, &err);
    if (rc)
        return cli_fail(&err, rc);
    r->have_fit = 1;
    acc_fit_apply(r->s, &r->fit);
    return 0;
}

/* " (at the bound)" when v_s is an end of p's range. */
static const char *at_bound(const acc_fit_param *p, double v_s)
{
    return fabs(v_s - p->lo_s) < 1e-3 * p->lo_s || fabs(v_s - p->hi_s) < 1e-3 * p->hi_s ? " (at the bound)" : "";
}

static void print_fit(const acc_fit_param *p)
{
    printf("%s %s: %s; fit on every source %.2f us, shipped %.2f us (estimate %.0f us, range %.0f-%.0f us)\n",
           spec_framework_str(p->fw), acc_fit_key_name(p->key), acc_fit_status_name(p->status), p->fit_s * 1e6, p->value_s * 1e6,
           p->estimate_s * 1e6, p->lo_s * 1e6, p->hi_s * 1e6);
    for (int k = 0; k < p->n_fold; k++) {
        const acc_fit_fold *f = &p->fold[k];
        printf("  held out %-26s fit without it %8.2f us%s%s  n %3d  MAPE %5.1f -> %5.1f %%  bias %+6.1f -> %+6.1f %%\n",
               f->source, f->fit_s * 1e6, f->determined ? "" : " (undetermined)", at_bound(p, f->fit_s), f->n, 100 * f->mape_before,
               100 * f->mape_after, 100 * f->bias_before, 100 * f->bias_after);
    }
    if (p->n_fold)
        printf("  held-out MAPE, mean over sources: %.1f -> %.1f %%\n", 100 * p->held_mape_before, 100 * p->held_mape_after);
}

int cli_acc_fit_host(cli_acc_run *r)
{
    sc_err err;
    acc_fit_table t;
    memset(&t, 0, sizeof t);
    time_t now = time(NULL);
    struct tm tm;
    strftime(t.date, sizeof t.date, "%Y-%m-%d", gmtime_r(&now, &tm));
    int rc = 0;
    for (int i = 0; i < acc_fit_n_targets() && !rc; i++) {
        spec_framework fw;
        acc_fit_key key;
        acc_fit_target(i, &fw, &key);
        fprintf(stderr, "accuracy: fitting %s %s leave-one-source-out\n", spec_framework_str(fw), acc_fit_key_name(key));
        if (!(rc = acc_fit_host(r->s, fw, key, &t.p[t.n], &err)))
            print_fit(&t.p[t.n++]);
    }
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "shardcast accuracy %.4000s --fit-host %.4000s", r->dir, r->o->fit_host);
    if (!rc)
        rc = acc_fit_write(r->o->fit_host, &t, cmd, &err);
    return rc ? cli_fail(&err, rc) : 0;
}

static void md_fold(FILE *f, const acc_fit_param *p, const acc_fit_fold *x)
{
    fprintf(f, "| %s | %d (%d) | %.1f%s | %.1f | %+.1f | %.1f | %+.1f |\n", x->source, x->n, x->n_act,
            x->fit_s * 1e6, x->determined ? at_bound(p, x->fit_s) : " (undetermined)", 100 * x->mape_before, 100 * x->bias_before,
            100 * x->mape_after, 100 * x->bias_after);
}

void cli_acc_markdown_fit(const cli_acc_run *r, FILE *f)
{
    fputs("## Fitted values (leave-one-source-out)\n\n", f);
    if (!r->have_fit) {
        fputs("No fitted table was used in this run (`--fitted none`, or none shipped): every framework host cost "
              "is its built-in value.\n\n",
              f);
        return;
    }
    fprintf(f,
            "The frameworks' host costs per hook invocation (`hook_us`: DeepSpeed's per sub-module fetch / "
            "release hooks, FSDP2's per module, Megatron's per bucketed layer) and per collective issued "
            "(`collective_us`) have no public measurement, so they are fitted to the cases under the rules of "
            "issue 27, from `%s` (fitted %s; `make fit-host` regenerates it): per framework and value, a 1-D "
            "minimisation (log-spaced grid, then GSL Brent) of the squared ln(predicted / measured), averaged per "
            "source over its cases of the framework and then over the sources the value acts on (each source "
            "weighs 1), the framework's other value at its estimate, analytical engine, inside a stated physical "
            "range. **Every case above is predicted with the value fitted without its source** (the held-out "
            "value); `predict` ships the value fitted on every source. Before = the former estimate, after = "
            "the value fitted without the source; errors over the source's cases of the framework (n, in "
            "brackets those the value acts on). A value is kept only when, held out, it lowers the mean MAPE "
            "over sources by at least 0.5 points (the accuracy guard's tolerance) and the fit on every source "
            "lies inside the range; otherwise the estimate stays and every case is predicted with it. What "
            "the fits say: docs/DEEPSPEED-RESIDUALS.md \"Host costs fitted leave-one-source-out\".\n\n",
            r->fit_shown, r->fit.date);
    for (int i = 0; i < r->fit.n; i++) {
        const acc_fit_param *p = &r->fit.p[i];
        fprintf(f, "### %s `%s`: %s\n\n", spec_framework_str(p->fw), acc_fit_key_name(p->key),
                acc_fit_status_name(p->status));
        fprintf(f, "Fitted on every source: %.1f us (shipped: %.1f us; former estimate %.0f us; range %.0f-%.0f us).",
                p->fit_s * 1e6, p->value_s * 1e6, p->estimate_s * 1e6, p->lo_s * 1e6, p->hi_s * 1e6);
        if (!p->n_fold) {
            fprintf(f, " Fewer than two sources have a case it acts on%s: nothing to fit or hold out.\n\n",
                    p->fw == FW_MEGATRON ? " (Megatron's per-layer gradient hook is priced only in the data-parallel "
                                           "layouts, model/layout_dp.c, which no Megatron case runs)"
                                         : "");
            continue;
        }
        fprintf(f, " Held-out MAPE, mean over the %d sources: %.1f %% with the estimate, %.1f %% held out.\n\n",
                p->n_fold, 100 * p->held_mape_before, 100 * p->held_mape_after);
        fputs("| held-out source | n (acted on) | fitted without it, us | MAPE % before | bias % before | MAPE % after | bias % "
              "after |\n|---|---:|---:|---:|---:|---:|---:|\n",
              f);
        for (int k = 0; k < p->n_fold; k++)
            md_fold(f, p, &p->fold[k]);
        fputs("\n", f);
    }
}
