/* plan.c — `plan`'s engine work (plan.h): the grid evaluated analytically on every core, the
 * candidates that fit ranked and folded, the top ones confirmed with the simulator on up to
 * `threads` threads, why the winner wins with best-against-best ratios on one engine, and the
 * top two judged on one engine. Not here: options, progress text and printing (cli/plan.c), the
 * search's pieces (search.c), the engines. */
#include "plan.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../model/framework.h"
#include "../model/layout_kind.h"
#include "engine.h"

struct pl_plan {
    ps_cand *cs; /* the fitting candidates, ranked; n of them */
    size_t n;
    pl_stats st;
    char why[1024];
    int has_verdict;
    pl_verdict v;
};

enum { MAX_LAYS = 8192 };

/* The grid's working arrays: the fitting candidates, one node count's layouts, its points and
 * their evaluations. */
typedef struct grid_bufs {
    ps_cand *cs;
    size_t n, cap;
    spec_layout *lays;
    double *gb; /* each layout's batch per GPU or replica (group_batch), lays' slots */
    ps_point *pts;
    ps_cand *evals;
    size_t pts_cap;
} grid_bufs;

int pl_fsdp2_searched(unsigned mask, spec_framework f)
{
    return (mask & ps_fsdp2_families()) && (f == FW_FSDP2 || mask != ~0u);
}

static int fsdp2_searched(const pl_request *q) { return pl_fsdp2_searched(q->mask, q->training->framework); }

/* The layouts worth trying on `nodes` nodes: the families' members the framework runs, then the
 * explicit layouts not already there that are valid (the first reason one is not, in
 * st->invalid_why). Returns the count in b->lays. */
static int grid_layouts(const pl_request *q, int nodes, grid_bufs *b, pl_stats *st)
{
    const int N = nodes * q->cluster->gpus_per_node;
    int nl = q->mask ? ps_layouts(q->cluster, q->model, nodes, q->mask, q->placement, b->lays, MAX_LAYS) : 0;
    if (fsdp2_searched(q))
        nl = ps_fsdp2_layouts(q->cluster, q->model, nodes, q->mask, q->training->execution == EXEC_COMPILED, b->lays,
                              nl, MAX_LAYS);
    int n_fw = 0; /* only what the framework runs (the first refusal kept for "no candidate") */
    for (int j = 0; j < nl; j++) {
        sc_err fw_why;
        if (!fw_check(q->training->framework, &b->lays[j], &fw_why))
            b->lays[n_fw++] = b->lays[j];
        else if (!st->invalid_why[0])
            snprintf(st->invalid_why, sizeof st->invalid_why, "%s", fw_why.text);
    }
    nl = n_fw;
    for (int i = 0; i < q->n_layouts && nl < MAX_LAYS; i++) {
        char a[96], c[96];
        int dup = 0;
        spec_layout li = q->layouts[i];
        ps_canon_axonn(&li, N);
        spec_layout_str(&li, a, sizeof a);
        for (int j = 0; j < nl && !dup; j++)
            dup = !strcmp(a, spec_layout_str(&b->lays[j], c, sizeof c));
        sc_err why;
        if (!dup && !spec_layout_check(&q->layouts[i], q->cluster, nodes, &why))
            b->lays[nl++] = li;
        else if (!dup && !st->invalid_why[0]) /* the first reason, for "no candidate" */
            snprintf(st->invalid_why, sizeof st->invalid_why, "%s", why.text);
    }
    return nl;
}

/* One more point in b->pts (and its slot in b->evals); 0 or out of memory. */
static int grid_push(grid_bufs *b, size_t *np, ps_point p, sc_err *err)
{
    if (*np == b->pts_cap) {
        size_t nc = b->pts_cap ? 2 * b->pts_cap : 1024;
        ps_point *q = realloc(b->pts, nc * sizeof *b->pts);
        ps_cand *e = q ? realloc(b->evals, nc * sizeof *b->evals) : NULL;
        if (q)
            b->pts = q;
        if (!e)
            return sc_err_set(err, SC_ERUNTIME, "plan", "", "out of memory");
        b->evals = e;
        b->pts_cap = nc;
    }
    b->pts[(*np)++] = p;
    return 0;
}

/* Sequences per step of one batch-sharing group of layout l on N GPUs (a GPU, or a replica of
 * spec_layout_batch_share GPUs that runs one micro-batch): a given global batch over the N / share
 * groups; none given, the training's micro_batch x grad_accum, which the model counts per group
 * (spec.h: a step is mb x ga x N / share), the step predict and sweep run. 0 when the global
 * batch is not a whole number of sequences per group. */
static double group_batch(const pl_request *q, const spec_layout *l, int N)
{
    const spec_training *t = q->training;
    if (q->global_batch <= 0)
        return (double)t->micro_batch * t->grad_accum;
    int share = spec_layout_batch_share(l);
    if (share < 1 || N % share)
        return 0;
    double g = q->global_batch / (N / share);
    return g >= 1 && g == floor(g) ? g : 0;
}

/* This node count's points, in the order they are ranked and reported: the micro-batch x
 * accumulation splits of each layout's group batch (b->gb, 0: none), micro-batch outermost.
 * 0 or out of memory. */
static int grid_points(const pl_request *q, int nodes, int nl, grid_bufs *b, size_t *np, sc_err *err)
{
    const double *gb = b->gb;
    *np = 0;
    for (int mb = 1; mb <= 64; mb *= 2)
        for (int li = 0; li < nl; li++) {
            if (gb[li] < mb || fmod(gb[li], mb) != 0)
                continue;
            spec_training tl = *q->training;
            tl.micro_batch = mb;
            tl.grad_accum = (int)(gb[li] / mb);
            if (spec_layout_batch_share(&b->lays[li]) > 1 &&
                (spec_layout_check_training(&b->lays[li], &tl, NULL) || ps_pipe_split_bad(&b->lays[li], &tl)))
                continue;
            int rc = grid_push(b, np, (ps_point){nodes, b->lays[li], tl}, err);
            if (rc)
                return rc;
        }
    return 0;
}

/* The evaluated points b->evals[0..n_ok): those that fit (with the headroom) into b->cs, the
 * closest of those that do not into st. 0 or out of memory. */
static int grid_keep(const pl_request *q, grid_bufs *b, size_t n_ok, int ni, int nodes, pl_stats *st, sc_err *err)
{
    const double hbm = q->cluster->gpu.hbm_bytes;
    for (size_t i = 0; i < n_ok; i++) {
        ps_cand c = b->evals[i];
        st->tried++;
        c.twins = 0;
        ps_headroom(&c, hbm, q->headroom_bytes);
        if (q->on_grid && st->tried % 256 == 0)
            q->on_grid(q->ctx, st->tried, ni, q->n_nodes, nodes);
        if (!c.pt.r.mem.fits) {
            st->n_oom++;
            if (!st->have_oom || ps_oom_key(&c.pt.r.mem) < ps_oom_key(&st->closest_oom.pt.r.mem))
                st->closest_oom = c, st->have_oom = 1;
            continue;
        }
        if (b->n == b->cap) {
            ps_cand *m = realloc(b->cs, 2 * b->cap * sizeof *b->cs);
            if (!m)
                return sc_err_set(err, SC_ERUNTIME, "plan", "", "out of memory");
            b->cs = m;
            b->cap *= 2;
        }
        b->cs[b->n++] = c;
    }
    return 0;
}

/* Every node count within the budget whose global batch splits: its points evaluated on the
 * grid's threads (each into its own slot, read in order: what follows sees the results of one
 * loop) and kept. 0 or the first error. */
static int grid_run(const pl_request *q, ps_grid *grid, grid_bufs *b, pl_stats *st, sc_err *err)
{
    for (int ni = 0; ni < q->n_nodes; ni++) {
        int nodes = q->nodes[ni], N = nodes * q->cluster->gpus_per_node;
        if (q->budget_usd_h > 0 && nodes * q->cluster->price_usd_per_hour > q->budget_usd_h) {
            st->over_budget++;
            continue;
        }
        int nl = grid_layouts(q, nodes, b, st);
        /* micro-batch x accumulation splits of each layout's batch per GPU or replica */
        int splits = 0;
        for (int li = 0; li < nl; li++)
            splits |= (b->gb[li] = group_batch(q, &b->lays[li], N)) > 0;
        spec_layout ddp = {0}; /* no layout: the per-GPU batch decides what "no candidate" says */
        if (!splits && (nl || !(group_batch(q, &ddp, N) > 0))) {
            st->no_split++;
            continue; /* the global batch does not split over this many GPUs or replicas */
        }
        size_t np, n_ok;
        int rc = grid_points(q, nodes, nl, b, &np, err);
        if (rc)
            return rc;
        int grc = ps_grid_eval(grid, q->cluster, q->model, q->cal, q->objective, b->pts, np, b->evals, &n_ok, err);
        if ((rc = grid_keep(q, b, n_ok, ni, nodes, st, err)))
            return rc;
        if (grc)
            return grc;
        if (q->on_grid)
            q->on_grid(q->ctx, st->tried, ni, q->n_nodes, nodes);
    }
    return 0;
}

/* The top candidates confirmed by the simulator, in parallel: worker w of W takes candidates
 * w, w + W, ... into their own slots (nothing shared is written; the simulator keeps no global
 * state), and the caller reads the slots in order, so results, the first error reported and the
 * output are those of one thread. */
typedef struct confirm_job {
    const pl_request *q;
    const ps_cand *in;
    ps_cand *out;
    int *rc;
    sc_err *err;
    const char *skip; /* 1: over the simulator's budget, the analytical answer stays */
    int k, w, W;
} confirm_job;

static void *confirm_worker(void *arg)
{
    const confirm_job *j = arg;
    for (int i = j->w; i < j->k; i += j->W)
        if (!j->skip[i])
            j->rc[i] = ps_eval(j->q->cluster, j->q->model, j->q->cal, j->q->objective, PRED_SIM, j->in[i].pt.nodes,
                               &j->in[i].pt.layout, &j->in[i].pt.training, &j->out[i], &j->err[i]);
    return NULL;
}

/* 0 when c's simulation fits the budget plan allows (120 s); else its error. */
static int sim_fits(const pl_request *q, const ps_cand *c, sc_err *why_not)
{
    return pred_sim_budget(q->cluster, q->model, &c->pt.training, c->pt.nodes, &c->pt.layout, NULL, 120,
                           "--confirm 0", why_not);
}

/* Run the workers: worker 0 here, the others on threads (one that cannot start runs here). */
static void confirm_spawn(confirm_job *jobs, pthread_t *tid, char *started, int W)
{
    for (int w = 1; w < W; w++)
        started[w] = pthread_create(&tid[w], NULL, confirm_worker, &jobs[w]) == 0;
    confirm_worker(&jobs[0]);
    for (int w = 1; w < W; w++) {
        if (started[w])
            pthread_join(tid[w], NULL);
        else /* the thread could not start: its share runs here */
            confirm_worker(&jobs[w]);
    }
}

/* Confirm cs[0..k) with the simulator on up to q->threads threads; 0 or the error of the first
 * candidate (in rank order) that failed, in *err. Candidates too large to simulate within the
 * budget keep their analytical answer (said through on_skip). */
static int confirm_top(const pl_request *q, ps_cand *cs, int k, sc_err *err)
{
    if (k <= 0)
        return 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int W = q->threads > 0 ? q->threads : cores > 0 ? (int)cores : 1;
    if (W > k)
        W = k;
    ps_cand *out = calloc((size_t)k, sizeof *out);
    int *rcs = calloc((size_t)k, sizeof *rcs);
    sc_err *errs = calloc((size_t)k, sizeof *errs);
    char *skip = calloc((size_t)k, 1), *started = calloc((size_t)W, 1);
    confirm_job *jobs = calloc((size_t)W, sizeof *jobs);
    pthread_t *tid = calloc((size_t)W, sizeof *tid);
    int rc = 0;
    if (!out || !rcs || !errs || !skip || !started || !jobs || !tid) {
        rc = sc_err_set(err, SC_ERUNTIME, "plan", "", "out of memory");
        goto done;
    }
    for (int i = 0; i < k; i++) {
        sc_err why_not;
        if (sim_fits(q, &cs[i], &why_not)) {
            if (q->on_skip)
                q->on_skip(q->ctx, &cs[i], why_not.text);
            skip[i] = 1;
        }
    }
    for (int w = 0; w < W; w++)
        jobs[w] = (confirm_job){q, cs, out, rcs, errs, skip, k, w, W};
    confirm_spawn(jobs, tid, started, W);
    for (int i = 0; i < k && !rc; i++) {
        if (skip[i])
            continue;
        if ((rc = rcs[i])) {
            *err = errs[i];
            break;
        }
        out[i].confirmed = 1;
        out[i].twins = cs[i].twins;
        cs[i] = out[i];
    }
done:
    free(out);
    free(rcs);
    free(errs);
    free(skip);
    free(started);
    free(jobs);
    free(tid);
    return rc;
}

/* The confirmed top: ranked within one engine, the simulated rows first, then any the simulator's
 * budget left analytical (a simulated and an analytical number are never ranked against each
 * other). */
static int cmp_engine_first(const void *a, const void *b)
{
    const ps_cand *p = a, *q = b;
    if (p->confirmed != q->confirmed)
        return p->confirmed ? -1 : 1;
    return ps_cmp(a, b);
}

/* ---- best against best ------------------------------------------------------------------- */

const ps_cand *pl_best_rival(const ps_cand *all, size_t n, const ps_cand *best, ps_keep_fn keep, const void *ctx)
{
    const ps_cand *same = NULL, *other = NULL;
    for (size_t i = 0; i < n; i++) {
        const ps_cand *c = &all[i];
        if (c == best || !keep(c, ctx))
            continue;
        const ps_cand **slot = c->confirmed == best->confirmed ? &same : &other;
        if (!*slot || c->score > (*slot)->score)
            *slot = c;
    }
    return same ? same : other;
}

/* The ratios plan prints compare best against best on one engine: the winner against the best
 * rival of a kind (its best split on the winner's engine), both simulated (the rival simulated
 * too when it was not and fits the simulator's budget) or else both analytical, and say which. */
typedef struct rival_of {
    spec_layout_kind kind; /* the rival's kind, or -1: any layout without a pipeline, or
                              RIVAL_NO_MODEL_PAR: any without tensor or pipeline parallelism */
    int nodes;
} rival_of;
enum { RIVAL_NO_MODEL_PAR = -2 };

static int keep_rival(const ps_cand *c, const void *ctx)
{
    const rival_of *r = ctx;
    if (c->pt.nodes != r->nodes)
        return 0;
    if ((int)r->kind >= 0)
        return c->pt.layout.kind == r->kind;
    if ((int)r->kind == RIVAL_NO_MODEL_PAR) /* neither tensor nor pipeline parallel */
        return !ps_is_fsdp2_nd(&c->pt.layout) && c->pt.layout.kind != LAYOUT_TP &&
               c->pt.layout.kind != LAYOUT_AXONN && c->pt.layout.kind != LAYOUT_MEGATRON;
    return c->pt.layout.pp <= 1; /* megatron's and fsdp2's grammars set a pipeline depth (spec.h) */
}

/* What layout_explain_in's comparison needs: the request, the winner, the candidates. */
typedef struct why_ctx {
    const pl_request *q;
    const ps_cand *best, *all;
    size_t n;
} why_ctx;

/* "; 1.05x the best zero3 (zero3, micro-batch 4 x 1), both simulated", or "" when there is none. */
static void why_vs(const void *ctx, int kind, const char *what, char *out, size_t len)
{
    const why_ctx *w = ctx;
    const ps_cand *best = w->best;
    rival_of r = {(spec_layout_kind)kind, best->pt.nodes};
    out[0] = 0;
    const ps_cand *rival = pl_best_rival(w->all, w->n, best, keep_rival, &r);
    if (!rival)
        return;
    sc_err err;
    int sim_ok = best->confirmed && (rival->confirmed || !sim_fits(w->q, rival, &err)); /* simulate it too */
    ps_pair pr;
    char lay[96];
    spec_layout_str(&rival->pt.layout, lay, sizeof lay);
    if (ps_pair_same_engine(w->q->cluster, w->q->model, w->q->cal, w->q->objective, best, rival, sim_ok, &pr, &err)) {
        snprintf(out, len, "; not compared with the best %s (%s): %.120s", what, lay, err.text);
        return;
    }
    snprintf(out, len, "; %.2fx the best %s (%s with its best split, micro-batch %d x %d), %s", pr.ratio, what, lay,
             rival->pt.training.micro_batch, rival->pt.training.grad_accum, ps_engine_both(pr.engine));
}

/* Why an N-D FSDP2 winner wins (torchtitan's mesh, spec_layout.c): its tensor group inside a
 * node (async TP or not), its stages, schedule, micro-batches and bubble, the memory on its
 * fullest GPU, and the best layout without tensor or pipeline parallelism (or that none fits). */
static void fsdp2_why(const why_ctx *w, char *out, size_t len)
{
    const ps_cand *best = w->best;
    const spec_layout *l = &best->pt.layout;
    const spec_cluster *c = w->q->cluster;
    int pp = l->pp > 1 ? l->pp : 1, stage = best->pt.gpus / pp;
    size_t o = (size_t)snprintf(out, len, "FSDP2 over dp %d", l->dp);
    if (l->t > 1 && o < len)
        o += (size_t)snprintf(out + o, len - o, " x tensor %d%s inside a node", l->t,
                              l->atp ? " (async TP, compiled)" : " (sequence parallel)");
    if (pp > 1 && o < len)
        o += (size_t)snprintf(out + o, len - o,
                              ", %d stages %s (neighbours over %s), %d micro-batches: bubble %.0f%% of the "
                              "pipeline", pp, l->vp > 1 ? "interleaved 1F1B x2" : "1F1B",
                              stage >= c->gpus_per_node ? "the NICs" : "NVLink", best->pt.training.grad_accum,
                              100 * best->pt.r.bubble_frac);
    if (o < len)
        o += (size_t)snprintf(out + o, len - o, "; %.1f GiB on the fullest GPU", best->pt.r.mem.total / 1073741824.0);
    char vs[400];
    why_vs(w, RIVAL_NO_MODEL_PAR, "layout without tensor or pipeline parallelism", vs, sizeof vs);
    if (o < len)
        snprintf(out + o, len - o, "%s",
                 vs[0] ? vs : "; no layout without tensor or pipeline parallelism among those that fit");
}

/* Why the winner wins: its kind's row says it (layout_kind_explain); an N-D FSDP2 winner here. */
static void why(const pl_request *q, const ps_cand *all, size_t n, char *out, size_t len)
{
    const ps_cand *best = &all[0];
    const spec_layout *l = &best->pt.layout;
    if (ps_is_fsdp2_nd(l)) {
        why_ctx w = {q, best, all, n};
        fsdp2_why(&w, out, len);
        return;
    }
    int smallest = 1;
    for (size_t i = 0; i < n; i++)
        if (all[i].pt.layout.kind == l->kind && all[i].pt.layout.p < l->p && all[i].pt.nodes == best->pt.nodes)
            smallest = 0;
    why_ctx w = {q, best, all, n};
    layout_explain_in x = {q->cluster, q->model, q->cal, l, &best->pt.training, best->pt.nodes, best->pt.gpus,
                           best->pt.r.mem.total, best->pt.r.bubble_frac, smallest, why_vs, &w};
    layout_kind_explain(&x, out, len);
}

/* The winner against the runner-up, on the winner's engine (the runner-up simulated too when it
 * was not and fits the budget), judged under the uncertainty: the request's, or two standard
 * deviations of the winner's step time from a calibration that carries them. */
static int judge_top2(const pl_request *q, const ps_cand *cs, pl_verdict *v, sc_err *err)
{
    v->uncertainty = q->uncertainty;
    v->from_calib = !q->uncertainty_set && pred_calib_has_sd(q->cal);
    if (v->from_calib) {
        double sd = pred_step_spread(q->cluster, q->model, q->cal, &cs[0].pt.training, cs[0].pt.nodes,
                                     &cs[0].pt.layout, 64, 1);
        if (sd > 0 && isfinite(sd))
            v->uncertainty = 2 * sd / cs[0].pt.r.step_s;
    }
    ps_pair top2;
    sc_err perr;
    int sim_ok = cs[0].confirmed && !sim_fits(q, &cs[1], &perr);
    int rc = ps_pair_same_engine(q->cluster, q->model, q->cal, q->objective, &cs[0], &cs[1], sim_ok, &top2, err);
    if (rc)
        return rc;
    v->engine = top2.engine;
    ps_judge(q->cluster, q->model, q->cal, q->objective, &top2.a, &top2.b, v->uncertainty, &v->j);
    return 0;
}

/* Rank the grid's candidates, fold twins, confirm the top ones and re-rank them within their
 * engine, then explain and judge the winner. */
static int rank_and_judge(const pl_request *q, pl_plan *p, sc_err *err)
{
    qsort(p->cs, p->n, sizeof *p->cs, ps_cmp);
    size_t kept_n = ps_fold_twins(p->cs, p->n); /* identical numbers: one choice */
    p->st.n_twins = (long)(p->n - kept_n);
    p->n = kept_n;
    int k = (int)p->n < q->confirm ? (int)p->n : q->confirm;
    if (q->on_confirm && k > 0)
        q->on_confirm(q->ctx, k);
    int rc = confirm_top(q, p->cs, k, err);
    if (rc)
        return rc;
    qsort(p->cs, (size_t)k, sizeof *p->cs, cmp_engine_first);
    if (!p->n)
        return 0;
    why(q, p->cs, p->n, p->why, sizeof p->why);
    if (p->n < 2)
        return 0;
    p->has_verdict = 1;
    return judge_top2(q, p->cs, &p->v, err);
}

int pl_run(const pl_request *q, pl_plan **out, sc_err *err)
{
    *out = NULL;
    pl_plan *p = calloc(1, sizeof *p);
    grid_bufs b = {.cap = 4096};
    b.cs = malloc(b.cap * sizeof *b.cs);
    b.lays = malloc(MAX_LAYS * sizeof *b.lays);
    b.gb = malloc(MAX_LAYS * sizeof *b.gb);
    /* the grid's threads, each with its memo of layer and collective times (same cal, cluster) */
    ps_grid *grid = ps_grid_new(q->threads);
    int rc = 0;
    if (!p || !b.cs || !b.lays || !b.gb || !grid)
        rc = sc_err_set(err, SC_ERUNTIME, "plan", "", "out of memory");
    else
        rc = grid_run(q, grid, &b, &p->st, err);
    free(b.lays);
    free(b.gb);
    free(b.pts);
    free(b.evals);
    ps_grid_free(grid);
    if (p) {
        p->cs = b.cs;
        p->n = b.n;
    } else {
        free(b.cs);
    }
    if (!rc)
        rc = rank_and_judge(q, p, err);
    if (rc) {
        pl_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

void pl_free(pl_plan *p)
{
    if (!p)
        return;
    free(p->cs);
    free(p);
}

size_t pl_n(const pl_plan *p) { return p->n; }
const ps_cand *pl_cand(const pl_plan *p, size_t i) { return i < p->n ? &p->cs[i] : NULL; }
const pl_stats *pl_stats_of(const pl_plan *p) { return &p->st; }
const char *pl_why(const pl_plan *p) { return p->why; }
const pl_verdict *pl_verdict_of(const pl_plan *p) { return p->has_verdict ? &p->v : NULL; }
