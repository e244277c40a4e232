/* spec.c — load and validate cluster, model, training, scenario and DeepSpeed specs (Jansson).
 * Every rejection names the file, the JSON path, what was expected and what was found.
 * Not here: layout string grammar (spec_layout.c) and anything derived from a valid spec. */
#include "spec.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/jsonrd.h"

static const double GiB = 1073741824.0;

/* ---- cluster ------------------------------------------------------------------------- */
static const char *const ARCHES[] = {"volta", "ampere", "hopper", "ada", "blackwell", "cpu", NULL};
static const char *const FABRICS[] = {"nvswitch", "nvlink_mesh", "pcie", NULL};
static const char *const TOPOS[] = {"fat-tree", "rail", "dragonfly", NULL};

static int cluster_fabric(jr *r, const json_t *f, spec_cluster *c)
{
    const char *base = "$.node.fabric";
    int kind = 0, rc;
    if ((rc = jr_enum(r, f, base, "kind", FABRICS, 1, &kind)))
        return rc;
    c->fabric.kind = (spec_fabric_kind)kind;
    if (c->fabric.kind == FABRIC_NVSWITCH) {
        static const char *const k[] = {"kind", "link_bandwidth_GBps", "links_per_gpu", NULL};
        if ((rc = jr_only_keys(r, f, base, k)) || (rc = jr_pos(r, f, base, "link_bandwidth_GBps", 1, &c->fabric.link_bw_Bps)) ||
            (rc = jr_int(r, f, base, "links_per_gpu", 1, 64, 1, &c->fabric.links_per_gpu)))
            return rc;
        c->fabric.link_bw_Bps *= 1e9;
        return 0;
    }
    if (c->fabric.kind == FABRIC_PCIE) {
        static const char *const k[] = {"kind", NULL};
        return jr_only_keys(r, f, base, k);
    }
    static const char *const k[] = {"kind", "link_bandwidth_GBps", "links", NULL};
    if ((rc = jr_only_keys(r, f, base, k)) || (rc = jr_pos(r, f, base, "link_bandwidth_GBps", 1, &c->fabric.link_bw_Bps)))
        return rc;
    c->fabric.link_bw_Bps *= 1e9;
    json_t *links = json_object_get(f, "links");
    if (!links)
        return jr_missing(r, "$.node.fabric.links", "an array of [gpu_a, gpu_b, links]");
    if (!json_is_array(links) || json_array_size(links) == 0)
        return jr_bad(r, "$.node.fabric.links", "a non-empty array of [gpu_a, gpu_b, links]", links);
    size_t i;
    json_t *e;
    json_array_foreach(links, i, e) {
        char p[128];
        snprintf(p, sizeof p, "$.node.fabric.links[%zu]", i);
        if (!json_is_array(e) || json_array_size(e) != 3)
            return jr_bad(r, p, "[gpu_a, gpu_b, links]", e);
        long v[3];
        for (size_t j = 0; j < 3; j++) {
            json_t *x = json_array_get(e, j);
            long hi = j < 2 ? c->gpus_per_node - 1 : 32, lo = j < 2 ? 0 : 1;
            char pj[140], want[80];
            snprintf(pj, sizeof pj, "%s[%zu]", p, j);
            snprintf(want, sizeof want, j < 2 ? "a GPU index from %ld to %ld" : "a link count from %ld to %ld", lo, hi);
            if (!json_is_integer(x) || json_integer_value(x) < lo || json_integer_value(x) > hi)
                return jr_bad(r, pj, want, x);
            v[j] = (long)json_integer_value(x);
        }
        if (v[0] == v[1])
            return sc_err_set(r->err, SC_EINPUT, r->src, p, "expected two different GPUs, got %ld twice", v[0]);
        if (c->fabric.links[v[0]][v[1]])
            return sc_err_set(r->err, SC_EINPUT, r->src, p, "expected each GPU pair once, got %ld-%ld again",
                              v[0], v[1]);
        c->fabric.links[v[0]][v[1]] = c->fabric.links[v[1]][v[0]] = (unsigned char)v[2];
    }
    /* every GPU must reach every other, directly or through others (else it is not a node) */
    int seen[SPEC_MAX_GPUS_PER_NODE] = {1}, stack[SPEC_MAX_GPUS_PER_NODE] = {0}, top = 1, nseen = 1;
    while (top) {
        int g = stack[--top];
        for (int h = 0; h < c->gpus_per_node; h++)
            if (c->fabric.links[g][h] && !seen[h]) {
                seen[h] = 1;
                nseen++;
                stack[top++] = h;
            }
    }
    if (nseen != c->gpus_per_node)
        return sc_err_set(r->err, SC_EINPUT, r->src, "$.node.fabric.links",
                          "expected links connecting all %d GPUs, got %d reachable from GPU 0", c->gpus_per_node,
                          nseen);
    return 0;
}

/* $.in_network_optimizer: LuWu's optimizer node (every key required but the two switch
 * capabilities, which default to true: LuWu's SmartSwitch does both). */
static int cluster_innet(jr *r, const json_t *o, spec_innet *n)
{
    const char *base = "$.in_network_optimizer";
    static const char *const k[] = {"port_bandwidth_Gbps", "memory_GiB", "aggregation", "multicast",
                                    "optimizer_Gparams_per_s", NULL};
    int rc;
    n->aggregation = n->multicast = 1;
    if ((rc = jr_only_keys(r, o, base, k)) || (rc = jr_pos(r, o, base, "port_bandwidth_Gbps", 1, &n->port_bw_Bps)) ||
        (rc = jr_pos(r, o, base, "memory_GiB", 1, &n->mem_bytes)) ||
        (rc = jr_bool(r, o, base, "aggregation", &n->aggregation)) ||
        (rc = jr_bool(r, o, base, "multicast", &n->multicast)) ||
        (rc = jr_pos(r, o, base, "optimizer_Gparams_per_s", 1, &n->opt_params_per_s)))
        return rc;
    n->present = 1;
    n->port_bw_Bps *= 1e9 / 8.0;
    n->mem_bytes *= GiB;
    n->opt_params_per_s *= 1e9;
    return 0;
}

static int cluster_from(jr *r, json_t *root, spec_cluster *c)
{
    int rc;
    memset(c, 0, sizeof *c);
    static const char *const top[] = {"name", "source", "gpu", "node", "network", "price_usd_per_hour",
                                      "in_network_optimizer", NULL};
    if ((rc = jr_only_keys(r, root, "$", top)) || (rc = jr_str(r, root, "$", "name", 1, c->name, sizeof c->name)) ||
        (rc = jr_str(r, root, "$", "source", 1, c->source, sizeof c->source)) ||
        (rc = jr_pos(r, root, "$", "price_usd_per_hour", 1, &c->price_usd_per_hour)))
        return rc;

    json_t *gpu, *node, *net, *fab;
    if ((rc = jr_obj(r, root, "$", "gpu", 1, &gpu)))
        return rc;
    static const char *const gk[] = {"name", "arch", "peak_tflops", "memory_GiB", "hbm_bandwidth_GBps", "sms",
                                     "peak_tflops_fp32", "peak_tflops_tf32", "peak_tflops_fp8", "clock_ratio", "clock_source", NULL};
    int arch = 0;
    char clock_src[1024]; /* where clock_ratio comes from: documentation, checked as a string */
    if ((rc = jr_only_keys(r, gpu, "$.gpu", gk)) || (rc = jr_str(r, gpu, "$.gpu", "name", 1, c->gpu.name, sizeof c->gpu.name)) ||
        (rc = jr_enum(r, gpu, "$.gpu", "arch", ARCHES, 1, &arch)) ||
        (rc = jr_pos(r, gpu, "$.gpu", "peak_tflops", 1, &c->gpu.peak_flops)) ||
        (rc = jr_pos(r, gpu, "$.gpu", "memory_GiB", 1, &c->gpu.hbm_bytes)) ||
        (rc = jr_pos(r, gpu, "$.gpu", "hbm_bandwidth_GBps", 1, &c->gpu.hbm_bw_Bps)) ||
        (rc = jr_int(r, gpu, "$.gpu", "sms", 1, 100000, 0, &c->gpu.sms)) ||
        (rc = jr_pos(r, gpu, "$.gpu", "peak_tflops_fp32", 0, &c->gpu.peak_fp32_flops)) ||
        (rc = jr_pos(r, gpu, "$.gpu", "peak_tflops_tf32", 0, &c->gpu.peak_tf32_flops)) ||
        (rc = jr_pos(r, gpu, "$.gpu", "peak_tflops_fp8", 0, &c->gpu.peak_fp8_flops)) ||
        (rc = jr_str(r, gpu, "$.gpu", "clock_source", 0, clock_src, sizeof clock_src)))
        return rc;
    c->gpu.clock_ratio = 1.0;
    c->gpu.clock_ratio_given = json_object_get(gpu, "clock_ratio") != NULL;
    if ((rc = jr_pos(r, gpu, "$.gpu", "clock_ratio", 0, &c->gpu.clock_ratio)))
        return rc;
    if (c->gpu.clock_ratio > 1.5)
        return sc_err_set(r->err, SC_EINPUT, r->src, "$.gpu.clock_ratio",
                          "expected sustained / boost clock in (0, 1.5], got %g", c->gpu.clock_ratio);
    c->gpu.peak_fp32_flops *= 1e12;
    c->gpu.peak_tf32_flops *= 1e12;
    c->gpu.peak_fp8_flops *= 1e12;
    snprintf(c->gpu.arch, sizeof c->gpu.arch, "%s", ARCHES[arch]);
    c->gpu.peak_flops *= 1e12;
    c->gpu.hbm_bytes *= GiB;
    c->gpu.hbm_bw_Bps *= 1e9;

    if ((rc = jr_obj(r, root, "$", "node", 1, &node)))
        return rc;
    static const char *const nk[] = {"gpus", "fabric", "pcie_bandwidth_GBps", "nics", "nic_bandwidth_Gbps",
                                     "host_memory_GiB", "cpu_adam_Gparams_per_s", "nvme_read_GBps",
                                     "nvme_write_GBps", "nvme_capacity_GB", "host_memory_bandwidth_GBps", NULL};
    double adam_G = 0;
    if ((rc = jr_only_keys(r, node, "$.node", nk)) ||
        (rc = jr_int(r, node, "$.node", "gpus", 1, SPEC_MAX_GPUS_PER_NODE, 1, &c->gpus_per_node)) ||
        (rc = jr_pos(r, node, "$.node", "pcie_bandwidth_GBps", 1, &c->pcie_bw_Bps)) ||
        (rc = jr_int(r, node, "$.node", "nics", 1, 64, 1, &c->nics_per_node)) ||
        (rc = jr_pos(r, node, "$.node", "nic_bandwidth_Gbps", 1, &c->nic_bw_Bps)) ||
        (rc = jr_pos(r, node, "$.node", "host_memory_GiB", 0, &c->host_mem_bytes)) ||
        (rc = jr_pos(r, node, "$.node", "cpu_adam_Gparams_per_s", 0, &adam_G)) ||
        (rc = jr_pos(r, node, "$.node", "nvme_read_GBps", 0, &c->nvme_read_Bps)) ||
        (rc = jr_pos(r, node, "$.node", "nvme_write_GBps", 0, &c->nvme_write_Bps)) ||
        (rc = jr_pos(r, node, "$.node", "nvme_capacity_GB", 0, &c->nvme_bytes)) ||
        (rc = jr_pos(r, node, "$.node", "host_memory_bandwidth_GBps", 0, &c->host_mem_bw_Bps)))
        return rc;
    if ((c->nvme_read_Bps > 0) != (c->nvme_write_Bps > 0) || (c->nvme_read_Bps > 0) != (c->nvme_bytes > 0))
        return jr_bad(r, "$.node.nvme_read_GBps", "nvme_read_GBps, nvme_write_GBps and nvme_capacity_GB together",
                      json_object_get(node, c->nvme_read_Bps > 0 ? "nvme_read_GBps" : "nvme_write_GBps"));
    c->nvme_read_Bps *= 1e9;
    c->nvme_write_Bps *= 1e9;
    c->nvme_bytes *= 1e9;
    c->host_mem_bw_Bps *= 1e9;
    /* CPU Adam: the cluster's rate, else scaled by its host DRAM bandwidth, else the default (spec.h) */
    c->cpu_adam_params_per_s = adam_G > 0 ? adam_G * 1e9
                               : c->host_mem_bw_Bps > 0 ? SPEC_CPU_ADAM_REF_RATE * c->host_mem_bw_Bps / SPEC_CPU_ADAM_REF_BW
                                                        : SPEC_CPU_ADAM_DEFAULT;
    c->pcie_bw_Bps *= 1e9;
    c->nic_bw_Bps *= 1e9 / 8.0;
    c->host_mem_bytes *= GiB;
    if ((rc = jr_obj(r, node, "$.node", "fabric", 1, &fab)) || (rc = cluster_fabric(r, fab, c)))
        return rc;

    if ((rc = jr_obj(r, root, "$", "network", 1, &net)))
        return rc;
    static const char *const wk[] = {"topology", "oversubscription", "switch_latency_us", "nodes_per_leaf",
                                     "max_nodes", "source", NULL};
    int topo = 0;
    double lat_us = 0;
    c->oversubscription = 1.0;
    if ((rc = jr_only_keys(r, net, "$.network", wk)) || (rc = jr_enum(r, net, "$.network", "topology", TOPOS, 1, &topo)) ||
        (rc = jr_min(r, net, "$.network", "oversubscription", 1.0, 0, &c->oversubscription)) ||
        (rc = jr_min(r, net, "$.network", "switch_latency_us", 0.0, 1, &lat_us)) ||
        (rc = jr_int(r, net, "$.network", "nodes_per_leaf", 1, 1000000, 1, &c->nodes_per_leaf)) ||
        (rc = jr_int(r, net, "$.network", "max_nodes", 0, 1000000, 0, &c->max_nodes)) ||
        (rc = jr_str(r, net, "$.network", "source", 0, c->net_source, sizeof c->net_source)))
        return rc;
    c->topology = (spec_net_topology)topo;
    c->switch_latency_s = lat_us * 1e-6;
    json_t *inn;
    if ((rc = jr_obj(r, root, "$", "in_network_optimizer", 0, &inn)))
        return rc;
    return inn ? cluster_innet(r, inn, &c->innet) : 0;
}

/* ---- model --------------------------------------------------------------------------- */
static int model_from(jr *r, json_t *root, spec_model *m)
{
    int rc;
    memset(m, 0, sizeof *m);
    static const char *const k[] = {"name", "source", "type", "layers", "hidden", "heads", "kv_heads", "ffn",
                                    "seq_len", "vocab", "mlp", "norm", "bias", "tied_embeddings", "positions",
                                    "published_params_B", NULL};
    static const char *const types[] = {"decoder", "encoder", NULL};
    static const char *const mlps[] = {"gelu", "swiglu", NULL};
    static const char *const norms[] = {"layernorm", "rmsnorm", NULL};
    static const char *const pos[] = {"rotary", "learned", NULL};
    const long big = SPEC_MODEL_MAX_DIM;
    m->bias = 1;
    m->tied_embeddings = 1;
    m->learned_positions = 1;
    if ((rc = jr_only_keys(r, root, "$", k)) || (rc = jr_str(r, root, "$", "name", 1, m->name, sizeof m->name)) ||
        (rc = jr_str(r, root, "$", "source", 1, m->source, sizeof m->source)) ||
        (rc = jr_enum(r, root, "$", "type", types, 0, &m->encoder)) ||
        (rc = jr_int(r, root, "$", "layers", 1, SPEC_MODEL_MAX_LAYERS, 1, &m->layers)) ||
        (rc = jr_int(r, root, "$", "hidden", 1, big, 1, &m->hidden)) ||
        (rc = jr_int(r, root, "$", "heads", 1, big, 1, &m->heads)) ||
        (rc = jr_int(r, root, "$", "ffn", 1, big, 1, &m->ffn)) ||
        (rc = jr_int(r, root, "$", "seq_len", 1, big, 1, &m->seq_len)) ||
        (rc = jr_int(r, root, "$", "vocab", 1, big, 1, &m->vocab)) ||
        (rc = jr_enum(r, root, "$", "mlp", mlps, 0, &m->swiglu)) ||
        (rc = jr_enum(r, root, "$", "norm", norms, 0, &m->rmsnorm)) ||
        (rc = jr_bool(r, root, "$", "bias", &m->bias)) ||
        (rc = jr_bool(r, root, "$", "tied_embeddings", &m->tied_embeddings)) ||
        (rc = jr_enum(r, root, "$", "positions", pos, 0, &m->learned_positions)) ||
        (rc = jr_pos(r, root, "$", "published_params_B", 0, &m->published_params)))
        return rc;
    m->published_params *= 1e9;
    if (m->hidden % m->heads)
        return sc_err_set(r->err, SC_EINPUT, r->src, "$.heads",
                          "expected a divisor of hidden (%d), got %d (hidden / heads = %.3f)", m->hidden, m->heads,
                          (double)m->hidden / m->heads);
    m->kv_heads = m->heads;
    if ((rc = jr_int(r, root, "$", "kv_heads", 1, m->heads, 0, &m->kv_heads)))
        return rc;
    if (m->heads % m->kv_heads)
        return sc_err_set(r->err, SC_EINPUT, r->src, "$.kv_heads", "expected a divisor of heads (%d), got %d",
                          m->heads, m->kv_heads);
    return spec_model_check(m, r->src, r->err);
}

int spec_model_check(const spec_model *m, const char *source, sc_err *err)
{
    const struct {
        const char *key;
        int v;
        long max;
    } dims[] = {{"layers", m->layers, SPEC_MODEL_MAX_LAYERS}, {"hidden", m->hidden, SPEC_MODEL_MAX_DIM},
                {"heads", m->heads, SPEC_MODEL_MAX_DIM},      {"kv_heads", m->kv_heads, SPEC_MODEL_MAX_DIM},
                {"ffn", m->ffn, SPEC_MODEL_MAX_DIM},          {"seq_len", m->seq_len, SPEC_MODEL_MAX_DIM},
                {"vocab", m->vocab, SPEC_MODEL_MAX_DIM}};
    if (!m->name[0])
        return sc_err_set(err, SC_EINPUT, source, "", "model name: expected a non-empty string");
    for (const char *q = m->name; *q; q++)
        if ((unsigned char)*q < 0x20 || *q == 0x7f)
            return sc_err_set(err, SC_EINPUT, source, "", "model name: expected a string without control characters");
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        if (dims[i].v < 1 || dims[i].v > dims[i].max)
            return sc_err_set(err, SC_EINPUT, source, "", "model %s: expected an integer from 1 to %ld, got %d",
                              dims[i].key, dims[i].max, dims[i].v);
    if (m->hidden % m->heads || m->heads % m->kv_heads)
        return sc_err_set(err, SC_EINPUT, source, "",
                          "model shape: expected heads (%d) dividing hidden (%d) and kv_heads (%d) dividing heads",
                          m->heads, m->hidden, m->kv_heads);
    return 0;
}

/* ---- training ------------------------------------------------------------------------ */
void spec_training_defaults(spec_training *t)
{
    memset(t, 0, sizeof *t);
    t->micro_batch = 1;
    t->grad_accum = 1;
    t->precision = PREC_BF16;
    t->act_ckpt = CKPT_FULL;
    t->execution = EXEC_EAGER;
    t->flash_attention = 1;
    t->flash_version = 2;
    t->prefetch_layers = 1;
    t->bucket_bytes = 25e6;   /* PyTorch DDP bucket_cap_mb default, 25 MB */
    t->reserve_bytes = 2 * GiB; /* CUDA context (~0.5 GiB) + NCCL buffers + allocator slack */
    t->framework = FW_IDEAL;  /* the papers' schedules: what shardcast did before frameworks */
    t->overlap_comm = -1;
    t->reduce_scatter = -1;
    t->limit_all_gathers = -1;
    t->norm_fp32 = t->rope_fp32 = t->repeat_kv = t->loss_fp32 = t->swiglu_unfused = t->tp_comm_overlap = -1;
    t->gelu_unfused = t->mask_unfused = t->autocast = -1; /* ds27: off unless a stack or key says */ /* issue 27: the defaults of workload.c */
    t->overlap_param_gather = t->fused_linear_ce = -1; /* mega27: off unless a stack or key says */
    t->loss_fusion = -1;                                /* shape29c: the execution's */
    t->ds_mpu = -1; /* z3scale30: off unless the case or spec says */
    t->grad_clip = -1; /* ds33: off unless the case or spec says */
    t->ddp_bucket_copy = -1; /* dsat34: off unless the case or spec says */
    t->bias_unfused = -1; /* dsv36: off unless the case or spec says */
    t->tc_align8 = -1;    /* dsv37: off unless the case or spec says */
    t->contiguous_gradients = -1; /* dsv37: the DeepSpeed release's default */
    t->megatron_ce = -1; /* ce28d: framework megatron's loss unless the case or spec says */
    t->atorch_tp = -1;   /* atorch36: Megatron's f operators unless a stack or key says */
    t->rope_unfused = -1; /* stack27d: off unless a stack or key says */
    t->hidden_dropout = t->attention_dropout = -1; /* knobs35: the framework's / model's (wl_dropout) */
    t->act_offload = -1; /* fsdpaws27: off unless the case or spec says */
    t->fp8_recipe = -1;  /* fp8cast: Megatron-LM's default, delayed (workload.c fp8_casts) */
}

static const char *const FRAMEWORKS[] = {"ideal", "deepspeed", "fsdp", "fsdp2", "megatron", NULL};
const char *spec_framework_str(spec_framework f) { return FRAMEWORKS[f]; }
int spec_framework_parse(const char *s)
{
    for (int i = 0; s && FRAMEWORKS[i]; i++)
        if (!strcmp(s, FRAMEWORKS[i]))
            return i;
    return -1;
}

int spec_version_parse(const char *s)
{
    int part[3] = {0, 0, 0};
    const char *p = s;
    for (int n = 0; p && n < 3; n++) {
        if (*p < '0' || *p > '9')
            return -1;
        long v = 0;
        while (*p >= '0' && *p <= '9')
            if ((v = v * 10 + (*p++ - '0')) > (n ? 99 : 999))
                return -1;
        part[n] = (int)v;
        if (!*p)
            return part[0] * 10000 + part[1] * 100 + part[2];
        if (*p++ != '.')
            return -1;
    }
    return -1;
}

const char *spec_version_str(int v, char *buf, size_t n)
{
    if (v % 100)
        snprintf(buf, n, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
    else
        snprintf(buf, n, "%d.%d", v / 10000, v / 100 % 100);
    return buf;
}

int spec_framework_parse_at(const char *s, int *version)
{
    *version = 0;
    const char *at = s ? strchr(s, '@') : NULL;
    if (!at)
        return spec_framework_parse(s);
    char name[32];
    size_t len = (size_t)(at - s);
    if (len >= sizeof name)
        return -1;
    memcpy(name, s, len);
    name[len] = 0;
    int f = spec_framework_parse(name), v = spec_version_parse(at + 1);
    if (f < 0 || v <= 0)
        return -1;
    *version = v;
    return f;
}

static const char *const PRECS[] = {"bf16", "fp16", "fp32", "tf32", "fp8", NULL};
static const char *const CKPTS[] = {"none", "full", "selective", "op", "save_dot_except_mlpwi", "save_qkv_proj", NULL};
static const char *const REDUCE_DTYPES[] = {"default", "param", "fp32", NULL};
static const char *const OPT_IMPLS[] = {"default", "fused", "foreach", "forloop", NULL};
static const char *const OPT_STATE_DTYPES[] = {"fp32", "bf16", NULL}; /* index = opt_state_bf16 */
static const char *const OPT_TYPES[] = {"adamw", "sgd", NULL};           /* index = opt_sgd */
static const char *const FSDP_WRAPS[] = {"block", "module", NULL};       /* index = fsdp_wrap_module */
const char *spec_reduce_dtype_str(int r) { return r >= 0 && r <= 2 ? REDUCE_DTYPES[r] : "?"; }
const char *spec_opt_impl_str(int o) { return o >= 0 && o <= 3 ? OPT_IMPLS[o] : "?"; }

/* Issue 27's implementation keys: reduce_dtype (bf16 / fp16 read as "param", the 16-bit
 * parameter dtype), optimizer, and the element-wise upcasts. */
static int training_impl_from(jr *r, const json_t *o, const char *base, spec_training *t)
{
    static const char *const FP8_RECIPES[] = {"delayed", "current", NULL};
    static const char *const RD[] = {"default", "param", "fp32", "bf16", "fp16", NULL};
    int rd = t->reduce_dtype, rc;
    if ((rc = jr_enum(r, o, base, "reduce_dtype", RD, 0, &rd)) ||
        (rc = jr_enum(r, o, base, "optimizer", OPT_IMPLS, 0, &t->opt_impl)) ||
        (rc = jr_bool(r, o, base, "norm_fp32", &t->norm_fp32)) || (rc = jr_bool(r, o, base, "rope_fp32", &t->rope_fp32)) ||
        (rc = jr_bool(r, o, base, "repeat_kv", &t->repeat_kv)) || (rc = jr_bool(r, o, base, "loss_fp32", &t->loss_fp32)) ||
        (rc = jr_bool(r, o, base, "swiglu_unfused", &t->swiglu_unfused)) ||
        (rc = jr_bool(r, o, base, "tp_comm_overlap", &t->tp_comm_overlap)) ||
        (rc = jr_bool(r, o, base, "gelu_unfused", &t->gelu_unfused)) ||
        (rc = jr_bool(r, o, base, "mask_unfused", &t->mask_unfused)) ||
        (rc = jr_bool(r, o, base, "autocast", &t->autocast)) ||
        (rc = jr_bool(r, o, base, "overlap_param_gather", &t->overlap_param_gather)) ||
        (rc = jr_bool(r, o, base, "fused_linear_ce", &t->fused_linear_ce)) ||
        (rc = jr_bool(r, o, base, "ds_mpu", &t->ds_mpu)) ||
        (rc = jr_bool(r, o, base, "grad_clip", &t->grad_clip)) ||
        (rc = jr_bool(r, o, base, "ddp_bucket_copy", &t->ddp_bucket_copy)) ||
        (rc = jr_bool(r, o, base, "bias_unfused", &t->bias_unfused)) ||
        (rc = jr_bool(r, o, base, "tc_align8", &t->tc_align8)) ||
        (rc = jr_bool(r, o, base, "contiguous_gradients", &t->contiguous_gradients)) ||
        (rc = jr_bool(r, o, base, "rope_unfused", &t->rope_unfused)) ||
        (rc = jr_bool(r, o, base, "loss_fusion", &t->loss_fusion)) ||
        (rc = jr_bool(r, o, base, "megatron_ce", &t->megatron_ce)) ||
        (rc = jr_bool(r, o, base, "atorch_tp", &t->atorch_tp)) ||
        (rc = jr_enum(r, o, base, "optimizer_state_dtype", OPT_STATE_DTYPES, 0, &t->opt_state_bf16)) ||
        (rc = jr_pos(r, o, base, "max_reuse_distance", 0, &t->max_reuse_params)) ||
        (rc = jr_pos(r, o, base, "max_live_parameters", 0, &t->max_live_params)) ||
        (rc = jr_prob(r, o, base, "hidden_dropout", &t->hidden_dropout)) ||
        (rc = jr_prob(r, o, base, "attention_dropout", &t->attention_dropout)) ||
        (rc = jr_min(r, o, base, "attn_doc_len", 1.0, 0, &t->attn_doc_len)) ||
        (rc = jr_enum(r, o, base, "optimizer_type", OPT_TYPES, 0, &t->opt_sgd)) ||
        (rc = jr_enum(r, o, base, "fsdp_wrap", FSDP_WRAPS, 0, &t->fsdp_wrap_module)) ||
        (rc = jr_bool(r, o, base, "activation_offload", &t->act_offload)) ||
        (rc = jr_enum(r, o, base, "fp8_recipe", FP8_RECIPES, 0, &t->fp8_recipe)))
        return rc;
    t->reduce_dtype = rd > 2 ? REDUCE_PARAM : rd;
    t->given |= (json_object_get(o, "reduce_dtype") ? SPEC_GIVEN_RD : 0u) | (json_object_get(o, "optimizer") ? SPEC_GIVEN_OPT : 0u);
    return 0;
}
static const char *const EXECS[] = {"eager", "compiled", NULL};

static const char *const ATTN_KERNELS[] = {"default", "fa1", "triton2022", "xformers", "fa2", "fa3",
                                           "sdpa-flash", "sdpa-cudnn", "sdpa-efficient", "unfused", NULL};
const char *spec_attn_kernel_str(int ak) { return ak >= 0 && ak < AK_N ? ATTN_KERNELS[ak] : "?"; }
int spec_attn_kernel_parse(const char *s)
{
    for (int i = 1; s && ATTN_KERNELS[i]; i++)
        if (!strcmp(s, ATTN_KERNELS[i]))
            return i;
    return -1;
}

/* attention_kernel given: unfused is flash_attention off; a fused kernel with
 * flash_attention: false names two different things. */
static int training_attn_kernel(jr *r, const json_t *o, const char *base, int ak, spec_training *t)
{
    char p[160];
    snprintf(p, sizeof p, "%s.attention_kernel", base);
    json_t *fa = json_object_get(o, "flash_attention");
    if ((ak != AK_UNFUSED && json_is_false(fa)) || (ak == AK_UNFUSED && json_is_true(fa)))
        return sc_err_set(r->err, SC_EINPUT, r->src, p, "expected a kernel that agrees with flash_attention: %s, got %s",
                          json_is_true(fa) ? "true" : "false", ATTN_KERNELS[ak]);
    t->attn_kernel = ak;
    t->flash_attention = ak != AK_UNFUSED;
    t->flash_version = ak == AK_FA3 ? 3 : 2;
    return 0;
}

static int training_from(jr *r, const json_t *o, const char *base, spec_training *t)
{
    static const char *const k[] = {"micro_batch", "grad_accum", "precision", "activation_checkpointing",
                                    "flash_attention", "prefetch_layers", "bucket_MB", "reserve_GiB",
                                    "checkpointing", "execution", "attention_kernel", "framework", "overlap_comm",
                                    "limit_all_gathers", "backward_prefetch", "reduce_dtype", "optimizer",
                                    "norm_fp32", "rope_fp32", "repeat_kv", "loss_fp32", "swiglu_unfused",
                                    "tp_comm_overlap", "framework_version", "name", "source", "stack",
                                    "gelu_unfused", "mask_unfused", "autocast",
                                    "overlap_param_gather", "fused_linear_ce", "ds_mpu", "rope_unfused",
                                    "loss_fusion", "megatron_ce", "grad_clip", "max_reuse_distance",
                                    "max_live_parameters", "ddp_bucket_copy", "hidden_dropout",
                                    "attention_dropout", "bias_unfused", "atorch_tp", "optimizer_state_dtype",
                                    "tc_align8", "contiguous_gradients", "optimizer_type",
                                    "activation_offload", "fsdp_wrap", "fp8_recipe", "attn_doc_len", NULL};
    static const char *const *const AKS = ATTN_KERNELS + 1;
    static const char *const BWD_PREFETCH[] = {"pre", "post", "none", NULL};
    int ak = t->attn_kernel - 1;
    int rc, prec = (int)t->precision, ckpt = t->act_ckpt, exec = t->execution, fw = (int)t->framework;
    double bucket_MB = t->bucket_bytes / 1e6, reserve = t->reserve_bytes / GiB;
    if ((rc = jr_only_keys(r, o, base, k)) || (rc = jr_int(r, o, base, "micro_batch", 1, 1 << 20, 0, &t->micro_batch)) ||
        (rc = jr_int(r, o, base, "grad_accum", 1, 1 << 20, 0, &t->grad_accum)) ||
        (rc = jr_enum(r, o, base, "precision", PRECS, 0, &prec)) ||
        (rc = jr_bool(r, o, base, "activation_checkpointing", &ckpt)) ||
        (rc = jr_enum(r, o, base, "checkpointing", CKPTS, 0, &ckpt)) ||
        (rc = jr_enum(r, o, base, "execution", EXECS, 0, &exec)) ||
        (rc = jr_enum(r, o, base, "attention_kernel", AKS, 0, &ak)) ||
        (rc = jr_bool(r, o, base, "flash_attention", &t->flash_attention)) ||
        (rc = jr_int(r, o, base, "prefetch_layers", 0, 64, 0, &t->prefetch_layers)) ||
        (rc = jr_pos(r, o, base, "bucket_MB", 0, &bucket_MB)) ||
        (rc = jr_min(r, o, base, "reserve_GiB", 0.0, 0, &reserve)) ||
        (rc = jr_enum(r, o, base, "framework", FRAMEWORKS, 0, &fw)) ||
        (rc = jr_bool(r, o, base, "overlap_comm", &t->overlap_comm)) ||
        (rc = jr_bool(r, o, base, "limit_all_gathers", &t->limit_all_gathers)) ||
        (rc = jr_enum(r, o, base, "backward_prefetch", BWD_PREFETCH, 0, &t->backward_prefetch)) ||
        (rc = training_impl_from(r, o, base, t)))
        return rc;
    if (json_object_get(o, "activation_checkpointing") && json_object_get(o, "checkpointing")) {
        char p[160];
        snprintf(p, sizeof p, "%s.checkpointing", base);
        return sc_err_set(r->err, SC_EINPUT, r->src, p,
                          "expected one of checkpointing and activation_checkpointing, got both");
    }
    t->framework = (spec_framework)fw;
    if (json_object_get(o, "framework_version")) { /* "0.5", "0.12.4": framework.c reads it */
        char ver[32], p[160];
        snprintf(p, sizeof p, "%s.framework_version", base);
        if ((rc = jr_str(r, o, base, "framework_version", 0, ver, sizeof ver)))
            return rc;
        if ((t->framework_version = spec_version_parse(ver)) <= 0)
            return sc_err_set(r->err, SC_EINPUT, r->src, p, "expected a release such as \"0.5\" or \"0.12.4\", got \"%s\"",
                              ver);
    }
    t->precision = (spec_precision)prec;
    if (json_object_get(o, "precision"))
        t->precision_given = 1;
    t->act_ckpt = ckpt;
    t->execution = exec;
    if (json_object_get(o, "attention_kernel") &&
        (rc = training_attn_kernel(r, o, base, ak + 1, t)))
        return rc;
    if ((rc = jr_str(r, o, base, "stack", 0, t->stack, sizeof t->stack)))
        return rc;
    /* what a named stack (model/stack.h) must not override */
    t->given |= (json_object_get(o, "attention_kernel") || json_object_get(o, "flash_attention") ? SPEC_GIVEN_AK : 0u) |
                (json_object_get(o, "framework") ? SPEC_GIVEN_FW : 0u) |
                (json_object_get(o, "execution") ? SPEC_GIVEN_EXEC : 0u) |
                (json_object_get(o, "checkpointing") || json_object_get(o, "activation_checkpointing") ? SPEC_GIVEN_CKPT
                                                                                                      : 0u) |
                (json_object_get(o, "reduce_dtype") ? SPEC_GIVEN_RD : 0u) |
                (json_object_get(o, "optimizer") ? SPEC_GIVEN_OPT : 0u) |
                (json_object_get(o, "norm_fp32") ? SPEC_GIVEN_NORM : 0u) |
                (json_object_get(o, "rope_fp32") ? SPEC_GIVEN_ROPE : 0u) |
                (json_object_get(o, "repeat_kv") ? SPEC_GIVEN_RKV : 0u) |
                (json_object_get(o, "loss_fp32") ? SPEC_GIVEN_LOSS : 0u) |
                (json_object_get(o, "swiglu_unfused") ? SPEC_GIVEN_SWIGLU : 0u) |
                (json_object_get(o, "tp_comm_overlap") ? SPEC_GIVEN_TPO : 0u) |
                (json_object_get(o, "gelu_unfused") ? SPEC_GIVEN_GELU : 0u) |
                (json_object_get(o, "mask_unfused") ? SPEC_GIVEN_MASK : 0u) |
                (json_object_get(o, "autocast") ? SPEC_GIVEN_AMP : 0u) |
                (json_object_get(o, "overlap_param_gather") ? SPEC_GIVEN_OPG : 0u) |
                (json_object_get(o, "bucket_MB") ? SPEC_GIVEN_BUCKET : 0u) |
                (json_object_get(o, "fused_linear_ce") ? SPEC_GIVEN_FLCE : 0u) |
                (json_object_get(o, "rope_unfused") ? SPEC_GIVEN_ROPEU : 0u) |
                (json_object_get(o, "loss_fusion") ? SPEC_GIVEN_LOSSF : 0u) |
                (json_object_get(o, "megatron_ce") ? SPEC_GIVEN_MCE : 0u) |
                (json_object_get(o, "atorch_tp") ? SPEC_GIVEN_ATP : 0u) |
                (json_object_get(o, "grad_clip") ? SPEC_GIVEN_CLIP : 0u);
    t->bucket_bytes = bucket_MB * 1e6;
    t->reserve_bytes = reserve * GiB;
    return 0;
}

/* ---- scenario ------------------------------------------------------------------------ */
static int scenario_from(jr *r, json_t *root, spec_scenario *s)
{
    int rc;
    memset(s, 0, sizeof *s);
    spec_training_defaults(&s->training);
    static const char *const k[] = {"name", "source", "cluster", "model", "nodes", "layouts", "training", NULL};
    if ((rc = jr_only_keys(r, root, "$", k)) || (rc = jr_str(r, root, "$", "name", 1, s->name, sizeof s->name)) ||
        (rc = jr_str(r, root, "$", "source", 1, s->source, sizeof s->source)) ||
        (rc = jr_str(r, root, "$", "cluster", 1, s->cluster, sizeof s->cluster)) ||
        (rc = jr_str(r, root, "$", "model", 1, s->model, sizeof s->model)))
        return rc;
    json_t *nodes = json_object_get(root, "nodes");
    if (!nodes)
        return jr_missing(r, "$.nodes", "a node count or an array of them");
    if (json_is_integer(nodes)) {
        if ((rc = jr_int(r, root, "$", "nodes", 1, 1000000, 1, &s->nodes[0])))
            return rc;
        s->n_nodes = 1;
    } else if (json_is_array(nodes) && json_array_size(nodes) >= 1 && json_array_size(nodes) <= SPEC_MAX_LIST) {
        size_t i;
        json_t *e;
        json_array_foreach(nodes, i, e) {
            char p[64];
            snprintf(p, sizeof p, "$.nodes[%zu]", i);
            if (!json_is_integer(e) || json_integer_value(e) < 1 || json_integer_value(e) > 1000000)
                return jr_bad(r, p, "a positive integer node count", e);
            s->nodes[i] = (int)json_integer_value(e);
        }
        s->n_nodes = (int)json_array_size(nodes);
    } else {
        return jr_bad(r, "$.nodes", "a node count or an array of 1 to 32 of them", nodes);
    }
    json_t *lays = json_object_get(root, "layouts");
    if (!lays)
        return jr_missing(r, "$.layouts", "an array of layout strings");
    if (!json_is_array(lays) || json_array_size(lays) < 1 || json_array_size(lays) > SPEC_MAX_LIST)
        return jr_bad(r, "$.layouts", "an array of 1 to 32 layout strings", lays);
    size_t i;
    json_t *e;
    json_array_foreach(lays, i, e) {
        char p[64];
        snprintf(p, sizeof p, "$.layouts[%zu]", i);
        spec_layout l;
        sc_err lerr;
        if (!json_is_string(e))
            return jr_bad(r, p, "a layout string such as \"mics:p=8\"", e);
        if (spec_layout_parse(json_string_value(e), &l, &lerr))
            return sc_err_set(r->err, SC_EINPUT, r->src, p, "%s", lerr.text);
        spec_layout_str(&l, s->layouts[i], sizeof s->layouts[i]); /* canonical form: always short */
    }
    s->n_layouts = (int)json_array_size(lays);
    json_t *tr;
    if ((rc = jr_obj(r, root, "$", "training", 0, &tr)))
        return rc;
    if (tr && (rc = training_from(r, tr, "$.training", &s->training)))
        return rc;
    return 0;
}

/* DeepSpeed ds_config.json: model/spec_dsconfig.c */

/* ---- public entry points ------------------------------------------------------------- */
static int run(const char *text, const char *src, sc_err *err, int (*fn)(jr *, json_t *, void *), void *out)
{
    jr r = {src ? src : "<input>", err};
    json_t *root;
    int rc = jr_load_root(&r, text, &root);
    if (rc)
        return rc;
    rc = fn(&r, root, out);
    json_decref(root);
    return rc;
}

static int cl_fn(jr *r, json_t *j, void *o) { return cluster_from(r, j, o); }
static int mo_fn(jr *r, json_t *j, void *o) { return model_from(r, j, o); }
static int tr_fn(jr *r, json_t *j, void *o) { return training_from(r, j, "$", o); }
static int sc_fn(jr *r, json_t *j, void *o) { return scenario_from(r, j, o); }

int spec_load_cluster(const char *path, spec_cluster *out, sc_err *err) { return run(NULL, path, err, cl_fn, out); }
int spec_load_model(const char *path, spec_model *out, sc_err *err) { return run(NULL, path, err, mo_fn, out); }
int spec_load_training(const char *path, spec_training *out, sc_err *err) { return run(NULL, path, err, tr_fn, out); }
int spec_load_scenario(const char *path, spec_scenario *out, sc_err *err) { return run(NULL, path, err, sc_fn, out); }
int spec_parse_cluster(const char *json, const char *source, spec_cluster *out, sc_err *err)
{
    return run(json, source, err, cl_fn, out);
}
int spec_parse_model(const char *json, const char *source, spec_model *out, sc_err *err)
{
    return run(json, source, err, mo_fn, out);
}
int spec_parse_training(const char *json, const char *source, spec_training *out, sc_err *err)
{
    return run(json, source, err, tr_fn, out);
}

const char *spec_precision_str(spec_precision p) { return PRECS[p]; }
const char *spec_ckpt_str(int ckpt) { return ckpt >= 0 && ckpt <= 5 ? CKPTS[ckpt] : "?"; }

/* Which GPUs a kernel runs on: FA3 Hopper only (flash-attention hopper/ README: "H100 / H800
 * GPU"); FA1 Turing/Ampere+ (flash-attention 1.x README: "Turing or Ampere GPUs"), FA2 and its
 * SDPA backend and the 2022 Triton kernel Ampere+ (flash-attention README: "Ampere, Ada, or
 * Hopper"; flash_attn_triton.py: tested on A100), so none of them on Volta. */
int spec_training_check(const spec_cluster *c, const spec_training *t, const char *source, sc_err *err)
{
    int ak = t->flash_attention ? t->attn_kernel : AK_UNFUSED;
    if (t->flash_attention && t->flash_version == 3 && ak == AK_DEFAULT)
        ak = AK_FA3;
    const char *need = NULL, *p = source[0] == '-' ? "" : "$.attention_kernel";
    if (ak == AK_FA3 && strcmp(c->gpu.arch, "hopper"))
        need = "a Hopper GPU";
    if ((ak == AK_FA1 || ak == AK_FA2 || ak == AK_TRITON2022 || ak == AK_SDPA_FLASH) && !strcmp(c->gpu.arch, "volta"))
        need = "an Ampere or newer GPU";
    if (need)
        return sc_err_set(err, SC_EINPUT, source, p, "expected %s on %s (%s), got %s, which needs %s",
                          strcmp(c->gpu.arch, "volta") ? "fa2" : "xformers, sdpa-efficient or unfused", c->name,
                          c->gpu.name, ATTN_KERNELS[ak], need);
    return spec_precision_check(c, t->precision, source, err);
}

/* Datasheets: bf16 tensor cores from Ampere (A100 whitepaper), FP8 from Hopper (H100
 * whitepaper); TF32 from Ampere. Volta has FP16 tensor cores and FP32 only. */
int spec_precision_check(const spec_cluster *c, spec_precision p, const char *source, sc_err *err)
{
    const char *a = c->gpu.arch;
    int volta = !strcmp(a, "volta"), ampere = !strcmp(a, "ampere");
    const char *need = NULL;
    if ((p == PREC_BF16 || p == PREC_TF32) && volta)
        need = "an Ampere or newer GPU";
    if (p == PREC_FP8 && (volta || ampere))
        need = "a Hopper or newer GPU";
    if (!need)
        return 0;
    return sc_err_set(err, SC_EINPUT, source, source[0] == '-' ? "" : "$.precision",
                      "expected a precision %s (%s) runs (%s), got %s, which needs %s", c->name, c->gpu.name,
                      volta ? "fp16 or fp32" : "bf16, fp16, fp32 or tf32", PRECS[p], need);
}
const char *spec_fabric_str(spec_fabric_kind k) { return FABRICS[k]; }
