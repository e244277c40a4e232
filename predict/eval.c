/* eval.c — one point with either engine (see eval.h). The analytical engine is an_predict; the
 * simulator runs the same op graph and timings (exec_run_steady) and its result is completed
 * into the same an_result (throughput, bytes, memory) by the same functions. */
#include "eval.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../model/analytic_pipe.h"
#include "../model/layout.h"
#include "../model/memory.h"
#include "../model/workload.h"

int pred_check(const pred_input *in, const char *source, sc_err *err)
{
    int rc;
    if ((rc = spec_nodes_check(in->cluster, in->nodes, source, err)) ||
        (rc = spec_layout_check(in->layout, in->cluster, in->nodes, err)) ||
        (rc = spec_layout_check_model(in->layout, in->model, err)) ||
        (rc = spec_training_check(in->cluster, in->training, source, err)))
        return rc;
    return 0;
}

int pred_sim_ranks(const pred_input *in, const exec_opts *so)
{
    const spec_cluster *c = in->cluster;
    int all = in->nodes * c->gpus_per_node;
    if (spec_layout_check(in->layout, c, in->nodes, NULL) || spec_layout_check_training(in->layout, in->training, NULL))
        return all;
    exec_opts def = {0};
    if (!so)
        so = &def;
    wl w;
    wl_build(in->model, in->training, &w);
    lo_graph *g = malloc(sizeof *g);
    if (!g)
        return all;
    layout_build(&w, in->training, in->layout, c, in->nodes, g);
    int unit = g->pipelined ? exec_pipe_symmetry_unit(g, c, so) : exec_symmetry_unit(g, c, so);
    free(g);
    return unit > 0 ? unit * c->gpus_per_node : all;
}

/* One item's copies: its compute (and recompute) and every collective chunk (ops), and the chunks
 * of its collectives whose group spans nodes (cross), plus on an NVLink mesh the extra flows a
 * chunk spreads over inside a node (mesh_peers: linked peers of a GPU, 0 off a mesh). */
static void count_item(const lo_graph *g, const lo_item *it, int mesh_peers, double *ops, double *cross,
                       double *mesh)
{
    const lo_coll *cs[3] = {it->gather, it->inl, it->reduce};
    const int ns[3] = {it->n_gather, it->n_inline, it->n_reduce};
    double o = 1 + (it->recompute ? 1 : 0), x = 0, y = 0;
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < ns[a]; i++) {
            const cost_group *gr = &g->group[cs[a][i].group];
            o += cs[a][i].chunks;
            if (gr->k > 1)
                x += cs[a][i].chunks;
            if (mesh_peers > 1 && gr->m > 1) /* sim/coll.c mesh_spread: a flow per linked peer */
                y += cs[a][i].chunks * (double)((gr->m - 1 < mesh_peers ? gr->m - 1 : mesh_peers) - 1);
        }
    *ops += it->count * o;
    *cross += it->count * x;
    *mesh += it->count * y;
}

/* What one rank does in the last micro-step of the point's op graph: ops (computes, recomputes,
 * collective chunks) and cross (chunks of collectives whose group spans nodes); 0 and 0 when the
 * point fails its checks or the graph cannot be allocated. */
static void sim_counts(const pred_input *in, double *ops, double *cross, double *mesh)
{
    *ops = *cross = *mesh = 0;
    if (spec_layout_check(in->layout, in->cluster, in->nodes, NULL) ||
        spec_layout_check_training(in->layout, in->training, NULL))
        return;
    wl w;
    wl_build(in->model, in->training, &w);
    lo_graph *g = malloc(sizeof *g);
    if (!g)
        return;
    layout_build(&w, in->training, in->layout, in->cluster, in->nodes, g);
    /* On an NVLink mesh the simulator sends a ring's bytes inside a node to every directly linked
     * member at once (sim/coll.c mesh_spread): as many flows as GPU 0's linked peers, at most. */
    int peers = 0;
    const spec_fabric *f = &in->cluster->fabric;
    if (f->kind == FABRIC_NVLINK_MESH)
        for (int j = 1; j < in->cluster->gpus_per_node; j++)
            peers += f->links[0][j] > 0;
    for (int i = 0; i < g->last.n_items; i++)
        count_item(g, &g->last.item[i], peers, ops, cross, mesh);
    free(g);
}

/* Events per op, and per chunk of a collective spanning nodes and per NIC of the rank's share of
 * the node (nics_per_node / gpus_per_node: p5 splits such a chunk over 4 NICs a GPU, p3dn shares
 * one NIC among 8 GPUs). Fitted (least max log error) to the events the full simulation
 * dispatched for gpt-100b on 32 nodes of p3dn, p4d and p5 with zero3, mics:p=8, tp:t=8 and
 * axonn:x=2,y=2,z=2: all 12 within 1.9x; leaving one cluster out, its four within 0.36-2.1x
 * (bench/RESULTS.md, "Issue 32 item 4"). */
#define PRED_EV_PER_OP 0.51
#define PRED_EV_PER_XFLOW 0.48

double pred_sim_rank_events(const pred_input *in)
{
    double ops, cross, mesh;
    sim_counts(in, &ops, &cross, &mesh);
    double nics = (double)in->cluster->nics_per_node / in->cluster->gpus_per_node;
    return PRED_EV_PER_OP * ops + PRED_EV_PER_XFLOW * (cross * nics + mesh);
}

int pred_eval(const pred_input *in, pred_engine e, const exec_opts *so, pred_result *out, sc_err *err)
{
    memset(out, 0, sizeof *out);
    const spec_cluster *c = in->cluster;
    const spec_training *tr = in->training;
    const spec_layout *l = in->layout;
    int rc;
    if ((rc = spec_layout_check(l, c, in->nodes, err)) || (rc = spec_layout_check_training(l, tr, err)))
        return rc;
    out->engine = e;
    out->nodes = in->nodes;
    out->gpus = in->nodes * c->gpus_per_node;
    out->layout = *l;
    out->training = *tr;
    wl buf; /* the workload: the memo's copy when it has it (analytical engine only) */
    const wl *wp = an_memo_workload(e == PRED_MODEL ? in->memo : NULL, in->model, tr, &buf);
    if (e == PRED_MODEL) {
        char lay[64];
        if ((rc = an_pipe_budget(l, tr->grad_accum, 0, err)))
            return rc;
        if (an_predict_memo(in->memo, wp, tr, l, c, in->nodes, in->cal, &out->r))
            return sc_err_set(err, SC_ERUNTIME, "memory", "", "out of memory walking the pipeline of %s (%d micro-batches)",
                              spec_layout_str(l, lay, sizeof lay), tr->grad_accum);
        return 0;
    }
    exec_opts def = {0};
    def.seed = 1;
    if (!so)
        so = &def;
    for (int i = 0; i < so->n_stragglers; i++)
        if (so->straggler_rank[i] >= out->gpus)
            return sc_err_set(err, SC_EINPUT, "--straggler", "", "expected a rank below %d, got %d", out->gpus,
                              so->straggler_rank[i]);
    lo_graph g;
    layout_build(wp, tr, l, c, in->nodes, &g);
    if (g.pipelined) {
        rc = exec_pipe_run(&g, wp, tr, in->cal, c, so, &out->sim, err);
    } else {
        an_timed t;
        an_time(&g, wp, in->cal, c, &t);
        rc = exec_run_steady(&g, &t, in->cal, c, so, &out->sim, err);
    }
    if (rc)
        return rc;
    an_result *r = &out->r;
    r->step_s = out->sim.step_s;
    r->compute_s = out->sim.compute_s;
    r->optimizer_s = out->sim.optimizer_s;
    memcpy(r->exposed_s, out->sim.exposed_s, sizeof r->exposed_s);
    r->idle_s = out->sim.idle_s;
    an_derive_layout(wp, tr, l, c, g.n_ranks, r);
    if (g.pipelined)
        r->bubble_frac = layout_pipe_bubble(g.pipe.p, g.pipe.v, g.pipe.m);
    r->comm_bytes = layout_comm_bytes(&g, NULL);
    mem_plan(wp, tr, l, g.n_ranks, c, &r->mem);
    return 0;
}

int pred_calib_load(const spec_cluster *c, const char *name, const char *const *roots, int n_roots,
                    cost_calib *out, char *path, size_t path_len, sc_err *err)
{
    memset(out, 0, sizeof *out);
    int rc;
    if (name && !strcmp(name, "defaults")) { /* as calibrate fit --base defaults: no file */
        if (path_len)
            path[0] = '\0';
        cost_calib_defaults(c, out);
        return 0;
    }
    if (name) {
        if ((rc = spec_resolve("calibrations", name, roots, n_roots, path, path_len, err)))
            return rc;
        return cost_calib_load(path, out, err);
    }
    sc_err ignore;
    if (spec_resolve("calibrations", c->name, roots, n_roots, path, path_len, &ignore) == 0)
        return cost_calib_load(path, out, err);
    if (path_len)
        path[0] = '\0';
    cost_calib_defaults(c, out);
    return 0;
}

const char *pred_engine_name(pred_engine e) { return e == PRED_SIM ? "sim" : "model"; }

int pred_engine_parse(const char *s, pred_engine *out)
{
    if (!strcmp(s, "model") || !strcmp(s, "analytic"))
        *out = PRED_MODEL;
    else if (!strcmp(s, "sim"))
        *out = PRED_SIM;
    else
        return -1;
    return 0;
}

int pred_eval_finite(const pred_input *in, pred_engine e, const exec_opts *so, pred_result *out, sc_err *err)
{
    int rc = pred_eval(in, e, so, out, err);
    return rc ? rc : pred_check_finite(in, out, err);
}

int pred_check_finite(const pred_input *in, const pred_result *out, sc_err *err)
{
    /* a static table of where each field lies (memo32: was built on the stack per call, ~110
     * instructions of a configuration's ~6,900 through a warm memo) */
    static const struct {
        const char *name, *step;
        size_t at; /* offsetof(an_result, the field) */
    } f[] = {
        {"step_s", "the step time", offsetof(an_result, step_s)},
        {"compute_s", "the compute time", offsetof(an_result, compute_s)},
        {"optimizer_s", "the optimizer time", offsetof(an_result, optimizer_s)},
        {"exposed_allgather_s", "the exposed all-gather time", offsetof(an_result, exposed_s[COLL_ALLGATHER])},
        {"exposed_reducescatter_s", "the exposed reduce-scatter time", offsetof(an_result, exposed_s[COLL_REDUCESCATTER])},
        {"exposed_allreduce_s", "the exposed all-reduce time", offsetof(an_result, exposed_s[COLL_ALLREDUCE])},
        {"idle_s", "the idle time", offsetof(an_result, idle_s)},
        {"samples_per_s", "the throughput", offsetof(an_result, samples_per_s)},
        {"tokens_per_s", "the throughput", offsetof(an_result, tokens_per_s)},
        {"model_tflops_per_gpu", "the FLOP rate", offsetof(an_result, model_tflops_per_gpu)},
        {"hw_tflops_per_gpu", "the FLOP rate", offsetof(an_result, hw_tflops_per_gpu)},
        {"mfu", "the FLOP rate", offsetof(an_result, mfu)},
        {"comm_bytes", "the communication volume", offsetof(an_result, comm_bytes)},
        {"mem_total", "the memory plan", offsetof(an_result, mem.total)},
        {"mem_short_by", "the memory plan", offsetof(an_result, mem.short_by)},
    };
    /* the common case in one expression: v x 0 is 0 for a finite v and NaN for an infinity or a
     * NaN, so the sum is NaN exactly when some field is not finite; only then the loop below finds
     * which (an32b: ~150 instructions of table lookups and branches a configuration, now ~45) */
    _Static_assert(sizeof f / sizeof f[0] == 15, "the sum names each field of f");
    const an_result *r = &out->r;
    const double z = r->step_s * 0 + r->compute_s * 0 + r->optimizer_s * 0 + r->exposed_s[COLL_ALLGATHER] * 0 +
                     r->exposed_s[COLL_REDUCESCATTER] * 0 + r->exposed_s[COLL_ALLREDUCE] * 0 + r->idle_s * 0 +
                     r->samples_per_s * 0 + r->tokens_per_s * 0 + r->model_tflops_per_gpu * 0 +
                     r->hw_tflops_per_gpu * 0 + r->mfu * 0 + r->comm_bytes * 0 + r->mem.total * 0 + r->mem.short_by * 0;
    if (z == 0)
        return 0;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        double v;
        memcpy(&v, (const char *)&out->r + f[i].at, sizeof v);
        if (!isfinite(v)) {
            char lay[64];
            spec_layout_str(&out->layout, lay, sizeof lay);
            return sc_err_set(err, SC_ERUNTIME, "internal error", "",
                              "%s (%s) of %s is %g: %s on %d nodes of %s, %s engine; please report it with the inputs",
                              f[i].step, f[i].name, lay, v, in->model->name, out->nodes, in->cluster->name,
                              pred_engine_name(out->engine));
        }
    }
    return 0;
}
