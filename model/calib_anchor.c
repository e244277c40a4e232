/* calib_anchor.c — reading and applying a calibration's "anchor" object (see calib_anchor.h).
 * Not here: fitting it (calibrate/anchor.c). */
#include "calib_anchor.h"

#include <math.h>
#include <string.h>

static const char *const KEYS[COST_N_STACK] = {"compute_scale", "framework_hook_us", "net_bandwidth_efficiency"};
static const char *const STATUS[] = {"base", "fitted", "bound", "undetermined", NULL};
static const char *const FWS[] = {"ideal", "deepspeed", "fsdp", "fsdp2", "megatron", NULL};
/* file units per SI unit of each parameter */
static const double PER_SI[COST_N_STACK] = {1, 1e6, 1};

const char *cost_anchor_key(int which) { return which >= 0 && which < COST_N_STACK ? KEYS[which] : "?"; }
const char *cost_anchor_status_str(int s) { return s >= 0 && s <= COST_ANCHOR_UNDETERMINED ? STATUS[s] : "?"; }

/* Every compute-kernel efficiency of c, to read or scale (NULL-free list of n pointers). */
static int effs(cost_calib *c, double **e)
{
    int n = 0;
    e[n++] = &c->gemm_eff.v;
    e[n++] = &c->kern.gemm_eff;
    for (int d = 0; d < KD_N; d++)
        e[n++] = &c->kern.gemm_eff_dtype[d];
    e[n++] = &c->kern.fa_fwd_eff;
    e[n++] = &c->kern.fa_bwd_eff;
    e[n++] = &c->kern.fa3_fwd_eff;
    e[n++] = &c->kern.fa3_bwd_eff;
    return n;
}

double cost_anchor_compute_max(const cost_calib *c)
{
    cost_calib k = *c;
    double *e[16], hi = 0;
    int n = effs(&k, e);
    for (int i = 0; i < n; i++)
        hi = fmax(hi, *e[i]);
    return hi > 0 ? 1 / hi : 1;
}

void cost_anchor_scale_compute(cost_calib *c, double f)
{
    double *e[16];
    int n = effs(c, e);
    for (int i = 0; i < n; i++)
        *e[i] *= f; /* 0 stays 0: "not given" */
    c->gemm_eff.sd *= f; /* its uncertainty scales with it (the spread draws it) */
}

void cost_anchor_set(cost_calib *c, int which, double v)
{
    switch (which) {
    case COST_STACK_COMPUTE:
        if (c->anchor.p[COST_STACK_COMPUTE].v > 0)
            cost_anchor_scale_compute(c, v / c->anchor.p[COST_STACK_COMPUTE].v);
        break;
    case COST_STACK_HOOK: c->fw_hook_s[c->anchor.framework].v = v; break;
    case COST_STACK_NET: c->bw_eff[TIER_NET].v = v; break;
    default: break;
    }
    if (which >= 0 && which < COST_N_STACK)
        c->anchor.p[which].v = v;
}

/* One parameter: {"value", "sd", "status", "source"}; value and sd in the file's unit. */
static int read_param(jr *r, json_t *a, int which, cost_calib *c)
{
    char base[96];
    snprintf(base, sizeof base, "$.anchor.%s", KEYS[which]);
    json_t *o;
    static const char *const keys[] = {"value", "sd", "status", "source", NULL};
    double v, sd = 0;
    int st = 0, rc;
    if ((rc = jr_obj(r, a, "$.anchor", KEYS[which], 1, &o)) || (rc = jr_only_keys(r, o, base, keys)) ||
        (rc = jr_min(r, o, base, "value", 0, 1, &v)) || (rc = jr_min(r, o, base, "sd", 0, 0, &sd)) ||
        (rc = jr_enum(r, o, base, "status", STATUS, 1, &st)))
        return rc;
    double hi = which == COST_STACK_COMPUTE ? cost_anchor_compute_max(c) : which == COST_STACK_NET ? 1.0 : 1e-2 * 1e6;
    if (which != COST_STACK_HOOK && !(v > 0))
        return sc_err_set(r->err, SC_EINPUT, r->src, base, "expected a value > 0, got %g", v);
    if (v > hi * (1 + 1e-6)) /* the file rounds to 8 digits */
        return sc_err_set(r->err, SC_EINPUT, r->src, base,
                          "expected at most %g (%s), got %g", hi,
                          which == COST_STACK_COMPUTE ? "no compute-kernel efficiency above 1"
                          : which == COST_STACK_NET   ? "an efficiency"
                                                      : "10 ms per hook",
                          v);
    v = v < hi ? v : hi;
    c->anchor.p[which] = (cost_param){v / PER_SI[which], sd / PER_SI[which]};
    c->anchor.status[which] = st;
    return 0;
}

int cost_anchor_read(jr *r, json_t *root, cost_calib *c)
{
    json_t *a;
    int rc, fw = 0;
    memset(&c->anchor, 0, sizeof c->anchor);
    if ((rc = jr_obj(r, root, "$", "anchor", 0, &a)) || !a)
        return rc;
    static const char *const keys[] = {"cluster", "framework", "base", "compute_scale", "framework_hook_us",
                                       "net_bandwidth_efficiency", "runs", "rms_residual", "dof", NULL};
    if ((rc = jr_only_keys(r, a, "$.anchor", keys)) ||
        (rc = jr_str(r, a, "$.anchor", "cluster", 1, c->anchor.cluster, sizeof c->anchor.cluster)) ||
        (rc = jr_enum(r, a, "$.anchor", "framework", FWS, 1, &fw)))
        return rc;
    c->anchor.framework = fw;
    for (int w = 0; w < COST_N_STACK; w++)
        if ((rc = read_param(r, a, w, c)))
            return rc;
    json_t *runs = json_object_get(a, "runs");
    if (!json_is_array(runs) || !json_array_size(runs))
        return jr_bad(r, "$.anchor.runs", "an array of the runs it was fitted to", runs);
    /* which runs were offloaded: their "layout" as calibrate anchor writes it (spec_layout_str) */
    c->anchor.n_runs = (int)json_array_size(runs);
    for (size_t i = 0; i < json_array_size(runs); i++) {
        const char *lay = json_string_value(json_object_get(json_array_get(runs, i), "layout"));
        spec_layout l;
        c->anchor.host_runs += lay && !spec_layout_parse(lay, &l, NULL) && spec_layout_states_at(l.kind) == SPEC_AT_HOST;
    }
    /* the file holds the base's values; the anchor's replace them */
    c->anchor.on = 1;
    cost_anchor_scale_compute(c, c->anchor.p[COST_STACK_COMPUTE].v);
    c->fw_hook_s[fw] = c->anchor.p[COST_STACK_HOOK];
    c->bw_eff[TIER_NET] = c->anchor.p[COST_STACK_NET];
    return 0;
}
