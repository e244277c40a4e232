/* test_spec.c — the spec loaders: good input converted to SI exactly, every class of bad input
 * rejected with SC_EINPUT and the file, JSON path and message a user needs, every shipped config
 * loading, DeepSpeed ds_config fixtures, and name resolution. Runs from the repository root.
 * Not here: layout strings (test_layout.c) or anything derived from a spec. */
#include "suites.h"

#include "../model/spec.h"
#include "../model/stack.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GiB 1073741824.0 /* 2^30 B */
#define REL 1e-12

/* a == b within a relative 1e-12 (exact formulas; leaves room only for rounding). */
#define ck_assert_rel(a, b) ck_assert_double_eq_tol((a), (b), REL * fabs((double)(b)) + 1e-300)

/* rc is SC_EINPUT and err names exactly this source and path, with a text containing part. */
#define ck_assert_err(rc, err, src, pth, part)                                                        \
    do {                                                                                              \
        ck_assert_int_eq((rc), SC_EINPUT);                                                            \
        ck_assert_str_eq((err).source, (src));                                                        \
        ck_assert_str_eq((err).path, (pth));                                                          \
        ck_assert_msg(strstr((err).text, (part)) != NULL, "text \"%s\" lacks \"%s\"", (err).text, (part)); \
    } while (0)

/* A valid cluster (the p4d.24xlarge numbers), one key per line so edits are easy to read. */
static const char CLUSTER[] =
    "{\n"
    "  \"name\": \"test-a100\",\n"
    "  \"source\": \"unit test\",\n"
    "  \"gpu\": {\"name\": \"A100-SXM4-40GB\", \"arch\": \"ampere\", \"peak_tflops\": 312,\n"
    "          \"memory_GiB\": 40, \"hbm_bandwidth_GBps\": 1555},\n"
    "  \"node\": {\n"
    "    \"gpus\": 8,\n"
    "    \"fabric\": {\"kind\": \"nvswitch\", \"link_bandwidth_GBps\": 25, \"links_per_gpu\": 12},\n"
    "    \"pcie_bandwidth_GBps\": 31.5,\n"
    "    \"nics\": 4,\n"
    "    \"nic_bandwidth_Gbps\": 100,\n"
    "    \"host_memory_GiB\": 1152\n"
    "  },\n"
    "  \"network\": {\"topology\": \"fat-tree\", \"oversubscription\": 1.0, \"switch_latency_us\": 1.5,\n"
    "              \"nodes_per_leaf\": 16, \"max_nodes\": 512},\n"
    "  \"price_usd_per_hour\": 32.7726\n"
    "}\n";

/* A valid 4-GPU NVLink mesh node (Perlmutter-like, all pairs with 4 links). */
static const char MESH[] =
    "{\"name\": \"mesh4\", \"source\": \"unit test\",\n"
    " \"gpu\": {\"name\": \"A100\", \"arch\": \"ampere\", \"peak_tflops\": 312, \"memory_GiB\": 40,\n"
    "         \"hbm_bandwidth_GBps\": 1555},\n"
    " \"node\": {\"gpus\": 4, \"pcie_bandwidth_GBps\": 31.5, \"nics\": 4, \"nic_bandwidth_Gbps\": 200,\n"
    "   \"fabric\": {\"kind\": \"nvlink_mesh\", \"link_bandwidth_GBps\": 25,\n"
    "     \"links\": [[0, 1, 4], [0, 2, 4], [0, 3, 4], [1, 2, 4], [1, 3, 4], [2, 3, 4]]}},\n"
    " \"network\": {\"topology\": \"dragonfly\", \"switch_latency_us\": 1.0, \"nodes_per_leaf\": 16},\n"
    " \"price_usd_per_hour\": 16.39}\n";
static const char MESH_LINKS[] = "[[0, 1, 4], [0, 2, 4], [0, 3, 4], [1, 2, 4], [1, 3, 4], [2, 3, 4]]";

/* GPT-3 175B as in configs/models/gpt3-175b.json (Brown et al. 2020, Table 2.1). */
static const char MODEL[] =
    "{\"name\": \"gpt3-175b\", \"source\": \"unit test\", \"type\": \"decoder\",\n"
    " \"layers\": 96, \"hidden\": 12288, \"heads\": 96, \"ffn\": 49152,\n"
    " \"seq_len\": 2048, \"vocab\": 50257, \"published_params_B\": 175}\n";

/* out = base with its single occurrence of `from` replaced by `to`. */
static void subst(char *out, size_t n, const char *base, const char *from, const char *to)
{
    const char *at = strstr(base, from);
    ck_assert_msg(at != NULL, "fixture lacks \"%s\"", from);
    ck_assert_msg(strstr(at + 1, from) == NULL, "fixture has \"%s\" twice", from);
    int w = snprintf(out, n, "%.*s%s%s", (int)(at - base), base, to, at + strlen(from));
    ck_assert(w > 0 && (size_t)w < n);
}

/* Parse CLUSTER with one substitution; returns rc, fills err. */
static int cluster_with(const char *from, const char *to, sc_err *err)
{
    char buf[4096];
    spec_cluster c;
    subst(buf, sizeof buf, CLUSTER, from, to);
    sc_err_clear(err);
    return spec_parse_cluster(buf, "mem.json", &c, err);
}

static int mesh_with_links(const char *links, spec_cluster *c, sc_err *err)
{
    char buf[4096];
    subst(buf, sizeof buf, MESH, MESH_LINKS, links);
    sc_err_clear(err);
    return spec_parse_cluster(buf, "mesh.json", c, err);
}

static int model_with(const char *from, const char *to, spec_model *m, sc_err *err)
{
    char buf[4096];
    subst(buf, sizeof buf, MODEL, from, to);
    sc_err_clear(err);
    return spec_parse_model(buf, "model.json", m, err);
}

/* Write text to a fresh temporary .json file; path receives its name (caller unlinks). */
static void write_tmp(const char *text, char *path, size_t n)
{
    snprintf(path, n, "/tmp/shardcast-test-XXXXXX.json");
    int fd = mkstemps(path, 5);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fputs(text, f) >= 0, 1);
    ck_assert_int_eq(fclose(f), 0);
}

/* ---- good input ---------------------------------------------------------------------- */

START_TEST(test_cluster_good_nvswitch)
{
    spec_cluster c;
    sc_err err;
    ck_assert_int_eq(spec_parse_cluster(CLUSTER, "mem.json", &c, &err), 0);
    ck_assert_str_eq(c.name, "test-a100");
    ck_assert_str_eq(c.source, "unit test");
    ck_assert_str_eq(c.gpu.name, "A100-SXM4-40GB");
    ck_assert_str_eq(c.gpu.arch, "ampere");
    ck_assert_double_eq(c.gpu.peak_flops, 312e12);       /* 312 TFLOP/s x 1e12 */
    ck_assert_double_eq(c.gpu.hbm_bytes, 40 * GiB);      /* 40 GiB x 2^30 = 42949672960 B */
    ck_assert_double_eq(c.gpu.hbm_bytes, 42949672960.0);
    ck_assert_double_eq(c.gpu.hbm_bw_Bps, 1555e9);       /* 1555 GB/s x 1e9 */
    ck_assert_int_eq(c.gpus_per_node, 8);
    ck_assert_int_eq(c.fabric.kind, FABRIC_NVSWITCH);
    ck_assert_double_eq(c.fabric.link_bw_Bps, 25e9);     /* 25 GB/s per link */
    ck_assert_int_eq(c.fabric.links_per_gpu, 12);
    ck_assert_double_eq(c.pcie_bw_Bps, 31.5e9);
    ck_assert_int_eq(c.nics_per_node, 4);
    ck_assert_double_eq(c.nic_bw_Bps, 12.5e9);           /* 100 Gbit/s / 8 bit/B = 12.5e9 B/s */
    ck_assert_double_eq(c.host_mem_bytes, 1152 * GiB);   /* 1236950581248 B */
    ck_assert_int_eq(c.topology, NET_FAT_TREE);
    ck_assert_double_eq(c.oversubscription, 1.0);
    ck_assert_rel(c.switch_latency_s, 1.5e-6);           /* 1.5 us */
    ck_assert_int_eq(c.nodes_per_leaf, 16);
    ck_assert_int_eq(c.max_nodes, 512);
    ck_assert_double_eq(c.price_usd_per_hour, 32.7726);
    ck_assert_str_eq(spec_fabric_str(c.fabric.kind), "nvswitch");
    /* no clock_ratio in this file: 1, and marked not given (the CLI says so, ux14); given: kept */
    ck_assert_double_eq(c.gpu.clock_ratio, 1.0);
    ck_assert_int_eq(c.gpu.clock_ratio_given, 0);
    char buf[4096];
    subst(buf, sizeof buf, CLUSTER, "\"peak_tflops\": 312,", "\"peak_tflops\": 312, \"clock_ratio\": 0.93,");
    ck_assert_int_eq(spec_parse_cluster(buf, "mem.json", &c, &err), 0);
    ck_assert_double_eq(c.gpu.clock_ratio, 0.93);
    ck_assert_int_eq(c.gpu.clock_ratio_given, 1);
}
END_TEST

START_TEST(test_cluster_good_mesh)
{
    spec_cluster c;
    sc_err err;
    ck_assert_int_eq(spec_parse_cluster(MESH, "mesh.json", &c, &err), 0);
    ck_assert_int_eq(c.fabric.kind, FABRIC_NVLINK_MESH);
    ck_assert_double_eq(c.fabric.link_bw_Bps, 25e9);
    ck_assert_double_eq(c.nic_bw_Bps, 25e9); /* 200 Gbit/s / 8 */
    ck_assert_int_eq(c.topology, NET_DRAGONFLY);
    /* links are symmetric, 4 per listed pair, none from a GPU to itself */
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            ck_assert_int_eq(c.fabric.links[i][j], i == j ? 0 : 4);
    ck_assert_int_eq(c.fabric.links[4][0], 0);
    /* optional keys absent: oversubscription 1 (non-blocking), host memory 0, max_nodes 0 */
    ck_assert_double_eq(c.oversubscription, 1.0);
    ck_assert_double_eq(c.host_mem_bytes, 0.0);
    ck_assert_int_eq(c.max_nodes, 0);
    ck_assert_str_eq(spec_fabric_str(c.fabric.kind), "nvlink_mesh");
}
END_TEST

START_TEST(test_cluster_good_pcie)
{
    char buf[4096];
    spec_cluster c;
    sc_err err;
    subst(buf, sizeof buf, CLUSTER, "{\"kind\": \"nvswitch\", \"link_bandwidth_GBps\": 25, \"links_per_gpu\": 12}",
          "{\"kind\": \"pcie\"}");
    ck_assert_int_eq(spec_parse_cluster(buf, "pcie.json", &c, &err), 0);
    ck_assert_int_eq(c.fabric.kind, FABRIC_PCIE);
    ck_assert_double_eq(c.fabric.link_bw_Bps, 0.0); /* no NVLink */
    ck_assert_str_eq(spec_fabric_str(c.fabric.kind), "pcie");
}
END_TEST

START_TEST(test_cluster_shipped_topologies)
{
    /* Issue 15 item 4: each shipped cluster's network as its source states (network.source):
     * DGX H100 SuperPOD rail-optimized, scalable units of 32; Perlmutter Slingshot dragonfly,
     * 128-node groups; p4d (EC2 UltraCluster, non-blocking; rail wiring not published):
     * fat-tree, 1:1. A file without network.source loads with an empty one. */
    static const struct { const char *name; spec_net_topology t; int npl; const char *src; } want[] = {
        {"dgx-h100", NET_RAIL, 32, "RA-11333-001"},
        {"dgx-a100", NET_RAIL, 20, "rail-optimized"},
        {"perlmutter-gpu", NET_DRAGONFLY, 128, "dragonfly"},
        {"p4d.24xlarge", NET_FAT_TREE, 16, "non-blocking"},
        {"p5.48xlarge", NET_FAT_TREE, 16, "non-blocking"},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        char path[128];
        snprintf(path, sizeof path, "configs/clusters/%s.json", want[i].name);
        spec_cluster c;
        sc_err err;
        ck_assert_msg(spec_load_cluster(path, &c, &err) == 0, "%s", err.text);
        ck_assert_int_eq(c.topology, want[i].t);
        ck_assert_int_eq(c.nodes_per_leaf, want[i].npl);
        ck_assert_double_eq(c.oversubscription, 1.0);
        ck_assert_msg(strstr(c.net_source, want[i].src), "%s: %s", want[i].name, c.net_source);
    }
    spec_cluster c;
    sc_err err;
    ck_assert_int_eq(spec_parse_cluster(CLUSTER, "mem.json", &c, &err), 0);
    ck_assert_str_eq(c.net_source, "");
}
END_TEST

START_TEST(test_model_good_defaults)
{
    spec_model m;
    sc_err err;
    ck_assert_int_eq(spec_parse_model(MODEL, "model.json", &m, &err), 0);
    ck_assert_str_eq(m.name, "gpt3-175b");
    ck_assert_int_eq(m.encoder, 0);
    ck_assert_int_eq(m.layers, 96);
    ck_assert_int_eq(m.hidden, 12288);
    ck_assert_int_eq(m.heads, 96);
    ck_assert_int_eq(m.kv_heads, 96); /* default = heads */
    ck_assert_int_eq(m.ffn, 49152);
    ck_assert_int_eq(m.seq_len, 2048);
    ck_assert_int_eq(m.vocab, 50257);
    /* documented defaults (configs/README.md): GeLU, LayerNorm, biases, tied, learned positions */
    ck_assert_int_eq(m.swiglu, 0);
    ck_assert_int_eq(m.rmsnorm, 0);
    ck_assert_int_eq(m.bias, 1);
    ck_assert_int_eq(m.tied_embeddings, 1);
    ck_assert_int_eq(m.learned_positions, 1);
    ck_assert_double_eq(m.published_params, 175e9); /* 175 B x 1e9 */
}
END_TEST

START_TEST(test_model_good_llama_style)
{
    static const char js[] =
        "{\"name\": \"l70\", \"source\": \"s\", \"type\": \"encoder\", \"layers\": 80, \"hidden\": 8192,"
        " \"heads\": 64, \"kv_heads\": 8, \"ffn\": 28672, \"seq_len\": 4096, \"vocab\": 32000,"
        " \"mlp\": \"swiglu\", \"norm\": \"rmsnorm\", \"bias\": false, \"tied_embeddings\": false,"
        " \"positions\": \"rotary\", \"published_params_B\": 69.0}";
    spec_model m;
    sc_err err;
    ck_assert_int_eq(spec_parse_model(js, NULL, &m, &err), 0);
    ck_assert_int_eq(m.encoder, 1);
    ck_assert_int_eq(m.kv_heads, 8);
    ck_assert_int_eq(m.swiglu, 1);
    ck_assert_int_eq(m.rmsnorm, 1);
    ck_assert_int_eq(m.bias, 0);
    ck_assert_int_eq(m.tied_embeddings, 0);
    ck_assert_int_eq(m.learned_positions, 0);
    ck_assert_double_eq(m.published_params, 69e9);
}
END_TEST

START_TEST(test_training_defaults_and_overrides)
{
    spec_training t;
    sc_err err;
    spec_training_defaults(&t);
    /* defaults documented in configs/README.md */
    ck_assert_int_eq(t.micro_batch, 1);
    ck_assert_int_eq(t.grad_accum, 1);
    ck_assert_int_eq(t.precision, PREC_BF16);
    ck_assert_int_eq(t.act_ckpt, 1);
    ck_assert_int_eq(t.flash_attention, 1);
    ck_assert_int_eq(t.prefetch_layers, 1);
    ck_assert_double_eq(t.bucket_bytes, 25e6);     /* 25 MB */
    ck_assert_double_eq(t.reserve_bytes, 2 * GiB); /* 2 GiB */

    /* keys present replace, keys absent keep the defaults */
    ck_assert_int_eq(spec_parse_training("{\"grad_accum\": 4, \"precision\": \"fp32\"}", "t.json", &t, &err), 0);
    ck_assert_int_eq(t.grad_accum, 4);
    ck_assert_int_eq(t.precision, PREC_FP32);
    ck_assert_int_eq(t.micro_batch, 1);
    ck_assert_double_eq(t.bucket_bytes, 25e6);

    ck_assert_int_eq(spec_parse_training("{\"micro_batch\": 16, \"grad_accum\": 2, \"precision\": \"fp16\","
                                         " \"activation_checkpointing\": false, \"flash_attention\": false,"
                                         " \"prefetch_layers\": 0, \"bucket_MB\": 200, \"reserve_GiB\": 0}",
                                         "t.json", &t, &err),
                     0);
    ck_assert_int_eq(t.micro_batch, 16);
    ck_assert_int_eq(t.grad_accum, 2);
    ck_assert_int_eq(t.precision, PREC_FP16);
    ck_assert_int_eq(t.act_ckpt, 0);
    ck_assert_int_eq(t.flash_attention, 0);
    ck_assert_int_eq(t.prefetch_layers, 0);
    ck_assert_double_eq(t.bucket_bytes, 200e6); /* 200 MB x 1e6 */
    ck_assert_double_eq(t.reserve_bytes, 0.0);  /* reserve may be 0 (a number >= 0) */
    /* knobs35: dropout probabilities, -1 (the framework's / model's) until given; 0 to below 1 */
    ck_assert_double_eq(t.hidden_dropout, -1);
    ck_assert_double_eq(t.attention_dropout, -1);
    ck_assert_int_eq(spec_parse_training("{\"hidden_dropout\": 0, \"attention_dropout\": 0.1}", "t.json", &t, &err), 0);
    ck_assert_double_eq(t.hidden_dropout, 0);
    ck_assert_double_eq(t.attention_dropout, 0.1);
    {
        spec_training u;
        spec_training_defaults(&u);
        ck_assert_int_eq(spec_parse_training("{\"hidden_dropout\": 1}", "t.json", &u, &err), SC_EINPUT);
        ck_assert_str_eq(err.path, "$.hidden_dropout");
        ck_assert_int_eq(spec_parse_training("{\"attention_dropout\": -0.1}", "t.json", &u, &err), SC_EINPUT);
        ck_assert_str_eq(err.path, "$.attention_dropout");
        ck_assert_int_eq(spec_parse_training("{\"attention_dropout\": \"0.1\"}", "t.json", &u, &err), SC_EINPUT);
    }
    ck_assert_str_eq(spec_precision_str(PREC_BF16), "bf16");
    ck_assert_str_eq(spec_precision_str(PREC_FP16), "fp16");
    ck_assert_str_eq(spec_precision_str(PREC_FP32), "fp32");
}
END_TEST

START_TEST(test_training_load_file)
{
    spec_training t;
    sc_err err;
    spec_training_defaults(&t);
    ck_assert_int_eq(spec_load_training("tests/fixtures/training_fp16.json", &t, &err), 0);
    ck_assert_int_eq(t.micro_batch, 8);
    ck_assert_int_eq(t.precision, PREC_FP16);
    ck_assert_int_eq(t.flash_attention, 0);
    ck_assert_double_eq(t.bucket_bytes, 50e6);
    ck_assert_int_eq(t.act_ckpt, 1);  /* not in the file: default */
    ck_assert_int_eq(t.grad_accum, 1); /* not in the file: default */
}
END_TEST

/* ---- bad input: one test per class --------------------------------------------------- */

START_TEST(test_bad_invalid_json)
{
    /* third line lacks a value: Jansson stops at the ',' on line 3 */
    spec_cluster c;
    sc_err err;
    int rc = spec_parse_cluster("{\n  \"name\": \"x\",\n  \"gpu\": ,\n}", "mem.json", &c, &err);
    ck_assert_err(rc, err, "mem.json", "", "invalid JSON at line 3 column ");
    ck_assert_msg(strstr(err.text, "unexpected token") != NULL, "%s", err.text);
    /* truncated input */
    rc = spec_parse_model("{\"name\": ", "m.json", &(spec_model){0}, &err);
    ck_assert_err(rc, err, "m.json", "", "invalid JSON at line 1 column ");
    /* empty input */
    rc = spec_parse_training("", "t.json", &(spec_training){0}, &err);
    ck_assert_err(rc, err, "t.json", "", "invalid JSON at line 1");
    /* no source given: errors name "<input>" */
    rc = spec_parse_training("{", NULL, &(spec_training){0}, &err);
    ck_assert_err(rc, err, "<input>", "", "invalid JSON");
}
END_TEST

START_TEST(test_bad_not_object)
{
    spec_cluster c;
    sc_err err;
    int rc = spec_parse_cluster("[1, 2]", "mem.json", &c, &err);
    ck_assert_err(rc, err, "mem.json", "$", "");
    ck_assert_str_eq(err.text, "expected an object, got an array");
    /* a bare scalar is not JSON text to Jansson without JSON_DECODE_ANY */
    rc = spec_parse_training("42", "t.json", &(spec_training){0}, &err);
    ck_assert_err(rc, err, "t.json", "", "invalid JSON at line 1");
}
END_TEST

START_TEST(test_bad_unknown_key_top)
{
    sc_err err;
    int rc = cluster_with("\"price_usd_per_hour\": 32.7726", "\"price_usd_per_hour\": 32.7726, \"colour\": \"red\"",
                          &err);
    ck_assert_err(rc, err, "mem.json", "$.colour", "");
    ck_assert_str_eq(err.text, "unknown key (expected one of: name, source, gpu, node, network, price_usd_per_hour, in_network_optimizer)");
}
END_TEST

START_TEST(test_bad_unknown_key_nested)
{
    sc_err err;
    /* a typo must not silently become a missing/default value */
    int rc = cluster_with("nic_bandwidth_Gbps", "nic_bandwith_Gbps", &err);
    /* one edit from nic_bandwidth_Gbps (within a third of its 17 letters): named (ux14) */
    ck_assert_err(rc, err, "mem.json", "$.node.nic_bandwith_Gbps", "unknown key; did you mean nic_bandwidth_Gbps?");
    /* two levels down */
    rc = cluster_with("\"links_per_gpu\": 12", "\"links_per_gpu\": 12, \"links\": []", &err);
    ck_assert_err(rc, err, "mem.json", "$.node.fabric.links",
                  "unknown key (expected one of: kind, link_bandwidth_GBps, links_per_gpu)");
    /* in a training object */
    rc = spec_parse_training("{\"micro_batch_size\": 2}", "t.json", &(spec_training){0}, &err);
    /* micro_batch: 5 deletions, within 16 / 3 = 5 */
    ck_assert_err(rc, err, "t.json", "$.micro_batch_size", "unknown key; did you mean micro_batch?");
    /* nothing near: the allowed keys, whole names, "..." where the message would overflow */
    rc = spec_parse_training("{\"colour\": 2}", "t.json", &(spec_training){0}, &err);
    ck_assert_err(rc, err, "t.json", "$.colour", "unknown key (expected one of: micro_batch, grad_accum, ");
    ck_assert_msg(strstr(err.text, ", ...)") != NULL, "%s", err.text);
}
END_TEST

START_TEST(test_bad_wrong_type)
{
    sc_err err;
    int rc = cluster_with("\"peak_tflops\": 312", "\"peak_tflops\": \"fast\"", &err);
    ck_assert_err(rc, err, "mem.json", "$.gpu.peak_tflops", "");
    ck_assert_str_eq(err.text, "expected a positive number, got \"fast\"");
    rc = cluster_with("\"gpus\": 8", "\"gpus\": 8.5", &err);
    ck_assert_err(rc, err, "mem.json", "$.node.gpus", "");
    ck_assert_str_eq(err.text, "expected an integer from 1 to 64, got 8.5");
    rc = spec_parse_cluster("{\"name\": \"a\", \"source\": \"b\", \"price_usd_per_hour\": 1, \"gpu\": []}", "mem.json",
                            &(spec_cluster){0}, &err);
    ck_assert_err(rc, err, "mem.json", "$.gpu", "");
    ck_assert_str_eq(err.text, "expected an object, got an array");
    spec_model m;
    rc = model_with("\"layers\": 96", "\"layers\": true", &m, &err);
    ck_assert_err(rc, err, "model.json", "$.layers", "");
    ck_assert_str_eq(err.text, "expected an integer from 1 to 100000, got true");
    rc = spec_parse_training("{\"activation_checkpointing\": 1}", "t.json", &(spec_training){0}, &err);
    ck_assert_err(rc, err, "t.json", "$.activation_checkpointing", "");
    ck_assert_str_eq(err.text, "expected true or false, got 1");
}
END_TEST

START_TEST(test_bad_negative)
{
    sc_err err;
    int rc = cluster_with("\"memory_GiB\": 40", "\"memory_GiB\": -40", &err);
    ck_assert_err(rc, err, "mem.json", "$.gpu.memory_GiB", "");
    ck_assert_str_eq(err.text, "expected a positive number, got -40");
    rc = cluster_with("\"switch_latency_us\": 1.5", "\"switch_latency_us\": -0.5", &err);
    ck_assert_err(rc, err, "mem.json", "$.network.switch_latency_us", "");
    ck_assert_str_eq(err.text, "expected a number >= 0, got -0.5");
    rc = cluster_with("\"oversubscription\": 1.0", "\"oversubscription\": 0.5", &err);
    ck_assert_err(rc, err, "mem.json", "$.network.oversubscription", "");
    ck_assert_str_eq(err.text, "expected a number >= 1, got 0.5");
    rc = spec_parse_training("{\"reserve_GiB\": -1}", "t.json", &(spec_training){0}, &err);
    ck_assert_err(rc, err, "t.json", "$.reserve_GiB", "");
    ck_assert_str_eq(err.text, "expected a number >= 0, got -1");
}
END_TEST

START_TEST(test_bad_zero)
{
    sc_err err;
    int rc = cluster_with("\"nic_bandwidth_Gbps\": 100", "\"nic_bandwidth_Gbps\": 0", &err);
    ck_assert_err(rc, err, "mem.json", "$.node.nic_bandwidth_Gbps", "");
    ck_assert_str_eq(err.text, "expected a positive number, got 0");
    rc = cluster_with("\"nics\": 4", "\"nics\": 0", &err);
    ck_assert_err(rc, err, "mem.json", "$.node.nics", "");
    ck_assert_str_eq(err.text, "expected an integer from 1 to 64, got 0");
    rc = spec_parse_training("{\"micro_batch\": 0}", "t.json", &(spec_training){0}, &err);
    ck_assert_err(rc, err, "t.json", "$.micro_batch", "");
    ck_assert_str_eq(err.text, "expected an integer from 1 to 1048576, got 0"); /* 1 << 20 */
    rc = spec_parse_training("{\"bucket_MB\": 0.0}", "t.json", &(spec_training){0}, &err);
    ck_assert_err(rc, err, "t.json", "$.bucket_MB", "");
    ck_assert_str_eq(err.text, "expected a positive number, got 0");
}
END_TEST

START_TEST(test_bad_huge_number)
{
    /* JSON has no inf/nan; 1e400 overflows a double and Jansson rejects the text itself
     * ("real number overflow"), so the rejection is an invalid-JSON one with no path. */
    sc_err err;
    int rc = cluster_with("\"peak_tflops\": 312", "\"peak_tflops\": 1e400", &err);
    ck_assert_err(rc, err, "mem.json", "", "invalid JSON at line 4 column ");
    ck_assert_msg(strstr(err.text, "overflow") != NULL, "%s", err.text);
    /* an integer too large for an int field but fine for JSON: range error with the path */
    spec_model m;
    rc = model_with("\"layers\": 96", "\"layers\": 4000000000", &m, &err);
    ck_assert_err(rc, err, "model.json", "$.layers", "");
    ck_assert_str_eq(err.text, "expected an integer from 1 to 100000, got 4000000000");
}
END_TEST

START_TEST(test_bad_missing_key)
{
    sc_err err;
    int rc = cluster_with(",\n  \"price_usd_per_hour\": 32.7726", "", &err);
    ck_assert_err(rc, err, "mem.json", "$.price_usd_per_hour", "");
    ck_assert_str_eq(err.text, "missing required key (expected a positive number)");
    rc = cluster_with("\"switch_latency_us\": 1.5,", "", &err);
    ck_assert_err(rc, err, "mem.json", "$.network.switch_latency_us", "");
    ck_assert_str_eq(err.text, "missing required key (expected a number >= 0)");
    rc = cluster_with("\"kind\": \"nvswitch\", ", "", &err);
    ck_assert_err(rc, err, "mem.json", "$.node.fabric.kind", "missing required key (expected one of \"nvswitch\"");
    spec_model m;
    rc = model_with("\"hidden\": 12288, ", "", &m, &err);
    ck_assert_err(rc, err, "model.json", "$.hidden", "");
    ck_assert_str_eq(err.text, "missing required key (expected an integer from 1 to 16777216)"); /* 1 << 24 */
    rc = model_with("\"name\": \"gpt3-175b\", ", "", &m, &err);
    ck_assert_err(rc, err, "model.json", "$.name", "");
    ck_assert_str_eq(err.text, "missing required key (expected a string)");
}
END_TEST

START_TEST(test_bad_enum)
{
    sc_err err;
    int rc = cluster_with("\"arch\": \"ampere\"", "\"arch\": \"pascal\"", &err);
    ck_assert_err(rc, err, "mem.json", "$.gpu.arch", "");
    ck_assert_str_eq(err.text, "expected one of \"volta\", \"ampere\", \"hopper\", \"ada\", \"blackwell\", \"cpu\", got \"pascal\"");
    rc = cluster_with("\"topology\": \"fat-tree\"", "\"topology\": \"torus\"", &err);
    ck_assert_err(rc, err, "mem.json", "$.network.topology", "");
    ck_assert_str_eq(err.text, "expected one of \"fat-tree\", \"rail\", \"dragonfly\", got \"torus\"");
    rc = spec_parse_training("{\"precision\": \"fp4\"}", "t.json", &(spec_training){0}, &err);
    ck_assert_err(rc, err, "t.json", "$.precision", "");
    ck_assert_str_eq(err.text, "expected one of \"bf16\", \"fp16\", \"fp32\", \"tf32\", \"fp8\", got \"fp4\"");
    /* the right spelling, wrong type */
    rc = cluster_with("\"arch\": \"ampere\"", "\"arch\": 80", &err);
    ck_assert_err(rc, err, "mem.json", "$.gpu.arch", "got 80");
}
END_TEST

START_TEST(test_bad_duplicate_key)
{
    /* JSON_REJECT_DUPLICATES: a repeated key is a Jansson decode error, so no JSON path */
    sc_err err;
    int rc = cluster_with("\"nics\": 4,", "\"nics\": 4,\n    \"nics\": 2,", &err);
    ck_assert_err(rc, err, "mem.json", "", "invalid JSON at line 11 column ");
    ck_assert_msg(strstr(err.text, "duplicate object key") != NULL, "%s", err.text);
}
END_TEST

START_TEST(test_bad_string_too_long)
{
    /* name holds SPEC_NAME_MAX - 1 = 63 characters */
    char name[80], to[100];
    sc_err err;
    memset(name, 'a', 64);
    name[64] = '\0';
    snprintf(to, sizeof to, "\"name\": \"%s\"", name);
    int rc = cluster_with("\"name\": \"test-a100\"", to, &err);
    ck_assert_err(rc, err, "mem.json", "$.name", "expected a string of at most 63 characters, got \"aaaa");
    rc = cluster_with("\"name\": \"test-a100\"", "\"name\": \"\"", &err);
    ck_assert_err(rc, err, "mem.json", "$.name", "");
    ck_assert_str_eq(err.text, "expected a non-empty string, got \"\"");
}
END_TEST

START_TEST(test_bad_heads_not_dividing_hidden)
{
    spec_model m;
    sc_err err;
    /* 12288 / 100 = 122.88 */
    int rc = model_with("\"heads\": 96", "\"heads\": 100", &m, &err);
    ck_assert_err(rc, err, "model.json", "$.heads", "");
    ck_assert_str_eq(err.text, "expected a divisor of hidden (12288), got 100 (hidden / heads = 122.880)");
}
END_TEST

START_TEST(test_bad_kv_heads)
{
    spec_model m;
    sc_err err;
    /* 96 % 5 = 1 */
    int rc = model_with("\"heads\": 96", "\"heads\": 96, \"kv_heads\": 5", &m, &err);
    ck_assert_err(rc, err, "model.json", "$.kv_heads", "");
    ck_assert_str_eq(err.text, "expected a divisor of heads (96), got 5");
    /* more KV heads than heads */
    rc = model_with("\"heads\": 96", "\"heads\": 96, \"kv_heads\": 192", &m, &err);
    ck_assert_err(rc, err, "model.json", "$.kv_heads", "");
    ck_assert_str_eq(err.text, "expected an integer from 1 to 96, got 192");
    /* a divisor is fine: 96 / 8 = 12 query heads per KV head */
    ck_assert_int_eq(model_with("\"heads\": 96", "\"heads\": 96, \"kv_heads\": 8", &m, &err), 0);
    ck_assert_int_eq(m.kv_heads, 8);
}
END_TEST

START_TEST(test_bad_mesh_self_link)
{
    spec_cluster c;
    sc_err err;
    int rc = mesh_with_links("[[0, 1, 4], [2, 2, 1]]", &c, &err);
    ck_assert_err(rc, err, "mesh.json", "$.node.fabric.links[1]", "");
    ck_assert_str_eq(err.text, "expected two different GPUs, got 2 twice");
}
END_TEST

START_TEST(test_bad_mesh_duplicate_pair)
{
    spec_cluster c;
    sc_err err;
    /* the same pair written the other way round is still the same pair */
    int rc = mesh_with_links("[[0, 1, 4], [0, 2, 4], [0, 3, 4], [1, 0, 2]]", &c, &err);
    ck_assert_err(rc, err, "mesh.json", "$.node.fabric.links[3]", "");
    ck_assert_str_eq(err.text, "expected each GPU pair once, got 1-0 again");
}
END_TEST

START_TEST(test_bad_mesh_index_out_of_range)
{
    spec_cluster c;
    sc_err err;
    /* 4 GPUs: indices 0..3 */
    int rc = mesh_with_links("[[0, 1, 4], [0, 4, 1]]", &c, &err);
    ck_assert_err(rc, err, "mesh.json", "$.node.fabric.links[1][1]", "");
    ck_assert_str_eq(err.text, "expected a GPU index from 0 to 3, got 4");
    rc = mesh_with_links("[[-1, 1, 4]]", &c, &err);
    ck_assert_err(rc, err, "mesh.json", "$.node.fabric.links[0][0]", "");
    ck_assert_str_eq(err.text, "expected a GPU index from 0 to 3, got -1");
    /* link count 1..32 */
    rc = mesh_with_links("[[0, 1, 0]]", &c, &err);
    ck_assert_err(rc, err, "mesh.json", "$.node.fabric.links[0][2]", "");
    ck_assert_str_eq(err.text, "expected a link count from 1 to 32, got 0");
    /* not a triple */
    rc = mesh_with_links("[[0, 1]]", &c, &err);
    ck_assert_err(rc, err, "mesh.json", "$.node.fabric.links[0]", "");
    ck_assert_str_eq(err.text, "expected [gpu_a, gpu_b, links], got an array");
    rc = mesh_with_links("[]", &c, &err);
    ck_assert_err(rc, err, "mesh.json", "$.node.fabric.links", "expected a non-empty array");
}
END_TEST

START_TEST(test_bad_mesh_disconnected)
{
    spec_cluster c;
    sc_err err;
    /* two islands {0,1} and {2,3}: 2 GPUs reachable from GPU 0 */
    int rc = mesh_with_links("[[0, 1, 4], [2, 3, 4]]", &c, &err);
    ck_assert_err(rc, err, "mesh.json", "$.node.fabric.links", "");
    ck_assert_str_eq(err.text, "expected links connecting all 4 GPUs, got 2 reachable from GPU 0");
    /* a chain 0-1-2-3 is connected */
    ck_assert_int_eq(mesh_with_links("[[0, 1, 1], [1, 2, 1], [2, 3, 1]]", &c, &err), 0);
    ck_assert_int_eq(c.fabric.links[2][1], 1);
    ck_assert_int_eq(c.fabric.links[0][3], 0);
}
END_TEST

START_TEST(test_err_str)
{
    sc_err err;
    char buf[600];
    int rc = cluster_with("\"peak_tflops\": 312", "\"peak_tflops\": \"fast\"", &err);
    ck_assert_int_eq(rc, SC_EINPUT);
    ck_assert_str_eq(sc_err_str(&err, buf, sizeof buf),
                     "mem.json: $.gpu.peak_tflops: expected a positive number, got \"fast\"");
    sc_err_clear(&err);
    ck_assert_str_eq(err.source, "");
    ck_assert_int_eq(sc_err_set(&err, SC_ERUNTIME, "", "", "x=%d", 3), SC_ERUNTIME);
    ck_assert_str_eq(sc_err_str(&err, buf, sizeof buf), "x=3"); /* empty parts left out */
    ck_assert_int_eq(sc_err_set(NULL, SC_EINPUT, "a", "b", "c"), SC_EINPUT);
}
END_TEST

/* ---- files --------------------------------------------------------------------------- */

/* Every .json under configs/<kind>; returns how many were loaded. Each must load and be named as
 * its file (spec_resolve finds configs by that name). */
static int load_dir(const char *kind)
{
    char dir[64];
    snprintf(dir, sizeof dir, "configs/%s", kind);
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s (tests run from the repository root)", dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
            continue;
        char path[512], base[256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(base, sizeof base, "%.*s", (int)(len - 5), e->d_name);
        sc_err err;
        sc_err_clear(&err);
        char msg[600];
        int rc;
        const char *name;
        spec_cluster c;
        spec_model m;
        spec_scenario s;
        if (!strcmp(kind, "clusters")) {
            rc = spec_load_cluster(path, &c, &err);
            name = c.name;
        } else if (!strcmp(kind, "models")) {
            rc = spec_load_model(path, &m, &err);
            name = m.name;
        } else {
            rc = spec_load_scenario(path, &s, &err);
            name = s.name;
        }
        ck_assert_msg(rc == 0, "%s", sc_err_str(&err, msg, sizeof msg));
        ck_assert_str_eq(name, base);
        n++;
    }
    closedir(d);
    return n;
}

START_TEST(test_shipped_configs_load)
{
    /* at the time of writing: 8 clusters, 13 models, 3 scenarios */
    ck_assert_int_ge(load_dir("clusters"), 8);
    ck_assert_int_ge(load_dir("models"), 13);
    ck_assert_int_ge(load_dir("scenarios"), 3);
}
END_TEST

START_TEST(test_shipped_cluster_values)
{
    spec_cluster c;
    sc_err err;
    ck_assert_int_eq(spec_load_cluster("configs/clusters/p4d.24xlarge.json", &c, &err), 0);
    ck_assert_str_eq(c.name, "p4d.24xlarge");
    ck_assert_double_eq(c.gpu.peak_flops, 312e12);  /* A100 dense bf16 312 TFLOP/s */
    ck_assert_double_eq(c.gpu.hbm_bytes, 40 * GiB); /* 40 GiB */
    ck_assert_double_eq(c.nic_bw_Bps, 12.5e9);      /* 4 x 100 Gbit/s EFA: 12.5e9 B/s each */
    ck_assert_int_eq(c.nics_per_node, 4);
    ck_assert_int_eq(c.max_nodes, 512);
    /* p3dn: V100 hybrid cube mesh, 16 pairs, 6 links per GPU (NVLink2) */
    ck_assert_int_eq(spec_load_cluster("configs/clusters/p3dn.24xlarge.json", &c, &err), 0);
    ck_assert_int_eq(c.fabric.kind, FABRIC_NVLINK_MESH);
    for (int g = 0; g < 8; g++) {
        int links = 0;
        for (int h = 0; h < 8; h++)
            links += c.fabric.links[g][h];
        ck_assert_int_eq(links, 6);
    }
    ck_assert_str_eq(c.gpu.arch, "volta");
}
END_TEST

START_TEST(test_load_errors_name_the_file)
{
    spec_cluster c;
    spec_model m;
    sc_err err;
    int rc = spec_load_cluster("configs/clusters/no-such.json", &c, &err);
    /* one wording for a file that cannot be read (sc_err_unreadable; until polish15 "cannot read:
     * unable to open PATH: why" here, "cannot read: why" elsewhere), the file as the source */
    ck_assert_err(rc, err, "configs/clusters/no-such.json", "", "");
    ck_assert_str_eq(err.text, "cannot read: No such file or directory");
    /* a cluster file given as a model: its first foreign key is reported */
    rc = spec_load_model("configs/clusters/p4d.24xlarge.json", &m, &err);
    ck_assert_err(rc, err, "configs/clusters/p4d.24xlarge.json", "$.gpu", "unknown key (expected one of: name, ");
    /* a file with a bad value: the file, not "<input>", is the source */
    char path[64];
    char buf[4096];
    subst(buf, sizeof buf, CLUSTER, "\"gpus\": 8", "\"gpus\": 65");
    write_tmp(buf, path, sizeof path);
    rc = spec_load_cluster(path, &c, &err);
    unlink(path);
    ck_assert_err(rc, err, path, "$.node.gpus", "");
    ck_assert_str_eq(err.text, "expected an integer from 1 to 64, got 65");
}
END_TEST

START_TEST(test_scenarios_load)
{
    spec_scenario s;
    sc_err err;
    ck_assert_int_eq(spec_load_scenario("configs/scenarios/memory-p4d-gpt3-175b.json", &s, &err), 0);
    ck_assert_str_eq(s.cluster, "p4d.24xlarge");
    ck_assert_str_eq(s.model, "gpt3-175b");
    ck_assert_int_eq(s.n_nodes, 1);
    ck_assert_int_eq(s.nodes[0], 16);
    ck_assert_int_eq(s.n_layouts, 10);
    ck_assert_str_eq(s.layouts[0], "ddp");
    ck_assert_str_eq(s.layouts[9], "zeropp:hpz=8");
    ck_assert_int_eq(s.training.precision, PREC_BF16);
    ck_assert_int_eq(s.training.act_ckpt, 1);
    ck_assert_int_eq(s.training.flash_attention, 1);     /* not in the file: default */
    ck_assert_double_eq(s.training.bucket_bytes, 25e6);  /* default */

    ck_assert_int_eq(spec_load_scenario("configs/scenarios/mics-p3dn-bert10b.json", &s, &err), 0);
    ck_assert_int_eq(s.n_nodes, 4);
    ck_assert_int_eq(s.nodes[0], 2);
    ck_assert_int_eq(s.nodes[3], 16);
    ck_assert_int_eq(s.training.micro_batch, 8);
    ck_assert_int_eq(s.training.precision, PREC_FP16); /* V100 has no bf16 */
}
END_TEST

/* Every shipped scenario refers to a shipped cluster and model, and its node counts and layouts
 * are valid on that cluster (what `shardcast memory --scenario` will check). */
START_TEST(test_scenarios_consistent)
{
    const char *roots[] = {"configs"};
    char *saved = getenv("SHARDCAST_CONFIGS") ? strdup(getenv("SHARDCAST_CONFIGS")) : NULL;
    unsetenv("SHARDCAST_CONFIGS");
    DIR *d = opendir("configs/scenarios");
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        if (!strstr(e->d_name, ".json"))
            continue;
        char path[512], file[512], msg[600];
        snprintf(path, sizeof path, "configs/scenarios/%s", e->d_name);
        spec_scenario s;
        spec_cluster c;
        spec_model m;
        sc_err err;
        ck_assert_msg(spec_load_scenario(path, &s, &err) == 0, "%s", sc_err_str(&err, msg, sizeof msg));
        ck_assert_msg(spec_resolve("clusters", s.cluster, roots, 1, file, sizeof file, &err) == 0, "%s",
                      sc_err_str(&err, msg, sizeof msg));
        ck_assert_int_eq(spec_load_cluster(file, &c, &err), 0);
        ck_assert_msg(spec_resolve("models", s.model, roots, 1, file, sizeof file, &err) == 0, "%s",
                      sc_err_str(&err, msg, sizeof msg));
        ck_assert_int_eq(spec_load_model(file, &m, &err), 0);
        for (int i = 0; i < s.n_nodes; i++) {
            ck_assert_msg(spec_nodes_check(&c, s.nodes[i], path, &err) == 0, "%s", sc_err_str(&err, msg, sizeof msg));
            for (int j = 0; j < s.n_layouts; j++) {
                spec_layout l;
                ck_assert_int_eq(spec_layout_parse(s.layouts[j], &l, &err), 0);
                ck_assert_msg(spec_layout_check(&l, &c, s.nodes[i], &err) == 0, "%s: %s", path,
                              sc_err_str(&err, msg, sizeof msg));
            }
        }
        n++;
    }
    closedir(d);
    if (saved) {
        setenv("SHARDCAST_CONFIGS", saved, 1);
        free(saved);
    }
    ck_assert_int_ge(n, 3);
}
END_TEST

START_TEST(test_scenario_bad_layout)
{
    static const char js[] = "{\"name\": \"s\", \"source\": \"t\", \"cluster\": \"p4d.24xlarge\", \"model\": \"gpt3-175b\","
                             " \"nodes\": [2, 4], \"layouts\": [\"zero3\", \"mics:p=0\"]}";
    char path[64];
    spec_scenario s;
    sc_err err;
    write_tmp(js, path, sizeof path);
    int rc = spec_load_scenario(path, &s, &err);
    ck_assert_err(rc, err, path, "$.layouts[1]", "");
    ck_assert_str_eq(err.text, "in \"mics:p=0\": expected p to be a positive integer, got \"0\"");
    unlink(path);

    static const char js2[] = "{\"name\": \"s\", \"source\": \"t\", \"cluster\": \"c\", \"model\": \"m\","
                              " \"nodes\": [2, 0], \"layouts\": [\"zero3\"]}";
    write_tmp(js2, path, sizeof path);
    rc = spec_load_scenario(path, &s, &err);
    unlink(path);
    ck_assert_err(rc, err, path, "$.nodes[1]", "");
    ck_assert_str_eq(err.text, "expected a positive integer node count, got 0");

    static const char js3[] = "{\"name\": \"s\", \"source\": \"t\", \"cluster\": \"c\", \"model\": \"m\","
                              " \"nodes\": 4, \"layouts\": [\"zero3\"], \"training\": {\"precision\": \"int8\"}}";
    write_tmp(js3, path, sizeof path);
    rc = spec_load_scenario(path, &s, &err);
    unlink(path);
    ck_assert_err(rc, err, path, "$.training.precision", "got \"int8\"");

    static const char js4[] = "{\"name\": \"s\", \"source\": \"t\", \"cluster\": \"c\", \"model\": \"m\", \"nodes\": 4}";
    write_tmp(js4, path, sizeof path);
    rc = spec_load_scenario(path, &s, &err);
    unlink(path);
    ck_assert_err(rc, err, path, "$.layouts", "");
    ck_assert_str_eq(err.text, "missing required key (expected an array of layout strings)");
}
END_TEST

/* ---- DeepSpeed ds_config.json -------------------------------------------------------- */

START_TEST(test_ds_zero3)
{
    spec_training t;
    spec_layout l;
    sc_err err;
    spec_training_defaults(&t);
    t.act_ckpt = 0; /* the file's activation_checkpointing object turns it on */
    ck_assert_int_eq(spec_load_ds_config("tests/fixtures/ds_zero3.json", &t, &l, &err), 0);
    ck_assert_int_eq(l.kind, LAYOUT_ZERO3);
    ck_assert_int_eq(l.p, 0); /* all ranks */
    ck_assert_int_eq(t.micro_batch, 4);
    ck_assert_int_eq(t.grad_accum, 8);
    ck_assert_int_eq(t.precision, PREC_BF16);
    ck_assert_int_eq(t.act_ckpt, 1);
    /* reduce_bucket_size counts elements: 5e8 elements x 2 B (bf16) = 1e9 B */
    ck_assert_double_eq(t.bucket_bytes, 1e9);
    ck_assert_double_eq(t.reserve_bytes, 2 * GiB); /* untouched default */
}
END_TEST

START_TEST(test_ds_mics)
{
    spec_training t;
    spec_layout l;
    sc_err err;
    char buf[64];
    spec_training_defaults(&t);
    t.act_ckpt = 0; /* no activation_checkpointing in the file: stays as given */
    ck_assert_int_eq(spec_load_ds_config("tests/fixtures/ds_mics.json", &t, &l, &err), 0);
    ck_assert_int_eq(l.kind, LAYOUT_MICS);
    ck_assert_int_eq(l.p, 8);
    ck_assert_int_eq(l.hier, 0);
    ck_assert_str_eq(spec_layout_str(&l, buf, sizeof buf), "mics:p=8,hier=0");
    ck_assert_int_eq(t.micro_batch, 2);
    ck_assert_int_eq(t.grad_accum, 16);
    ck_assert_int_eq(t.precision, PREC_FP16);
    ck_assert_int_eq(t.act_ckpt, 0);
    ck_assert_double_eq(t.bucket_bytes, 25e6); /* no reduce_bucket_size: default kept */
}
END_TEST

START_TEST(test_ds_zero2_fp32)
{
    spec_training t;
    spec_layout l;
    sc_err err;
    spec_training_defaults(&t);
    ck_assert_int_eq(spec_load_ds_config("tests/fixtures/ds_zero2_fp32.json", &t, &l, &err), 0);
    ck_assert_int_eq(l.kind, LAYOUT_ZERO2);
    ck_assert_int_eq(t.precision, PREC_FP32); /* neither fp16 nor bf16 enabled */
    ck_assert_double_eq(t.bucket_bytes, 8e8); /* 2e8 elements x 4 B (fp32) */
}
END_TEST

START_TEST(test_ds_bad)
{
    spec_training t;
    spec_layout l;
    sc_err err;
    spec_training_defaults(&t);
    int rc = spec_load_ds_config("tests/fixtures/ds_mics_stage2.json", &t, &l, &err);
    ck_assert_err(rc, err, "tests/fixtures/ds_mics_stage2.json", "$.zero_optimization.mics_shard_size", "");
    ck_assert_str_eq(err.text, "expected only with stage 3 (MiCS builds on ZeRO-3), got stage 2");
    rc = spec_load_ds_config("tests/fixtures/ds_both_precisions.json", &t, &l, &err);
    ck_assert_err(rc, err, "tests/fixtures/ds_both_precisions.json", "$.bf16.enabled", "");
    ck_assert_str_eq(err.text, "expected at most one of fp16 and bf16 enabled, got both");
    rc = spec_load_ds_config("tests/fixtures/no-such-ds.json", &t, &l, &err);
    ck_assert_err(rc, err, "tests/fixtures/no-such-ds.json", "", "cannot read");
}
END_TEST

/* ---- name resolution ----------------------------------------------------------------- */

/* Each resolution test runs with SHARDCAST_CONFIGS as it sets it, and puts it back after. */
static char *saved_env;
static void env_save(void)
{
    const char *v = getenv("SHARDCAST_CONFIGS");
    saved_env = v ? strdup(v) : NULL;
    unsetenv("SHARDCAST_CONFIGS");
}
static void env_restore(void)
{
    if (saved_env)
        setenv("SHARDCAST_CONFIGS", saved_env, 1);
    else
        unsetenv("SHARDCAST_CONFIGS");
    free(saved_env);
    saved_env = NULL;
}

START_TEST(test_resolve_name_and_path)
{
    const char *roots[] = {"configs"};
    char out[512];
    sc_err err;
    ck_assert_int_eq(spec_resolve("clusters", "p4d.24xlarge", roots, 1, out, sizeof out, &err), 0);
    ck_assert_str_eq(out, "configs/clusters/p4d.24xlarge.json");
    ck_assert_int_eq(spec_resolve("models", "llama2-70b", roots, 1, out, sizeof out, &err), 0);
    ck_assert_str_eq(out, "configs/models/llama2-70b.json");
    /* a readable path is taken as is */
    ck_assert_int_eq(spec_resolve("models", "configs/models/gpt3-175b.json", roots, 1, out, sizeof out, &err), 0);
    ck_assert_str_eq(out, "configs/models/gpt3-175b.json");
    /* a NULL root is skipped */
    const char *roots2[] = {NULL, "configs"};
    ck_assert_int_eq(spec_resolve("scenarios", "mics-p4d-100b", roots2, 2, out, sizeof out, &err), 0);
    ck_assert_str_eq(out, "configs/scenarios/mics-p4d-100b.json");
}
END_TEST

START_TEST(test_resolve_missing)
{
    const char *roots[] = {"configs"};
    char out[512];
    sc_err err;
    int rc = spec_resolve("clusters", "p9z.mega", roots, 1, out, sizeof out, &err);
    ck_assert_err(rc, err, "p9z.mega", "", "");
    ck_assert_str_eq(err.text, "no such file, and no shipped clusters of that name (looked in configs/clusters; "
                               "`shardcast list clusters` shows them)");
    ck_assert_str_eq(out, "");
    /* something that looks like a path is not searched for */
    rc = spec_resolve("models", "configs/models/nope.json", roots, 1, out, sizeof out, &err);
    ck_assert_err(rc, err, "configs/models/nope.json", "", "");
    ck_assert_str_eq(err.text, "cannot read: No such file or directory"); /* sc_err_unreadable's wording */
    rc = spec_resolve("models", "", roots, 1, out, sizeof out, &err);
    ck_assert_err(rc, err, "models", "", "");
    ck_assert_str_eq(err.text, "expected a name or a path, got nothing");
}
END_TEST

START_TEST(test_resolve_env_override)
{
    const char *roots[] = {"configs"};
    char dir[64] = "/tmp/shardcast-cfg-XXXXXX", sub[128], f1[192], f2[192], out[512], want[512];
    sc_err err;
    spec_cluster c;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(sub, sizeof sub, "%s/clusters", dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    snprintf(f1, sizeof f1, "%s/mine.json", sub);
    snprintf(f2, sizeof f2, "%s/p4d.24xlarge.json", sub);
    FILE *f = fopen(f1, "w");
    ck_assert_ptr_nonnull(f);
    fputs(CLUSTER, f);
    fclose(f);
    f = fopen(f2, "w");
    ck_assert_ptr_nonnull(f);
    fputs(CLUSTER, f);
    fclose(f);

    setenv("SHARDCAST_CONFIGS", dir, 1);
    /* a name only the override has */
    int rc1 = spec_resolve("clusters", "mine", roots, 1, out, sizeof out, &err);
    snprintf(want, sizeof want, "%s/clusters/mine.json", dir);
    int same1 = !strcmp(out, want);
    int load1 = rc1 == 0 ? spec_load_cluster(out, &c, &err) : -1;
    /* the override is searched before the roots */
    int rc2 = spec_resolve("clusters", "p4d.24xlarge", roots, 1, out, sizeof out, &err);
    snprintf(want, sizeof want, "%s/clusters/p4d.24xlarge.json", dir);
    int same2 = !strcmp(out, want);
    /* still falls back to the roots for what the override lacks */
    int rc3 = spec_resolve("models", "gpt3-175b", roots, 1, out, sizeof out, &err);
    int same3 = !strcmp(out, "configs/models/gpt3-175b.json");
    /* with no roots, a miss names the override directory */
    int rc4 = spec_resolve("models", "nope", NULL, 0, out, sizeof out, &err);
    char want4[300];
    snprintf(want4, sizeof want4, "looked in %s/models;", dir);
    int named4 = strstr(err.text, want4) != NULL;

    unlink(f1);
    unlink(f2);
    rmdir(sub);
    rmdir(dir);

    ck_assert_int_eq(rc1, 0);
    ck_assert(same1);
    ck_assert_int_eq(load1, 0);
    ck_assert_str_eq(c.name, "test-a100");
    ck_assert_int_eq(rc2, 0);
    ck_assert(same2);
    ck_assert_int_eq(rc3, 0);
    ck_assert(same3);
    ck_assert_int_eq(rc4, SC_EINPUT);
    ck_assert_msg(named4, "%s", err.text);
}
END_TEST


/* Named stacks (model/stack.h): every shipped bundle loads (each value valid and sourced); a
 * bundle sets what the spec left alone and never what it set explicitly. torchtitan-compile
 * names fsdp2, sdpa-flash, compiled: over defaults all three apply; over a spec that gave
 * "execution": "eager" and "attention_kernel": "fa2", only the framework does. */
START_TEST(test_stacks_shipped_and_precedence)
{
    DIR *d = opendir("configs/stacks");
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json"))
            continue;
        char path[512];
        snprintf(path, sizeof path, "configs/stacks/%s", e->d_name);
        stack_bundle b;
        sc_err err;
        ck_assert_msg(stack_load(path, &b, &err) == 0, "%s: %s", path, err.text);
        ck_assert_int_gt(b.n, 0);
        for (int i = 0; i < b.n; i++)
            ck_assert_msg(strlen(b.row[i].source) > 10, "%s: %s unsourced", path, b.row[i].key);
        n++;
    }
    closedir(d);
    ck_assert_int_ge(n, 7);

    stack_bundle b;
    sc_err err;
    ck_assert_int_eq(stack_load("configs/stacks/torchtitan-compile.json", &b, &err), 0);
    spec_training t;
    spec_training_defaults(&t);
    stack_apply(&b, &t);
    ck_assert_int_eq(t.framework, FW_FSDP2);
    ck_assert_int_eq(t.attn_kernel, AK_SDPA_FLASH);
    ck_assert_int_eq(t.execution, EXEC_COMPILED);
    ck_assert_int_eq(t.reduce_dtype, REDUCE_FP32); /* torchtitan's only reduce dtype */
    spec_training_defaults(&t);
    ck_assert_int_eq(spec_parse_training("{\"execution\": \"eager\", \"attention_kernel\": \"fa2\", \"reduce_dtype\": \"bf16\"}", "t", &t, &err), 0);
    stack_apply(&b, &t);
    ck_assert_int_eq(t.reduce_dtype, REDUCE_PARAM);
    ck_assert_int_eq(t.framework, FW_FSDP2);
    ck_assert_int_eq(t.attn_kernel, AK_FA2);
    ck_assert_int_eq(t.execution, EXEC_EAGER);
    /* stack27d: the Hugging Face Llama stacks name rope_unfused (what they run), not rope_fp32;
     * a spec's own rope_unfused: false wins over the bundle */
    ck_assert_int_eq(stack_load("configs/stacks/atorch.json", &b, &err), 0);
    spec_training_defaults(&t);
    stack_apply(&b, &t);
    ck_assert_int_eq(t.rope_unfused, 1);
    ck_assert_int_eq(t.rope_fp32, -1);
    spec_training_defaults(&t);
    ck_assert_int_eq(spec_parse_training("{\"rope_unfused\": false}", "t", &t, &err), 0);
    ck_assert(t.given & SPEC_GIVEN_ROPEU);
    stack_apply(&b, &t);
    ck_assert_int_eq(t.rope_unfused, 0);
    /* Megatron-DeepSpeed 2022 runs fused block kernels (execution compiled) but its loss is
     * vocab_parallel_cross_entropy in eager torch ops: the bundle says loss_fusion off and
     * megatron_ce on (both -1, "not given", after the defaults); a spec's loss_fusion: true wins */
    ck_assert_int_eq(stack_load("configs/stacks/megatron-deepspeed-2022.json", &b, &err), 0);
    spec_training_defaults(&t);
    ck_assert_int_eq(t.loss_fusion, -1);
    ck_assert_int_eq(t.megatron_ce, -1);
    stack_apply(&b, &t);
    ck_assert_int_eq(t.execution, EXEC_COMPILED);
    ck_assert_int_eq(t.loss_fusion, 0);
    ck_assert_int_eq(t.megatron_ce, 1);
    spec_training_defaults(&t);
    ck_assert_int_eq(spec_parse_training("{\"loss_fusion\": true}", "t", &t, &err), 0);
    ck_assert(t.given & SPEC_GIVEN_LOSSF);
    ck_assert(!(t.given & SPEC_GIVEN_MCE));
    stack_apply(&b, &t);
    ck_assert_int_eq(t.loss_fusion, 1);
    ck_assert_int_eq(t.megatron_ce, 1);
}
END_TEST

/* A file that states activation checkpointing is explicit: a stack's "checkpointing" does not
 * override it. accelerate_fsdp2.yaml has fsdp_activation_checkpointing: false (CKPT_NONE), the
 * bundle says full: stays none; ds_zero3.json has an activation_checkpointing section
 * (checkpointing on, CKPT_FULL), the bundle says none: stays full. */
/* accelerate's launch keys go to the report for the CLI to compare with --nodes (ux14): the
 * hybrid fixture says "num_machines: 4", "num_processes: 32"; the FSDP2 one only
 * "num_processes: 16" (0: absent) */
START_TEST(test_accelerate_launch)
{
    spec_training t;
    spec_layout l;
    spec_ds_report rep;
    sc_err err;
    spec_training_defaults(&t);
    ck_assert_msg(spec_load_accelerate("tests/fixtures/accelerate_fsdp_hybrid.yaml", 8, &t, &l, &rep, &err) == 0, "%s",
                  err.text);
    ck_assert_int_eq(rep.acc_processes, 32);
    ck_assert_int_eq(rep.acc_machines, 4);
    spec_training_defaults(&t);
    ck_assert_msg(spec_load_accelerate("tests/fixtures/accelerate_fsdp2.yaml", 8, &t, &l, &rep, &err) == 0, "%s", err.text);
    ck_assert_int_eq(rep.acc_processes, 16);
    ck_assert_int_eq(rep.acc_machines, 0);
}
END_TEST

START_TEST(test_stack_keeps_files_checkpointing)
{
    stack_bundle b;
    memset(&b, 0, sizeof b);
    b.n = 1;
    snprintf(b.row[0].key, sizeof b.row[0].key, "checkpointing");
    snprintf(b.row[0].source, sizeof b.row[0].source, "test");
    spec_training t;
    spec_layout l;
    spec_ds_report rep;
    sc_err err;
    snprintf(b.row[0].value, sizeof b.row[0].value, "full");
    spec_training_defaults(&t);
    ck_assert_msg(spec_load_accelerate("tests/fixtures/accelerate_fsdp2.yaml", 8, &t, &l, &rep, &err) == 0, "%s", err.text);
    ck_assert_int_eq(t.act_ckpt, CKPT_NONE);
    stack_apply(&b, &t);
    ck_assert_int_eq(t.act_ckpt, CKPT_NONE);
    snprintf(b.row[0].value, sizeof b.row[0].value, "none");
    spec_training_defaults(&t);
    ck_assert_msg(spec_load_ds_config_ex("tests/fixtures/ds_zero3.json", &t, &l, &rep, &err) == 0, "%s", err.text);
    ck_assert_int_eq(t.act_ckpt, CKPT_FULL);
    stack_apply(&b, &t);
    ck_assert_int_eq(t.act_ckpt, CKPT_FULL);
    /* the same bundle over defaults (nothing stated) applies */
    spec_training_defaults(&t);
    stack_apply(&b, &t);
    ck_assert_int_eq(t.act_ckpt, CKPT_NONE);
}
END_TEST

Suite *spec_suite(void)
{
    Suite *s = suite_create("spec");
    TCase *good = tcase_create("good");
    tcase_add_test(good, test_cluster_good_nvswitch);
    tcase_add_test(good, test_cluster_good_mesh);
    tcase_add_test(good, test_cluster_good_pcie);
    tcase_add_test(good, test_cluster_shipped_topologies);
    tcase_add_test(good, test_model_good_defaults);
    tcase_add_test(good, test_model_good_llama_style);
    tcase_add_test(good, test_training_defaults_and_overrides);
    tcase_add_test(good, test_training_load_file);
    tcase_add_test(good, test_stacks_shipped_and_precedence);
    tcase_add_test(good, test_stack_keeps_files_checkpointing);
    tcase_add_test(good, test_accelerate_launch);
    suite_add_tcase(s, good);

    TCase *bad = tcase_create("bad");
    tcase_add_test(bad, test_bad_invalid_json);
    tcase_add_test(bad, test_bad_not_object);
    tcase_add_test(bad, test_bad_unknown_key_top);
    tcase_add_test(bad, test_bad_unknown_key_nested);
    tcase_add_test(bad, test_bad_wrong_type);
    tcase_add_test(bad, test_bad_negative);
    tcase_add_test(bad, test_bad_zero);
    tcase_add_test(bad, test_bad_huge_number);
    tcase_add_test(bad, test_bad_missing_key);
    tcase_add_test(bad, test_bad_enum);
    tcase_add_test(bad, test_bad_duplicate_key);
    tcase_add_test(bad, test_bad_string_too_long);
    tcase_add_test(bad, test_bad_heads_not_dividing_hidden);
    tcase_add_test(bad, test_bad_kv_heads);
    tcase_add_test(bad, test_bad_mesh_self_link);
    tcase_add_test(bad, test_bad_mesh_duplicate_pair);
    tcase_add_test(bad, test_bad_mesh_index_out_of_range);
    tcase_add_test(bad, test_bad_mesh_disconnected);
    tcase_add_test(bad, test_err_str);
    suite_add_tcase(s, bad);

    TCase *files = tcase_create("files");
    tcase_add_test(files, test_shipped_configs_load);
    tcase_add_test(files, test_shipped_cluster_values);
    tcase_add_test(files, test_load_errors_name_the_file);
    tcase_add_test(files, test_scenarios_load);
    tcase_add_test(files, test_scenarios_consistent);
    tcase_add_test(files, test_scenario_bad_layout);
    tcase_add_test(files, test_ds_zero3);
    tcase_add_test(files, test_ds_mics);
    tcase_add_test(files, test_ds_zero2_fp32);
    tcase_add_test(files, test_ds_bad);
    suite_add_tcase(s, files);

    TCase *resolve = tcase_create("resolve");
    tcase_add_checked_fixture(resolve, env_save, env_restore);
    tcase_add_test(resolve, test_resolve_name_and_path);
    tcase_add_test(resolve, test_resolve_missing);
    tcase_add_test(resolve, test_resolve_env_override);
    suite_add_tcase(s, resolve);
    return s;
}
