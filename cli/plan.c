/* plan.c — `shardcast plan`: which layout, partition size p, micro-batch split and node count to
 * use on a cluster for a model. Enumerates the candidates, drops those that do not fit (saying
 * by how much), ranks the rest with the analytical model, confirms the top ones with the
 * simulator, and says why the winner wins — or that the top two are too close to call, naming
 * the parameter the choice is most sensitive to. Not here: the engines themselves. */
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "eval.h"
#include "../predict/search.h"
#include "../model/framework.h"
#include "../model/layout_kind.h"

/* The help: HELP_HEAD, the --layouts entry's family list (help_families), HELP_TAIL. */
static const char HELP_HEAD[] =
    "usage: shardcast plan --cluster C --model M --nodes LIST [options]\n\n"
    "Recommends a layout (ZeRO-1/2/3, MiCS at every valid p with hierarchical all-gather on and\n"
    "off, HSDP, ZeRO++ hpZ, DDP, Megatron tensor parallelism, every AxoNN grid and placement,\n"
    "ZeRO-Offload, LuWu where the cluster has an in-network optimizer node), a micro-batch /\n"
    "accumulation split and a node count. Layouts that do not fit in HBM are dropped (the\n"
    "closest is reported with its shortfall); the rest are ranked with the analytical model and\n"
    "the top --confirm are re-run with the simulator.\n"
    "Candidates with identical numbers (placements of the same communicators) are shown once.\n"
    "The top two are compared by their ratio, re-evaluated with NIC bandwidth, NVLink bandwidth\n"
    "and peak FLOP/s each scaled from 1/4x to 4x (what both depend on alike cancels): when a\n"
    "change within --uncertainty reorders them, the plan says it is too close to call and names\n"
    "that parameter; otherwise it says how large a change would. No candidate exits 1.\n\n" CLI_COMMON_HELP
    "  --global-batch B       sequences (not tokens) per optimizer step (default: micro-batch x grad-accum\n"
    "                         x GPUs); over 2^26 tokens per step is refused as a likely token count\n"
    "  --objective O          throughput (default: most samples/s) | cost ($ per million samples)\n"
    "  --budget-usd-per-hour X  only node counts whose price per hour is within X\n"
    ;
static const char HELP_TAIL[] =
    "\n                         --framework runs; zero3-offload: parameters on GPU, host or\n"
    "                         NVMe x optimizer on host or NVMe, NVMe where the cluster has it;\n"
    "                         megatron: t, p, vp with sequence parallelism and\n"
    "                         the distributed optimizer, at the same global batch);\n"
    "                         --layout L adds one layout. Default: a scenario's layouts, else all\n"
    "  --confirm K            re-run the top K with the simulator (default 3; 0 = analytical only)\n"
    "  --uncertainty F        how far a cluster parameter may be off, for 'too close to call'\n"
    "                         (default: 2 sd from a fitted calibration's interval, else 0.10)\n"
    "  --headroom-GiB X       HBM kept free beyond the memory model's estimate (fragmentation,\n"
    "                         allocator peaks); default 10% of the GPU's HBM\n"
    "  --calibration F|NAME   cost-model parameters (default: configs/calibrations/<cluster>.json;\n"
    "                         defaults: the built-in values, no file)\n"
    "  --progress             progress on stderr even when it is not a terminal\n"
    "  --threads N            the grid's analytical evaluations and the simulations confirming the\n"
    "                         top candidates run on N threads (default: the machine's cores;\n"
    "                         results and output identical to --threads 1)\n";

/* Help lines are wrapped at HELP_WIDTH columns; option descriptions start at HELP_COL. */
enum { HELP_WIDTH = 90, HELP_COL = 25 };

/* One word of a wrapped help paragraph: on this line after a space, or first on the next. */
static void help_word(char *buf, size_t len, size_t *o, int *col, const char *word, const char *suffix)
{
    int w = (int)(strlen(word) + strlen(suffix));
    const char *sep = " ";
    if (*col + 1 + w > HELP_WIDTH) {
        *o += (size_t)snprintf(buf + *o, *o < len ? len - *o : 0, "\n%*s", HELP_COL, "");
        *col = HELP_COL;
        sep = "";
    }
    *o += (size_t)snprintf(buf + *o, *o < len ? len - *o : 0, "%s%s%s", sep, word, suffix);
    *col += (int)strlen(sep) + w;
}

/* The start of the --layouts entry: "all" and every family, i.e. every layout kind's name in the
 * one table of kinds (model/spec_layout.c, through ps_family_name), so that a new kind is listed
 * without an edit here; wrapped greedily under the description column, up to where HELP_TAIL
 * goes on. Returns the length written (as snprintf). */
static size_t help_families(char *buf, size_t len)
{
    size_t o = (size_t)snprintf(buf, len, "%-*s%s", HELP_COL, "  --layouts LIST", "families");
    int col = HELP_COL + (int)strlen("families");
    static const char *const lead[] = {"to", "search:", "all,"}, *const trail[] = {"(each:", "every", "valid", "member", "the"};
    for (size_t i = 0; i < sizeof lead / sizeof lead[0]; i++)
        help_word(buf, len, &o, &col, lead[i], "");
    for (int k = 0; k < ps_n_families(); k++)
        help_word(buf, len, &o, &col, ps_family_name(k), k + 1 < ps_n_families() ? "," : "");
    for (size_t i = 0; i < sizeof trail / sizeof trail[0]; i++)
        help_word(buf, len, &o, &col, trail[i], "");
    return o;
}

typedef struct opts {
    const char *calibration;
    double global_batch, budget, uncertainty, headroom_GiB; /* headroom < 0: 10% of HBM */
    ps_objective objective;
    int confirm, progress, uncertainty_set;
    int threads; /* threads for the grid and the confirming simulations (0 = one per online core) */
} opts;

static int own(int opt, const char *arg, void *ctx)
{
    opts *o = ctx;
    sc_err err;
    char *end;
    switch (opt) {
    case 2000: o->calibration = arg; return 0;
    case 2001:
        o->global_batch = strtod(arg, &end);
        if (end == arg || *end || !(o->global_batch >= 1 && o->global_batch <= 1e9) || o->global_batch != floor(o->global_batch))
            return cli_fail(&err, sc_err_set(&err, SC_EINPUT, "--global-batch", "", "expected an integer from 1 to 1e9, got \"%s\"", arg));
        return 0;
    case 2002:
        if (!strcmp(arg, "throughput"))
            o->objective = PS_THROUGHPUT;
        else if (!strcmp(arg, "cost"))
            o->objective = PS_COST;
        else
            return cli_fail(&err, sc_err_set(&err, SC_EINPUT, "--objective", "", "expected throughput or cost, got \"%s\"", arg));
        return 0;
    case 2003:
        o->budget = strtod(arg, &end);
        if (end == arg || *end || !(o->budget >= 1e-6 && o->budget <= 1e9))
            return cli_fail(&err, sc_err_set(&err, SC_EINPUT, "--budget-usd-per-hour", "", "expected a number from 1e-6 to 1e9, got \"%s\"", arg));
        return 0;
    case 2005:
        o->confirm = (int)strtol(arg, &end, 10);
        if (end == arg || *end || o->confirm < 0 || o->confirm > 100)
            return cli_fail(&err, sc_err_set(&err, SC_EINPUT, "--confirm", "", "expected 0 to 100, got \"%s\"", arg));
        return 0;
    case 2006:
        o->uncertainty = strtod(arg, &end);
        o->uncertainty_set = 1;
        if (end == arg || *end || !(o->uncertainty >= 0 && o->uncertainty < 1))
            return cli_fail(&err, sc_err_set(&err, SC_EINPUT, "--uncertainty", "", "expected a fraction from 0 to 1, got \"%s\"", arg));
        return 0;
    case 2007: o->progress = 1; return 0;
    case 2008:
        o->headroom_GiB = strtod(arg, &end);
        if (end == arg || *end || !(o->headroom_GiB >= 0 && o->headroom_GiB < 1e6))
            return cli_fail(&err, sc_err_set(&err, SC_EINPUT, "--headroom-GiB", "", "expected a number of GiB >= 0, got \"%s\"", arg));
        return 0;
    case 2009:
        o->threads = (int)strtol(arg, &end, 10);
        if (end == arg || *end || o->threads < 1 || o->threads > 1024)
            return cli_fail(&err, sc_err_set(&err, SC_EINPUT, "--threads", "", "expected 1 to 1024, got \"%s\"", arg));
        return 0;
    }
    return 0;
}

/* The ratios plan prints compare best against best on one engine: the winner against the best
 * rival of a kind (its best split), both simulated (the rival simulated too when it was not and
 * fits the simulator's budget) or else both analytical, and say which. */
typedef struct rival_of {
    spec_layout_kind kind; /* the rival's kind, or -1: any layout without a pipeline */
    int nodes;
    const ps_cand *not_this;
} rival_of;

static int keep_rival(const ps_cand *c, const void *ctx)
{
    const rival_of *r = ctx;
    if (c == r->not_this || c->pt.nodes != r->nodes)
        return 0;
    if ((int)r->kind >= 0)
        return c->pt.layout.kind == r->kind;
    return c->pt.layout.pp <= 1; /* only megatron's grammar sets a pipeline depth (spec.h) */
}

/* "; 1.05x the best zero3 (zero3, micro-batch 4 x 1), both simulated", or "" when there is none. */
static void fair_vs(const cli_setup *s, const cli_calib *cal, ps_objective obj, const ps_cand *best,
                    const ps_cand *all, int n, rival_of r, const char *what, char *out, size_t len)
{
    out[0] = 0;
    r.not_this = best;
    const ps_cand *rival = ps_best_where(all, (size_t)n, keep_rival, &r);
    if (!rival)
        return;
    int sim_ok = 1;
    sc_err err;
    if (best->confirmed && !rival->confirmed) /* simulate it too, unless that is over budget */
        sim_ok = !cli_sim_budget(s, &rival->pt.training, rival->pt.nodes, &rival->pt.layout, NULL, 120, "--confirm 0",
                                 &err);
    else if (!best->confirmed)
        sim_ok = 0;
    ps_pair pr;
    char lay[96];
    spec_layout_str(&rival->pt.layout, lay, sizeof lay);
    if (ps_pair_same_engine(&s->cluster, &s->model, &cal->cal, obj, best, rival, sim_ok, &pr, &err)) {
        snprintf(out, len, "; not compared with the best %s (%s): %.120s", what, lay, err.text);
        return;
    }
    snprintf(out, len, "; %.2fx the best %s (%s with its best split, micro-batch %d x %d), %s", pr.ratio, what, lay,
             rival->pt.training.micro_batch, rival->pt.training.grad_accum, ps_engine_both(pr.engine));
}

/* What layout_explain_in's comparison needs: fair_vs's arguments but the rival. */
typedef struct why_ctx {
    const cli_setup *s;
    const cli_calib *cal;
    ps_objective obj;
    const ps_cand *best, *all;
    int n;
} why_ctx;

static void why_vs(const void *ctx, int kind, const char *what, char *out, size_t len)
{
    const why_ctx *w = ctx;
    fair_vs(w->s, w->cal, w->obj, w->best, w->all, w->n, (rival_of){(spec_layout_kind)kind, w->best->pt.nodes, NULL},
            what, out, len);
}

/* Why the winner wins: its kind's row says it (layout_kind_explain). */
static void why(const cli_setup *s, const cli_calib *cal, ps_objective obj, const ps_cand *best, const ps_cand *all,
                int n, char *out, size_t len)
{
    const spec_layout *l = &best->pt.layout;
    int smallest = 1;
    for (int i = 0; i < n; i++)
        if (all[i].pt.layout.kind == l->kind && all[i].pt.layout.p < l->p && all[i].pt.nodes == best->pt.nodes)
            smallest = 0;
    why_ctx w = {s, cal, obj, best, all, n};
    layout_explain_in x = {&s->cluster, &s->model, &cal->cal, l, &best->pt.training, best->pt.nodes, best->pt.gpus,
                           best->pt.r.mem.total, best->pt.r.bubble_frac, smallest, why_vs, &w};
    layout_kind_explain(&x, out, len);
}

/* The top candidates confirmed by the simulator, in parallel: worker w of W takes candidates
 * w, w + W, ... into their own slots (nothing shared is written; the simulator keeps no global
 * state), and the caller reads the slots in order, so results, the first error reported and the
 * output are those of one thread. */
typedef struct confirm_job {
    const cli_setup *s;
    const cli_calib *cal;
    const opts *o;
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
            j->rc[i] = ps_eval(&j->s->cluster, &j->s->model, &j->cal->cal, j->o->objective, ENGINE_SIM,
                               j->in[i].pt.nodes, &j->in[i].pt.layout, &j->in[i].pt.training, &j->out[i], &j->err[i]);
    return NULL;
}

/* Confirm cs[0..k) with the simulator on up to o->threads threads; 0 or the error of the first
 * candidate (in rank order) that failed, in *err. Candidates too large to simulate within the
 * budget keep their analytical answer (said on stderr). */
static int confirm_top(const cli_setup *s, const cli_calib *cal, const opts *o, ps_cand *cs, int k, sc_err *err)
{
    if (k <= 0)
        return 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int W = o->threads > 0 ? o->threads : cores > 0 ? (int)cores : 1;
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
        if (cli_sim_budget(s, &cs[i].pt.training, cs[i].pt.nodes, &cs[i].pt.layout, NULL, 120, "--confirm 0", &why_not)) {
            char lay[96];
            fprintf(stderr, "plan: not simulating %s on %d nodes (kept the analytical answer): %s\n",
                    spec_layout_str(&cs[i].pt.layout, lay, sizeof lay), cs[i].pt.nodes, why_not.text);
            skip[i] = 1;
        }
    }
    for (int w = 0; w < W; w++) {
        jobs[w] = (confirm_job){s, cal, o, cs, out, rcs, errs, skip, k, w, W};
        if (w > 0)
            started[w] = pthread_create(&tid[w], NULL, confirm_worker, &jobs[w]) == 0;
    }
    confirm_worker(&jobs[0]);
    for (int w = 1; w < W; w++) {
        if (started[w])
            pthread_join(tid[w], NULL);
        else /* the thread could not start: its share runs here */
            confirm_worker(&jobs[w]);
    }
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

/* A global batch that only makes sense as tokens: --global-batch counts sequences, and more than
 * 2^26 tokens per step (67M) is beyond any published run (GPT-3: 3.2M tokens, Brown et al. 2020
 * Table 2.1; Llama 3 405B: 16M, Llama Team 2024 §3.4.1; BERT with LAMB: 65536 x 128 = 8.4M, You et
 * al. 2020 §5), while a token count given as sequences lands there (4194304 x 2048 = 8.6e9). */
static int batch_is_sequences(const cli_setup *s, double global_batch, sc_err *err)
{
    const double seq = s->model.seq_len, tokens = global_batch * seq;
    if (global_batch <= 0 || tokens <= 67108864.0)
        return 0;
    if (fmod(global_batch, seq) == 0)
        return sc_err_set(err, SC_EINPUT, "--global-batch", "",
                          "counts sequences: %.0f sequences of %.0f tokens is %.2g tokens per step; if %.0f is tokens, "
                          "give --global-batch %.0f",
                          global_batch, seq, tokens, global_batch, global_batch / seq);
    return sc_err_set(err, SC_EINPUT, "--global-batch", "",
                      "counts sequences: %.0f sequences of %.0f tokens is %.2g tokens per step, beyond any published "
                      "run (67M); give sequences per step",
                      global_batch, seq, tokens);
}


/* 1 when the command line used --layouts (and not --layout): --layout and --layouts share an
 * option code, so a layout that does not parse is blamed on the one the user wrote. */
static int said_layouts(int argc, char **argv)
{
    int plural = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            break;
        if (!strcmp(argv[i], "--layout") || !strncmp(argv[i], "--layout=", 9))
            return 0;
        plural |= !strcmp(argv[i], "--layouts") || !strncmp(argv[i], "--layouts=", 10);
    }
    return plural;
}

int cmd_plan(int argc, char **argv)
{
    static const struct option extra[] = {
        {"calibration", required_argument, 0, 2000}, {"global-batch", required_argument, 0, 2001},
        {"objective", required_argument, 0, 2002},   {"budget-usd-per-hour", required_argument, 0, 2003},
        {"confirm", required_argument, 0, 2005},
        {"uncertainty", required_argument, 0, 2006}, {"progress", no_argument, 0, 2007},
        {"headroom-GiB", required_argument, 0, 2008}, {"threads", required_argument, 0, 2009}};
    cli_setup s;
    opts o = {0};
    o.confirm = 3;
    o.uncertainty = 0.10;
    o.headroom_GiB = -1;
    cli_setup_init(&s, argv[0]);
    int rc;
    char help[sizeof HELP_HEAD + sizeof HELP_TAIL + 1024];
    size_t ho = (size_t)snprintf(help, sizeof help, "%s", HELP_HEAD);
    ho += help_families(help + ho, sizeof help - ho);
    snprintf(help + ho, ho < sizeof help ? sizeof help - ho : 0, "%s", HELP_TAIL);
    if (cli_args(argc, argv, "plan", help, extra, (int)(sizeof extra / sizeof extra[0]), &s, own, &o, 0, NULL, &rc))
        return rc;
    /* --layouts takes families (all, mics, tp, axonn, ...: every valid member) beside explicit
     * layouts; none given = all */
    unsigned mask = 0;
    int kept = 0, any_args = s.n_layout_args;
    for (int i = 0; i < s.n_layout_args; i++) {
        unsigned f = ps_family_mask(s.layout_args[i]);
        if (f)
            mask |= f;
        else
            s.layout_args[kept++] = s.layout_args[i];
    }
    s.n_layout_args = kept;
    sc_err err;
    cli_calib cal;
    int explicit_args = kept;
    if ((rc = cli_setup_load(&s, NEED_CLUSTER | NEED_MODEL | NEED_NODES, &err)) ||
        (rc = cli_calib_load(&s, o.calibration, &cal, &err))) {
        if (!strcmp(err.source, "--layout") && said_layouts(argc, argv)) /* the two share a parser */
            snprintf(err.source, sizeof err.source, "--layouts");
        return cli_fail(&err, rc);
    }
    if ((rc = batch_is_sequences(&s, o.global_batch, &err)))
        return cli_fail(&err, rc);
    int show = o.progress || isatty(2);
    /* memory kept free beyond the model's estimate: a plan at 39.9 of 40 GiB is not a plan */
    const double hbm = s.cluster.gpu.hbm_bytes;
    const double headroom = o.headroom_GiB >= 0 ? o.headroom_GiB * 1073741824.0 : 0.10 * hbm;
    /* nothing named: a scenario's layouts, else every family; families named without explicit
     * layouts replace a scenario's list */
    if (!any_args && !s.n_layouts)
        mask = ~0u;
    if (mask && !explicit_args)
        s.n_layouts = 0;
    if (mask != ~0u && (mask & spec_layout_kinds_at(SPEC_AT_INNET)) && !s.cluster.innet.present)
        return cli_fail(&err, sc_err_set(&err, SC_EINPUT, "--layouts", "",
                                         "luwu needs a cluster with an in_network_optimizer; %s has none", s.cluster.name));

    size_t cap = 4096, n = 0, n_oom = 0, pts_cap = 0;
    enum { MAX_LAYS = 8192 };
    ps_cand *cs = malloc(cap * sizeof *cs), *evals = NULL;
    spec_layout *lays = malloc(MAX_LAYS * sizeof *lays);
    ps_point *pts = NULL;
    /* the grid's threads, each with its memo of layer and collective times (same cal, cluster) */
    ps_grid *grid = ps_grid_new(o.threads);
    ps_cand closest_oom;
    int have_oom = 0;
    if (!cs || !lays || !grid) {
        rc = sc_err_set(&err, SC_ERUNTIME, "plan", "", "out of memory");
        goto grid_fail;
    }
    long tried = 0;
    int over_budget = 0, no_split = 0;
    char invalid_why[256] = ""; /* why an explicit layout was left out, the first time */
    for (int ni = 0; ni < s.n_nodes; ni++) {
        int nodes = s.nodes[ni], N = nodes * s.cluster.gpus_per_node;
        if (o.budget > 0 && nodes * s.cluster.price_usd_per_hour > o.budget) {
            over_budget++;
            continue;
        }
        int nl = mask ? ps_layouts(&s.cluster, &s.model, nodes, mask, s.placement, lays, MAX_LAYS) : 0;
        int n_fw = 0; /* only what the framework runs */
        for (int j = 0; j < nl; j++)
            if (!fw_check(s.training.framework, &lays[j], NULL))
                lays[n_fw++] = lays[j];
        nl = n_fw;
        for (int i = 0; i < s.n_layouts && nl < MAX_LAYS; i++) {
            char a[96], b[96];
            int dup = 0;
            spec_layout li = s.layouts[i];
            ps_canon_axonn(&li, N);
            spec_layout_str(&li, a, sizeof a);
            for (int j = 0; j < nl && !dup; j++)
                dup = !strcmp(a, spec_layout_str(&lays[j], b, sizeof b));
            sc_err why;
            if (!dup && !spec_layout_check(&s.layouts[i], &s.cluster, nodes, &why))
                lays[nl++] = li;
            else if (!dup && !invalid_why[0]) /* the first reason, for "no candidate" */
                snprintf(invalid_why, sizeof invalid_why, "%s", why.text);
        }
        /* micro-batch x accumulation splits of the per-GPU batch */
        double per_gpu = o.global_batch > 0 ? o.global_batch / N : (double)s.training.micro_batch * s.training.grad_accum;
        if (per_gpu < 1 || per_gpu != floor(per_gpu)) {
            no_split++;
            continue; /* the global batch does not split over this many GPUs */
        }
        /* this node count's points, in the order they are ranked and reported */
        size_t np = 0;
        for (int mb = 1; mb <= per_gpu && mb <= 64; mb *= 2) {
            if (fmod(per_gpu, mb) != 0)
                continue;
            spec_training tr = s.training;
            tr.micro_batch = mb;
            tr.grad_accum = (int)(per_gpu / mb);
            for (int li = 0; li < nl; li++) {
                spec_training tl = tr;
                int share = spec_layout_batch_share(&lays[li]);
                if (share > 1) {
                    /* the same global batch: a replica of t x p GPUs runs t p x the per-GPU share */
                    double rep_batch = per_gpu * share;
                    tl.grad_accum = (int)(rep_batch / mb);
                    if (tl.grad_accum < 1 || spec_layout_check_training(&lays[li], &tl, NULL))
                        continue;
                }
                if (np == pts_cap) {
                    size_t nc = pts_cap ? 2 * pts_cap : 1024;
                    ps_point *q = realloc(pts, nc * sizeof *pts);
                    ps_cand *e = q ? realloc(evals, nc * sizeof *evals) : NULL;
                    if (q)
                        pts = q;
                    if (!e) {
                        rc = sc_err_set(&err, SC_ERUNTIME, "plan", "", "out of memory");
                        goto grid_fail;
                    }
                    evals = e;
                    pts_cap = nc;
                }
                pts[np++] = (ps_point){nodes, lays[li], tl};
            }
        }
        /* evaluated on every thread, each into its own slot, then read in order: what follows
         * sees the results of one loop */
        size_t n_ok;
        int grc = ps_grid_eval(grid, &s.cluster, &s.model, &cal.cal, o.objective, pts, np, evals, &n_ok, &err);
        for (size_t i = 0; i < n_ok; i++) {
            ps_cand c = evals[i];
            tried++;
            c.twins = 0;
            ps_headroom(&c, hbm, headroom);
            if (show && tried % 256 == 0)
                fprintf(stderr, "\rplan: %ld candidates evaluated analytically (%d/%d node counts, now %d nodes)",
                        tried, ni + 1, s.n_nodes, nodes);
            if (!c.pt.r.mem.fits) {
                n_oom++;
                if (!have_oom || ps_oom_key(&c.pt.r.mem) < ps_oom_key(&closest_oom.pt.r.mem))
                    closest_oom = c, have_oom = 1;
                continue;
            }
            if (n == cap) {
                ps_cand *m = realloc(cs, 2 * cap * sizeof *cs);
                if (!m) {
                    rc = sc_err_set(&err, SC_ERUNTIME, "plan", "", "out of memory");
                    goto grid_fail;
                }
                cs = m;
                cap *= 2;
            }
            cs[n++] = c;
        }
        if (grc) {
            rc = grc;
            goto grid_fail;
        }
        if (show)
            fprintf(stderr, "\rplan: %ld candidates evaluated analytically (%d/%d node counts, now %d nodes)", tried, ni + 1,
                    s.n_nodes, nodes);
    }
    free(lays);
    free(pts);
    free(evals);
    ps_grid_free(grid);
    qsort(cs, n, sizeof *cs, ps_cmp);
    size_t kept_n = ps_fold_twins(cs, n); /* identical numbers: one choice */
    long n_twins = (long)(n - kept_n);
    n = kept_n;
    /* confirm the top ones with the simulator and re-rank them */
    int k = (int)n < o.confirm ? (int)n : o.confirm;
    if (show && k > 0)
        fprintf(stderr, "\rplan: simulating the top %d candidates                    ", k);
    if ((rc = confirm_top(&s, &cal, &o, cs, k, &err))) {
        free(cs);
        return cli_fail(&err, rc);
    }
    if (show)
        fprintf(stderr, "\n");
    qsort(cs, (size_t)k, sizeof *cs, cmp_engine_first);

    char reason[1024] = "", verdict[768] = "";
    int too_close = 0;
    const int cal_sd = !o.uncertainty_set && cli_calib_has_sd(&cal.cal);
    if (n) {
        why(&s, &cal, o.objective, &cs[0], cs, (int)n, reason, sizeof reason);
        if (n > 1) {
            /* a fitted calibration carries its own interval: two standard deviations of the
             * winner's step time, unless --uncertainty was given */
            if (cal_sd) {
                double sd = cli_step_spread(&s, &cal, &cs[0].pt.training, cs[0].pt.nodes, &cs[0].pt.layout, 64, 1);
                if (sd > 0 && isfinite(sd))
                    o.uncertainty = 2 * sd / cs[0].pt.r.step_s;
            }
            /* the runner-up on the winner's engine (simulated too when it was not and fits the budget) */
            ps_pair top2;
            sc_err perr;
            int sim_ok = cs[0].confirmed && !cli_sim_budget(&s, &cs[1].pt.training, cs[1].pt.nodes, &cs[1].pt.layout,
                                                             NULL, 120, "--confirm 0", &perr);
            if ((rc = ps_pair_same_engine(&s.cluster, &s.model, &cal.cal, o.objective, &cs[0], &cs[1], sim_ok, &top2,
                                          &err))) {
                free(cs);
                return cli_fail(&err, rc);
            }
            ps_judgement j;
            ps_judge(&s.cluster, &s.model, &cal.cal, o.objective, &top2.a, &top2.b, o.uncertainty, &j);
            double f = j.factor, gap = j.gap_pct;
            int ks = j.sens;
            char runner[96];
            spec_layout_str(&cs[1].pt.layout, runner, sizeof runner);
            char who[160];
            snprintf(who, sizeof who, "%s (%d nodes, micro-batch %d; %s)", runner, cs[1].pt.nodes,
                     cs[1].pt.training.micro_batch, ps_engine_both(top2.engine));
            if (j.verdict == PS_TOO_CLOSE) {
                too_close = 1;
                snprintf(verdict, sizeof verdict,
                         "too close to call: the runner-up %s is %.1f%% behind, and %s %s by %.0f%% (within the "
                         "%.0f%% uncertainty%s) puts it ahead; measure that before choosing (shardcast calibrate)",
                         who, gap, f < 1 ? "a drop in" : "a rise in", ps_sens_name(ks), ps_pct_change(f),
                         100 * o.uncertainty, cal_sd ? ", 2 sd from the calibration" : "");
            } else if (j.verdict == PS_TIE) {
                too_close = 1;
                snprintf(verdict, sizeof verdict,
                         "a tie: the runner-up %s is %.2f%% behind and %s; either will do", who, gap,
                         ks < 0 ? "no single cluster parameter within 4x reorders them (they depend on each alike)"
                               : "only a change beyond the uncertainty reorders them");
            } else if (ks >= 0) {
                snprintf(verdict, sizeof verdict,
                         "robust: the runner-up %s is %.1f%% behind; only %s %s by %.0f%% (beyond the %.0f%% "
                         "uncertainty) would put it ahead", who, gap, f < 1 ? "a drop in" : "a rise in", ps_sens_name(ks),
                         ps_pct_change(f), 100 * o.uncertainty);
            } else {
                snprintf(verdict, sizeof verdict,
                         "robust: the runner-up %s is %.1f%% behind, and no single cluster parameter within 4x "
                         "puts it ahead", who, gap);
            }
        }
    }
    /* why there is no candidate, when there is none */
    char none[512] = "";
    if (!n) {
        if (have_oom) {
            char lay[64];
            spec_layout_str(&closest_oom.pt.layout, lay, sizeof lay);
            double sb, need, tier_cap;
            const char *where = mem_short_where(&closest_oom.pt.r.mem, &sb, &need, &tier_cap);
            if (where && strcmp(where, "GPU")) /* fits the GPUs, not the offload tier */
                snprintf(none, sizeof none,
                         "no layout fits in %.1f GiB per GPU (%.0f GiB HBM less %.1f GiB headroom) and its offload "
                         "tiers: the closest, %s on %d nodes (micro-batch %d), fits the GPU but needs %.1f GiB of %s "
                         "per node, short by %.1f GiB; try more nodes",
                         cli_gib(hbm - headroom), cli_gib(hbm), cli_gib(headroom), lay, closest_oom.pt.nodes,
                         closest_oom.pt.training.micro_batch, cli_gib(need), !strcmp(where, "host") ? "host memory" : where,
                         cli_gib(sb));
            else
                snprintf(none, sizeof none,
                     "no layout fits in %.1f GiB per GPU (%.0f GiB HBM less %.1f GiB headroom): the closest, %s on %d "
                     "nodes (micro-batch %d), needs %.1f GiB per GPU, short by %.1f GiB; try more nodes%s",
                     cli_gib(hbm - headroom), cli_gib(hbm), cli_gib(headroom), lay, closest_oom.pt.nodes,
                     closest_oom.pt.training.micro_batch, cli_gib(closest_oom.pt.r.mem.total),
                     cli_gib(closest_oom.pt.r.mem.short_by),
                     s.training.act_ckpt ? "" : " or --checkpointing on");
        } else if (over_budget == s.n_nodes) {
            snprintf(none, sizeof none,
                     "no candidate: every node count is over --budget-usd-per-hour %.2f (%d nodes of %s cost $%.2f/h)",
                     o.budget, s.nodes[0], s.cluster.name, s.nodes[0] * s.cluster.price_usd_per_hour);
        } else if (over_budget + no_split == s.n_nodes) {
            snprintf(none, sizeof none,
                     "no candidate: the global batch (%.0f sequences) is not a whole number of sequences per GPU on "
                     "any node count within the budget (%d GPUs per node); change --global-batch or --nodes",
                     o.global_batch > 0 ? o.global_batch : 0.0, s.cluster.gpus_per_node);
        } else {
            snprintf(none, sizeof none, "no candidate: no layout of those asked for is valid on these node counts "
                                        "(check --layouts and --nodes)%s%.200s", invalid_why[0] ? ": " : "", invalid_why);
        }
    }
    int shown = n < 10 ? (int)n : 10;
    char headroom_note[160];
    snprintf(headroom_note, sizeof headroom_note, "%.1f GiB headroom kept free%s", cli_gib(headroom),
             o.headroom_GiB >= 0 ? " (--headroom-GiB)" : " (default: 10% of HBM; --headroom-GiB)");
    if (s.json) {
        json_t *arr = json_array();
        for (int i = 0; i < shown; i++) {
            const pred_result *p = &cs[i].pt;
            char lay[64];
            spec_layout_str(&p->layout, lay, sizeof lay);
            json_t *row = json_pack("{s:i, s:s, s:i, s:i, s:i, s:i, s:s, s:f, s:f, s:f, s:f, s:f, s:b}", "rank", i + 1,
                                    "layout", lay, "nodes", p->nodes, "gpus", p->gpus, "micro_batch",
                                    p->training.micro_batch, "grad_accum", p->training.grad_accum, "engine",
                                    cli_engine_name(p->engine), "step_s", p->r.step_s, "samples_per_s",
                                    p->r.samples_per_s, "model_tflops_per_gpu", p->r.model_tflops_per_gpu,
                                    "mem_total_GiB", cli_gib(p->r.mem.total), "usd_per_million_samples",
                                    cs[i].usd_per_msample, "recommended", i == 0);
            json_object_set_new(row, "equivalent", json_integer(cs[i].twins));
            json_array_append_new(arr, row);
        }
        json_t *root = json_pack("{s:s, s:s, s:s, s:I, s:I, s:o}", "cluster", s.cluster.name, "model", s.model.name,
                                 "objective", o.objective == PS_COST ? "cost" : "throughput", "candidates", (json_int_t)tried,
                                 "out_of_memory", (json_int_t)n_oom, "ranking", arr);
        json_object_set_new(root, "equivalent_folded", json_integer(n_twins));
        json_object_set_new(root, "headroom_GiB", json_real(cli_gib(headroom)));
        json_object_set_new(root, "why", n ? json_string(reason) : json_null());
        json_object_set_new(root, "too_close_to_call", json_boolean(too_close));
        if (verdict[0])
            json_object_set_new(root, "verdict", json_string(verdict));
        if (!n)
            json_object_set_new(root, "no_candidate", json_string(none));
        if (!n && have_oom)
            json_object_set_new(root, "closest_short_GiB", json_real(cli_gib(closest_oom.pt.r.mem.short_by)));
        free(cs);
        int prc = cli_print_json(root);
        return prc ? prc : n ? 0 : 1;
    }
    printf("plan: %s on %s, objective %s; %ld candidates, %zu do not fit in %.0f GiB HBM with %s\n", s.model.name,
           s.cluster.name, o.objective == PS_COST ? "cost ($ per million samples)" : "throughput (samples/s)", tried, n_oom,
           cli_gib(hbm), headroom_note);
    cli_print_stack(&s);
    if (!n) {
        printf("%s\n", none);
        free(cs);
        return 1;
    }
    int lw = 20; /* the layout column: as wide as the longest name shown */
    for (int i = 0; i < shown; i++) {
        char lay[96];
        int len = (int)strlen(spec_layout_str(&cs[i].pt.layout, lay, sizeof lay));
        lw = len > lw ? len : lw;
    }
    printf("\n   %-*s %5s %5s %9s %9s %10s %7s %8s %10s  %s\n", lw, "layout", "nodes", "mb", "accum", "step s",
           "samples/s", "TFLOPS", "mem GiB", "$/M samp", "engine");
    for (int i = 0; i < shown; i++) {
        const pred_result *p = &cs[i].pt;
        char lay[64], twins[48] = "";
        spec_layout_str(&p->layout, lay, sizeof lay);
        if (cs[i].twins)
            snprintf(twins, sizeof twins, "  (+%d equivalent)", cs[i].twins);
        printf("%s %-*s %5d %5d %9d %9.3f %10.2f %7.1f %8.1f %10.2f  %s%s\n", i == 0 ? " *" : "  ", lw, lay, p->nodes,
               p->training.micro_batch, p->training.grad_accum, p->r.step_s, p->r.samples_per_s,
               p->r.model_tflops_per_gpu, cli_gib(p->r.mem.total), cs[i].usd_per_msample,
               cs[i].confirmed ? "sim" : "model", twins);
        if (i + 1 < shown && cs[i].confirmed && !cs[i + 1].confirmed)
            printf("   -- simulated rows above, analytical rows below: each ranked within its own engine --\n");
    }
    if (n_twins)
        printf("   (%ld candidates with numbers identical to a row above are folded into it: \"+N equivalent\")\n",
               n_twins);
    char lay[64];
    spec_layout_str(&cs[0].pt.layout, lay, sizeof lay);
    printf("\nrecommended: %s on %d nodes, micro-batch %d x %d: %s\n", lay, cs[0].pt.nodes,
           cs[0].pt.training.micro_batch, cs[0].pt.training.grad_accum, reason);
    if (verdict[0])
        printf("%s\n", verdict);
    free(cs);
    return 0;
grid_fail: /* the grid could not be evaluated (rc and err say why) */
    free(lays);
    free(pts);
    free(evals);
    ps_grid_free(grid);
    free(cs);
    return cli_fail(&err, rc);
}
