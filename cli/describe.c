/* describe.c — `shardcast describe --model M`: the workload of a model per layer, with totals,
 * so a user can check parameters and FLOPs against the paper. Not here: any layout. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "../model/stack.h"
#include "../model/workload.h"
#include "commands.h"
#include "common.h"

static const char HELP[] =
    "usage: shardcast describe --model NAME|FILE [--micro-batch B] [--precision P] [--json]\n"
    "       shardcast describe --stack NAME|FILE [--json]\n\n"
    "--stack: the software stack's bundle (configs/stacks): each training value it sets, with its\n"
    "source; explicit options and training keys override them.\n\n"
    "Per layer: parameters, forward and backward FLOPs for one micro-batch on one GPU, activation\n"
    "memory kept for backward (Korthikanti et al. 2022 eq. 1) and HBM bytes of the forward;\n"
    "then totals and the published parameter count for comparison.\n\n"
    "  --model NAME|FILE      model spec (configs/models), e.g. gpt3-175b; or a Hugging Face\n"
    "                         config.json: hf:path/config.json[,seq=N]\n"
    "  --training FILE|NAME   training spec (micro-batch, precision, checkpointing, ...)\n"
    "  --micro-batch B        sequences per micro-step (default 1)\n"
    "  --precision P          bf16 | fp16 | fp32 | tf32 | fp8 (default bf16)\n"
    "  --checkpointing on|off full activation checkpointing (default on)\n"
    "  --hidden-dropout P, --attention-dropout P  dropout probabilities (0: no kernels, no masks;\n"
    "                         default: framework megatron 0.1, else 0.1 for GELU, 0 for SwiGLU;\n"
    "                         a Hugging Face config states them); the line under the model\n"
    "                         shows those in effect\n"
    "  --json                 machine-readable output on stdout\n";

/* describe --stack: the bundle, one value per line with its source. */
static int describe_stack(const cli_setup *s)
{
    char path[4096];
    sc_err err;
    stack_bundle b;
    int rc = cli_resolve(s, "stacks", s->stack, path, sizeof path, &err);
    if (rc) {
        snprintf(err.source, sizeof err.source, "--stack");
        return cli_fail(&err, rc);
    }
    if ((rc = stack_load(path, &b, &err)))
        return cli_fail(&err, rc);
    if (s->json) {
        json_t *rows = json_array();
        for (int i = 0; i < b.n; i++)
            json_array_append_new(rows, json_pack("{s:s, s:s, s:s}", "key", b.row[i].key, "value", b.row[i].value,
                                                  "source", b.row[i].source));
        return cli_print_json(json_pack("{s:s, s:s, s:s, s:s, s:o}", "stack", b.name, "file", path, "source", b.source,
                                        "version", b.version, "values", rows));
    }
    printf("stack %s (%s)\n%s%s%s\n\n", b.name, path, b.source, b.version[0] ? "; version " : "", b.version);
    printf("%-18s %-12s %s\n", "key", "value", "source");
    for (int i = 0; i < b.n; i++)
        printf("%-18s %-12s %s\n", b.row[i].key, b.row[i].value, b.row[i].source);
    printf("\nNot set by the stack: the defaults (or the training spec and options).\n");
    return 0;
}

int cmd_describe(int argc, char **argv)
{
    cli_setup s;
    cli_setup_init(&s, argv[0]);
    /* shared options that change a step, not a model's layers: taken and ignored before */
    static const char *const REFUSE[] = {"cluster", "nodes", "layout", "layouts", "placement", "interference",
                                         "prefetch", "nccl-algo", "nccl-proto", "reduce-dtype", "optimizer",
                                         "tp-comm-overlap", "overlap-param-gather", "grad-accum", NULL};
    s.refuse = REFUSE;
    int rc;
    if (cli_args(argc, argv, "describe", HELP, NULL, 0, &s, NULL, NULL, 0, NULL, &rc))
        return rc;
    sc_err err;
    if (s.stack && !s.model_name) {
        /* the bundle alone: an option about a model's layers would be ignored, so it is refused */
        for (int i = 0; i < s.n_shared_given; i++)
            if (strcmp(s.shared_given[i], "stack")) {
                char opt[64];
                snprintf(opt, sizeof opt, "--%s", s.shared_given[i]);
                return cli_fail(&err, sc_err_set(&err, SC_EINPUT, opt, "",
                                                 "describe --stack alone prints the stack's values and would ignore "
                                                 "this option; add --model M to describe a model with the stack, or drop it"));
            }
        return describe_stack(&s);
    }
    if ((rc = cli_setup_load(&s, NEED_MODEL, &err)))
        return cli_fail(&err, rc);
    wl w;
    wl_build(&s.model, &s.training, &w);
    const spec_model *m = &s.model;
    if (s.json) {
        json_t *layers = json_array();
        for (int i = 0; i < w.n_layers; i++) {
            const wl_layer *l = &w.layer[i];
            json_array_append_new(layers, json_pack("{s:s, s:i, s:I, s:f, s:f, s:f, s:f, s:f}", "name", l->name,
                                                    "count", l->count, "params", (json_int_t)l->params, "fwd_flops", l->fwd_flops,
                                                    "bwd_flops", l->bwd_flops, "act_bytes", l->act_bytes,
                                                    "ckpt_bytes", l->ckpt_bytes, "fwd_hbm_bytes", l->fwd_hbm_bytes));
        }
        json_t *o = json_pack("{s:s, s:I, s:I, s:i, s:i, s:f, s:f, s:f, s:f, s:o}", "model", m->name, "params",
                              (json_int_t)w.params, "published_params", (json_int_t)m->published_params, "micro_batch",
                              w.micro_batch, "seq_len", m->seq_len, "model_flops_per_micro_step", w.model_flops,
                              "hw_flops_per_micro_step", w.hw_flops, "hidden_dropout", w.hidden_dropout,
                              "attention_dropout", w.attention_dropout, "layers", layers);
        return cli_print_json(o);
    }
    printf("%s (%s): %d layers, hidden %d, %d heads (kv %d), ffn %d%s, seq %d, vocab %d\n", m->name,
           m->encoder ? "encoder" : "decoder", m->layers, m->hidden, m->heads, m->kv_heads, m->ffn,
           m->swiglu ? " SwiGLU" : "", m->seq_len, m->vocab);
    printf("micro-batch %d x %d tokens, %s, activation checkpointing %s, dropout hidden %g / attention %g\n",
           w.micro_batch, m->seq_len, spec_precision_str(s.training.precision), spec_ckpt_str(s.training.act_ckpt),
           w.hidden_dropout, w.attention_dropout);
    const double doc = wl_attn_doc(&s.training, m->seq_len); /* packed: attention per document */
    if (doc < m->seq_len)
        printf("attention per packed document of %g tokens (attn_doc_len): %g problems per sequence\n", doc, m->seq_len / doc);
    printf("\n");
    printf("%-10s %6s %14s %12s %12s %12s %12s\n", "layer", "count", "params", "fwd GFLOP", "bwd GFLOP",
           "act MiB", "ckpt MiB");
    for (int i = 0; i < w.n_layers; i++) {
        const wl_layer *l = &w.layer[i];
        printf("%-10s %6d %14.0f %12.2f %12.2f %12.2f %12.2f\n", l->name, l->count, l->params, l->fwd_flops / 1e9,
               l->bwd_flops / 1e9, l->act_bytes / 1048576.0, l->ckpt_bytes / 1048576.0);
    }
    printf("\ntotal parameters      %.3f B", w.params / 1e9);
    if (m->published_params > 0)
        printf("   (published %.3f B, %+.2f%%)", m->published_params / 1e9,
               100.0 * (w.params - m->published_params) / m->published_params);
    printf("\nmodel FLOPs / micro-step / GPU   %.3f TFLOP (fwd + bwd; 6 x params x tokens = %.3f TFLOP)\n",
           w.model_flops / 1e12, 6.0 * w.params * w.tokens / 1e12);
    printf("hardware FLOPs / micro-step / GPU %.3f TFLOP (with recomputation)\n", w.hw_flops / 1e12);
    if (s.training.fused_linear_ce > 0) /* Liger-Kernel's chunks (model/workload.c wl_logits_bytes) */
        printf("loss, fused linear cross-entropy  %.2f MiB (one chunk of logits, input and head gradients)\n",
               w.logits_bytes / 1048576.0);
    else
        printf("fp32 logits for the loss          %.2f MiB\n", w.logits_bytes / 1048576.0);
    return 0;
}
