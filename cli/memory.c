/* memory.c — `shardcast memory`: per-GPU memory of each layout on a cluster, component by
 * component, whether it fits in HBM (or by how much it is short), and MiCS's smallest p that
 * fits. Not here: the formulas (model/memory.c). */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "../model/layout_kind.h"
#include "../model/memory.h"
#include "commands.h"
#include "common.h"

static const char HELP[] =
    "usage: shardcast memory --cluster C --nodes N --model M [--layout L ...] [options]\n\n"
    "Memory per GPU of each layout: parameter, gradient and optimizer shards (ZeRO paper, mixed-\n"
    "precision Adam: 2 + 2 + 12 bytes per parameter), activations of one micro-batch, gathered\n"
    "parameter and prefetch buffers, buckets and a reserve; fits, or short by how many GiB.\n"
    "Without --layout: ddp, zero1, zero2, zero3 and MiCS at its smallest fitting p.\n\n" CLI_COMMON_HELP;

static const char *const COLS[] = {"params", "grads", "optim", "activ", "buffers", "reserve", "total"};

int cmd_memory(int argc, char **argv)
{
    cli_setup s;
    cli_setup_init(&s, argv[0]);
    int rc;
    if (cli_args(argc, argv, "memory", HELP, NULL, 0, &s, NULL, NULL, 0, NULL, &rc))
        return rc;
    sc_err err;
    if ((rc = cli_setup_load(&s, NEED_CLUSTER | NEED_MODEL | NEED_NODES, &err)))
        return cli_fail(&err, rc);
    wl w;
    wl_build(&s.model, &s.training, &w);
    for (int ni = 0; ni < s.n_nodes; ni++) /* every layout checked before anything is printed */
        for (int i = 0; i < s.n_layouts; i++)
            if ((rc = spec_layout_check(&s.layouts[i], &s.cluster, s.nodes[ni], &err)))
                return cli_fail(&err, rc);
    json_t *jout = json_array();
    for (int ni = 0; ni < s.n_nodes; ni++) {
        int nodes = s.nodes[ni], n = nodes * s.cluster.gpus_per_node;
        int best_p = mem_smallest_mics_p(&w, &s.training, n, &s.cluster, 1);
        spec_layout lays[CLI_MAX_LAYOUTS];
        int nl = s.n_layouts;
        for (int i = 0; i < nl; i++)
            lays[i] = s.layouts[i];
        if (!nl)
            nl = layout_kind_memory_table(best_p, lays, CLI_MAX_LAYOUTS);
        if (!s.json) {
            printf("%s x %d nodes (%d GPUs, %.0f GiB HBM each), %s (%.2f B params), micro-batch %d, %s, "
                   "checkpointing %s\n\n",
                   s.cluster.name, nodes, n, cli_gib(s.cluster.gpu.hbm_bytes), s.model.name, w.params / 1e9,
                   s.training.micro_batch, spec_precision_str(s.training.precision), spec_ckpt_str(s.training.act_ckpt));
            printf("%-22s", "layout");
            for (int c = 0; c < 7; c++)
                printf(" %8s", COLS[c]);
            printf("  %s\n", "GiB per GPU");
        }
        for (int i = 0; i < nl; i++) {
            char name[64];
            spec_layout_str(&lays[i], name, sizeof name);
            if ((rc = spec_layout_check(&lays[i], &s.cluster, nodes, &err))) {
                json_decref(jout);
                return cli_fail(&err, rc);
            }
            mem_breakdown m;
            mem_plan(&w, &s.training, &lays[i], n, &s.cluster, &m);
            double v[7] = {m.params, m.grads, m.optim, m.activations, m.gathered + m.buckets, m.reserve, m.total};
            if (s.json) {
                json_array_append_new(
                    jout, json_pack("{s:s, s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:f}", "layout",
                                    name, "nodes", nodes, "gpus", n, "params_GiB", cli_gib(m.params), "grads_GiB",
                                    cli_gib(m.grads), "optim_GiB", cli_gib(m.optim), "activations_GiB",
                                    cli_gib(m.activations), "gathered_GiB", cli_gib(m.gathered), "buckets_GiB",
                                    cli_gib(m.buckets), "reserve_GiB", cli_gib(m.reserve), "total_GiB",
                                    cli_gib(m.total), "hbm_GiB", cli_gib(m.hbm), "fits", m.fits, "short_GiB",
                                    cli_gib(m.short_by)));
                json_t *last = json_array_get(jout, json_array_size(jout) - 1);
                json_object_set_new(last, "host_per_node_GiB", json_real(cli_gib(m.host)));
                json_object_set_new(last, "in_network_GiB", json_real(cli_gib(m.innet)));
                json_object_set_new(last, "nvme_per_node_GiB", json_real(cli_gib(m.nvme)));
                continue;
            }
            printf("%-22s", name);
            for (int c = 0; c < 7; c++)
                printf(" %8.2f", cli_gib(v[c]));
            double sb, need, cap;
            const char *where = mem_short_where(&m, &sb, &need, &cap);
            if (m.fits)
                printf("  fits (%.1f GiB free)\n", cli_gib(m.hbm - m.total));
            else
                printf("  OOM%s%s: short by %.2f GiB\n", strcmp(where, "GPU") ? " on the " : "",
                       strcmp(where, "GPU") ? where : "", cli_gib(sb));
            if (m.host > 0)
                printf("%-22s host per node: %.2f GiB (%s%s) of %.0f GiB\n", "", cli_gib(m.host),
                       spec_layout_states_at(lays[i].kind) == SPEC_AT_GPU ? ""
                       : s.training.framework == FW_FSDP && lays[i].kind == LAYOUT_ZERO3_OFFLOAD
                           ? "FSDP1 CPUOffload: parameter, gradient and optimizer shards"
                       : !strcmp(name, "zero3-offload") || !strcmp(name, "zero2-offload")
                           ? "fp32 master, Adam m, v, fp32 grads"
                           : "the tiers' share: 16-bit params, fp32 grads, swap buffers",
                       mem_act_offloaded(&s.training)
                           ? spec_layout_states_at(lays[i].kind) == SPEC_AT_GPU ? "checkpointed activations"
                                                                                 : ", checkpointed activations"
                           : "",
                       cli_gib(m.host_cap));
            if (m.nvme > 0)
                printf("%-22s NVMe per node: %.2f GiB (%s) of %.0f GiB\n", "", cli_gib(m.nvme),
                       "offloaded states", cli_gib(m.nvme_cap));
            if (m.innet > 0)
                printf("%-22s in-network optimizer node: %.2f GiB (params, grads, Adam states) of %.0f GiB\n", "",
                       cli_gib(m.innet), cli_gib(m.innet_cap));
        }
        if (!s.json) {
            if (best_p)
                printf("\nMiCS: smallest partition group that fits is p = %d (%s)\n", best_p,
                       best_p <= s.cluster.gpus_per_node ? "inside one node" : "spanning nodes");
            else
                printf("\nMiCS: no partition size fits on %d GPUs; even p = %d is short\n", n, n);
            if (ni + 1 < s.n_nodes)
                printf("\n");
        }
    }
    if (s.json)
        return cli_print_json(jout);
    json_decref(jout);
    return 0;
}
