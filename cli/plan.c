/* plan.c — `shardcast plan`: which layout, partition size p, micro-batch split and node count to
 * use on a cluster for a model. Enumerates the candidates, drops those that do not fit (saying
 * by how much), ranks the rest with the analytical model, confirms the top ones with the
 * simulator, and says why the winner wins — or that the top two are too close to call, naming
 * the parameter the choice is most sensitive to. Here: the options, the wording and the printing.
 * Not here: the grid, the confirmations, the best-against-best ratios and the verdict's numbers
 * (predict/plan.c), the engines themselves. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "eval.h"
#include "../base/str.h"
#include "../predict/plan.h"
#include "../predict/ratio.h"

/* The help: HELP_HEAD, the --layouts entry's family list (help_families), HELP_TAIL. */
static const char HELP_HEAD[] =
    "usage: shardcast plan --cluster C --model M --nodes LIST [options]\n\n"
    "Recommends a layout (ZeRO-1/2/3, MiCS at every valid p with hierarchical all-gather on and\n"
    "off, HSDP, ZeRO++ hpZ, DDP, Megatron tensor parallelism, every AxoNN grid and placement,\n"
    "ZeRO-Offload, LuWu where the cluster has an in-network optimizer node, and under fsdp2\n"
    "torchtitan's FSDP2 with tensor and pipeline parallelism), a micro-batch /\n"
    "accumulation split and a node count. Layouts that do not fit in HBM are dropped (the\n"
    "closest is reported with its shortfall); the rest are ranked with the analytical model and\n"
    "the top --confirm are re-run with the simulator.\n"
    "Candidates with identical numbers (placements of the same communicators) are shown once.\n"
    "The top two are compared by their ratio, re-evaluated with NIC bandwidth, NVLink bandwidth\n"
    "and peak FLOP/s each scaled from 1/4x to 4x (what both depend on alike cancels): when a\n"
    "change within --uncertainty reorders them, the plan says it is too close to call and names\n"
    "that parameter; otherwise it says how large a change would. No candidate exits 1.\n\n" CLI_COMMON_HELP
    "  --global-batch B       sequences (not tokens) per optimizer step (default: micro-batch x\n"
    "                         grad-accum x data-parallel replicas, as predict runs it: GPUs /\n"
    "                         (t x p x cp) for megatron and fsdp2, else GPUs); over 2^26 tokens\n"
    "                         per step is refused as a likely token count; given, every split of\n"
    "                         it is searched and --micro-batch / --grad-accum are refused\n"
    "  --objective O          throughput (default: most samples/s) | cost ($ per million samples)\n"
    "  --budget-usd-per-hour X  only node counts whose price per hour is within X\n"
    ;
static const char HELP_TAIL[] =
    "\n                         --framework runs; zero3-offload: parameters on GPU, host or\n"
    "                         NVMe x optimizer on host or NVMe, NVMe where the cluster has it;\n"
    "                         megatron: t, p, vp with sequence parallelism and\n"
    "                         the distributed optimizer (--global-batch: at that batch);\n"
    "                         fsdp2-tp: fsdp2:dp=D,t=T, T in 2, 4, 8 inside a node, also\n"
    "                         asynctp=1 when compiled (torchtitan needs torch.compile);\n"
    "                         fsdp2-pp: fsdp2:dp=D,t=T,p=P, T in 1, 2, 4, 8, P dividing the\n"
    "                         layers, schedule 1f1b and interleaved-1f1b (2P dividing them),\n"
    "                         at least P x stages-per-rank micro-batches; all includes both\n"
    "                         under --framework fsdp2 only; cp is not searched: add it with\n"
    "                         --layout fsdp2:dp=D,cp=C,t=T);\n"
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
            return cli_fail(&err, sc_err_set(&err, SC_EINPUT, "--headroom-GiB", "", "expected a number of GiB from 0 to below 1e6, got \"%s\"", arg));
        return 0;
    case 2009:
        o->threads = (int)strtol(arg, &end, 10);
        if (end == arg || *end || o->threads < 1 || o->threads > 1024)
            return cli_fail(&err, sc_err_set(&err, SC_EINPUT, "--threads", "", "expected 1 to 1024, got \"%s\"", arg));
        return 0;
    }
    return 0;
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

/* --micro-batch or --grad-accum beside --global-batch: plan searches every split of the global
 * batch, so the option would change nothing; refused by name (SC_EINPUT), else 0. */
static int split_given(const cli_setup *s, double global_batch, sc_err *err)
{
    for (int i = 0; global_batch > 0 && i < s->n_shared_given; i++)
        if (!strcmp(s->shared_given[i], "micro-batch") || !strcmp(s->shared_given[i], "grad-accum")) {
            char opt[64];
            snprintf(opt, sizeof opt, "--%s", s->shared_given[i]);
            return sc_err_set(err, SC_EINPUT, opt, "",
                              "plan searches every micro-batch x accumulation split of --global-batch %.0f and "
                              "this option would be ignored: drop it, or drop --global-batch (the batch is then "
                              "micro-batch x grad-accum per replica)", global_batch);
        }
    return 0;
}

/* A --layouts word that is neither a family nor a layout (no ':', so no layout's options) into
 * err: a typo of "all" or of a family names them ("zro3": zero3; ties: "zero1, zero2 or zero3",
 * through str_nearest_all as every other name), else the families, which the layouts' own hint
 * does not list (fsdp2-tp, fsdp2-pp); 0 when every word is one or the other (the layout parser's
 * message stands). */
static int bad_family(const cli_setup *s, sc_err *err)
{
    const char *known[64] = {"all"};
    int nk = 1;
    for (int k = 0; k < ps_n_families() && nk < 63; k++)
        known[nk++] = ps_family_name(k);
    known[nk] = NULL;
    for (int i = 0; i < s->n_layout_args; i++) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", s->layout_args[i]);
        if (strchr(buf, ':'))
            continue;
        char *save = NULL;
        for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
            spec_layout l;
            if (!strcmp(w, "all") || ps_family_mask(w) || !spec_layout_parse(w, &l, NULL))
                continue;
            char near[160], names[256];
            if (str_nearest_all(w, known, near, sizeof near))
                return sc_err_set(err, SC_EINPUT, "--layouts", "", "unknown family or layout \"%s\"; did you mean %s? "
                                  "(families: shardcast plan --help)", w, near);
            size_t o = 0;
            names[0] = '\0';
            for (int k = 1; k < nk && o < sizeof names; k++)
                o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", k > 1 ? ", " : "", known[k]);
            return sc_err_set(err, SC_EINPUT, "--layouts", "", "expected all, a family (%s) or a layout, got \"%s\"",
                              names, w);
        }
    }
    return 0;
}

/* Progress on stderr (a terminal, or --progress) and the top candidates the simulator's budget
 * left analytical (always said). */
static void on_grid(void *ctx, long tried, int ni, int n_nodes, int nodes)
{
    (void)ctx;
    fprintf(stderr, "\rplan: %ld candidates evaluated analytically (%d/%d node counts, now %d nodes)", tried, ni + 1,
            n_nodes, nodes);
}

static void on_confirm(void *ctx, int k)
{
    (void)ctx;
    fprintf(stderr, "\rplan: simulating the top %d candidates                    ", k);
}

static void on_skip(void *ctx, const ps_cand *c, const char *why_not)
{
    (void)ctx;
    char lay[96];
    fprintf(stderr, "plan: not simulating %s on %d node%s (kept the analytical answer): %s\n",
            spec_layout_str(&c->pt.layout, lay, sizeof lay), c->pt.nodes, c->pt.nodes == 1 ? "" : "s", why_not);
}

/* The options and files: 1 when the command is done (help, or an error: *rc says which), else 0
 * with the setup, the calibration and the families to search (*mask). */
static int plan_load(int argc, char **argv, cli_setup *s, opts *o, cli_calib *cal, unsigned *mask, int *rc)
{
    static const struct option extra[] = {
        {"calibration", required_argument, 0, 2000}, {"global-batch", required_argument, 0, 2001},
        {"objective", required_argument, 0, 2002},   {"budget-usd-per-hour", required_argument, 0, 2003},
        {"confirm", required_argument, 0, 2005},
        {"uncertainty", required_argument, 0, 2006}, {"progress", no_argument, 0, 2007},
        {"headroom-GiB", required_argument, 0, 2008}, {"threads", required_argument, 0, 2009}};
    char help[sizeof HELP_HEAD + sizeof HELP_TAIL + 1024];
    size_t ho = (size_t)snprintf(help, sizeof help, "%s", HELP_HEAD);
    ho += help_families(help + ho, sizeof help - ho);
    snprintf(help + ho, ho < sizeof help ? sizeof help - ho : 0, "%s", HELP_TAIL);
    if (cli_args(argc, argv, "plan", help, extra, (int)(sizeof extra / sizeof extra[0]), s, own, o, 0, NULL, rc))
        return 1;
    /* --layouts takes families (all, mics, tp, axonn, ...: every valid member) beside explicit
     * layouts; none given = all */
    *mask = 0;
    int kept = 0, any_args = s->n_layout_args;
    for (int i = 0; i < s->n_layout_args; i++) {
        unsigned f = ps_family_mask(s->layout_args[i]);
        if (f)
            *mask |= f;
        else
            s->layout_args[kept++] = s->layout_args[i];
    }
    s->n_layout_args = kept;
    sc_err err;
    int explicit_args = kept;
    if ((*rc = cli_setup_load(s, NEED_CLUSTER | NEED_MODEL | NEED_NODES, &err)) ||
        (*rc = cli_calib_load(s, o->calibration, cal, &err))) {
        if (!strcmp(err.source, "--layout") && said_layouts(argc, argv)) { /* the two share a parser */
            snprintf(err.source, sizeof err.source, "--layouts");
            if (bad_family(s, &err))
                *rc = SC_EINPUT;
        }
        *rc = cli_fail(&err, *rc);
        return 1;
    }
    if ((*rc = batch_is_sequences(s, o->global_batch, &err)) || (*rc = split_given(s, o->global_batch, &err))) {
        *rc = cli_fail(&err, *rc);
        return 1;
    }
    /* nothing named: a scenario's layouts, else every family; families named without explicit
     * layouts replace a scenario's list */
    if (!any_args && !s->n_layouts)
        *mask = ~0u;
    if (*mask && !explicit_args)
        s->n_layouts = 0;
    if (*mask != ~0u && (*mask & spec_layout_kinds_at(SPEC_AT_INNET)) && !s->cluster.innet.present) {
        *rc = cli_fail(&err, sc_err_set(&err, SC_EINPUT, "--layouts", "",
                                        "luwu needs a cluster with an in_network_optimizer; %s has none",
                                        s->cluster.name));
        return 1;
    }
    return 0;
}

/* The cluster parameter ps_sensitivity's k names, as it applies to the top two: k = 1 scales
 * the node's fabric links and PCIe together (predict/search.c flips); on one GPU no collective
 * crosses a fabric, only the host copies PCIe, and a PCIe fabric has no NVLink (until 2026-11-28:
 * "NVLink bandwidth" on a one-GPU workstation). */
static const char *sens_name(const spec_cluster *c, int gpus, int k)
{
    if (k == 1 && gpus == 1)
        return "PCIe (host link) bandwidth";
    if (k == 1 && c->fabric.kind == FABRIC_PCIE)
        return "PCIe bandwidth";
    return ps_sens_name(k);
}

/* The top two's verdict in words (v: pl_verdict_of; NULL: none, ""). */
static void verdict_text(const spec_cluster *c, const pl_plan *p, const pl_verdict *v, char *out, size_t len)
{
    out[0] = 0;
    if (!v)
        return;
    const ps_cand *r = pl_cand(p, 1);
    double f = v->j.factor, gap = v->j.gap_pct;
    int ks = v->j.sens;
    const int one = c->gpus_per_node == 1 && r->pt.nodes == 1 && pl_cand(p, 0)->pt.nodes == 1;
    const char *sn = sens_name(c, one ? 1 : 2, ks);
    char runner[96], who[160];
    spec_layout_str(&r->pt.layout, runner, sizeof runner);
    snprintf(who, sizeof who, "%s (%d node%s, micro-batch %d; %s)", runner, r->pt.nodes,
             r->pt.nodes == 1 ? "" : "s", r->pt.training.micro_batch,
             ps_engine_both(v->engine));
    if (v->j.verdict == PS_TOO_CLOSE)
        snprintf(out, len,
                 "too close to call: the runner-up %s is %.1f%% behind, and %s %s by %.0f%% (within the "
                 "%.0f%% uncertainty%s) puts it ahead; measure that before choosing (shardcast calibrate)",
                 who, gap, f < 1 ? "a drop in" : "a rise in", sn, ps_pct_change(f),
                 100 * v->uncertainty, v->from_calib ? ", 2 sd from the calibration" : "");
    else if (v->j.verdict == PS_TIE)
        snprintf(out, len, "a tie: the runner-up %s is %.2f%% behind and %s; either will do", who, gap,
                 ks < 0 ? "no single cluster parameter within 4x reorders them (they depend on each alike)"
                        : "only a change beyond the uncertainty reorders them");
    else if (ks >= 0)
        snprintf(out, len,
                 "robust: the runner-up %s is %.1f%% behind; only %s %s by %.0f%% (beyond the %.0f%% "
                 "uncertainty) would put it ahead", who, gap, f < 1 ? "a drop in" : "a rise in", sn,
                 ps_pct_change(f), 100 * v->uncertainty);
    else
        snprintf(out, len,
                 "robust: the runner-up %s is %.1f%% behind, and no single cluster parameter within 4x "
                 "puts it ahead", who, gap);
}

/* Why there is no candidate, when there is none. */
static void none_text(const cli_setup *s, const opts *o, const pl_stats *st, double hbm, double headroom, char *none,
                      size_t len)
{
    if (st->have_oom) {
        const ps_cand *c = &st->closest_oom;
        char lay[64];
        spec_layout_str(&c->pt.layout, lay, sizeof lay);
        double sb, need, tier_cap;
        const char *where = mem_short_where(&c->pt.r.mem, &sb, &need, &tier_cap);
        if (where && strcmp(where, "GPU")) /* fits the GPUs, not the offload tier */
            snprintf(none, len,
                     "no layout fits in %.1f GiB per GPU (%.0f GiB HBM less %.1f GiB headroom) and its offload "
                     "tiers: the closest, %s on %d node%s (micro-batch %d), fits the GPU but needs %.1f GiB of %s "
                     "per node, short by %.1f GiB; try more nodes",
                     cli_gib(hbm - headroom), cli_gib(hbm), cli_gib(headroom), lay, c->pt.nodes,
                     c->pt.nodes == 1 ? "" : "s",
                     c->pt.training.micro_batch, cli_gib(need), !strcmp(where, "host") ? "host memory" : where,
                     cli_gib(sb));
        else
            snprintf(none, len,
                     "no layout fits in %.1f GiB per GPU (%.0f GiB HBM less %.1f GiB headroom): the closest, %s on %d "
                     "node%s (micro-batch %d), needs %.1f GiB per GPU, short by %.1f GiB; try more nodes%s",
                     cli_gib(hbm - headroom), cli_gib(hbm), cli_gib(headroom), lay, c->pt.nodes,
                     c->pt.nodes == 1 ? "" : "s",
                     c->pt.training.micro_batch, cli_gib(c->pt.r.mem.total), cli_gib(c->pt.r.mem.short_by),
                     s->training.act_ckpt ? "" : " or --checkpointing on");
    } else if (st->over_budget == s->n_nodes) {
        snprintf(none, len,
                 "no candidate: every node count is over --budget-usd-per-hour %.2f (%d nodes of %s cost $%.2f/h)",
                 o->budget, s->nodes[0], s->cluster.name, s->nodes[0] * s->cluster.price_usd_per_hour);
    } else if (st->over_budget + st->no_split == s->n_nodes) {
        snprintf(none, len,
                 "no candidate: the global batch (%.0f sequences) is not a whole number of sequences per GPU (per "
                 "data-parallel replica for megatron and fsdp2 with t, p or cp) on any node count within the budget "
                 "(%d GPUs per node); change --global-batch or --nodes",
                 o->global_batch > 0 ? o->global_batch : 0.0, s->cluster.gpus_per_node);
    } else {
        snprintf(none, len, "no candidate: no layout of those asked for is valid on these node counts "
                            "(check --layouts and --nodes)%s%.200s", st->invalid_why[0] ? ": " : "", st->invalid_why);
    }
}

/* At most this many rows are shown. */
enum { PLAN_SHOWN = 10 };

/* The plan as JSON on stdout; exit status: 0, 1 when no candidate, or the write's error. */
static int plan_json(const cli_setup *s, const opts *o, const pl_plan *p, double headroom, const char *verdict,
                     const char *none)
{
    const pl_stats *st = pl_stats_of(p);
    size_t n = pl_n(p);
    int shown = n < PLAN_SHOWN ? (int)n : PLAN_SHOWN;
    json_t *arr = json_array();
    for (int i = 0; i < shown; i++) {
        const ps_cand *c = pl_cand(p, (size_t)i);
        const pred_result *r = &c->pt;
        char lay[64];
        spec_layout_str(&r->layout, lay, sizeof lay);
        json_t *row = json_pack("{s:i, s:s, s:i, s:i, s:i, s:i, s:s, s:f, s:f, s:f, s:f, s:f, s:b}", "rank", i + 1,
                                "layout", lay, "nodes", r->nodes, "gpus", r->gpus, "micro_batch",
                                r->training.micro_batch, "grad_accum", r->training.grad_accum, "engine",
                                cli_engine_name(r->engine), "step_s", r->r.step_s, "samples_per_s",
                                r->r.samples_per_s, "model_tflops_per_gpu", r->r.model_tflops_per_gpu,
                                "mem_total_GiB", cli_gib(r->r.mem.total), "usd_per_million_samples",
                                c->usd_per_msample, "recommended", i == 0);
        json_object_set_new(row, "equivalent", json_integer(c->twins));
        json_object_set_new(row, "global_batch", json_real(r->r.samples_per_step)); /* sequences per step */
        json_array_append_new(arr, row);
    }
    json_t *root = json_pack("{s:s, s:s, s:s, s:I, s:I, s:o}", "cluster", s->cluster.name, "model", s->model.name,
                             "objective", o->objective == PS_COST ? "cost" : "throughput", "candidates",
                             (json_int_t)st->tried, "out_of_memory", (json_int_t)st->n_oom, "ranking", arr);
    json_object_set_new(root, "equivalent_folded", json_integer(st->n_twins));
    json_object_set_new(root, "headroom_GiB", json_real(cli_gib(headroom)));
    json_object_set_new(root, "why", n ? json_string(pl_why(p)) : json_null());
    json_object_set_new(root, "too_close_to_call",
                        json_boolean(pl_verdict_of(p) && pl_verdict_of(p)->j.verdict != PS_ROBUST));
    if (verdict[0])
        json_object_set_new(root, "verdict", json_string(verdict));
    if (!n)
        json_object_set_new(root, "no_candidate", json_string(none));
    if (!n && st->have_oom)
        json_object_set_new(root, "closest_short_GiB", json_real(cli_gib(st->closest_oom.pt.r.mem.short_by)));
    int prc = cli_print_json(root);
    return prc ? prc : n ? 0 : 1;
}

/* The ranking as a table (the plan has candidates). */
static void plan_table(const pl_plan *p)
{
    size_t n = pl_n(p);
    int shown = n < PLAN_SHOWN ? (int)n : PLAN_SHOWN;
    int lw = 20; /* the layout column: as wide as the longest name shown */
    for (int i = 0; i < shown; i++) {
        char lay[96];
        int len = (int)strlen(spec_layout_str(&pl_cand(p, (size_t)i)->pt.layout, lay, sizeof lay));
        lw = len > lw ? len : lw;
    }
    printf("\n   %-*s %5s %5s %9s %9s %10s %7s %8s %10s  %s\n", lw, "layout", "nodes", "mb", "accum", "step s",
           "samples/s", "TFLOPS", "mem GiB", "$/M samp", "engine");
    for (int i = 0; i < shown; i++) {
        const ps_cand *c = pl_cand(p, (size_t)i), *next = pl_cand(p, (size_t)i + 1);
        const pred_result *r = &c->pt;
        char lay[64], twins[48] = "";
        spec_layout_str(&r->layout, lay, sizeof lay);
        if (c->twins)
            snprintf(twins, sizeof twins, "  (+%d equivalent)", c->twins);
        printf("%s %-*s %5d %5d %9d %9.3f %10.2f %7.1f %8.1f %10.2f  %s%s\n", i == 0 ? " *" : "  ", lw, lay, r->nodes,
               r->training.micro_batch, r->training.grad_accum, r->r.step_s, r->r.samples_per_s,
               r->r.model_tflops_per_gpu, cli_gib(r->r.mem.total), c->usd_per_msample, c->confirmed ? "sim" : "model",
               twins);
        if (i + 1 < shown && c->confirmed && !next->confirmed)
            printf("   -- simulated rows above, analytical rows below: each ranked within its own engine --\n");
    }
    if (pl_stats_of(p)->n_twins)
        printf("   (%ld candidates with numbers identical to a row above are folded into it: \"+N equivalent\")\n",
               pl_stats_of(p)->n_twins);
    /* without --global-batch a replica-batched layout (megatron, fsdp2 with t/p/cp) runs the
     * micro-batch per replica, as predict does: rows at other batches are said, not hidden */
    int mixed = 0;
    for (int i = 1; i < shown; i++)
        mixed |= !ratio_same_batch(&pl_cand(p, 0)->pt.r, &pl_cand(p, (size_t)i)->pt.r);
    if (mixed)
        printf("   (rows run different global batches, compared per sample: megatron and fsdp2 with t, p or cp\n"
               "    count the micro-batch per model replica, as predict does; --global-batch B holds every row to B)\n");
}

int cmd_plan(int argc, char **argv)
{
    cli_setup s;
    opts o = {0};
    o.confirm = 3;
    o.uncertainty = 0.10;
    o.headroom_GiB = -1;
    cli_setup_init(&s, argv[0]);
    int rc;
    cli_calib cal;
    unsigned mask;
    if (plan_load(argc, argv, &s, &o, &cal, &mask, &rc))
        return rc;
    int show = o.progress || isatty(2);
    /* memory kept free beyond the model's estimate: a plan at 39.9 of 40 GiB is not a plan */
    const double hbm = s.cluster.gpu.hbm_bytes;
    const double headroom = o.headroom_GiB >= 0 ? o.headroom_GiB * 1073741824.0 : 0.10 * hbm;
    pl_request q = {&s.cluster, &s.model, &cal.cal, &s.training, s.nodes, s.n_nodes, s.layouts, s.n_layouts, mask,
                    s.placement, o.objective, o.global_batch, o.budget, headroom, o.uncertainty, o.uncertainty_set,
                    o.confirm, o.threads, show ? on_grid : NULL, show ? on_confirm : NULL, on_skip, NULL};
    /* context parallelism is left out of the N-D FSDP2 families (their help says so): said once */
    if (pl_fsdp2_searched(mask, s.training.framework))
        fprintf(stderr, "plan: fsdp2-tp / fsdp2-pp searched without context parallelism; to compare a cp layout, "
                        "add --layout fsdp2:dp=D,cp=C,t=T[,p=P]\n");
    pl_plan *p;
    sc_err err;
    if ((rc = pl_run(&q, &p, &err)))
        return cli_fail(&err, rc);
    if (show)
        fprintf(stderr, "\n");
    char verdict[768], none[512] = "";
    verdict_text(&s.cluster, p, pl_verdict_of(p), verdict, sizeof verdict);
    const pl_stats *st = pl_stats_of(p);
    size_t n = pl_n(p);
    if (!n)
        none_text(&s, &o, st, hbm, headroom, none, sizeof none);
    if (s.json) {
        rc = plan_json(&s, &o, p, headroom, verdict, none);
        pl_free(p);
        return rc;
    }
    char headroom_note[160];
    snprintf(headroom_note, sizeof headroom_note, "%.1f GiB headroom kept free%s", cli_gib(headroom),
             o.headroom_GiB >= 0 ? " (--headroom-GiB)" : " (default: 10% of HBM; --headroom-GiB)");
    printf("plan: %s on %s, objective %s; %ld candidates, %zu do not fit in %.0f GiB HBM with %s\n", s.model.name,
           s.cluster.name, o.objective == PS_COST ? "cost ($ per million samples)" : "throughput (samples/s)", st->tried,
           st->n_oom, cli_gib(hbm), headroom_note);
    cli_print_stack(&s);
    if (!n) {
        printf("%s\n", none);
        pl_free(p);
        return 1;
    }
    plan_table(p);
    const ps_cand *w = pl_cand(p, 0);
    char lay[64];
    spec_layout_str(&w->pt.layout, lay, sizeof lay);
    /* the global batch the split divides (the search holds it; the header does not say it) */
    printf("\nrecommended: %s on %d node%s, micro-batch %d x %d (global batch %.0f sequence%s): %s\n", lay,
           w->pt.nodes, w->pt.nodes == 1 ? "" : "s", w->pt.training.micro_batch, w->pt.training.grad_accum,
           w->pt.r.samples_per_step, w->pt.r.samples_per_step == 1 ? "" : "s", pl_why(p));
    if (verdict[0])
        printf("%s\n", verdict);
    pl_free(p);
    return 0;
}
