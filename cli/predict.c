/* predict.c — `shardcast predict`: step time, throughput, TFLOPS/GPU, breakdown and memory of
 * one or more layouts on a cluster, side by side with the speed-up over the first (a throughput
 * ratio: predict/ratio). Not here: the engines (model/analytic, sim/). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../model/kernels.h"
#include "../predict/ratio.h"
#include "commands.h"
#include "eval.h"

static const char HELP[] =
    "usage: shardcast predict --cluster C --nodes N --model M --layout L [--layout L2 ...] [options]\n\n"
    "Predicts the step time, samples/s, model TFLOPS per GPU (no recompute), MFU, HFU (FLOPs the\n"
    "GPU executes: recompute, causal attention as the kernel runs it), where the time\n"
    "goes (compute; communication the compute waits for, per collective; optimizer), the bytes a\n"
    "rank sends, and memory per GPU. Layouts that do not fit in HBM are reported as OOM.\n"
    "With several node counts, weak-scaling efficiency is per-GPU throughput relative to the\n"
    "smallest count. The speed-up is each row's samples/s over the first layout's at the same node\n"
    "count (rows may run different global batches: context parallelism, per-replica micro-batches).\n\n" CLI_COMMON_HELP
    "  --calibration F|NAME   cost-model parameters (default: configs/calibrations/<cluster>.json;\n"
    "                         defaults: the built-in values, no file)\n"
    "  --engine sim|model     discrete-event simulator (default) or analytical model\n"
    "  --trace FILE           simulator: write a Chrome trace of the step (open in Perfetto);\n"
    "                         needs one layout and one node count\n"
    "  --trace-ranks K        trace the first K ranks (default: the first two nodes); a trace\n"
    "                         estimated over 256 MiB is refused (--sim-limit-s 0 lifts it)\n"
    "  --ignore-memory        predict layouts that do not fit as if they did\n"
    "  --sim-limit-s S        refuse a simulator run estimated over S seconds (or over the memory\n"
    "                         this process may use) before starting it (default 600; 0: no limit)\n"
    "  --progress             progress on stderr even when it is not a terminal\n" CLI_SIM_HELP;

typedef struct opts {
    const char *calibration, *trace;
    cli_engine engine;
    int ignore_memory, trace_ranks, progress;
    double limit_s;
    exec_opts so;
} opts;

static int own(int opt, const char *arg, void *ctx)
{
    opts *o = ctx;
    sc_err err;
    switch (opt) {
    case 2000: o->calibration = arg; return 0;
    case 2001: return cli_parse_engine(arg, &o->engine, &err) ? cli_fail(&err, SC_EINPUT) : 0;
    case 2002: o->ignore_memory = 1; return 0;
    case 2003: o->trace = arg; return 0;
    case 2005: {
        int v;
        if (cli_parse_int(arg, "--sim-limit-s", 0, 1000000000, &v, &err))
            return cli_fail(&err, SC_EINPUT);
        o->limit_s = v;
        return 0;
    }
    case 2006: o->progress = 1; return 0;
    case 2004:
        if (cli_parse_int(arg, "--trace-ranks", 1, SPEC_MAX_RANKS, &o->trace_ranks, &err))
            return cli_fail(&err, SC_EINPUT);
        return 0;
    }
    int rc = cli_sim_opt(&o->so, opt, arg, &err);
    if (rc < 0)
        return cli_fail(&err, rc);
    return 0;
}

/* Executed FLOPs over the FLOPs hw_flops counts (model + recompute): a fused causal attention
 * core runs half of the score/context GEMMs that the model-FLOP convention counts (Megatron's,
 * non-causal) and its backward recomputes the scores (FlashAttention's 2.5 x forward, arXiv
 * 2307.08691 s4.1); the unfused path computes the whole s x s and masks it. HFU = executed FLOP/s
 * per GPU over the dense datasheet peak, beside MFU (model FLOPs, same peak). */
static double executed_ratio(const wl *w)
{
    if (w->hw_flops <= 0)
        return 1;
    double d = 0;
    for (int i = 0; i < w->n_layers; i++) {
        const wl_layer *l = &w->layer[i];
        if (l->kind != WL_BLOCK || l->core_fwd_flops <= 0)
            continue;
        double rec = l->ckpt == CKPT_FULL || (l->ckpt == CKPT_SELECTIVE && !l->flash); /* core recomputed */
        double counted = l->core_fwd_flops * (3 + rec);
        double executed = l->flash ? l->core_fwd_flops * (l->causal ? 0.5 : 1) * (1 + 2.5 + rec) : counted;
        d += (executed - counted) * l->count;
    }
    return (w->hw_flops + d) / w->hw_flops;
}

/* The best published end-to-end training rate on a GPU, model FLOPs per GPU (Megatron's count),
 * at 16-bit or FP8 precision: a prediction above it is said, not hidden. */
typedef struct best_e2e {
    const char *gpu_prefix; /* the cluster's gpu.name starts with it */
    int fp8;                /* the figure is an FP8 run's (1) or a 16-bit one's (0) */
    double tflops;
    const char *source;
} best_e2e;
static const best_e2e BEST[] = {
    {"A100", 0, 225, "arXiv 2307.08691 Table 1 (FlashAttention-2 end-to-end GPT training on 8xA100: up to 225 TFLOPS/GPU, 72% MFU)"},
    {"A800", 0, 225, "arXiv 2307.08691 Table 1 (its A100 figure: 225 TFLOPS/GPU, 72% MFU)"},
    {"H100", 0, 489.1, "NVIDIA/Megatron-LM@f2e5db40 README model_table.png, GPT 16B on 192 H100: 489.1 TFLOP/s/GPU, 49% MFU (validation/megatron-core-h100)"},
    {"H100", 1, 827, "NVIDIA-NeMo/Megatron-Bridge@067f987d docs/performance-summary-archive.md (26.04.01), Llama 3.1 405B FP8 on 1024 H100: 827 model TFLOP/s/GPU (validation/megatron-bridge-perf)"},
    {"H800", 0, 489.1, "the H100's (same SXM5 compute; H100: NVIDIA/Megatron-LM@f2e5db40 README, GPT 16B: 489.1 TFLOP/s/GPU)"},
    {"H800", 1, 827, "the H100's (same SXM5 compute; H100: Megatron-Bridge, Llama 3.1 405B FP8: 827 TFLOP/s/GPU)"},
    {"H200", 0, 489.1, "the H100's (the lent H200 sustained the H100's dense rate, bench/gpu-results/2026-11-27-h200; H100: "
                       "NVIDIA/Megatron-LM@f2e5db40 README, GPT 16B: 489.1 TFLOP/s/GPU)"},
    {"H200", 1, 827, "the H100's (the lent H200 sustained the H100's dense rate; H100: Megatron-Bridge, Llama 3.1 405B FP8: 827)"},
};

static void warn_ceiling(const spec_cluster *c, spec_precision prec, const cli_point *pts, int n)
{
    const int fp8 = prec == PREC_FP8;
    for (size_t i = 0; i < sizeof BEST / sizeof BEST[0]; i++) {
        if (strncmp(c->gpu.name, BEST[i].gpu_prefix, strlen(BEST[i].gpu_prefix)) || BEST[i].fp8 != fp8)
            continue;
        double top = 0;
        for (int j = 0; j < n; j++)
            if (pts[j].r.mem.fits && pts[j].r.model_tflops_per_gpu > top)
                top = pts[j].r.model_tflops_per_gpu;
        if (top > BEST[i].tflops)
            fprintf(stderr,
                    "shardcast: warning: predicted %.1f model TFLOPS per GPU is above the best published end-to-end "
                    "%s result on %s, %g (%s): treat it as optimistic\n",
                    top, fp8 ? "FP8" : "16-bit", BEST[i].gpu_prefix, BEST[i].tflops, BEST[i].source);
        return;
    }
}

static double hfu_of(const an_result *r, double xr)
{
    return r->model_tflops_per_gpu > 0 ? r->mfu * r->hw_tflops_per_gpu / r->model_tflops_per_gpu * xr : 0;
}

static json_t *point_json(const cli_point *p, double speedup, int show, double usd_per_node_hour, double xr)
{
    const an_result *r = &p->r;
    char lay[64];
    spec_layout_str(&p->layout, lay, sizeof lay);
    json_t *mem = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:f}", "params_GiB", cli_gib(r->mem.params),
                            "grads_GiB", cli_gib(r->mem.grads), "optim_GiB", cli_gib(r->mem.optim), "activations_GiB",
                            cli_gib(r->mem.activations), "buffers_GiB", cli_gib(r->mem.gathered + r->mem.buckets),
                            "reserve_GiB", cli_gib(r->mem.reserve), "total_GiB", cli_gib(r->mem.total), "hbm_GiB",
                            cli_gib(r->mem.hbm), "fits", r->mem.fits, "short_GiB", cli_gib(r->mem.short_by));
    json_object_set_new(mem, "host_per_node_GiB", json_real(cli_gib(r->mem.host)));
    json_object_set_new(mem, "host_short_GiB", json_real(cli_gib(r->mem.host_short_by)));
    json_object_set_new(mem, "in_network_GiB", json_real(cli_gib(r->mem.innet)));
    json_object_set_new(mem, "in_network_short_GiB", json_real(cli_gib(r->mem.innet_short_by)));
    json_object_set_new(mem, "nvme_per_node_GiB", json_real(cli_gib(r->mem.nvme)));
    json_object_set_new(mem, "nvme_short_GiB", json_real(cli_gib(r->mem.nvme_short_by)));
    json_t *o = json_pack("{s:s, s:i, s:i, s:s, s:o}", "layout", lay, "nodes", p->nodes, "gpus", p->gpus, "engine",
                          cli_engine_name(p->engine), "memory", mem);
    if (!show) {
        json_object_set_new(o, "prediction", json_null());
        return o;
    }
    json_t *pr = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "step_s", r->step_s,
                           "samples_per_s", r->samples_per_s, "tokens_per_s", r->tokens_per_s, "model_tflops_per_gpu",
                           r->model_tflops_per_gpu, "hw_tflops_per_gpu", r->hw_tflops_per_gpu, "mfu", r->mfu,
                           "compute_s", r->compute_s, "exposed_allgather_s", r->exposed_s[COLL_ALLGATHER],
                           "exposed_reducescatter_s", r->exposed_s[COLL_REDUCESCATTER], "exposed_allreduce_s",
                           r->exposed_s[COLL_ALLREDUCE], "optimizer_s", r->optimizer_s, "idle_s", r->idle_s,
                           "comm_GB_per_rank", r->comm_bytes / 1e9, "speedup_vs_first", speedup);
    json_object_set_new(pr, "hfu", json_real(hfu_of(r, xr)));
    json_object_set_new(pr, "global_batch", json_real(r->samples_per_step)); /* sequences per step */
    if (isfinite(p->weak_eff))
        json_object_set_new(pr, "weak_scaling_eff", json_real(p->weak_eff));
    if (usd_per_node_hour > 0 && r->tokens_per_s > 0) { /* the cluster's on-demand price per node */
        double usd_h = usd_per_node_hour * p->nodes;
        json_object_set_new(pr, "usd_per_hour", json_real(usd_h));
        json_object_set_new(pr, "usd_per_million_tokens", json_real(usd_h / 3600.0 / r->tokens_per_s * 1e6));
    }
    if (p->step_sd > 0)
        json_object_set_new(pr, "step_sd_s", json_real(p->step_sd));
    if (r->bubble_frac > 0) /* pipelines: the schedule's bubble in closed form */
        json_object_set_new(pr, "pipeline_bubble", json_real(r->bubble_frac));
    if (p->engine == ENGINE_SIM)
        json_object_set_new(pr, "simulator",
                            json_pack("{s:f, s:i, s:f, s:i, s:I, s:I, s:I, s:I, s:I}", "rank_spread_s",
                                      p->sim.step_s - p->sim.first_end_s, "slowest_rank", p->sim.slowest_rank,
                                      "skew_wait_s", p->sim.skew_s, "latest_rank", p->sim.latest_rank,
                                      "latest_rank_count", (json_int_t)p->sim.latest_count, "collectives",
                                      (json_int_t)p->sim.collectives, "events", (json_int_t)p->sim.events,
                                      "stale_events", (json_int_t)p->sim.stale, "retimed_events",
                                      (json_int_t)p->sim.retimed));
    if (p->engine == ENGINE_SIM && p->sim.ranks_simulated > 0) /* which ran: all ranks, or a quotient */
        json_object_set_new(json_object_get(pr, "simulator"), "ranks_simulated",
                            json_integer(p->sim.ranks_simulated));
    json_object_set_new(o, "prediction", pr);
    return o;
}

/* A trace holds every traced rank's events for every micro-step (the simulator runs them all
 * when tracing): up to 1,546 B per traced rank, layer and micro-step, measured on 2 p4d nodes,
 * gpt3-1.3b, 8 micro-steps, 16 ranks (zero3 1,124; mics:p=8 deepspeed 1,041; hsdp:p=8 fsdp
 * 1,546; ddp 326). Over TRACE_MAX_BYTES estimated, refused before starting (issue 31 item 8:
 * traces were uncapped, 491 MB and more); --sim-limit-s 0 lifts it with the simulator's limit. */
#define TRACE_B_PER_RANK_LAYER 1546.0
#define TRACE_MAX_BYTES (256.0 * 1048576)

static int trace_budget(const cli_setup *s, const opts *o, sc_err *err)
{
    double all = (double)s->nodes[0] * s->cluster.gpus_per_node;
    double ranks = o->trace_ranks ? o->trace_ranks : 2.0 * s->cluster.gpus_per_node;
    ranks = ranks < all ? ranks : all;
    double b = ranks * s->model.layers * s->training.grad_accum * TRACE_B_PER_RANK_LAYER;
    if (b <= TRACE_MAX_BYTES)
        return 0;
    return sc_err_set(err, SC_EINPUT, "--trace", "",
                      "a trace of %.0f ranks x %d layers x %d micro-steps would be about %.0f MiB, over the limit of "
                      "%.0f MiB; trace fewer ranks (--trace-ranks) or micro-steps (--grad-accum), or --sim-limit-s 0 "
                      "goes on",
                      ranks, s->model.layers, s->training.grad_accum, b / 1048576, TRACE_MAX_BYTES / 1048576);
}

/* The options, the files and the checks before anything runs: 1 when the command is done (help,
 * or an error: *rc says which), else 0. */
static int predict_load(int argc, char **argv, cli_setup *s, opts *o, cli_calib *cal, int *rc)
{
    static const struct option extra[] = {{"calibration", required_argument, 0, 2000},
                                          {"engine", required_argument, 0, 2001},
                                          {"ignore-memory", no_argument, 0, 2002},
                                          {"trace", required_argument, 0, 2003},
                                          {"trace-ranks", required_argument, 0, 2004},
                                          {"sim-limit-s", required_argument, 0, 2005},
                                          {"progress", no_argument, 0, 2006},
                                          CLI_SIM_LONGOPTS};
    if (cli_args(argc, argv, "predict", HELP, extra, (int)(sizeof extra / sizeof extra[0]), s, own, o, 0, NULL, rc))
        return 1;
    sc_err err;
    if ((*rc = cli_setup_load(s, NEED_CLUSTER | NEED_MODEL | NEED_NODES | NEED_LAYOUTS, &err)) ||
        (*rc = cli_calib_load(s, o->calibration, cal, &err))) {
        *rc = cli_fail(&err, *rc);
        return 1;
    }
    if (o->trace && (o->engine != ENGINE_SIM || s->n_layouts != 1 || s->n_nodes != 1)) {
        sc_err_set(&err, SC_EINPUT, "--trace", "", "expected the simulator with one layout and one node count");
        *rc = cli_fail(&err, SC_EINPUT);
        return 1;
    }
    if (o->trace && o->limit_s > 0 && (*rc = trace_budget(s, o, &err))) {
        *rc = cli_fail(&err, *rc);
        return 1;
    }
    if ((o->so.jitter > 0 || o->so.n_stragglers) && o->engine != ENGINE_SIM) {
        sc_err_set(&err, SC_EINPUT, o->so.jitter > 0 ? "--jitter" : "--straggler", "",
                   "expected --engine sim (the analytical model has no jitter or stragglers)");
        *rc = cli_fail(&err, SC_EINPUT);
        return 1;
    }
    /* options that would act on nothing here: taken and silently dropped before */
    if ((o->so.full && o->engine != ENGINE_SIM) || (o->trace_ranks && !o->trace)) {
        int sym = o->so.full && o->engine != ENGINE_SIM;
        sc_err_set(&err, SC_EINPUT, sym ? "--symmetry" : "--trace-ranks", "", "%s",
                   sym ? "expected --engine sim (off runs every rank of the simulator; the analytical model has no ranks)"
                       : "expected --trace FILE (it sets how many ranks the trace holds)");
        *rc = cli_fail(&err, SC_EINPUT);
        return 1;
    }
    return 0;
}

/* Say before starting when a simulation would not fit the time or memory budget; *total_s: the
 * simulations' estimated seconds in all (0 with the analytical engine). */
static int sim_budgets(const cli_setup *s, const opts *o, double *total_s, sc_err *err)
{
    *total_s = 0;
    for (int ni = 0; o->engine == ENGINE_SIM && ni < s->n_nodes; ni++)
        for (int li = 0; li < s->n_layouts; li++) {
            int rc;
            if (o->limit_s > 0 && (rc = cli_sim_budget(s, &s->training, s->nodes[ni], &s->layouts[li], &o->so,
                                                       o->limit_s, "--sim-limit-s 0", err)))
                return rc;
            double t, b;
            cli_sim_estimate(s, &s->training, s->nodes[ni], &s->layouts[li], &o->so, &t, &b);
            *total_s += t;
        }
    return 0;
}

/* --trace: the writer, titled, into o->so (NULL when no trace is asked for). */
static int trace_open(const cli_setup *s, opts *o, tr_writer **tw, sc_err *err)
{
    *tw = NULL;
    if (!o->trace)
        return 0;
    int rc = tr_open(o->trace, tw, err);
    if (rc)
        return rc;
    o->so.trace = *tw;
    char lay[96], title[256];
    snprintf(title, sizeof title, "%s, %s, %s x %d%s%s", spec_layout_str(&s->layouts[0], lay, sizeof lay),
             s->model.name, s->cluster.name, s->nodes[0], s->training.framework != FW_IDEAL ? ", " : "",
             s->training.framework != FW_IDEAL ? spec_framework_str(s->training.framework) : "");
    tr_title(*tw, title);
    o->so.trace_ranks = o->trace_ranks ? o->trace_ranks : 2 * s->cluster.gpus_per_node;
    return 0;
}

/* Every node count x layout into pts (row-major by node count), with the spread and the weak
 * scaling; busy: progress on stderr (total_s: the estimate it quotes). 0 or the first error. */
static int predict_points(const cli_setup *s, opts *o, const cli_calib *cal, int busy, double total_s, cli_point *pts,
                          sc_err *err)
{
    int np = 0;
    for (int ni = 0; ni < s->n_nodes; ni++)
        for (int li = 0; li < s->n_layouts; li++) {
            cli_point *p = &pts[np++];
            if (busy) {
                char lay[96];
                fprintf(stderr, "\rpredict: simulating %s on %d nodes (%d/%d, about %.0f s in all)   ",
                        spec_layout_str(&s->layouts[li], lay, sizeof lay), s->nodes[ni], np, s->n_nodes * s->n_layouts,
                        total_s);
            }
            if (o->so.trace) { /* counters every 1/400 of the analytical step estimate */
                cli_point est;
                if (cli_eval(s, cal, ENGINE_MODEL, NULL, &s->training, s->nodes[ni], &s->layouts[li], &est, err) == 0)
                    o->so.sample_s = est.r.step_s / 400;
            }
            int rc = cli_eval(s, cal, o->engine, &o->so, &s->training, s->nodes[ni], &s->layouts[li], p, err);
            if (rc)
                return rc;
            if (cli_calib_has_sd(&cal->cal))
                p->step_sd = cli_step_spread(s, cal, &s->training, s->nodes[ni], &s->layouts[li], 64, o->so.seed);
            if (ni > 0) { /* weak scaling: per-GPU samples/s vs the smallest node count */
                const cli_point *base = &pts[li];
                p->weak_eff = (p->r.samples_per_s / p->gpus) / (base->r.samples_per_s / base->gpus);
            }
        }
    return 0;
}

static int predict_json(const cli_setup *s, const opts *o, const cli_calib *cal, const cli_point *pts, int np,
                        double xr)
{
    json_t *arr = json_array();
    for (int i = 0; i < np; i++) {
        const cli_point *first = &pts[i / s->n_layouts * s->n_layouts];
        int show = pts[i].r.mem.fits || o->ignore_memory;
        json_array_append_new(arr, point_json(&pts[i], ratio_speedup(&first->r, &pts[i].r), show,
                                              s->cluster.price_usd_per_hour, xr));
    }
    json_t *root = json_pack("{s:s, s:s, s:s, s:i, s:i, s:s, s:b, s:s, s:o}", "cluster", s->cluster.name, "model",
                             s->model.name, "calibration", cal->path[0] ? cal->path : cal->cal.name, "micro_batch",
                             s->training.micro_batch, "grad_accum", s->training.grad_accum, "precision",
                             spec_precision_str(s->training.precision), "checkpointing", s->training.act_ckpt,
                             "framework", spec_framework_str(s->training.framework), "results", arr);
    /* "checkpointing" says whether anything is recomputed; this, which policy (true alone hid
     * selective, op and the MaxText policies behind full's value) */
    json_object_set_new(root, "checkpointing_mode", json_string(spec_ckpt_str(s->training.act_ckpt)));
    json_object_set_new(root, "stack", s->training.stack[0] ? json_string(s->training.stack) : json_null());
    json_object_set_new(root, "attention_kernel",
                        json_string(s->training.flash_attention
                                        ? spec_attn_kernel_str(kern_attn_resolve(s->training.attn_kernel, s->cluster.gpu.arch))
                                        : "unfused"));
    return cli_print_json(root);
}

/* 1 when the layouts at one node count run different global batches. */
static int batches_differ(const cli_point *row, int n)
{
    for (int li = 1; li < n; li++)
        if (!ratio_same_batch(&row[0].r, &row[li].r))
            return 1;
    return 0;
}

/* One node count's heading: its global batch, or each layout's when they differ. */
static void node_heading(const cli_point *row, int n)
{
    if (!batches_differ(row, n)) {
        printf("\n%d node%s, %d GPU%s, global batch %.0f sequence%s\n", row->nodes, row->nodes == 1 ? "" : "s",
               row->gpus, row->gpus == 1 ? "" : "s", row->r.samples_per_step, row->r.samples_per_step == 1 ? "" : "s");
        return;
    }
    printf("\n%d node%s, %d GPU%s, global batch per row (sequences):", row->nodes, row->nodes == 1 ? "" : "s", row->gpus,
           row->gpus == 1 ? "" : "s");
    for (int li = 0; li < n; li++) {
        char lay[64];
        printf("%s %s %.0f", li ? "," : "", spec_layout_str(&row[li].layout, lay, sizeof lay), row[li].r.samples_per_step);
    }
    printf("\n");
}

/* A row's notes under it: offloaded states, the spread, the simulator's rank skew. */
static void row_notes(const cli_point *p, int lw)
{
    const an_result *r = &p->r;
    if (r->mem.host > 0 || r->mem.innet > 0)
        printf("%-20s   offloaded states: %.1f GiB %s (of %.0f GiB)\n", "",
               cli_gib(r->mem.host > 0 ? r->mem.host : r->mem.innet),
               r->mem.host > 0 ? "host memory per node" : "on the in-network optimizer node",
               cli_gib(r->mem.host > 0 ? r->mem.host_cap : r->mem.innet_cap));
    if (r->mem.nvme > 0)
        printf("%-20s   on NVMe: %.1f GiB per node (of %.0f GiB)\n", "", cli_gib(r->mem.nvme), cli_gib(r->mem.nvme_cap));
    if (p->step_sd > 0)
        printf("%-*s   step %.3f ± %.3f s (1 sd, from the calibration's parameter uncertainties)\n", lw, "", r->step_s,
               p->step_sd);
    if (p->engine == ENGINE_SIM &&
        (p->sim.step_s - p->sim.first_end_s > 1e-9 * p->sim.step_s || p->sim.skew_s > 1e-9 * p->sim.step_s)) {
        printf("%-*s   ranks end within %.3f s; slowest rank %d; waits for peers %.3f s/rank", lw, "",
               p->sim.step_s - p->sim.first_end_s, p->sim.slowest_rank, p->sim.skew_s);
        if (p->sim.latest_count > 0)
            printf("; rank %d last to %ld of %ld collectives", p->sim.latest_rank, p->sim.latest_count,
                   p->sim.collectives);
        printf("\n");
    }
}

/* One node count's table: a row per layout (OOM said), its notes, then what the nodes cost. */
static void node_table(const cli_setup *s, const opts *o, const cli_point *row, int ni, int lw, double xr)
{
    node_heading(row, s->n_layouts);
    printf("%-*s %9s %10s %8s %6s %6s %9s %8s %8s %8s %7s %9s %9s %8s%s\n", lw, "layout", "step s", "samples/s",
           "TFLOPS", "MFU%", "HFU%", "compute s", "AG s", "RS s", "AR s", "optim s", "comm GB", "mem GiB", "speed-up",
           s->n_nodes > 1 && ni > 0 ? "  weak eff" : "");
    for (int li = 0; li < s->n_layouts; li++) {
        const cli_point *p = &row[li];
        const an_result *r = &p->r;
        char lay[64];
        spec_layout_str(&p->layout, lay, sizeof lay);
        if (!r->mem.fits && !o->ignore_memory) {
            double sb, need, cap;
            const char *where = mem_short_where(&r->mem, &sb, &need, &cap);
            int gpu = !strcmp(where, "GPU");
            printf("%-*s OOM: needs %.1f GiB %s, %s %.0f GiB (short by %.1f GiB)\n", lw, lay, cli_gib(need),
                   gpu ? "per GPU" : strcmp(where, "host") ? "on the in-network node" : "per node on the host",
                   gpu ? "HBM" : "has", cli_gib(cap), cli_gib(sb));
            continue;
        }
        printf("%-*s %9.3f %10.2f %8.1f %6.1f %6.1f %9.3f %8.3f %8.3f %8.3f %7.3f %9.1f %8.1f%s %7.2fx", lw, lay,
               r->step_s, r->samples_per_s, r->model_tflops_per_gpu, 100 * r->mfu, 100 * hfu_of(r, xr), r->compute_s,
               r->exposed_s[COLL_ALLGATHER], r->exposed_s[COLL_REDUCESCATTER], r->exposed_s[COLL_ALLREDUCE],
               r->optimizer_s, r->comm_bytes / 1e9, cli_gib(r->mem.total), r->mem.fits ? " " : "!",
               ratio_speedup(&row[0].r, r));
        if (isfinite(p->weak_eff))
            printf("  %8.1f%%", 100 * p->weak_eff);
        printf("\n");
        row_notes(p, lw);
    }
    if (s->cluster.price_usd_per_hour <= 0)
        return;
    /* on-demand price of the nodes, and per million tokens trained */
    double usd_h = s->cluster.price_usd_per_hour * row->nodes;
    printf("cost: %d node%s x $%.2f/h = $%.2f/h; $ per million tokens:", row->nodes, row->nodes == 1 ? "" : "s",
           s->cluster.price_usd_per_hour, usd_h);
    for (int li = 0; li < s->n_layouts; li++) {
        char lay[64];
        spec_layout_str(&row[li].layout, lay, sizeof lay);
        if ((row[li].r.mem.fits || o->ignore_memory) && row[li].r.tokens_per_s > 0)
            printf("%s %s %.2f", li ? "," : "", lay, usd_h / 3600.0 / row[li].r.tokens_per_s * 1e6);
        else
            printf("%s %s -", li ? "," : "", lay);
    }
    printf("\n");
}

/* The notes under the tables: the columns, the speed-up, which simulation ran, offload's columns. */
static void predict_notes(const cli_setup *s, const opts *o, const cli_point *pts, int np)
{
    int differ = 0;
    for (int ni = 0; ni < s->n_nodes; ni++)
        differ |= batches_differ(&pts[ni * s->n_layouts], s->n_layouts);
    printf("\nAG/RS/AR s: time the compute stream waits on all-gather / reduce-scatter / all-reduce; "
           "TFLOPS: model FLOPs per GPU; HFU%%: FLOPs executed (recompute, causal attention as run) over peak.\n");
    if (differ) /* a step-time ratio would compare different amounts of work */
        printf("speed-up: each row's samples/s over the first layout's at the same node count, micro-batch split and "
               "engine (%s): these rows run different global batches (per row above), so throughput is compared, "
               "not step time; a fixed split, not each layout's best (shardcast plan searches the splits).\n",
               o->engine == ENGINE_SIM ? "all simulated" : "all analytical");
    else
        printf("speed-up: the first layout's step time over each row's at the same node count, micro-batch split and "
               "engine (%s); a fixed split, not each layout's best (shardcast plan searches the splits).\n",
               o->engine == ENGINE_SIM ? "all simulated" : "all analytical");
    /* the rows' base shows no numbers when it does not fit: said, not left for the reader to miss */
    for (int ni = 0; ni < s->n_nodes && !o->ignore_memory && s->n_layouts > 1; ni++)
        if (!pts[ni * s->n_layouts].r.mem.fits) {
            char lay[64];
            spec_layout_str(&pts[ni * s->n_layouts].layout, lay, sizeof lay);
            printf("speed-up base: %s does not fit (OOM above): the speed-ups are over its step time as if it did "
                   "(--ignore-memory shows it; list a layout that fits first to compare with that)\n", lay);
            break;
        }
    /* which simulation ran: every rank, or the exact-symmetric quotient (sim/exec_sym.c) */
    int sym_runs = 0, least = 0, most = 0, of = 0;
    for (int i = 0; i < np; i++) {
        int ran = pts[i].sim.ranks_simulated;
        if (pts[i].engine == ENGINE_SIM && ran > 0 && ran < pts[i].gpus) {
            least = !sym_runs || ran < least ? ran : least;
            most = ran > most ? ran : most;
            of = pts[i].gpus;
            sym_runs++;
        }
    }
    if (sym_runs == 1)
        printf("simulator: exact symmetry: %d of %d ranks simulated, the others are their copies (--symmetry off: "
               "every rank, same result).\n",
               least, of);
    else if (sym_runs)
        printf("simulator: exact symmetry in %d of %d runs: %d-%d ranks simulated, the others are their copies "
               "(--symmetry off: every rank, same result).\n",
               sym_runs, np, least, most);
    for (int li = 0; li < s->n_layouts; li++)
        if (spec_layout_states_at(s->layouts[li].kind) != SPEC_AT_GPU) {
            printf("zero3-offload: RS s includes gradient copies to host, optim s the host CPU Adam (opt=nvme: with "
                   "its NVMe reads and writes), AG s the parameter fetches (param=cpu|nvme: over PCIe, then the "
                   "all-gather; framework fsdp: FSDP1 CPUOffload, the copy on the all-gather's stream and torch Adam on the "
                   "host); zero2-offload: RS s includes gradient copies to host, optim s the host CPU Adam, "
                   "AG s the updated partition's copy back (then the all-gather); luwu: AG = parameter fetch, RS = "
                   "gradient push (last micro-step: with the in-network update).\n");
            break;
        }
}

/* The text report: the job, the engine and calibration, a table per node count, the notes. */
static void predict_text(const cli_setup *s, const opts *o, const cli_calib *cal, const cli_point *pts, int np,
                         const wl *w, double xr)
{
    printf("%s, %s (%.1f B params), micro-batch %d x %d accumulation, %s, checkpointing %s%s%s\n", s->cluster.name,
           s->model.name, w->params / 1e9, s->training.micro_batch, s->training.grad_accum,
           spec_precision_str(s->training.precision), spec_ckpt_str(s->training.act_ckpt),
           s->training.framework != FW_IDEAL ? ", framework " : "",
           s->training.framework != FW_IDEAL ? spec_framework_str(s->training.framework) : "");
    cli_print_stack(s);
    printf("engine: %s; calibration: %s\n", o->engine == ENGINE_SIM ? "simulator" : "analytical model",
           cal->path[0] ? cal->path : "built-in defaults (no calibration file for this cluster)");
    for (int i = 0; i < s->n_layouts; i++) { /* what the release assumes (DeepSpeed, Megatron-FSDP) */
        char lay[64], fw[256];
        if (fw_describe(&s->training, &s->layouts[i], w, fw, sizeof fw)[0])
            printf("  %s: %s\n", spec_layout_str(&s->layouts[i], lay, sizeof lay), fw);
    }
    int lw = 20; /* the layout column: as wide as the longest name */
    for (int i = 0; i < s->n_layouts; i++) {
        char lay[64];
        int len = (int)strlen(spec_layout_str(&s->layouts[i], lay, sizeof lay));
        if (len > lw)
            lw = len;
    }
    for (int ni = 0; ni < s->n_nodes; ni++)
        node_table(s, o, &pts[ni * s->n_layouts], ni, lw, xr);
    predict_notes(s, o, pts, np);
}

int cmd_predict(int argc, char **argv)
{
    cli_setup s;
    opts o;
    memset(&o, 0, sizeof o);
    o.engine = ENGINE_SIM;
    o.so.seed = 1;
    o.limit_s = 600;
    cli_setup_init(&s, argv[0]);
    int rc;
    cli_calib cal;
    if (predict_load(argc, argv, &s, &o, &cal, &rc))
        return rc;
    sc_err err;
    double total_s;
    if ((rc = sim_budgets(&s, &o, &total_s, &err)))
        return cli_fail(&err, rc);
    int busy = (o.progress || isatty(2)) && o.engine == ENGINE_SIM && total_s > 1;
    tr_writer *tw;
    if ((rc = trace_open(&s, &o, &tw, &err)))
        return cli_fail(&err, rc);
    int np = s.n_nodes * s.n_layouts;
    cli_point *pts = calloc((size_t)np, sizeof *pts);
    if (!pts)
        rc = sc_err_set(&err, SC_ERUNTIME, "predict", "", "out of memory");
    else
        rc = predict_points(&s, &o, &cal, busy, total_s, pts, &err);
    if (rc) {
        if (tw)
            tr_abort(tw);
        free(pts);
        return cli_fail(&err, rc);
    }
    if (busy)
        fprintf(stderr, "\n");
    if (tw) {
        if ((rc = tr_close(tw, &err))) {
            free(pts);
            return cli_fail(&err, rc);
        }
        fprintf(stderr, "trace: %s (open in https://ui.perfetto.dev or chrome://tracing)\n", o.trace);
    }
    wl w;
    wl_build(&s.model, &s.training, &w);
    double xr = executed_ratio(&w);
    warn_ceiling(&s.cluster, s.training.precision, pts, np);
    if (s.json)
        rc = predict_json(&s, &o, &cal, pts, np, xr);
    else
        predict_text(&s, &o, &cal, pts, np, &w, xr);
    free(pts);
    return rc;
}
