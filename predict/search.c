/* search.c — plan's candidates, ranking and sensitivity (see search.h). Every number comes from
 * the front door (pred_eval_finite); nothing here prints. */
#include "search.h"

#include "../model/layout_kind.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* Layout families `--layouts` can name: one per layout kind, by the kind's name (spec_layout's
 * table), then torchtitan's N-D FSDP2 families; a family stands for every valid member. */
static const char *const FSDP2_NAMES[PS_N_FSDP2] = {"fsdp2-tp", "fsdp2-pp"};

int ps_n_families(void) { return spec_layout_n_kinds() + PS_N_FSDP2; }

const char *ps_family_name(int k)
{
    int nk = spec_layout_n_kinds();
    if (k >= nk && k < nk + PS_N_FSDP2)
        return FSDP2_NAMES[k - nk];
    return spec_layout_kind_name((spec_layout_kind)k);
}

unsigned ps_fsdp2_bit(int which) { return PS_FAM(spec_layout_n_kinds() + which); }

unsigned ps_fsdp2_families(void) { return ps_fsdp2_bit(PS_FSDP2_TP) | ps_fsdp2_bit(PS_FSDP2_PP); }

int ps_is_fsdp2_nd(const spec_layout *l) { return l->kind == LAYOUT_ZERO3 && (l->t > 1 || l->pp > 1); }

unsigned ps_family_mask(const char *arg)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", arg);
    unsigned mask = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!strcmp(t, "all")) {
            mask |= ~0u;
            continue;
        }
        int k = -1;
        for (int i = 0; i < ps_n_families(); i++)
            if (!strcmp(t, ps_family_name(i)))
                k = i;
        if (k < 0)
            return 0;
        mask |= PS_FAM(k);
    }
    return mask;
}

int ps_layouts(const spec_cluster *c, const spec_model *m, int nodes, unsigned mask, const char *placement,
               spec_layout *out, int max)
{
    layout_cand_in in = {c, m, nodes, placement};
    return layout_kind_candidates(&in, mask, out, max); /* PS_FAM(k) is the row's bit k */
}

void ps_canon_axonn(spec_layout *l, int N) { layout_kind_canon(l, N); }

/* ---- torchtitan's N-D FSDP2 candidates ------------------------------------------------------ */

/* One spelling parsed (spec_layout_parse: the same fields a user's --layout gets) and appended
 * when the cluster and the model take it. */
static int fsdp2_push(const spec_cluster *c, const spec_model *m, int nodes, const char *s, spec_layout *out, int n,
                      int max)
{
    spec_layout l;
    if (n >= max || spec_layout_parse(s, &l, NULL) || spec_layout_check(&l, c, nodes, NULL) ||
        spec_layout_check_model(&l, m, NULL))
        return n;
    out[n] = l;
    return n + 1;
}

/* dp x t x p (p = 1: no pipeline) with each schedule and async-TP setting that applies. Async TP
 * only compiled: torchtitan's parallelize_llama refuses it in eager ("Async TP requires
 * --training.compile", cli/common.c's note on a given layout). GPipe is not tried: its bubble is
 * 1F1B's ((p - 1) / m of the ideal time: Narayanan et al. SC'21 §2.2.1) with all m micro-batches' activations
 * held instead of p; on 405B, 64 DGX-H100 nodes, fsdp2:dp=8,t=8,p=8 at m = 8 (micro-batch 1,
 * --stack torchtitan-compile, predict --engine model) gpipe gives 13.126 s and 54.1 GiB against
 * 1f1b's 13.105 s and 50.6 GiB (after smallm27's stream-K GEMMs; 13.349 / 13.328 s before). */
static int fsdp2_cands_tp(const spec_cluster *c, const spec_model *m, int nodes, int t, int pp, int compiled,
                          spec_layout *out, int n, int max)
{
    static const char *const SCHED[2] = {"1f1b", "interleaved-1f1b"};
    const int dp = nodes * c->gpus_per_node / (t * pp);
    for (int atp = 0; atp <= (t > 1 && compiled); atp++)
        for (int si = 0; si < (pp > 1 ? 2 : 1); si++) {
            /* interleaved: two stages per rank (spec_layout.c), each an even share of the layers */
            if (si == 1 && m->layers % (2 * pp))
                continue;
            char s[96];
            if (pp > 1)
                snprintf(s, sizeof s, "fsdp2:dp=%d,t=%d,p=%d%s,schedule=%s", dp, t, pp, atp ? ",asynctp=1" : "",
                         SCHED[si]);
            else
                snprintf(s, sizeof s, "fsdp2:dp=%d,t=%d%s", dp, t, atp ? ",asynctp=1" : "");
            n = fsdp2_push(c, m, nodes, s, out, n, max);
        }
    return n;
}

int ps_fsdp2_layouts(const spec_cluster *c, const spec_model *m, int nodes, unsigned mask, int compiled,
                     spec_layout *out, int n, int max)
{
    const int G = c->gpus_per_node, N = nodes * G;
    /* TP inside a node (zero3_check: t divides the GPUs per node): 2, 4, 8 on 8-GPU nodes; 1 for
     * FSDP2 x pipeline alone */
    static const int TS[4] = {1, 2, 4, 8};
    for (int ti = 0; ti < 4; ti++) {
        int t = TS[ti];
        if (G % t || N % t)
            continue;
        if (t > 1 && (mask & ps_fsdp2_bit(PS_FSDP2_TP)))
            n = fsdp2_cands_tp(c, m, nodes, t, 1, compiled, out, n, max);
        if (!(mask & ps_fsdp2_bit(PS_FSDP2_PP)))
            continue;
        for (int pp = 2; pp <= m->layers && pp <= N / t; pp++) /* even stages: p divides the layers */
            if (m->layers % pp == 0 && (N / t) % pp == 0)
                n = fsdp2_cands_tp(c, m, nodes, t, pp, compiled, out, n, max);
    }
    return n;
}

/* torchtitan's build_pipeline_schedule warns when n_microbatches < pipeline_parallel_degree x
 * len(stages) ("may result in a bubble in the pipeline": pytorch/torchtitan@fb3b230e2a050885057a1a02f167658b0cb6c5ac
 * torchtitan/distributed/pipeline_parallel.py L74-79); the interleaved schedule's multiple of p is
 * the row's own check (layout_dp.c zero3_check_training). */
int ps_pipe_split_bad(const spec_layout *l, const spec_training *t)
{
    if (!ps_is_fsdp2_nd(l) || l->pp <= 1)
        return 0;
    const int vp = l->vp > 1 ? l->vp : 1;
    return t->grad_accum < l->pp * vp || spec_layout_check_training(l, t, NULL) != 0;
}

double ps_score(ps_objective obj, const ps_cand *c)
{
    return obj == PS_COST ? -c->usd_per_msample : c->pt.r.samples_per_s;
}

double ps_merit(ps_objective obj, const ps_cand *c)
{
    return obj == PS_COST ? 1.0 / c->usd_per_msample : c->pt.r.samples_per_s;
}

int ps_eval(const spec_cluster *c, const spec_model *m, const cost_calib *cal, ps_objective obj, pred_engine e,
            int nodes, const spec_layout *l, const spec_training *tr, ps_cand *out, sc_err *err)
{
    return ps_eval_memo(c, m, cal, obj, e, nodes, l, tr, NULL, out, err);
}

int ps_eval_memo(const spec_cluster *c, const spec_model *m, const cost_calib *cal, ps_objective obj, pred_engine e,
                 int nodes, const spec_layout *l, const spec_training *tr, an_memo *memo, ps_cand *out, sc_err *err)
{
    pred_input in = {c, m, tr, nodes, l, cal, memo};
    int rc = pred_eval_finite(&in, e, NULL, &out->pt, err);
    if (rc)
        return rc;
    out->usd_per_msample = c->price_usd_per_hour * nodes / 3600.0 / out->pt.r.samples_per_s * 1e6;
    out->score = ps_score(obj, out);
    out->confirmed = e == PRED_SIM;
    out->twins = 0;
    return 0;
}

/* ---- the grid on every core ---------------------------------------------------------------- */

/* Points a worker claims at once: few claims (one atomic add per run), neighbouring points on one
 * thread (plan's share a node count and micro-batch: memo hits), and a grid smaller than two
 * runs stays on the calling thread. */
#define GRID_RUN 16

struct ps_grid {
    int threads;
    an_memo *memo[]; /* one per thread */
};

ps_grid *ps_grid_new(int threads)
{
    if (threads <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 0 ? (int)cores : 1;
    }
    if (threads > 1024)
        threads = 1024;
    ps_grid *g = calloc(1, sizeof *g + (size_t)threads * sizeof g->memo[0]);
    if (!g)
        return NULL;
    g->threads = threads;
    for (int i = 0; i < threads; i++)
        if (!(g->memo[i] = an_memo_new())) {
            ps_grid_free(g);
            return NULL;
        }
    return g;
}

void ps_grid_free(ps_grid *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->threads; i++)
        an_memo_free(g->memo[i]);
    free(g);
}

int ps_grid_threads(const ps_grid *g) { return g->threads; }

/* One worker: what it reads (shared, never written), the two counters every worker shares, its
 * memo, and its own first failure. */
typedef struct grid_job {
    const spec_cluster *c;
    const spec_model *m;
    const cost_calib *cal;
    ps_objective obj;
    const ps_point *pts;
    size_t n;
    ps_cand *out;
    atomic_size_t *next; /* the first point no worker has claimed                       */
    atomic_size_t *fail; /* the lowest point known to have failed (n: none so far)       */
    an_memo *memo;
    size_t fail_i; /* this worker's first failing point (n: none)                      */
    int rc;
    sc_err err;
} grid_job;

/* Claim runs in increasing order until none is left or every unclaimed point lies past a known
 * failure. Points before the lowest failure are therefore all evaluated, so that failure is the
 * first in order: the one a single loop would have stopped at. */
static void *grid_worker(void *arg)
{
    grid_job *j = arg;
    for (;;) {
        size_t lo = atomic_fetch_add(j->next, (size_t)GRID_RUN);
        if (lo >= atomic_load(j->fail)) /* past the end, or past a failure */
            return NULL;
        size_t hi = lo + GRID_RUN < j->n ? lo + GRID_RUN : j->n;
        for (size_t i = lo; i < hi; i++) {
            const ps_point *p = &j->pts[i];
            sc_err e;
            int rc = ps_eval_memo(j->c, j->m, j->cal, j->obj, PRED_MODEL, p->nodes, &p->layout, &p->training, j->memo,
                                  &j->out[i], &e);
            if (!rc)
                continue;
            if (i < j->fail_i) {
                j->fail_i = i;
                j->rc = rc;
                j->err = e;
            }
            size_t f = atomic_load(j->fail);
            while (i < f && !atomic_compare_exchange_weak(j->fail, &f, i))
                ;
            return NULL; /* every later point of this worker lies past i */
        }
    }
}

int ps_grid_eval(ps_grid *g, const spec_cluster *c, const spec_model *m, const cost_calib *cal, ps_objective obj,
                 const ps_point *pts, size_t n, ps_cand *out, size_t *n_ok, sc_err *err)
{
    size_t runs = (n + GRID_RUN - 1) / GRID_RUN;
    int W = (size_t)g->threads < runs ? g->threads : (int)(runs > 0 ? runs : 1);
    atomic_size_t next, fail;
    atomic_init(&next, 0);
    atomic_init(&fail, n);
    grid_job stack_jobs[8];
    pthread_t stack_tid[8];
    char stack_started[8];
    grid_job *jobs = W <= 8 ? stack_jobs : malloc((size_t)W * sizeof *jobs);
    pthread_t *tid = W <= 8 ? stack_tid : malloc((size_t)W * sizeof *tid);
    char *started = W <= 8 ? stack_started : calloc((size_t)W, 1);
    if (!jobs || !tid || !started) { /* no room for the threads' bookkeeping: one worker */
        if (jobs != stack_jobs)
            free(jobs);
        if (tid != stack_tid)
            free(tid);
        if (started != stack_started)
            free(started);
        jobs = stack_jobs, tid = stack_tid, started = stack_started;
        W = 1;
    }
    for (int w = 0; w < W; w++) {
        jobs[w] = (grid_job){.c = c, .m = m, .cal = cal, .obj = obj, .pts = pts, .n = n, .out = out, .next = &next,
                             .fail = &fail, .memo = g->memo[w], .fail_i = n};
        started[w] = w > 0 && pthread_create(&tid[w], NULL, grid_worker, &jobs[w]) == 0;
    }
    grid_worker(&jobs[0]);
    for (int w = 1; w < W; w++) {
        if (started[w])
            pthread_join(tid[w], NULL);
        else /* the thread could not start: its memo's share runs here (whatever is left) */
            grid_worker(&jobs[w]);
    }
    int rc = 0;
    size_t first = n;
    for (int w = 0; w < W; w++)
        if (jobs[w].fail_i < first) {
            first = jobs[w].fail_i;
            rc = jobs[w].rc;
            *err = jobs[w].err;
        }
    if (n_ok)
        *n_ok = first;
    if (jobs != stack_jobs)
        free(jobs);
    if (tid != stack_tid)
        free(tid);
    if (started != stack_started)
        free(started);
    return rc;
}

void ps_headroom(ps_cand *c, double hbm, double headroom)
{
    if (c->pt.r.mem.fits && c->pt.r.mem.total + headroom > hbm) { /* fits, but not with the headroom */
        c->pt.r.mem.fits = 0;
        c->pt.r.mem.short_by = c->pt.r.mem.total + headroom - hbm;
    } else if (!c->pt.r.mem.fits && c->pt.r.mem.short_by > 0) {
        c->pt.r.mem.short_by += headroom;
    }
}

double ps_oom_key(const mem_breakdown *m)
{
    double sb, need, cap;
    if (m->short_by > 0)
        return m->short_by;
    return mem_short_where(m, &sb, &need, &cap) ? 1e30 + sb : 0;
}

int ps_cmp(const void *a, const void *b)
{
    const ps_cand *p = a, *q = b;
    if (p->score != q->score)
        return p->score < q->score ? 1 : -1;
    if (p->pt.r.mem.total != q->pt.r.mem.total)
        return p->pt.r.mem.total < q->pt.r.mem.total ? -1 : 1;
    return p->pt.nodes - q->pt.nodes;
}

/* Candidates with identical numbers (AxoNN placements or layouts that build the same
 * communicators) are one choice: keep the first, count the rest. They sort next to each other:
 * same score, same memory, same nodes. */
size_t ps_fold_twins(ps_cand *cs, size_t n)
{
    size_t kept_n = 0;
    for (size_t i = 0; i < n; i++) {
        int twin = 0;
        for (size_t j = kept_n; j-- > 0 && cs[j].score == cs[i].score && !twin;)
            twin = cs[j].pt.nodes == cs[i].pt.nodes && cs[j].pt.training.micro_batch == cs[i].pt.training.micro_batch &&
                   cs[j].pt.r.step_s == cs[i].pt.r.step_s && cs[j].pt.r.mem.total == cs[i].pt.r.mem.total &&
                   (cs[j].twins++, 1);
        if (!twin)
            cs[kept_n++] = cs[i];
    }
    return kept_n;
}

static const char *const SENS_NAMES[PS_N_SENS] = {"inter-node (NIC) bandwidth", "NVLink bandwidth", "GPU peak FLOP/s"};

const char *ps_sens_name(int k) { return k >= 0 && k < PS_N_SENS ? SENS_NAMES[k] : ""; }

static int flips(const spec_cluster *c0, const spec_model *m, const cost_calib *cal, ps_objective obj,
                 const ps_cand *a, const ps_cand *b, double a0, double b0, int k, double f)
{
    spec_cluster c = *c0;
    if (k == 0)
        c.nic_bw_Bps *= f;
    else if (k == 1)
        c.fabric.link_bw_Bps *= f, c.pcie_bw_Bps *= f;
    else
        c.gpu.peak_flops *= f;
    ps_cand x, y;
    sc_err err;
    if (ps_eval(&c, m, cal, obj, PRED_MODEL, a->pt.nodes, &a->pt.layout, &a->pt.training, &x, &err) ||
        ps_eval(&c, m, cal, obj, PRED_MODEL, b->pt.nodes, &b->pt.layout, &b->pt.training, &y, &err))
        return 0;
    return ps_merit(obj, b) * (ps_merit(obj, &y) / b0) > ps_merit(obj, a) * (ps_merit(obj, &x) / a0);
}

int ps_sensitivity(const spec_cluster *c, const spec_model *m, const cost_calib *cal, ps_objective obj,
                   const ps_cand *a, const ps_cand *b, double *f_out)
{
    ps_cand x, y;
    sc_err err;
    if (ps_eval(c, m, cal, obj, PRED_MODEL, a->pt.nodes, &a->pt.layout, &a->pt.training, &x, &err) ||
        ps_eval(c, m, cal, obj, PRED_MODEL, b->pt.nodes, &b->pt.layout, &b->pt.training, &y, &err))
        return -1;
    double a0 = ps_merit(obj, &x), b0 = ps_merit(obj, &y), best_f = 0;
    int best_k = -1;
    for (int k = 0; k < PS_N_SENS; k++)
        for (int dir = -1; dir <= 1; dir += 2)
            for (int step = 1; step <= 16; step++) {
                double f = pow(2.0, dir * step / 8.0); /* 2^(1/8) steps up to 4x */
                if (!flips(c, m, cal, obj, a, b, a0, b0, k, f))
                    continue;
                double lo = pow(2.0, dir * (step - 1) / 8.0), hi = f; /* bisect on the log scale */
                for (int it = 0; it < 8; it++) {
                    double mid = sqrt(lo * hi);
                    if (flips(c, m, cal, obj, a, b, a0, b0, k, mid))
                        hi = mid;
                    else
                        lo = mid;
                }
                if (best_k < 0 || fabs(log(hi)) < fabs(log(best_f)))
                    best_k = k, best_f = hi;
                break;
            }
    *f_out = best_f;
    return best_k;
}

double ps_pct_change(double f) { return 100 * fabs(f - 1); }

ps_verdict ps_verdict_of(double gap_pct, int sens, double factor, double uncertainty)
{
    if (sens >= 0 && ps_pct_change(factor) <= 100 * uncertainty)
        return PS_TOO_CLOSE;
    if (gap_pct < 1.0)
        return PS_TIE;
    return PS_ROBUST;
}

void ps_judge(const spec_cluster *c, const spec_model *m, const cost_calib *cal, ps_objective obj,
              const ps_cand *a, const ps_cand *b, double uncertainty, ps_judgement *out)
{
    out->factor = 1;
    out->gap_pct = 100 * (ps_merit(obj, a) / ps_merit(obj, b) - 1);
    out->sens = ps_sensitivity(c, m, cal, obj, a, b, &out->factor);
    out->verdict = ps_verdict_of(out->gap_pct, out->sens, out->factor, uncertainty);
}

/* ---- fair ratios ------------------------------------------------------------------------------ */

const ps_cand *ps_best_where(const ps_cand *all, size_t n, ps_keep_fn keep, const void *ctx)
{
    const ps_cand *best = NULL;
    for (size_t i = 0; i < n; i++)
        if (keep(&all[i], ctx) && (!best || all[i].score > best->score))
            best = &all[i];
    return best;
}

int ps_pair_same_engine(const spec_cluster *c, const spec_model *m, const cost_calib *cal, ps_objective obj,
                        const ps_cand *a, const ps_cand *b, int sim_ok, ps_pair *out, sc_err *err)
{
    out->a = *a;
    out->b = *b;
    int rc = 0;
    if (a->confirmed != b->confirmed) {
        int to_sim = sim_ok; /* the engine both end on */
        ps_cand *redo = (a->confirmed != to_sim) ? &out->a : &out->b;
        const ps_cand was = *redo; /* the inputs, apart from the output they are re-run into */
        rc = ps_eval(c, m, cal, obj, to_sim ? PRED_SIM : PRED_MODEL, was.pt.nodes, &was.pt.layout, &was.pt.training,
                     redo, err);
        redo->twins = was.twins;
    }
    if (rc)
        return rc;
    out->engine = out->a.confirmed ? PRED_SIM : PRED_MODEL;
    out->ratio = out->a.pt.r.samples_per_s / out->b.pt.r.samples_per_s;
    return 0;
}

const char *ps_engine_both(pred_engine e) { return e == PRED_SIM ? "both simulated" : "both analytical"; }
