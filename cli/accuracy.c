/* accuracy.c — `shardcast accuracy [DIR]`: predict every published case under validation/ with
 * the shipped calibrations (predict/accuracy), print the per-case signed errors, the per-source
 * and overall statistics and the layout-order checks, as text or --json. Not here: the report
 * files (-o, --markdown, --plot-data, --write-figures) and --check (cli/accuracy_report.c);
 * loading cases or statistics (predict/). */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/proc.h"
#include "accuracy_int.h"
#include "commands.h"
#include "common.h"

static const char HELP[] =
    "usage: shardcast accuracy [DIR] [--engine model|sim|both] [--json] [-o cases.csv]\n"
    "                          [--check FILE] [--write-figures FILE] [--markdown FILE]\n\n"
    "Predicts every published end-to-end training measurement under DIR (default:\n"
    "$SHARDCAST_VALIDATION, else the validation/ directory beside the binary; one JSON case per\n"
    "file in DIR/<source_id>/, schema in\n"
    "validation/README.md) with the shipped calibrations, and compares in tokens/s per GPU:\n"
    "error = predicted / measured - 1 (positive: shardcast is too optimistic). Prints each case,\n"
    "then per source and overall: cases predicted, cases that could not be (with why), MAPE,\n"
    "median signed error (bias), Spearman rank correlation within the source, and for every pair\n"
    "of layouts measured at the same point (compare_group) whether the predicted order is right;\n"
    "then the bias per framework and per stack macro-averaged over sources (each source one vote),\n"
    "the error by sequence length, the torch.compile gain of every job one source measured eager\n"
    "and compiled (measured against predicted), and per compare group pick/best: the measured tokens/s of the\n"
    "fastest-predicted layout over the measured best (1.000 = the right pick). A case's \"ran\"\n"
    "(what its source ran) is written into its training where the training object does not say\n"
    "otherwise (predict/accuracy_ran.c); a table counts per key the cases mapped, agreeing, kept\n"
    "and unmapped (names the engine lacks).\n\n"
    "options:\n"
    "  --engine E             model (analytical), sim (simulator) or both (default)\n"
    "  --json                 machine-readable output on stdout\n"
    "  -o, --out FILE         every case and engine as CSV (written whole or not at all)\n"
    "  --check FILE           compare with committed figures (validation/figures.json): exit 1\n"
    "                         when the overall or a source's MAPE is worse by more than 0.5\n"
    "                         points, fewer cases run, or a pick/best median or minimum falls\n"
    "                         by more than 0.005, or a source's eager / compiled pair has its\n"
    "                         torch.compile gain predicted more than 5 points off\n"
    "  --write-figures FILE   write the figures of this run to FILE (make accuracy-report)\n"
    "  --markdown FILE        write the report (docs/ACCURACY.md)\n"
    "  --plot-data FILE       write the points for plots/accuracy.gp (model engine, by source)\n"
    "  --floor FILE           decision-quality floor (validation/decision-floor.json): exit 1 when\n"
    "                         a compare group's pick/best is under its min and not listed in its\n"
    "                         \"below\" (with why), a listed one is back above, or the median is\n"
    "                         under its median\n"
    "  --source ID            only the cases of DIR/ID/ (while writing them)\n"
    "  --anchored             per source, document (its \"source\" up to a space or comma), cluster,\n"
    "                         framework and offload (host optimizer or not)\n"
    "                         with >= 3 runs: anchor the stack on the run of median GPU count\n"
    "                         (calibrate anchor) and predict the others;\n"
    "                         MAPE and bias per source (model engine). --markdown replaces its section\n"
    "                         of the file; --write-figures / --check use their own figures file;\n"
    "                         --json also lists every held-out run with its anchor and errors\n"
    "  --fitted FILE          the fitted framework host costs to predict with (default: the shipped\n"
    "                         configs/fitted/framework-host.json; \"none\": the built-in values): each\n"
    "                         case gets the value fitted without its source (leave-one-source-out)\n"
    "  --fit-host FILE        fit the framework hook costs (hook_us per hook invocation, collective_us\n"
    "                         per collective issued) to the cases leave-one-source-out (analytical\n"
    "                         engine; every source), print the held-out errors and write FILE (whole\n"
    "                         or not at all; make fit-host)\n"
    "  --progress             progress on stderr as one updating line even when it is not a terminal\n"
    "                         (without it, off a terminal: a line at every tenth of the cases)\n\n"
    "Exit status: 0 ok; 1 a case failed to evaluate, --check found a regression or --floor a breach;\n"
    "2 bad input (a broken case file is named with its JSON path).\n";

static void progress(void *ctx, int done, int total, const acc_case *c)
{
    (void)c;
    fprintf(stderr, "\raccuracy: %s %d/%d cases", (const char *)ctx, done, total);
    if (done == total)
        fputc('\n', stderr);
}

/* Off a terminal (a CI log) without --progress: a plain line at every tenth of the cases, so a
 * run of minutes is not a silence and the log is not filled with carriage returns. */
static void progress_lines(void *ctx, int done, int total, const acc_case *c)
{
    (void)c;
    if (total > 0 && (done == total || done * 10 / total != (done - 1) * 10 / total))
        fprintf(stderr, "accuracy: %s %d/%d cases\n", (const char *)ctx, done, total);
}

static int width_of(const cli_acc_run *r, int field, int least)
{
    int w = least;
    for (int i = 0; i < r->n; i++) {
        const acc_case *c = acc_case_at(r->s, i);
        const char *s = field == 0 ? c->name : field == 1 ? c->source_id : c->layout_str;
        if ((int)strlen(s) > w)
            w = (int)strlen(s);
    }
    return w;
}

/* ---- text ---------------------------------------------------------------------------------- */

static void print_text(const cli_acc_run *r)
{
    char b1[64], b2[64], st[600];
    int wn = width_of(r, 0, 4), ws = width_of(r, 1, 6), wlay = width_of(r, 2, 6);
    printf("%d case%s from %d source%s in %s; tokens/s per GPU; err = predicted / measured - 1 (+: too optimistic)\n\n",
           r->n, r->n == 1 ? "" : "s", r->sum[0].n_sources, r->sum[0].n_sources == 1 ? "" : "s", r->dir);
    printf("%-*s  %-*s  %-*s %6s %10s", wn, "case", ws, "source", wlay, "layout", "GPUs", "measured");
    for (int k = 0; k < r->n_eng; k++)
        printf(" %10s %7s", pred_engine_name(r->eng[k]), "err %");
    printf("  status\n");
    for (int i = 0; i < r->n; i++) {
        const acc_case *c = acc_case_at(r->s, i);
        printf("%-*s  %-*s  %-*s %6d %10.1f", wn, c->name, ws, c->source_id, wlay, c->layout_str, c->gpus, c->measured_tps);
        for (int k = 0; k < r->n_eng; k++) {
            const acc_outcome *o = acc_outcome_at(r->s, i, r->eng[k]);
            int ok = o->status == ACC_OK;
            printf(" %10s %7s", cli_acc_fmt_num(b1, sizeof b1, 0, 1, ok ? o->predicted_tps : NAN),
                   cli_acc_fmt_num(b2, sizeof b2, 1, 1, ok ? 100 * o->error : NAN));
        }
        cli_acc_status_text(r, i, st, sizeof st);
        printf("  %s\n", st);
    }
    for (int k = 0; k < r->n_eng; k++) {
        const acc_summary *s = &r->sum[k];
        printf("\nengine %s (%s)\n", pred_engine_name(r->eng[k]), cli_acc_engine_long(r->eng[k]));
        printf("%-*s %5s %8s %8s %8s %9s  %s\n", ws, "source", "n", "not run", "MAPE %", "bias %", "Spearman",
               "layout order right");
        for (int j = 0; j <= s->n_sources; j++) {
            const acc_stats *x = j < s->n_sources ? &s->sources[j] : &s->overall;
            char b3[64], pairs[64];
            if (x->pairs)
                snprintf(pairs, sizeof pairs, "%d of %d", x->pairs_right, x->pairs);
            else
                snprintf(pairs, sizeof pairs, "-");
            printf("%-*s %5d %8d %8s %8s %9s  %s\n", ws, j < s->n_sources ? x->source_id : "overall", x->n,
                   x->n_not_run, cli_acc_fmt_num(b1, sizeof b1, 0, 1, x->mape_pct), cli_acc_fmt_num(b2, sizeof b2, 1, 1, x->bias_pct),
                   cli_acc_fmt_num(b3, sizeof b3, 0, 2, x->spearman), pairs);
        }
    }
    cli_acc_print_field(r);
    cli_acc_print_ran(r);
    char dc[1024];
    if (cli_acc_default_calibs(r, dc, sizeof dc))
        printf("\nbuilt-in default calibration (no calibrations/<cluster>.json) for: %s\n", dc);
    const acc_summary *s0 = &r->sum[0];
    if (s0->n_pairs) {
        int wg = 5;
        for (int p = 0; p < s0->n_pairs; p++) {
            int l = (int)strlen(acc_case_at(r->s, s0->pairs[p].a)->compare_group);
            wg = l > wg ? l : wg;
        }
        printf("\nlayout order within compare groups (a / b in tokens/s per GPU)\n");
        printf("%-*s  %-*s  %-*s %12s", wg, "group", wlay, "a", wlay, "b", "measured a/b");
        for (int k = 0; k < r->n_eng; k++) {
            char h[32];
            snprintf(h, sizeof h, "%s a/b", pred_engine_name(r->eng[k]));
            printf(" %13s %-*s", h, k + 1 < r->n_eng ? 7 : 0, "order");
        }
        printf("\n");
        for (int p = 0; p < s0->n_pairs; p++) {
            const acc_case *a = acc_case_at(r->s, s0->pairs[p].a), *b = acc_case_at(r->s, s0->pairs[p].b);
            printf("%-*s  %-*s  %-*s %12.3f", wg, a->compare_group, wlay, a->layout_str, wlay, b->layout_str,
                   s0->pairs[p].measured_ratio);
            for (int k = 0; k < r->n_eng; k++) {
                const acc_pair *q = &r->sum[k].pairs[p];
                printf(" %13s %-*s", cli_acc_fmt_num(b1, sizeof b1, 0, 3, q->predicted_ratio), k + 1 < r->n_eng ? 7 : 0,
                       cli_acc_pair_word(q->state));
            }
            printf("\n");
        }
    }
}

/* ---- JSON --------------------------------------------------------------------------------- */

static json_t *jnum(double v) { return isfinite(v) ? json_real(v) : json_null(); }
static json_t *jstr_or_null(const char *s) { return s[0] ? json_string(s) : json_null(); }

static json_t *stats_json(const acc_stats *x)
{
    return json_pack("{s:i, s:i, s:o, s:o, s:o, s:i, s:i}", "n", x->n, "not_run", x->n_not_run, "mape_pct",
                     jnum(x->mape_pct), "bias_pct", jnum(x->bias_pct), "spearman", jnum(x->spearman), "pairs", x->pairs,
                     "pairs_right", x->pairs_right);
}

static int print_json(const cli_acc_run *r)
{
    json_t *cases = json_array(), *engines = json_array(), *summary = json_object(), *pairs = json_array();
    for (int k = 0; k < r->n_eng; k++)
        json_array_append_new(engines, json_string(pred_engine_name(r->eng[k])));
    for (int i = 0; i < r->n; i++) {
        const acc_case *c = acc_case_at(r->s, i);
        json_t *res = json_object();
        for (int k = 0; k < r->n_eng; k++) {
            const acc_outcome *o = acc_outcome_at(r->s, i, r->eng[k]);
            int ok = o->status == ACC_OK, ran = ok || o->status == ACC_OOM;
            json_object_set_new(res, pred_engine_name(r->eng[k]),
                                json_pack("{s:s, s:o, s:o, s:o, s:o, s:o}", "status", acc_status_name(o->status), "reason",
                                          jstr_or_null(o->why), "predicted_tokens_per_s_per_gpu",
                                          jnum(ok ? o->predicted_tps : NAN), "error", jnum(ok ? o->error : NAN), "step_s",
                                          jnum(ran ? o->step_s : NAN), "mem_GiB", jnum(ran ? o->mem_GiB : NAN)));
        }
        json_array_append_new(
            cases, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:s, s:o, s:s, s:f, s:s, s:o, s:f, s:s, s:o}",
                             "name", c->name, "source_id", c->source_id, "file", c->file, "framework", c->framework,
                             "cluster", c->cluster_ref, "model", c->model_ref, "nodes", c->nodes, "gpus", c->gpus,
                             "layout", c->layout_str, "compare_group", jstr_or_null(c->compare_group), "metric",
                             acc_metric_name(c->measured.metric), "measured_value", c->measured.value,
                             "flop_convention", acc_flops_name(c->measured.convention), "flops_per_token",
                             jnum(c->flops_per_token > 0 ? c->flops_per_token : NAN),
                             "measured_tokens_per_s_per_gpu", c->measured_tps, "calibration",
                             c->calib_path[0] ? c->calib_path : "built-in defaults", "results", res));
        json_object_set_new(json_array_get(cases, json_array_size(cases) - 1), "ran_applied",
                            cli_acc_ran_json(&c->ran_applied));
    }
    for (int k = 0; k < r->n_eng; k++) {
        const acc_summary *s = &r->sum[k];
        json_t *src = json_array();
        for (int j = 0; j < s->n_sources; j++) {
            json_t *x = stats_json(&s->sources[j]);
            json_object_set_new(x, "source_id", json_string(s->sources[j].source_id));
            json_array_append_new(src, x);
        }
        json_object_set_new(summary, pred_engine_name(r->eng[k]),
                            json_pack("{s:o, s:o, s:o*}", "overall", stats_json(&s->overall), "sources", src, "field",
                                      cli_acc_field_json(r, k)));
    }
    for (int p = 0; p < r->sum[0].n_pairs; p++) {
        const acc_pair *q0 = &r->sum[0].pairs[p];
        const acc_case *a = acc_case_at(r->s, q0->a), *b = acc_case_at(r->s, q0->b);
        json_t *per = json_object();
        for (int k = 0; k < r->n_eng; k++) {
            const acc_pair *q = &r->sum[k].pairs[p];
            json_object_set_new(per, pred_engine_name(r->eng[k]),
                                json_pack("{s:o, s:s}", "predicted_ratio", jnum(q->predicted_ratio), "order",
                                          cli_acc_pair_word(q->state)));
        }
        json_array_append_new(pairs, json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:o}", "group", a->compare_group, "a",
                                               a->name, "b", b->name, "layout_a", a->layout_str, "layout_b",
                                               b->layout_str, "measured_ratio", q0->measured_ratio, "predicted", per));
    }
    return cli_print_json(json_pack("{s:s, s:o, s:o, s:o, s:o}", "dir", r->dir, "engines", engines, "cases", cases,
                                    "summary", summary, "layout_pairs", pairs));
}

/* ---- the command ------------------------------------------------------------------------------ */

static int default_dir(const char *argv0, char *out, size_t n)
{
    struct stat st;
    const char *env = getenv("SHARDCAST_VALIDATION"); /* as SHARDCAST_CONFIGS for the configs */
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return stat(out, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
    }
    char bin[4096];
    proc_self_dir(argv0, bin, sizeof bin);
    const char *rel[2] = {"validation", "../share/shardcast/validation"};
    for (int i = 0; i < 2; i++) {
        snprintf(out, n, "%.4000s/%s", bin, rel[i]);
        if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
    }
    return -1;
}

/* GO: the options are read and the command goes on; any other value is the exit status. */
#define ACC_GO (-1)

/* --engine model, sim or both into o->engines. */
static int parse_engines(const char *arg, cli_acc_opts *o, sc_err *err)
{
    if (!strcmp(arg, "both")) {
        o->engines[PRED_MODEL] = o->engines[PRED_SIM] = 1;
        return 0;
    }
    pred_engine e;
    if (pred_engine_parse(arg, &e))
        return sc_err_set(err, SC_EINPUT, "--engine", "", "expected model, sim or both, got \"%s\"", arg);
    o->engines[PRED_MODEL] = o->engines[PRED_SIM] = 0;
    o->engines[e] = 1;
    return 0;
}

/* The options and the one directory into o; ACC_GO or the exit status (--help, a usage error). */
static int acc_options(int argc, char **argv, cli_acc_opts *o)
{
    static const struct option lopts[] = {
        {"engine", required_argument, 0, 'e'},  {"json", no_argument, 0, 'j'},
        {"out", required_argument, 0, 'o'},     {"check", required_argument, 0, 'c'},
        {"write-figures", required_argument, 0, 'w'}, {"markdown", required_argument, 0, 'm'},
        {"plot-data", required_argument, 0, 'p'}, {"progress", no_argument, 0, 'P'},
        {"source", required_argument, 0, 's'}, {"anchored", no_argument, 0, 'A'},
        {"floor", required_argument, 0, 'F'},   {"help", no_argument, 0, 'h'},
        {"fit-host", required_argument, 0, 'H'}, {"fitted", required_argument, 0, 'T'},
        {0, 0, 0, 0}};
    sc_err err;
    optind = 1;
    opterr = 0;
    for (;;) {
        int opt = getopt_long(argc, argv, ":ho:", lopts, NULL);
        if (opt == -1)
            break;
        switch (opt) {
        case 'h': fputs(HELP, stdout); return 0;
        case 'e':
            if (parse_engines(optarg, o, &err))
                return cli_fail(&err, SC_EINPUT);
            break;
        case 'j': o->json = 1; break;
        case 'o': o->csv = optarg; break;
        case 'c': o->check = optarg; break;
        case 'w': o->figures = optarg; break;
        case 'm': o->markdown = optarg; break;
        case 'p': o->plot_data = optarg; break;
        case 'P': o->progress = 1; break;
        case 's': o->source = optarg; break;
        case 'A': o->anchored = 1; break;
        case 'F': o->floor = optarg; break;
        case 'H': o->fit_host = optarg; break;
        case 'T': o->fitted = optarg; break;
        default: return cli_getopt_error("accuracy", opt, argv, lopts);
        }
    }
    if (optind < argc)
        o->dir = argv[optind++];
    if (optind < argc) {
        char what[200];
        snprintf(what, sizeof what, "unexpected argument '%.150s' (one directory)", argv[optind]);
        return cli_usage_error("accuracy", what);
    }
    if (o->source && (o->check || o->figures)) {
        sc_err_set(&err, SC_EINPUT, "--source", "", "expected without --check and --write-figures (they cover every source)");
        return cli_fail(&err, SC_EINPUT);
    }
    if (o->fit_host && (o->source || o->anchored || o->check || o->figures || o->markdown || o->csv || o->floor)) {
        sc_err_set(&err, SC_EINPUT, "--fit-host", "", "expected alone (it fits on every source and writes only FILE)");
        return cli_fail(&err, SC_EINPUT);
    }
    if (o->floor && (o->source || o->anchored)) {
        sc_err_set(&err, SC_EINPUT, "--floor", "", "expected without --source and --anchored (it judges every compare group)");
        return cli_fail(&err, SC_EINPUT);
    }
    return ACC_GO;
}

/* Each engine over every case, its rows and summary; then the report on stdout. The exit status. */
static int acc_engines(cli_acc_run *r)
{
    sc_err err;
    int rc, status = 0, show = r->o->progress || isatty(2);
    for (int k = 0; k < r->n_eng && !status; k++) {
        acc_run(r->s, r->eng[k], !r->n ? NULL : show ? progress : progress_lines, (void *)pred_engine_name(r->eng[k]));
        r->rows[k] = malloc(sizeof(acc_row) * (size_t)(r->n ? r->n : 1));
        if (!r->rows[k]) {
            sc_err_set(&err, SC_ERUNTIME, "accuracy", "", "out of memory");
            status = cli_fail(&err, SC_ERUNTIME);
            break;
        }
        acc_suite_rows(r->s, r->eng[k], r->rows[k]);
        if ((rc = acc_summarize(r->rows[k], r->n, &r->sum[k], &err)))
            status = cli_fail(&err, rc);
    }
    if (!status) {
        if (!r->n)
            fprintf(stderr, "shardcast accuracy: no cases under %s yet (%s/<source_id>/*.json)%s\n", r->dir, r->dir,
                    r->o->check ? "; nothing to check" : "");
        if (r->o->json)
            status = print_json(r);
        else if (r->n)
            print_text(r);
    }
    return status;
}

/* The files asked for (each whole or absent), a case an engine could not evaluate named (a bug:
 * exit 1), then --check against the committed figures. The exit status. */
static int acc_finish(const cli_acc_run *r, const acc_floor *floor)
{
    const cli_acc_opts *o = r->o;
    sc_err err;
    int rc, status = 0;
    struct {
        const char *path;
        int (*write)(const cli_acc_run *, const char *, sc_err *);
    } outs[] = {{o->csv, cli_acc_write_csv}, {o->markdown, cli_acc_write_markdown}, {o->plot_data, cli_acc_write_plot_data},
                {o->figures, cli_acc_write_figures}};
    for (size_t i = 0; i < sizeof outs / sizeof outs[0] && !status; i++)
        if (outs[i].path && (rc = outs[i].write(r, outs[i].path, &err)))
            status = cli_fail(&err, rc);
    for (int k = 0; k < r->n_eng && !status; k++)
        for (int i = 0; i < r->n; i++) {
            const acc_outcome *oc = acc_outcome_at(r->s, i, r->eng[k]);
            if (oc->status == ACC_ERROR) {
                fprintf(stderr, "shardcast accuracy: %s: %s\n", acc_case_at(r->s, i)->file, oc->why);
                status = 1;
            }
        }
    if (!status && o->check && r->n)
        status = cli_acc_check_figures(r, o->check);
    if (o->floor && r->n && (!status || status == 1)) {
        int fs = cli_acc_check_floor(r, o->floor, floor);
        status = status ? status : fs;
    }
    return status;
}

int cmd_accuracy(int argc, char **argv)
{
    cli_acc_opts o;
    memset(&o, 0, sizeof o);
    o.engines[PRED_MODEL] = o.engines[PRED_SIM] = 1;
    sc_err err;
    int st = acc_options(argc, argv, &o);
    if (st != ACC_GO)
        return st;
    acc_floor floor;
    if (o.floor && (st = cli_acc_floor_load(o.floor, &floor)))
        return st;
    cli_acc_run r;
    memset(&r, 0, sizeof r);
    r.o = &o;
    if (o.dir) {
        snprintf(r.dir, sizeof r.dir, "%s", o.dir);
    } else if (default_dir(argv[0], r.dir, sizeof r.dir)) {
        sc_err_set(&err, SC_EINPUT, "accuracy", "", "no validation/ directory beside the binary (or $SHARDCAST_VALIDATION): name one (shardcast accuracy DIR)");
        return cli_fail(&err, SC_EINPUT);
    }
    size_t dl = strlen(r.dir);
    while (dl > 1 && r.dir[dl - 1] == '/')
        r.dir[--dl] = '\0';
    cli_setup s;
    cli_setup_init(&s, argv[0]);
    const char *roots[2] = {s.config_roots[0], s.config_roots[1]};
    acc_paths paths = {r.dir, roots, 2, o.source};
    int rc = acc_load_dir(&paths, &r.s, &err);
    if (rc)
        return cli_fail(&err, rc);
    r.n = acc_n_cases(r.s);
    if (o.fit_host) { /* cli/accuracy_fit.c */
        st = cli_acc_fit_host(&r);
        acc_suite_free(r.s);
        return st;
    }
    if ((st = cli_acc_fitted_load(&r, roots, 2))) {
        acc_suite_free(r.s);
        return st;
    }
    if (o.anchored) { /* cli/accuracy_anchor.c */
        st = cli_acc_anchored(&r);
        acc_suite_free(r.s);
        return st;
    }
    for (int e = 0; e < PRED_N_ENGINES; e++)
        if (o.engines[e])
            r.eng[r.n_eng++] = (pred_engine)e;
    int status = acc_engines(&r);
    if (!status)
        status = acc_finish(&r, o.floor ? &floor : NULL);
    for (int k = 0; k < r.n_eng; k++) {
        acc_summary_free(&r.sum[k]);
        free(r.rows[k]);
    }
    acc_suite_free(r.s);
    return status;
}
