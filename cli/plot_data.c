/* plot_data.c — what `shardcast plot` draws, as gnuplot data and variables (see plot_data.h):
 * sweep rows grouped into series, the four CSV kinds, and a trace's timeline. Not here: reading
 * the CSV (predict/results) or the trace (traces/read), running gnuplot (gnuplot.c), options. */
#include "plot_data.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnuplot.h"
#include "../traces/read.h"
#include "../traces/schema.h"

/* ---- the CSV of `shardcast sweep` --------------------------------------------------------- */

/* Its columns and reader are predict/results' (one table for writing and reading). */
typedef res_row row;
typedef res_table table;

/* Read when present, whatever the kind: they name series and mark OOM. */
const unsigned PD_OPTIONAL_COLS = RES_BIT(RES_CLUSTER) | RES_BIT(RES_MODEL) | RES_BIT(RES_ENGINE) |
                                      RES_BIT(RES_MB) | RES_BIT(RES_FITS) | RES_BIT(RES_GLOBAL);

/* ---- grouping rows into series ------------------------------------------------------------ */

/* How rows are named: a line per layout (and whatever else differs: micro-batch, engine, model,
 * cluster), a category of bars (the same without micro-batch), or a bar within a category (GPUs,
 * plus micro-batch when it differs). */
enum { G_SERIES, G_CATEGORY, G_SUB };

typedef struct groups {
    char (*name)[160];
    int n;
    int *of; /* group of each row */
} groups;

static void group_label(const table *t, const row *r, int mode, char *buf, size_t n)
{
    buf[0] = '\0';
    size_t used = 0;
#define ADD(...) (used += (size_t)snprintf(buf + used, used < n ? n - used : 0, __VA_ARGS__), used = used < n ? used : n - 1)
    if (mode == G_SUB) {
        ADD("%.0f GPUs", r->v[RES_GPUS]);
        if (t->has[RES_MB] && t->varies[RES_MB])
            ADD(", mb=%.0f", r->v[RES_MB]);
        return;
    }
    ADD("%s", r->text[RES_T_LAYOUT]);
    if (mode == G_SERIES && t->has[RES_MB] && t->varies[RES_MB])
        ADD(" mb=%.0f", r->v[RES_MB]);
    if (t->has[RES_ENGINE] && t->varies[RES_ENGINE])
        ADD(" %s", r->text[RES_T_ENGINE]);
    if (t->has[RES_MODEL] && t->varies[RES_MODEL])
        ADD(" %s", r->text[RES_T_MODEL]);
    if (t->has[RES_CLUSTER] && t->varies[RES_CLUSTER])
        ADD(" %s", r->text[RES_T_CLUSTER]);
#undef ADD
}

static void groups_free(groups *g)
{
    free(g->name);
    free(g->of);
    memset(g, 0, sizeof *g);
}

/* Groups in order of first appearance. */
static int group_rows(const table *t, int mode, groups *g, sc_err *err)
{
    memset(g, 0, sizeof *g);
    g->name = malloc(sizeof *g->name * (size_t)t->n);
    g->of = malloc(sizeof(int) * (size_t)t->n);
    if (!g->name || !g->of) {
        groups_free(g);
        return sc_err_set(err, SC_ERUNTIME, t->path, "", "out of memory");
    }
    for (int i = 0; i < t->n; i++) {
        char lab[160];
        group_label(t, &t->rows[i], mode, lab, sizeof lab);
        int k = 0;
        while (k < g->n && strcmp(g->name[k], lab))
            k++;
        if (k == g->n)
            snprintf(g->name[g->n++], sizeof g->name[0], "%s", lab);
        g->of[i] = k;
    }
    return 0;
}

/* Rows of group k sorted by GPU count (stable); returns how many. */
static int members(const table *t, const groups *g, int k, int *out)
{
    int m = 0;
    for (int i = 0; i < t->n; i++) {
        if (g->of[i] != k)
            continue;
        int j = m++;
        while (j > 0 && t->rows[out[j - 1]].v[RES_GPUS] > t->rows[i].v[RES_GPUS]) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = i;
    }
    return m;
}

/* "What: model on cluster (engine)" with the parts that are the same in every row. */
static void default_title(const table *t, const char *what, char *buf, size_t n)
{
    int model = t->has[RES_MODEL] && !t->varies[RES_MODEL] && t->rows[0].text[RES_T_MODEL][0];
    int cluster = t->has[RES_CLUSTER] && !t->varies[RES_CLUSTER] && t->rows[0].text[RES_T_CLUSTER][0];
    int engine = t->has[RES_ENGINE] && !t->varies[RES_ENGINE] && t->rows[0].text[RES_T_ENGINE][0];
    int k = snprintf(buf, n, "%s", what);
    if (model || cluster)
        k += snprintf(buf + k, n - (size_t)k, ": %s%s%s", model ? t->rows[0].text[RES_T_MODEL] : "",
                      model && cluster ? " on " : "", cluster ? t->rows[0].text[RES_T_CLUSTER] : "");
    if (engine && (size_t)k < n && strncmp(what, "Memory", 6)) /* memory is one model whichever engine ran */
        snprintf(buf + k, n - (size_t)k, " (%s engine)", !strcmp(t->rows[0].text[RES_T_ENGINE], "sim") ? "simulator" : "analytical");
}

/* Distinct GPU counts ascending as the array gpus[1..ngpus] (the script makes them the x tics),
 * and the log2 x range around them. */
static void gpu_axis(const table *t, FILE *vars)
{
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < t->n; i++) {
        lo = fmin(lo, t->rows[i].v[RES_GPUS]);
        hi = fmax(hi, t->rows[i].v[RES_GPUS]);
    }
    int n = 0;
    for (int pass = 0; pass < 2; pass++) { /* count, then write: ascending distinct values */
        if (pass)
            gp_array(vars, "gpus", n);
        double last = 0;
        for (int k = 0;; k++) {
            double next = INFINITY;
            for (int i = 0; i < t->n; i++)
                if (t->rows[i].v[RES_GPUS] > last)
                    next = fmin(next, t->rows[i].v[RES_GPUS]);
            if (isinf(next))
                break;
            if (pass)
                gp_elem_num(vars, "gpus", k + 1, next);
            else
                n++;
            last = next;
        }
    }
    fprintf(vars, "ngpus=%d; ", n);
    gp_num(vars, "xmin", lo / 1.3);
    gp_num(vars, "xmax", hi * 1.3);
}

static int any_oom(const table *t)
{
    for (int i = 0; i < t->n; i++)
        if (t->rows[i].v[RES_FITS] == 0)
            return 1;
    return 0;
}

/* Group names as the string array var[1..n] (legend entries or tic labels: data, never code). */
static void names_array(FILE *vars, const char *var, const groups *g)
{
    gp_array(vars, var, g->n);
    for (int k = 0; k < g->n; k++)
        gp_elem_str(vars, var, k + 1, g->name[k]);
}

/* Lines on one plot: each is a gnuplot plot clause and a legend entry, and gnuplot's time grows
 * with their square (measured here: 2,000 series 3.1 s, 5,000 11.8 s; issue 31: 20,000 took 296 s).
 * 1,000 lines draw in about 2 s and are already past reading. */
#define PD_MAX_SERIES 1000

static int series_budget(const table *t, const groups *g, sc_err *err)
{
    if (g->n <= PD_MAX_SERIES)
        return 0;
    return sc_err_set(err, SC_EINPUT, t->path, "",
                      "expected at most %d lines (one per layout, micro-batch, engine, model and cluster), got %d: "
                      "plot a subset of the rows",
                      PD_MAX_SERIES, g->n);
}

/* The series of t (grouped by G_SERIES; at most PD_MAX_SERIES when lines is set, since each
 * series is then a gnuplot line) and a member buffer m of t->n rows; on success the caller frees
 * both (free(*m), groups_free(g)). */
static int series_open(const table *t, int lines, groups *g, int **m, sc_err *err)
{
    int rc = group_rows(t, G_SERIES, g, err);
    if (rc)
        return rc;
    if (lines && (rc = series_budget(t, g, err))) {
        groups_free(g);
        return rc;
    }
    if (!(*m = malloc(sizeof(int) * (size_t)t->n))) {
        groups_free(g);
        return sc_err_set(err, SC_ERUNTIME, t->path, "", "out of memory");
    }
    return 0;
}

/* ---- the four CSV kinds ------------------------------------------------------------------- */
/* Each writes the data file (data) and the -e assignments (vars) its script documents. */

/* scaling.gp: block k = series k (gpus samples_per_s tflops), then one block of OOM points. */
int pd_scaling(const table *t, FILE *data, FILE *vars, char *title, size_t tn, sc_err *err)
{
    groups g;
    int *m;
    int rc = series_open(t, 1, &g, &m, err);
    if (rc)
        return rc;
    for (int k = 0; k < g.n; k++) {
        int c = members(t, &g, k, m);
        for (int i = 0; i < c; i++) {
            const row *r = &t->rows[m[i]];
            fprintf(data, "%.0f %.9g %.9g\n", r->v[RES_GPUS], r->v[RES_SPS], r->v[RES_TFLOPS]);
        }
        fputs("\n\n", data);
    }
    for (int i = 0; i < t->n; i++)
        if (t->rows[i].v[RES_FITS] == 0)
            fprintf(data, "%.0f %.9g %.9g\n", t->rows[i].v[RES_GPUS], t->rows[i].v[RES_SPS], t->rows[i].v[RES_TFLOPS]);
    fprintf(vars, "nseries=%d; has_oom=%d; ", g.n, any_oom(t));
    names_array(vars, "series", &g);
    gpu_axis(t, vars);
    default_title(t, "Throughput vs GPUs", title, tn);
    free(m);
    groups_free(&g);
    return 0;
}

/* efficiency.gp: block k = series k (gpus efficiency_pct, "?" where there is no baseline), then
 * one block of OOM points. */
int pd_efficiency(const table *t, FILE *data, FILE *vars, char *title, size_t tn, sc_err *err)
{
    groups g;
    int *m;
    int rc = series_open(t, 1, &g, &m, err);
    if (rc)
        return rc;
    double top = 0;
    int valid = 0;
    for (int k = 0; k < g.n; k++) {
        int c = members(t, &g, k, m);
        for (int i = 0; i < c; i++) {
            const row *r = &t->rows[m[i]];
            if (isnan(r->v[RES_EFF])) {
                fprintf(data, "%.0f ?\n", r->v[RES_GPUS]);
                continue;
            }
            valid++;
            top = fmax(top, 100 * r->v[RES_EFF]);
            fprintf(data, "%.0f %.9g\n", r->v[RES_GPUS], 100 * r->v[RES_EFF]);
        }
        fputs("\n\n", data);
    }
    int oom = 0;
    for (int i = 0; i < t->n; i++)
        if (t->rows[i].v[RES_FITS] == 0 && !isnan(t->rows[i].v[RES_EFF])) {
            fprintf(data, "%.0f %.9g\n", t->rows[i].v[RES_GPUS], 100 * t->rows[i].v[RES_EFF]);
            oom = 1;
        }
    free(m);
    if (!valid) {
        groups_free(&g);
        return sc_err_set(err, SC_EINPUT, t->path, "column weak_scaling_eff",
                          "expected at least one value (sweep several node counts), found only empty fields");
    }
    fprintf(vars, "nseries=%d; has_oom=%d; ", g.n, oom);
    /* strong scaling (sweep --scaling strong): the global batch stays while the GPUs change; the
     * column is the same ratio, (speed-up) / (GPU ratio), but not a weak-scaling efficiency */
    int strong = t->has[RES_GLOBAL] && t->n > 1;
    double gpus0 = t->n ? t->rows[0].v[RES_GPUS] : 0;
    int gpus_vary = 0;
    for (int i = 1; i < t->n && strong; i++) {
        strong = t->rows[i].v[RES_GLOBAL] == t->rows[0].v[RES_GLOBAL];
        gpus_vary |= t->rows[i].v[RES_GPUS] != gpus0;
    }
    strong = strong && gpus_vary;
    gp_str(vars, "ylab", strong ? "strong-scaling efficiency (% of the ideal speed-up over the fewest GPUs)"
                                : "weak-scaling efficiency (% of per-GPU throughput at the fewest GPUs)");
    gp_num(vars, "ymax", fmax(110, top * 1.08));
    names_array(vars, "series", &g);
    gpu_axis(t, vars);
    default_title(t, strong ? "Strong-scaling efficiency" : "Weak-scaling efficiency", title, tn);
    groups_free(&g);
    return 0;
}

/* memory.gp: block j = bars of sub-series j (GPU count): x mem_GiB width fits hbm_GiB; categories
 * (layouts) at x = 0, 1, ... */
int pd_memory(const table *t, FILE *data, FILE *vars, char *title, size_t tn, sc_err *err)
{
    groups cat, sub;
    int rc = group_rows(t, G_CATEGORY, &cat, err);
    if (rc)
        return rc;
    if ((rc = group_rows(t, G_SUB, &sub, err))) {
        groups_free(&cat);
        return rc;
    }
    double w = 0.8 / sub.n, lo = INFINITY, hi = 0;
    for (int j = 0; j < sub.n; j++) {
        for (int i = 0; i < t->n; i++) {
            if (sub.of[i] != j)
                continue;
            const row *r = &t->rows[i];
            double x = cat.of[i] + (j - (sub.n - 1) / 2.0) * w;
            fprintf(data, "%.6f %.9g %.6f %.0f %.9g\n", x, r->v[RES_MEM], w * 0.92, r->v[RES_FITS], r->v[RES_HBM]);
            lo = fmin(lo, fmin(r->v[RES_MEM], r->v[RES_HBM]));
            hi = fmax(hi, fmax(r->v[RES_MEM], r->v[RES_HBM]));
        }
        fputs("\n\n", data);
    }
    int logy = lo > 0 && hi / lo > 30;
    /* values over the bars (issue 30 item 7): level up to 12 bars, rotated up to 48, none beyond */
    int valrot = t->n <= 12 ? 0 : t->n <= 48 ? 1 : -1;
    fprintf(vars, "nsub=%d; ncat=%d; logy=%d; hbm_varies=%d; valrot=%d; ", sub.n, cat.n, logy, t->varies[RES_HBM], valrot);
    gp_num(vars, "hbm", t->rows[0].v[RES_HBM]);
    gp_num(vars, "ymin", logy ? lo / 1.5 : 0);
    gp_num(vars, "ymax", logy ? hi * 2.5 : (hi > 0 ? hi * (valrot > 0 ? 1.3 : 1.15) : 1)); /* room for the values */
    names_array(vars, "subs", &sub);
    names_array(vars, "cats", &cat);
    default_title(t, "Memory per GPU", title, tn);
    groups_free(&cat);
    groups_free(&sub);
    return 0;
}

/* breakdown.gp: one line per bar: x, the running sums c0=0 .. c6 of compute, exposed AG, RS, AR,
 * optimizer and idle (seconds), fits. Bars grouped by layout with a gap between groups; the tic
 * labels are the arrays barlab/barx (one per bar) and grouplab/groupx (one per group, none when
 * every layout has one bar and the bar labels name the layouts). */
int pd_breakdown(const table *t, FILE *data, FILE *vars, char *title, size_t tn, sc_err *err)
{
    static const int PART[6] = {RES_COMPUTE, RES_AG, RES_RS, RES_AR, RES_OPT, RES_IDLE};
    groups g;
    int *m;
    int rc = series_open(t, 0, &g, &m, err);
    if (rc)
        return rc;
    /* one bar per layout: the tics name the layouts; else GPU counts under bars, layouts under groups */
    int single = g.n == t->n;
    double x = 0, top = 0, gap = single ? 0 : 0.6;
    int used[6] = {0}, bars = 0;
    gp_array(vars, "barlab", t->n);
    gp_array(vars, "barx", t->n);
    gp_array(vars, "grouplab", single ? 0 : g.n);
    gp_array(vars, "groupx", single ? 0 : g.n);
    for (int k = 0; k < g.n; k++) {
        int c = members(t, &g, k, m);
        double x0 = x;
        for (int i = 0; i < c; i++, x += 1) {
            const row *r = &t->rows[m[i]];
            double sum = 0;
            fprintf(data, "%.3f 0", x);
            for (int p = 0; p < 6; p++) {
                sum += r->v[PART[p]];
                used[p] |= r->v[PART[p]] > 0;
                fprintf(data, " %.9g", sum);
            }
            fprintf(data, " %.0f\n", r->v[RES_FITS]);
            top = fmax(top, sum);
            char lab[200];
            if (single && t->varies[RES_GPUS])
                snprintf(lab, sizeof lab, "%s, %.0f GPUs", g.name[k], r->v[RES_GPUS]);
            else if (single)
                snprintf(lab, sizeof lab, "%s", g.name[k]);
            else
                snprintf(lab, sizeof lab, "%.0f", r->v[RES_GPUS]);
            bars++;
            gp_elem_str(vars, "barlab", bars, lab);
            gp_elem_num(vars, "barx", bars, x);
        }
        if (!single) {
            gp_elem_str(vars, "grouplab", k + 1, g.name[k]);
            gp_elem_num(vars, "groupx", k + 1, (x0 + x - 1) / 2);
        }
        x += gap;
    }
    char parts[32] = "";
    for (int p = 0; p < 6; p++)
        if (used[p])
            snprintf(parts + strlen(parts), sizeof parts - strlen(parts), "%d ", p + 1);
    if (!parts[0])
        snprintf(parts, sizeof parts, "1");
    gp_str(vars, "parts", parts);
    fprintf(vars, "ngroups=%d; ", single ? 0 : g.n);
    gp_num(vars, "xmax", x - gap - 1 + 0.7);
    gp_num(vars, "nbars", bars);
    if (single && !t->varies[RES_GPUS]) {
        char xl[64];
        snprintf(xl, sizeof xl, "layout (%.0f GPUs)", t->rows[0].v[RES_GPUS]);
        gp_str(vars, "xlab", xl);
    } else {
        gp_str(vars, "xlab", single ? "layout" : "GPUs, grouped by layout");
    }
    gp_num(vars, "ymax", top > 0 ? top * 1.12 : 1);
    default_title(t, "Step time breakdown", title, tn);
    free(m);
    groups_free(&g);
    return 0;
}

/* ---- the timeline (Chrome trace of `shardcast predict --trace`) -------------------------- */

/* One rank's pair of streams: pid = node, tid = TR_TID(local_rank, stream) (traces/schema.h). */
typedef struct lane {
    long pid, lane;
    long rank;  /* from the "rank N compute" thread name; -1 if absent */
    long stage; /* from its "(stage Q)" (a pipeline's trace); -1 if absent */
} lane;

static int lane_cmp_key(const void *a, const void *b)
{
    const lane *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->lane > y->lane) - (x->lane < y->lane);
}

static int lane_cmp_rank(const void *a, const void *b)
{
    const lane *x = a, *y = b;
    long rx = x->rank < 0 ? LONG_MAX : x->rank, ry = y->rank < 0 ? LONG_MAX : y->rank;
    if (rx != ry)
        return rx < ry ? -1 : 1;
    return lane_cmp_key(a, b);
}

int pd_timeline(const char *path, int nranks, FILE *data, FILE *vars, char *title, size_t tn, sc_err *err)
{
    tr_doc doc;
    int rc = tr_read(path, &doc, err);
    if (rc)
        return rc;
    size_t n_lanes = 0;
    lane *lanes = malloc(sizeof(lane) * doc.n_spans);
    if (!lanes) {
        tr_doc_free(&doc);
        return sc_err_set(err, SC_ERUNTIME, path, "", "out of memory");
    }
    /* every (node, local rank) with a span, deduplicated */
    for (size_t i = 0; i < doc.n_spans; i++)
        lanes[n_lanes++] = (lane){doc.spans[i].pid, doc.spans[i].tid / TR_LANES_PER_RANK, -1, -1};
    qsort(lanes, n_lanes, sizeof *lanes, lane_cmp_key);
    size_t u = 1;
    for (size_t i = 1; i < n_lanes; i++)
        if (lane_cmp_key(&lanes[i], &lanes[u - 1]))
            lanes[u++] = lanes[i];
    n_lanes = u;
    /* rank numbers from the thread names the simulator writes ("rank 5 compute") */
    for (size_t i = 0; i < doc.n_names; i++) {
        lane key = {doc.names[i].pid, doc.names[i].tid / TR_LANES_PER_RANK, -1, -1};
        lane *l = bsearch(&key, lanes, n_lanes, sizeof *lanes, lane_cmp_key);
        if (l) {
            l->rank = doc.names[i].rank;
            l->stage = doc.names[i].stage;
        }
    }
    qsort(lanes, n_lanes, sizeof *lanes, lane_cmp_rank);
    size_t shown = n_lanes < (size_t)nranks ? n_lanes : (size_t)nranks;
    /* the shown lanes, re-sorted by key for lookup, remembering their row order */
    lane *sel = malloc(sizeof(lane) * shown);
    if (!sel) {
        rc = sc_err_set(err, SC_ERUNTIME, path, "", "out of memory");
        goto out;
    }
    /* rows per rank: compute, then each communication stream the trace uses, its own row */
    long streams = 1;
    for (size_t i = 0; i < doc.n_spans; i++) {
        long st = doc.spans[i].tid % TR_LANES_PER_RANK;
        if (st >= TR_STREAM_COMM && st < TR_STREAM_COMM + TR_COMM_STREAMS && st - TR_STREAM_COMM + 1 > streams)
            streams = st - TR_STREAM_COMM + 1;
    }
    const long per = 1 + streams;
    gp_array(vars, "rowlab", (int)(per * (long)shown));
    for (size_t k = 0; k < shown; k++) {
        sel[k] = lanes[k];
        char who[64], lab[sizeof who + 32]; /* who, " comm " and a long's digits */
        if (lanes[k].rank >= 0 && lanes[k].stage >= 0) /* a pipeline's: its stage too */
            snprintf(who, sizeof who, "rank %ld stage %ld", lanes[k].rank, lanes[k].stage);
        else if (lanes[k].rank >= 0)
            snprintf(who, sizeof who, "rank %ld", lanes[k].rank);
        else
            snprintf(who, sizeof who, "node %ld gpu %ld", lanes[k].pid, lanes[k].lane);
        snprintf(lab, sizeof lab, "%s compute", who);
        gp_elem_str(vars, "rowlab", (int)(per * (long)k + 1), lab);
        for (long st = 0; st < streams; st++) {
            if (st)
                snprintf(lab, sizeof lab, "%s comm %ld", who, st);
            else
                snprintf(lab, sizeof lab, "%s comm", who);
            gp_elem_str(vars, "rowlab", (int)(per * (long)k + 2 + st), lab);
        }
        sel[k].rank = (long)k; /* row block index from here on */
    }
    qsort(sel, shown, sizeof *sel, lane_cmp_key);
    /* the spans of the shown ranks: t0_ms t1_ms row kind */
    double t0 = INFINITY, t1 = 0;
    int present[TR_N_KINDS] = {0};
    for (size_t i = 0; i < doc.n_spans; i++) {
        const tr_read_span *sp = &doc.spans[i];
        lane key = {sp->pid, sp->tid / TR_LANES_PER_RANK, -1, -1};
        lane *l = bsearch(&key, sel, shown, sizeof *sel, lane_cmp_key);
        if (!l)
            continue;
        present[sp->kind] = 1;
        long st = sp->tid % TR_LANES_PER_RANK - TR_STREAM_COMPUTE; /* 0 compute, 1.. each comm stream */
        long rowi = per * l->rank + (st >= 1 && st <= streams ? st : st ? 1 : 0);
        double ts = sp->ts_us, dur = sp->dur_us;
        fprintf(data, "%.6f %.6f %ld %d\n", ts / 1e3, (ts + dur) / 1e3, rowi, (int)sp->kind);
        t0 = fmin(t0, ts / 1e3);
        t1 = fmax(t1, (ts + dur) / 1e3);
    }
    char kinds[64] = "", names[256] = "";
    for (int k = 0; k < TR_N_KINDS; k++) {
        if (present[k])
            snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%d ", k);
        snprintf(names + strlen(names), sizeof names - strlen(names), "\"%s\" ", tr_kind_name((tr_kind)k));
    }
    fprintf(vars, "nrows=%ld; ", per * (long)shown);
    gp_num(vars, "tmin", t0);
    gp_num(vars, "tmax", t1 > t0 ? t1 : t0 + 1);
    gp_str(vars, "kinds", kinds);
    gp_str(vars, "kindnames", names);
    free(sel);
    {
        const char *base = strrchr(path, '/');
        if (doc.title[0]) /* what the trace is of: layout, model, cluster (tr_title) */
            snprintf(title, tn, "Timeline of %zu of %zu ranks: %.200s", shown, n_lanes, doc.title);
        else
            snprintf(title, tn, "Timeline of %zu of %zu ranks: %.200s", shown, n_lanes, base ? base + 1 : path);
    }
out:
    free(lanes);
    tr_doc_free(&doc);
    return rc;
}
