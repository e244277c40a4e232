/* calib.c — load and validate calibration files (configs/calibrations/), and the defaults used
 * when a cluster has none. Every value is a number or {"value": v, "sd": s, "source": "..."}.
 * Not here: fitting calibrations from measurements (calibrate/fit). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cost.h"
#include "jsonrd.h"

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

static int calib_from(jr *r, json_t *root, cost_calib *c)
{
    int rc;
    memset(c, 0, sizeof *c);
    static const char *const top[] = {"name", "source", "cluster", "gpu", "links", "algorithms", NULL};
    if ((rc = jr_only_keys(r, root, "$", top)) || (rc = jr_str(r, root, "$", "name", 1, c->name, sizeof c->name)) ||
        (rc = jr_str(r, root, "$", "source", 1, c->source, sizeof c->source)) ||
        (rc = jr_str(r, root, "$", "cluster", 0, c->cluster, sizeof c->cluster)))
        return rc;
    json_t *gpu, *links, *algos;
    static const char *const gk[] = {"gemm_efficiency", "gemm_overhead_us", "gemm_tile", "hbm_efficiency",
                                     "optimizer_bytes_per_param", "overlap_slowdown", NULL};
    if ((rc = jr_obj(r, root, "$", "gpu", 1, &gpu)) || (rc = jr_only_keys(r, gpu, "$.gpu", gk)) ||
        (rc = get_param(r, gpu, "$.gpu", "gemm_efficiency", 0, 1.0, 1, &c->gemm_eff)) ||
        (rc = get_param(r, gpu, "$.gpu", "gemm_overhead_us", 1, INFINITY, 1e-6, &c->gemm_overhead_s)) ||
        (json_object_get(gpu, "gemm_tile") &&
         (rc = get_param(r, gpu, "$.gpu", "gemm_tile", 1, 4096, 1, &c->gemm_tile))) ||
        (rc = get_param(r, gpu, "$.gpu", "hbm_efficiency", 0, 1.0, 1, &c->hbm_eff)) ||
        (rc = get_param(r, gpu, "$.gpu", "optimizer_bytes_per_param", 0, INFINITY, 1, &c->opt_bytes_per_param)) ||
        (rc = get_param(r, gpu, "$.gpu", "overlap_slowdown", 1, INFINITY, 1, &c->overlap_slowdown)))
        return rc;
    static const char *const tiers[] = {"nvlink", "pcie", "net", NULL};
    if ((rc = jr_obj(r, root, "$", "links", 1, &links)) || (rc = jr_only_keys(r, links, "$.links", tiers)))
        return rc;
    for (int t = 0; t < N_TIERS; t++) {
        json_t *o;
        char base[64];
        snprintf(base, sizeof base, "$.links.%s", tiers[t]);
        static const char *const lk[] = {"bandwidth_efficiency", "hop_latency_us", NULL};
        if ((rc = jr_obj(r, links, "$.links", tiers[t], 1, &o)) || (rc = jr_only_keys(r, o, base, lk)) ||
            (rc = get_param(r, o, base, "bandwidth_efficiency", 0, 1.0, 1, &c->bw_eff[t])) ||
            (rc = get_param(r, o, base, "hop_latency_us", 1, INFINITY, 1e-6, &c->hop_lat_s[t])))
            return rc;
    }
    static const char *const ak[] = {"ring", "tree", NULL};
    json_t *ring, *tree;
    static const char *const rk[] = {"base_latency_us", NULL};
    static const char *const tk[] = {"base_latency_us", "bandwidth_factor", NULL};
    if ((rc = jr_obj(r, root, "$", "algorithms", 1, &algos)) || (rc = jr_only_keys(r, algos, "$.algorithms", ak)) ||
        (rc = jr_obj(r, algos, "$.algorithms", "ring", 1, &ring)) ||
        (rc = jr_only_keys(r, ring, "$.algorithms.ring", rk)) ||
        (rc = get_param(r, ring, "$.algorithms.ring", "base_latency_us", 1, INFINITY, 1e-6, &c->base_lat_s[ALGO_RING])) ||
        (rc = jr_obj(r, algos, "$.algorithms", "tree", 1, &tree)) ||
        (rc = jr_only_keys(r, tree, "$.algorithms.tree", tk)) ||
        (rc = get_param(r, tree, "$.algorithms.tree", "base_latency_us", 1, INFINITY, 1e-6, &c->base_lat_s[ALGO_TREE])) ||
        (rc = get_param(r, tree, "$.algorithms.tree", "bandwidth_factor", 0, 1.0, 1, &c->tree_bw_factor)))
        return rc;
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
    json_decref(root);
    return rc;
}

int cost_calib_load(const char *path, cost_calib *out, sc_err *err) { return run(NULL, path, out, err); }
int cost_calib_parse(const char *json, const char *source, cost_calib *out, sc_err *err)
{
    return run(json, source, out, err);
}

static cost_param P(double v) { return (cost_param){v, 0}; }

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
}
