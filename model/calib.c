/* calib.c — load and validate calibration files (configs/calibrations/), and the defaults used
 * when a cluster has none. Every value is a number or {"value": v, "sd": s, "source": "..."}.
 * Not here: fitting calibrations from measurements (calibrate/fit). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "calib_params.h"
#include "calib_anchor.h"
#include "cost.h"
#include "../base/jsonrd.h"

/* A value: a positive number (or >= 0 when allow_zero), or {"value", "sd", "source"}. */
static int get_param(jr *r, const json_t *obj, const char *base, const char *key, int allow_zero, double max,
                     double scale, cost_param *out)
{
    char p[128];
    jr_subpath(p, sizeof p, base, key);
    json_t *v = json_object_get(obj, key);
    char want[96];
    snprintf(want, sizeof want, "a number %s%s or {\"value\", \"sd\", \"source\"}", allow_zero ? ">= 0" : "> 0",
             isfinite(max) ? " (at most the stated bound)" : "");
    if (!v)
        return jr_missing(r, p, want);
    double x, sd = 0;
    if (json_is_object(v)) {
        static const char *const k[] = {"value", "sd", "source", NULL};
        int rc;
        if ((rc = jr_only_keys(r, v, p, k)))
            return rc;
        json_t *val = json_object_get(v, "value"), *src = json_object_get(v, "source");
        char pv[160];
        snprintf(pv, sizeof pv, "%s.value", p);
        if (!val)
            return jr_missing(r, pv, "a number");
        if (!json_is_number(val))
            return jr_bad(r, pv, want, val);
        x = json_number_value(val);
        if ((rc = jr_min(r, v, p, "sd", 0.0, 0, &sd)))
            return rc;
        if (src && !json_is_string(src)) {
            snprintf(pv, sizeof pv, "%s.source", p);
            return jr_bad(r, pv, "a string", src);
        }
    } else if (json_is_number(v)) {
        x = json_number_value(v);
    } else {
        return jr_bad(r, p, want, v);
    }
    if (!isfinite(x) || x < 0 || (!allow_zero && x == 0) || x > max || !jr_plausible(x)) {
        char got[64];
        snprintf(got, sizeof got, "%g", x);
        if (x > max)
            return sc_err_set(r->err, SC_EINPUT, r->src, p, "expected a number at most %g, got %s", max, got);
        if (isfinite(x) && x > 0 && !jr_plausible(x))
            return sc_err_set(r->err, SC_EINPUT, r->src, p, "expected %s from 1e-09 to 1e+15, got %s", want, got);
        return sc_err_set(r->err, SC_EINPUT, r->src, p, "expected %s, got %s", want, got);
    }
    out->v = x * scale;
    out->sd = sd * scale;
    return 0;
}

/* ---- the nested objects (calib_params.h: calib_nested) ------------------------------------ */

#define KN(key, f, per_si, zero, max, opt) {"$.kernels", key, offsetof(cost_calib, kern.f), CALIB_DOUBLE, per_si, zero, max, opt}
#define NC(path, key, f, st, per_si, zero, max) {path, key, offsetof(cost_calib, nccl.f), st, per_si, zero, max, 1}
#define PROTOS(path, f, per_si, max)                                                                                   \
    NC(path, "LL", f[NCCL_LL], CALIB_DOUBLE, per_si, 1, max), NC(path, "LL128", f[NCCL_LL128], CALIB_DOUBLE, per_si, 1, max), \
        NC(path, "Simple", f[NCCL_SIMPLE], CALIB_DOUBLE, per_si, 1, max)
#define FW(name, F)                                                                                                     \
    {"$.frameworks." name, "hook_us", offsetof(cost_calib, fw_hook_s[F]), CALIB_PARAM, 1e6, 1, INFINITY, 1},          \
        {"$.frameworks." name, "collective_us", offsetof(cost_calib, fw_coll_s[F]), CALIB_PARAM, 1e6, 1, INFINITY, 1}
/* path, key, field, store, file_per_si, allow_zero, max, optional. The kernels' rows are in
 * reading order: the four FlashAttention-3 rows are optional as a group (all or none, checked
 * in kernels_from). The nccl rows mirror nccl_from's keys; its defaults are NCCL's tuning.cc
 * constants (model/nccl.c). The frameworks' defaults are cost_calib_framework_defaults'. */
static const calib_nested_def NESTED[] = {
    KN("gemm_efficiency", gemm_eff, 1, 0, 1.0, 0),
    KN("gemm_efficiency_fp32", gemm_eff_dtype[KD_FP32], 1, 0, 1.0, 1),
    KN("gemm_efficiency_tf32", gemm_eff_dtype[KD_TF32], 1, 0, 1.0, 1),
    KN("gemm_efficiency_fp8", gemm_eff_dtype[KD_FP8], 1, 0, 1.0, 1),
    KN("gemm_k0", gemm_k0, 1, 1, 1e6, 0),
    KN("gemm_fixed_us", gemm_fixed_s, 1e6, 1, INFINITY, 0),
    {"$.kernels", "gemm_ksweep", offsetof(cost_calib, kern.gemm_ksweep), CALIB_FLAG, 1, 1, 1.0, 1}, /* kernels.h */
    {"$.kernels", "gemm_streamk", offsetof(cost_calib, kern.gemm_streamk), CALIB_FLAG, 1, 1, 1.0, 1}, /* kernels.h */
    KN("fa_fwd_efficiency", fa_fwd_eff, 1, 0, 1.0, 0),
    KN("fa_bwd_efficiency", fa_bwd_eff, 1, 0, 1.0, 0),
    KN("fa_causal", fa_causal, 1, 0, 2.0, 0),
    KN("fa_s0", fa_s0, 1, 1, 1e6, 0),
    KN("fa_hd64", fa_hd64, 1, 0, 2.0, 0),
    KN("fa_hd64_bwd", fa_hd64_bwd, 1, 0, 2.0, 1),
    KN("fa_s0_bwd", fa_s0_bwd, 1, 1, 1e6, 1),
    KN("fa3_fwd_efficiency", fa3_fwd_eff, 1, 0, 1.0, 1),
    KN("fa3_bwd_efficiency", fa3_bwd_eff, 1, 0, 1.0, 1),
    KN("fa3_causal", fa3_causal, 1, 0, 2.0, 1),
    KN("fa3_s0", fa3_s0, 1, 1, 1e6, 1),
    KN("launch_us", launch_s, 1e6, 1, INFINITY, 0),
    KN("fa_clock_ratio", fa_clock, 1, 0, 1.0, 1), /* the clock the fa_* were measured at (kernels.h) */
    KN("attn_sustained_ratio", attn_sustained, 1, 0, 1.0, 1), /* attention's sustained / short-run rate (kernels.h) */
    KN("attn_sustained_clock_ratio", attn_clock, 1, 0, 1.5, 1), /* the dense clock_ratio of that run (kernels.h) */
    NC("$.nccl", "nvls", nvls, CALIB_FLAG, 1, 1, 1.0),
    NC("$.nccl", "simple_only", simple_only, CALIB_FLAG, 1, 1, 1.0),
    NC("$.nccl", "ll128", ll128, CALIB_FLAG, 1, 1, 1.0),
    NC("$.nccl", "ring_latency_by_node", ring_by_node, CALIB_FLAG, 1, 1, 1.0),
    PROTOS("$.nccl.base_latency_us.ring", base_lat_s[NCCL_RING], 1e6, INFINITY),
    PROTOS("$.nccl.base_latency_us.tree", base_lat_s[NCCL_TREE], 1e6, INFINITY),
    PROTOS("$.nccl.base_latency_us.nvls", base_lat_s[NCCL_NVLS], 1e6, INFINITY),
    PROTOS("$.nccl.base_latency_us.nvls-tree", base_lat_s[NCCL_NVLS_TREE], 1e6, INFINITY),
    PROTOS("$.nccl.base_latency_us.pat", base_lat_s[NCCL_PAT], 1e6, INFINITY),
    PROTOS("$.nccl.intra_hop_latency_us", intra_hop_s, 1e6, INFINITY),
    PROTOS("$.nccl.net_hop_latency_us", net_hop_s, 1e6, INFINITY),
    NC("$.nccl", "net_floor_us", net_floor_s, CALIB_DOUBLE, 1e6, 1, INFINITY),
    PROTOS("$.nccl.protocol_bandwidth", proto_bw, 1, 1.0),
    NC("$.nccl", "tree_bandwidth", tree_bw, CALIB_DOUBLE, 1, 0, 2.0),
    NC("$.nccl", "nvls_bandwidth", nvls_bw, CALIB_DOUBLE, 1, 0, 2.0),
    NC("$.nccl", "pat_bandwidth", pat_bw, CALIB_DOUBLE, 1, 0, 1.0),
    NC("$.nccl.chunk_half_KiB", "ring", chunk_half_B[NCCL_RING], CALIB_DOUBLE, 1.0 / 1024, 1, INFINITY),
    NC("$.nccl.chunk_half_KiB", "tree", chunk_half_B[NCCL_TREE], CALIB_DOUBLE, 1.0 / 1024, 1, INFINITY),
    NC("$.nccl.chunk_half_KiB", "nvls", chunk_half_B[NCCL_NVLS], CALIB_DOUBLE, 1.0 / 1024, 1, INFINITY),
    NC("$.nccl.chunk_half_KiB", "nvls-tree", chunk_half_B[NCCL_NVLS_TREE], CALIB_DOUBLE, 1.0 / 1024, 1, INFINITY),
    NC("$.nccl.chunk_half_KiB", "pat", chunk_half_B[NCCL_PAT], CALIB_DOUBLE, 1.0 / 1024, 1, INFINITY),
    NC("$.nccl", "chunk_exponent", chunk_exp, CALIB_DOUBLE, 1, 0, 4.0),
    NC("$.nccl", "ring_node_fall", ring_node_fall, CALIB_DOUBLE, 1, 1, 10.0),
    NC("$.nccl", "tree_node_fall", tree_node_fall, CALIB_DOUBLE, 1, 1, 10.0),
    FW("deepspeed", FW_DEEPSPEED),
    FW("fsdp", FW_FSDP),
    FW("fsdp2", FW_FSDP2),
    FW("megatron", FW_MEGATRON),
};
#undef KN
#undef NC
#undef PROTOS
#undef FW
#define N_NESTED (int)(sizeof NESTED / sizeof NESTED[0])

const calib_nested_def *calib_nested(int *n)
{
    *n = N_NESTED;
    return NESTED;
}

double calib_nested_get(const cost_calib *c, const calib_nested_def *d)
{
    const char *at = (const char *)c + d->offset;
    return d->store == CALIB_FLAG ? (double)*(const int *)at : *(const double *)at;
}

void calib_nested_set(cost_calib *c, const calib_nested_def *d, double v, double sd)
{
    char *at = (char *)c + d->offset;
    if (d->store == CALIB_FLAG)
        *(int *)at = v != 0;
    else if (d->store == CALIB_PARAM)
        *(cost_param *)at = (cost_param){v, sd};
    else
        *(double *)at = v;
}

/* The rows of object `path` in o: no other key (but `extra`, NULL-terminated), each read and
 * checked (the optional ones when present). */
static int read_nested(jr *r, const json_t *o, const char *path, const char *const *extra, cost_calib *c)
{
    const char *keys[N_NESTED + 4];
    int nk = 0, rc;
    for (int i = 0; i < N_NESTED; i++)
        if (!strcmp(NESTED[i].path, path))
            keys[nk++] = NESTED[i].key;
    for (; extra && *extra && nk < N_NESTED + 3; extra++)
        keys[nk++] = *extra;
    keys[nk] = NULL;
    if ((rc = jr_only_keys(r, o, path, keys)))
        return rc;
    for (int i = 0; i < N_NESTED; i++) {
        const calib_nested_def *d = &NESTED[i];
        if (strcmp(d->path, path) || (d->optional && !json_object_get(o, d->key)))
            continue;
        cost_param v;
        if ((rc = get_param(r, o, path, d->key, d->allow_zero, d->max, 1.0 / d->file_per_si, &v)))
            return rc;
        calib_nested_set(c, d, v.v, v.sd);
    }
    return 0;
}

/* "kernels": the kernel models of model/kernels.h (the rows of "$.kernels" above, and the
 * fused-attention kernel's name). FlashAttention-3's four values come all or none. */
static int kernels_from(jr *r, const json_t *o, cost_calib *c)
{
    static const char *const fused[] = {"xformers", "fa2", NULL};
    static const char *const extra[] = {"fused_attention", NULL};
    static const char *const fa3[] = {"fa3_bwd_efficiency", "fa3_causal", "fa3_s0", NULL};
    int rc, fv = 1;
    memset(&c->kern, 0, sizeof c->kern);
    if ((rc = jr_enum(r, o, "$.kernels", "fused_attention", fused, 0, &fv)) ||
        (rc = read_nested(r, o, "$.kernels", extra, c)))
        return rc;
    c->kern.fa_version = fv ? 2 : 1;
    if (!json_object_get(o, "fa3_fwd_efficiency")) {
        c->kern.fa3_fwd_eff = c->kern.fa3_bwd_eff = c->kern.fa3_causal = c->kern.fa3_s0 = 0;
        return 0;
    }
    for (int i = 0; fa3[i]; i++)
        if (!json_object_get(o, fa3[i])) {
            char p[128];
            jr_subpath(p, sizeof p, "$.kernels", fa3[i]);
            return jr_missing(r, p, "a number > 0 or {\"value\", \"sd\", \"source\"} (with fa3_fwd_efficiency)");
        }
    return 0;
}

/* An optional value (absent: *out keeps its default), scaled; flags are 0 or 1. */
static int opt_param(jr *r, const json_t *obj, const char *base, const char *key, int allow_zero, double max,
                     double scale, double *out)
{
    if (!json_object_get(obj, key))
        return 0;
    cost_param v;
    int rc = get_param(r, obj, base, key, allow_zero, max, scale, &v);
    if (!rc)
        *out = v.v;
    return rc;
}

static int opt_flag(jr *r, const json_t *obj, const char *base, const char *key, int *out)
{
    double v = *out;
    int rc = opt_param(r, obj, base, key, 1, 1.0, 1, &v);
    if (rc)
        return rc;
    if (v != 0 && v != 1) {
        char p[128];
        jr_subpath(p, sizeof p, base, key);
        return sc_err_set(r->err, SC_EINPUT, r->src, p, "expected 0 or 1, got %g", v);
    }
    *out = (int)v;
    return 0;
}

static const char *const PROTO_KEYS[] = {"LL", "LL128", "Simple", NULL};

/* {"LL": v, "LL128": v, "Simple": v}, each optional. */
static int proto_params(jr *r, const json_t *obj, const char *base, const char *key, double max, double scale,
                        double *out)
{
    json_t *o;
    char p[128];
    int rc;
    jr_subpath(p, sizeof p, base, key);
    if ((rc = jr_obj(r, obj, base, key, 0, &o)) || !o || (rc = jr_only_keys(r, o, p, PROTO_KEYS)))
        return rc;
    for (int q = 0; q < NCCL_N_PROTOS; q++)
        if ((rc = opt_param(r, o, p, PROTO_KEYS[q], 1, max, scale, &out[q])))
            return rc;
    return 0;
}

static const char *const ALGO_KEYS[] = {"ring", "tree", "nvls", "nvls-tree", "pat", NULL};

/* {"ring": v, "tree": v, ...}, each optional, >= 0. */
static int algo_params(jr *r, const json_t *obj, const char *base, const char *key, double scale, double *out)
{
    json_t *o;
    char p[128];
    int rc;
    jr_subpath(p, sizeof p, base, key);
    if ((rc = jr_obj(r, obj, base, key, 0, &o)) || !o || (rc = jr_only_keys(r, o, p, ALGO_KEYS)))
        return rc;
    for (int a = 0; a < NCCL_N_ALGOS; a++)
        if ((rc = opt_param(r, o, p, ALGO_KEYS[a], 1, INFINITY, scale, &out[a])))
            return rc;
    return 0;
}

/* The "nccl" object: NCCL's algorithms and protocols (model/nccl.h); every key optional, the
 * defaults are NCCL's tuning.cc constants. */
static int nccl_from(jr *r, const json_t *o, nccl_params *p)
{
    static const char *const keys[] = {"nvls", "simple_only", "ll128", "base_latency_us",
                                       "intra_hop_latency_us", "net_hop_latency_us", "net_floor_us",
                                       "protocol_bandwidth", "tree_bandwidth", "nvls_bandwidth", "pat_bandwidth",
                                       "chunk_half_KiB", "chunk_exponent", "ring_node_fall", "tree_node_fall",
                                       "ring_latency_by_node", NULL};
    const char *const *algos = ALGO_KEYS;
    const char *b = "$.nccl";
    int rc;
    if (!json_is_object(o))
        return jr_bad(r, b, "an object", o);
    nccl_params_defaults(p);
    json_t *base;
    if ((rc = jr_only_keys(r, o, b, keys)) || (rc = opt_flag(r, o, b, "nvls", &p->nvls)) ||
        (rc = opt_flag(r, o, b, "simple_only", &p->simple_only)) ||
        (rc = opt_flag(r, o, b, "ll128", &p->ll128)) ||
        (rc = opt_flag(r, o, b, "ring_latency_by_node", &p->ring_by_node)) ||
        (rc = jr_obj(r, o, b, "base_latency_us", 0, &base)))
        return rc;
    if (base) {
        if ((rc = jr_only_keys(r, base, "$.nccl.base_latency_us", algos)))
            return rc;
        for (int a = 0; a < NCCL_N_ALGOS; a++)
            if ((rc = proto_params(r, base, "$.nccl.base_latency_us", algos[a], INFINITY, 1e-6, p->base_lat_s[a])))
                return rc;
    }
    if ((rc = proto_params(r, o, b, "intra_hop_latency_us", INFINITY, 1e-6, p->intra_hop_s)) ||
        (rc = proto_params(r, o, b, "net_hop_latency_us", INFINITY, 1e-6, p->net_hop_s)) ||
        (rc = opt_param(r, o, b, "net_floor_us", 1, INFINITY, 1e-6, &p->net_floor_s)) ||
        (rc = proto_params(r, o, b, "protocol_bandwidth", 1.0, 1, p->proto_bw)) ||
        (rc = opt_param(r, o, b, "tree_bandwidth", 0, 2.0, 1, &p->tree_bw)) ||
        (rc = opt_param(r, o, b, "nvls_bandwidth", 0, 2.0, 1, &p->nvls_bw)) ||
        (rc = opt_param(r, o, b, "pat_bandwidth", 0, 1.0, 1, &p->pat_bw)) ||
        (rc = algo_params(r, o, b, "chunk_half_KiB", 1024, p->chunk_half_B)) ||
        (rc = opt_param(r, o, b, "chunk_exponent", 0, 4.0, 1, &p->chunk_exp)) ||
        (rc = opt_param(r, o, b, "ring_node_fall", 1, 10.0, 1, &p->ring_node_fall)) ||
        (rc = opt_param(r, o, b, "tree_node_fall", 1, 10.0, 1, &p->tree_node_fall)))
        return rc;
    for (int q = 0; q < NCCL_N_PROTOS; q++)
        if (!(p->proto_bw[q] > 0))
            return sc_err_set(r->err, SC_EINPUT, r->src, "$.nccl.protocol_bandwidth", "expected fractions > 0");
    return 0;
}

/* ---- the top-level parameters (calib_params.h) -------------------------------------------- */

#define AT(f) offsetof(cost_calib, f)
/* path, key, field, file_per_si, allow_zero, max, optional, uncertain;
 * from, tier, report place, report label, report unit */
static const calib_param_def PARAMS[] = {
    {"$.gpu", "gemm_efficiency", AT(gemm_eff), 1, 0, 1.0, 0, 1,
     CALIB_FROM_GEMM, -1, 6, "GEMM efficiency", "of peak"},
    {"$.gpu", "gemm_overhead_us", AT(gemm_overhead_s), 1e6, 1, INFINITY, 0, 1,
     CALIB_FROM_GEMM, -1, 7, "GEMM overhead", "us"},
    {"$.gpu", "gemm_tile", AT(gemm_tile), 1, 1, 4096, 1, 0,
     CALIB_FROM_BASE, -1, 0, NULL, NULL},
    {"$.gpu", "hbm_efficiency", AT(hbm_eff), 1, 0, 1.0, 0, 1,
     CALIB_FROM_MEMBW, -1, 8, "memory-bandwidth efficiency", "of HBM"},
    {"$.gpu", "optimizer_bytes_per_param", AT(opt_bytes_per_param), 1, 0, INFINITY, 0, 1,
     CALIB_FROM_BASE, -1, 0, NULL, NULL},
    {"$.gpu", "overlap_slowdown", AT(overlap_slowdown), 1, 1, INFINITY, 0, 1,
     CALIB_FROM_INTERF, -1, 9, "overlap slowdown (interference)", "compute slower"},
    {"$.links.nvlink", "bandwidth_efficiency", AT(bw_eff[TIER_NVLINK]), 1, 0, 1.0, 0, 1,
     CALIB_FROM_COLL, TIER_NVLINK, 1, "intra-node (NVLink) efficiency", ""},
    {"$.links.nvlink", "hop_latency_us", AT(hop_lat_s[TIER_NVLINK]), 1e6, 1, INFINITY, 0, 1,
     CALIB_FROM_COLL, TIER_NVLINK, 3, "intra-node hop latency", "us"},
    {"$.links.pcie", "bandwidth_efficiency", AT(bw_eff[TIER_PCIE]), 1, 0, 1.0, 0, 1,
     CALIB_FROM_COLL, TIER_PCIE, 1, "intra-node (PCIe/shm) efficiency", ""},
    {"$.links.pcie", "hop_latency_us", AT(hop_lat_s[TIER_PCIE]), 1e6, 1, INFINITY, 0, 1,
     CALIB_FROM_COLL, TIER_PCIE, 3, "intra-node hop latency", "us"},
    {"$.links.net", "bandwidth_efficiency", AT(bw_eff[TIER_NET]), 1, 0, 1.0, 0, 1,
     CALIB_FROM_COLL, TIER_NET, 2, "network efficiency", ""},
    {"$.links.net", "hop_latency_us", AT(hop_lat_s[TIER_NET]), 1e6, 1, INFINITY, 0, 1,
     CALIB_FROM_COLL, TIER_NET, 4, "network hop latency", "us"},
    {"$.algorithms.ring", "base_latency_us", AT(base_lat_s[ALGO_RING]), 1e6, 1, INFINITY, 0, 1,
     CALIB_FROM_COLL, -1, 5, "ring base latency", "us"},
    {"$.algorithms.tree", "base_latency_us", AT(base_lat_s[ALGO_TREE]), 1e6, 1, INFINITY, 0, 1,
     CALIB_FROM_BASE, -1, 0, NULL, NULL},
    {"$.algorithms.tree", "bandwidth_factor", AT(tree_bw_factor), 1, 0, 1.0, 0, 1,
     CALIB_FROM_BASE, -1, 0, NULL, NULL},
};
#undef AT
#define N_PARAMS (int)(sizeof PARAMS / sizeof PARAMS[0])

const calib_param_def *calib_params(int *n)
{
    *n = N_PARAMS;
    return PARAMS;
}

cost_param *calib_param_at(cost_calib *c, const calib_param_def *d) { return (cost_param *)((char *)c + d->offset); }

const char *calib_param_off_by(const cost_calib *c, const calib_param_def *d)
{
    size_t o = d->offset;
    if (c->kern.gemm_eff > 0 && (o == offsetof(cost_calib, gemm_eff) || o == offsetof(cost_calib, gemm_overhead_s) ||
                                 o == offsetof(cost_calib, gemm_tile)))
        return "$.kernels";
    if (c->nccl.on && (o == offsetof(cost_calib, hop_lat_s[TIER_NVLINK]) ||
                       o == offsetof(cost_calib, base_lat_s[ALGO_RING]) ||
                       o == offsetof(cost_calib, base_lat_s[ALGO_TREE]) || o == offsetof(cost_calib, tree_bw_factor)))
        return "$.nccl";
    return NULL;
}

/* Every parameter of the table under JSON object `path`: no other key, each read and checked. */
static int read_section(jr *r, json_t *o, const char *path, cost_calib *c)
{
    const char *keys[N_PARAMS + 1];
    int nk = 0, rc;
    for (int i = 0; i < N_PARAMS; i++)
        if (!strcmp(PARAMS[i].path, path))
            keys[nk++] = PARAMS[i].key;
    keys[nk] = NULL;
    if ((rc = jr_only_keys(r, o, path, keys)))
        return rc;
    for (int i = 0; i < N_PARAMS; i++) {
        const calib_param_def *d = &PARAMS[i];
        if (strcmp(d->path, path) || (d->optional && !json_object_get(o, d->key)))
            continue;
        if ((rc = get_param(r, o, path, d->key, d->allow_zero, d->max, 1.0 / d->file_per_si, calib_param_at(c, d))))
            return rc;
    }
    return 0;
}

static int calib_from(jr *r, json_t *root, cost_calib *c)
{
    int rc;
    memset(c, 0, sizeof *c);
    cost_calib_framework_defaults(c);
    static const char *const top[] = {"name", "source", "cluster", "gpu", "links", "algorithms", "kernels", "nccl", "frameworks", "anchor", NULL};
    if ((rc = jr_only_keys(r, root, "$", top)) || (rc = jr_str(r, root, "$", "name", 1, c->name, sizeof c->name)) ||
        (rc = jr_str(r, root, "$", "source", 1, c->source, sizeof c->source)) ||
        (rc = jr_str(r, root, "$", "cluster", 0, c->cluster, sizeof c->cluster)))
        return rc;
    json_t *gpu, *links, *algos;
    if ((rc = jr_obj(r, root, "$", "gpu", 1, &gpu)) || (rc = read_section(r, gpu, "$.gpu", c)))
        return rc;
    static const char *const tiers[] = {"nvlink", "pcie", "net", NULL};
    if ((rc = jr_obj(r, root, "$", "links", 1, &links)) || (rc = jr_only_keys(r, links, "$.links", tiers)))
        return rc;
    for (int t = 0; t < N_TIERS; t++) {
        json_t *o;
        char base[64];
        snprintf(base, sizeof base, "$.links.%s", tiers[t]);
        if ((rc = jr_obj(r, links, "$.links", tiers[t], 1, &o)) || (rc = read_section(r, o, base, c)))
            return rc;
    }
    static const char *const ak[] = {"ring", "tree", NULL};
    json_t *ring, *tree;
    if ((rc = jr_obj(r, root, "$", "algorithms", 1, &algos)) || (rc = jr_only_keys(r, algos, "$.algorithms", ak)) ||
        (rc = jr_obj(r, algos, "$.algorithms", "ring", 1, &ring)) ||
        (rc = read_section(r, ring, "$.algorithms.ring", c)) ||
        (rc = jr_obj(r, algos, "$.algorithms", "tree", 1, &tree)) ||
        (rc = read_section(r, tree, "$.algorithms.tree", c)))
        return rc;
    json_t *kern;
    if ((rc = jr_obj(r, root, "$", "kernels", 0, &kern)) || (kern && (rc = kernels_from(r, kern, c))))
        return rc;
    json_t *nc = json_object_get(root, "nccl");
    if (nc && (rc = nccl_from(r, nc, &c->nccl)))
        return rc;
    json_t *fws;
    if ((rc = jr_obj(r, root, "$", "frameworks", 0, &fws)))
        return rc;
    if (!fws)
        return 0;
    static const char *const fk[] = {"deepspeed", "fsdp", "fsdp2", "megatron", NULL};
    if ((rc = jr_only_keys(r, fws, "$.frameworks", fk)))
        return rc;
    for (int f = FW_DEEPSPEED; f < N_FRAMEWORKS; f++) {
        json_t *o;
        char base[64];
        snprintf(base, sizeof base, "$.frameworks.%s", spec_framework_str((spec_framework)f));
        if ((rc = jr_obj(r, fws, "$.frameworks", spec_framework_str((spec_framework)f), 0, &o)))
            return rc;
        if (o && (rc = read_nested(r, o, base, NULL, c)))
            return rc;
    }
    return 0;
}

static int run(const char *text, const char *src, cost_calib *out, sc_err *err)
{
    jr r = {src ? src : "<input>", err};
    json_t *root;
    int rc = jr_load_root(&r, text, &root);
    if (rc)
        return rc;
    rc = calib_from(&r, root, out);
    if (!rc) /* an anchored calibration (calib_anchor.h): its stack parameters replace the base's */
        rc = cost_anchor_read(&r, root, out);
    if (!rc) /* the chunk efficiency's powers at 2^-j-byte chunks, once (model/nccl.h pow2) */
        nccl_pow2_fill(&out->nccl);
    json_decref(root);
    return rc;
}

int cost_calib_load(const char *path, cost_calib *out, sc_err *err) { return run(NULL, path, out, err); }
int cost_calib_parse(const char *json, const char *source, cost_calib *out, sc_err *err)
{
    return run(json, source, out, err);
}

static cost_param P(double v) { return (cost_param){v, 0}; }

/* Host-side framework overheads. No GPU was lent to measure them; the values are estimates of
 * the host time per event, taken as the order of magnitude of published observations, not
 * fitted to any training throughput (each was fitted leave-one-source-out and none kept: below):
 *  - DeepSpeed ZeRO-3 hook: 40 us per sub-module invocation (pre/post forward or backward:
 *    fetch_sub_module / release_sub_module bookkeeping, trace and in-flight registries).
 *    [estimate] DeepSpeed PR #6649 (module_granularity_threshold, 2024) reports that coalescing
 *    the per-sub-module hooks of fine-grained models gave 40% on a host-sensitive device: the
 *    hooks are a host cost of tens of microseconds each, not single microseconds.
 *  - FSDP1: 20 us per original parameter tensor per pass. Published profile: PyTorch PR #96958
 *    ("[FSDP] Reduce CPU overhead", 2023): one FSDP unit of 200 nn.Linear (400 parameters),
 *    world size 2, after the PR: unshard's _use_unsharded_views 4.268 ms, _writeback_orig_params
 *    1.071 ms, reshard's _use_sharded_views ~2.75 ms: 8.09 ms / 400 = 20 us per parameter per
 *    unshard + reshard, which FSDP does once per pass (a CPU microbenchmark, not a training
 *    throughput).
 *  - FSDP2: 30 us per module per pass [estimate] since attnclk37 (Hopper attention at its
 *    measured sustained rate): the re-run make fit-host's fold without olmo-core-readme runs to
 *    the range's top (2000 us), so the data no longer determine it and the estimate is shipped.
 *    Before: 753.74 us per module per pass, fitted leave-one-source-out (make fit-host,
 *    configs/fitted/framework-host.json: held out, olmo-core-readme 1268.7 us, torchtitan-perf-docs
 *    729.11 us; held-out MAPE 7.87 -> 7.31 %), shipped since the torchtitan 2-D cases (fsdp2:dp=D,t=T)
 *    joined the fit; the estimate it replaced: 30 us (fewer Python layers, no FlatParameter views).
 *  - Megatron-LM: 5 us per layer (a gradient-ready hook per bucket, no parameter fetch) [estimate].
 *  - per collective issued: DeepSpeed 20 us (flatten / narrow / partition bookkeeping around
 *    each bucket or fetch), FSDP 10 us, FSDP2 10 us [estimate]; the NCCL launch itself is
 *    already in the algorithms' base latency. Megatron: 5 us [estimate]. Since smallm27 (issue
 *    27: Hopper GEMMs with stream-K, kernels.c streamk_time) the fit on every source is ~160 us
 *    and held out it lowered the mean MAPE over Megatron's 7 sources 9.81 -> 9.28 % (past the
 *    0.5-point bar), but it made megatron-core-h100 worse held out, 5.95 -> 11.13 %: rejected by
 *    the rule that no held-out source may get more than 2 points worse (issue 27;
 *    predict/accuracy_fit.c settle, ACC_FIT_SOURCE_WORSE_MAX). A per-collective host cost of
 *    160 us would stand for what the model lacks on the other sources, not for a host cost.
 *    Since tpo2 (--tp-comm-overlap's copies pair by pair, layout_tensor.c tpo_block) the fit on
 *    every source is ~88 us, held out no better (9.77 -> 9.82 %) and megatron-bridge-perf
 *    4.82 -> 7.04 %, megatron-core-h100 6.37 -> 9.62 %: rejected on both counts. Since spwgrad
 *    (sequence parallelism's backward re-gathers, layout_tensor.c sp_item) ~70 us, held out
 *    9.63 -> 9.84 %, megatron-bridge-perf 5.0 -> 7.6 %, megatron-core-h100 6.7 -> 9.1 %: rejected.
 *    Since fp8ag (Transformer Engine's sequence-parallel all-gathers in fp8, layout_tensor.c
 *    te_fp8_gathers) ~99 us, held out 9.76 -> 9.07 % but megatron-core-h100 6.74 -> 10.12 %: rejected.
 * Every value but FSDP1's hook was fitted to validation/ leave-one-source-out (`make fit-host`,
 * configs/fitted/framework-host.json, docs/ACCURACY.md "Fitted values") and none is kept: FSDP2's
 * hook (above), Megatron's per-collective cost (above) and the DeepSpeed hook cost were
 * no better held out than these estimates; DeepSpeed's, FSDP's and FSDP2's per-collective costs ran to the top of their
 * range (2 ms) in at least one fold, so the data do not determine them (DeepSpeed's all-sources
 * fit, 1.19 ms when first fitted, sat where one flagperf case bends, and held out lowered the
 * DeepSpeed sources' mean MAPE 42.0 -> 38.2 %; in the table as regenerated after smallm27 it is
 * 818 us, 33.55 -> 32.37 %: a per-collective cost the model lacks, not yet a value to ship);
 * Megatron's hook cost acts on no case.
 * tests/test_accuracy_fit.c checks that these values are the table's shipped values (value_us).
 * A calibration file may replace any of them ("frameworks": {"deepspeed": {"hook_us": ...}}). */
void cost_calib_framework_defaults(cost_calib *k)
{
    static const double hook_us[N_FRAMEWORKS] = {0, 40, 20, 30, 5};
    static const double coll_us[N_FRAMEWORKS] = {0, 20, 10, 10, 5};
    for (int f = 0; f < N_FRAMEWORKS; f++) {
        k->fw_hook_s[f] = P(hook_us[f] * 1e-6);
        k->fw_coll_s[f] = P(coll_us[f] * 1e-6);
    }
}

void cost_calib_defaults(const spec_cluster *c, cost_calib *k)
{
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "defaults:%s", c->gpu.arch);
    snprintf(k->source, sizeof k->source,
             "built-in defaults: GEMM efficiency per arch (reference hardware.md s7), NCCL tuning.cc Simple-protocol "
             "latencies, NCCL topo.h usable/line link ratio 0.8; not measured");
    /* Large-GEMM efficiency: A100 0.85, H100/H200 0.80, V100 0.75 (hardware.md s7). */
    double eff = !strcmp(c->gpu.arch, "volta") ? 0.75 : !strcmp(c->gpu.arch, "ampere") ? 0.85 : 0.80;
    k->gemm_eff = P(eff);
    k->gemm_overhead_s = P(9e-6);   /* H100: 1024^3 at 18% of peak vs 80% large (hardware.md s1) */
    k->gemm_tile = P(128); /* cuBLAS/CUTLASS 128 x 128 output tiles (NVIDIA matmul perf. guide) */
    k->hbm_eff = P(0.8);
    k->opt_bytes_per_param = P(28); /* fp32 master, m, v read + written (24), grad read, param written */
    k->overlap_slowdown = P(0);
    k->bw_eff[TIER_NVLINK] = P(0.8); /* NCCL topo.h: SM80_NVLINK_BW 20 of 25 GB/s line */
    k->bw_eff[TIER_PCIE] = P(0.76);  /* topo.h PCI_BW 12 of 15.75 GB/s (Gen3 x16) */
    k->bw_eff[TIER_NET] = P(0.8);    /* nccl-tests multi-node busbw 0.8-0.9 of NIC line (hardware.md s4a) */
    k->hop_lat_s[TIER_NVLINK] = P(3.4e-6); /* tuning.cc hwLat NVLINK Ring Simple */
    k->hop_lat_s[TIER_PCIE] = P(5.7e-6);   /* PCI Ring Simple */
    k->hop_lat_s[TIER_NET] = P(14e-6);     /* NET Ring Simple */
    k->base_lat_s[ALGO_RING] = P(8.4e-6);  /* baseLat Ring Simple */
    k->base_lat_s[ALGO_TREE] = P(8.4e-6);  /* baseLat Tree Simple */
    k->tree_bw_factor = P(0.92);           /* tuning.cc: tree busBw *= .92 */
    kern_defaults(c->gpu.arch, &k->kern);  /* kernel models (model/kernels.c, with sources) */
    cost_calib_framework_defaults(k);
}
