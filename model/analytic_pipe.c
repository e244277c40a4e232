/* analytic_pipe.c — the closed-form engine for pipelined layouts (rules in analytic_pipe.h): the
 * sends between stages and the data-parallel boundary per stage, then the schedule as a max-plus
 * recurrence over every stage's op order. The stages' op durations come from an_pipe_time
 * (analytic_predict.c); nothing here calls up into analytic.h.
 * Not here: contention between sends or with the boundary's collectives (sim/pipe.c). */
#include "analytic_pipe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The two ranks of rank 0's stage and of the stage `stride` ranks on, as a group: across nodes
 * (stride >= G) the G ranks of a node talk at once and share its NICs, inside a node a pair of its
 * G / 2 pairs. */
static void stage_pair(const lo_graph *g, const spec_cluster *c, int stride, cost_group *pair)
{
    const int G = g->gpus_per_node;
    if (stride >= G) {
        cost_group_make(c, 2, (int[]){0}, 1, G, pair);
    } else {
        int locals[2] = {0, stride};
        cost_group_make(c, 1, locals, 2, G / 2, pair);
    }
}

/* A tied head's word-embedding gradient all-reduce (lo_pipe.tied_params), s: Megatron-LM 2021
 * NVIDIA/Megatron-LM@50a4b5fa megatron/training.py L377-409 (after the data-parallel
 * all-reduce, before optimizer.step: torch.distributed.all_reduce of the word embeddings'
 * main_grad over the embedding group), Megatron-Core NVIDIA/Megatron-LM@d98e8a64
 * megatron/core/distributed/finalize_model_grads.py finalize_model_grads L640 finish_grad_sync,
 * then L676 _allreduce_word_embedding_grads (L164-259: the same all-reduce of the weight's
 * main_grad, L258), before the optimizer step. main_grad is the gradient buffer, in the reduce's dtype (fw_sched.reduce_elem_bytes);
 * the group is the two ranks at the same tensor and data-parallel position of stage 0 and stage
 * p - 1, (p - 1) N / p ranks apart; every such pair runs at once (stage_pair). */
static double tied_s(const lo_graph *g, const cost_calib *cal, const spec_cluster *c)
{
    const lo_pipe *pp = &g->pipe;
    if (!(pp->tied_params > 0) || pp->p < 2)
        return 0;
    cost_group pair;
    stage_pair(g, c, g->n_ranks / pp->p * (pp->p - 1), &pair);
    return cost_coll_best(cal, COLL_ALLREDUCE, pp->tied_params * g->sched.reduce_elem_bytes, 1, &pair, NULL);
}

/* One point-to-point send of `bytes` between rank r and rank r + stride (the next stage):
 * one NCCL step over the tier joining them (cost_p2p_latency: the hop latency the collectives
 * use) at the pair's bandwidth; the stage's G ranks of a
 * node send at once across nodes and share its NICs (cost_group_make). Where the framework
 * blocks on its sends (fw_mg_p2p_blocking), the sender holds its stream for the send and the
 * host synchronize after it (p2p_hold_s): after every op, or with Megatron-Core's interleaved
 * schedule only around its steady phase (hold_edges, an_pipe_op_holds); with the scatter-gather (send_div t) the receiver
 * all-gathers the t pieces over its tensor-parallel group before using them (recv_gather_s:
 * Megatron-LM v2.5 p2p_communication.py L132-141 after the synchronize, mpu/random.py
 * gather_split_1d_tensor L113-124: torch.distributed.all_gather of the whole [s, b, h]). */
static void p2p_time(const lo_graph *g, const spec_training *tr, const cost_calib *cal, const spec_cluster *c,
                     an_pipe_timed *o)
{
    int div;
    int blocking = fw_mg_p2p_blocking(tr, &g->layout, &o->p2p_sync_s, &div);
    o->p2p_bytes = g->pipe.p2p_bytes / div;
    cost_group pair;
    stage_pair(g, c, g->n_ranks / g->pipe.p, &pair);
    o->p2p_lat_s = cost_p2p_latency(cal, &pair);
    o->p2p_Bps = cost_group_busbw(cal, &pair);
    o->p2p_s = o->p2p_bytes > 0 ? o->p2p_lat_s + o->p2p_bytes / o->p2p_Bps : 0;
    o->p2p_hold_s = blocking != FW_P2P_OVERLAP && o->p2p_bytes > 0 ? o->p2p_s + o->p2p_sync_s : 0;
    o->hold_edges = blocking == FW_P2P_BLOCK_EDGES;
    if (blocking == FW_P2P_BLOCK && div > 1 && g->pipe.p2p_bytes > 0)
        o->recv_gather_s = cost_coll_best(cal, COLL_ALLGATHER, g->pipe.p2p_bytes, 1, &g->group[GRP_AX0], NULL);
}

int an_pipe_buckets(double bytes, double bucket_bytes)
{
    double nb = ceil(bytes / bucket_bytes); /* as the layout builders count them (lo_buckets) */
    return nb < 1 ? 1 : nb > 1e6 ? 1000000 : (int)nb;
}

/* Stage s's optimizer step on its shard (1 / dp of its parameters with the distributed
 * optimizer, zero1): fused AdamW's time scaled to the implementation's or SGD's bytes
 * (fw_sched.opt_scale), plus the per-tensor launches (fw_opt_tensor_launches) of the parameter
 * tensors the stage holds (lo_pipe.stage_tensors), as analytic.c prices the whole model's step
 * (cost_optimizer_impl_time). Both engines read it (an_pipe_timed.opt_s). */
static double stage_opt_s(const lo_graph *g, const spec_training *tr, const cost_calib *cal, const spec_cluster *c,
                          int s)
{
    const lo_pipe *pp = &g->pipe;
    const double part = g->layout.zero1 && pp->dp > 1 ? pp->dp : 1, psi = pp->stage_params[s] / part;
    /* the trainer's step work on the stage's shard (fw_trainer_step_shard: Megatron's unscale and
       clip norm), priced as analytic.c prices the non-pipelined step's (fw_step_work_s) */
    double syncs, bytes, launches;
    fw_trainer_step_shard(tr, g->elem_bytes, psi, pp->stage_tensors[s] / part + (part > 1), &syncs, &bytes, &launches);
    const double fused = cost_optimizer_time_at(cal, c, OPT_GPU, psi);
    return cost_optimizer_impl_time(cal, fused, g->sched.opt_scale,
                                    fw_opt_tensor_launches(tr) * pp->stage_tensors[s] + (int)launches) +
           fw_step_work_s(syncs, bytes, cal->kern.launch_s, c->gpu.hbm_bw_Bps * cal->hbm_eff.v);
}

void an_pipe_time_comm(const lo_graph *g, const spec_training *tr, const cost_calib *cal, const spec_cluster *c,
                       an_pipe_timed *o)
{
    memset(o, 0, sizeof *o);
    o->pipe = g->pipe;
    const lo_pipe *pp = &g->pipe;
    const int V = pp->n_vstages;
    p2p_time(g, tr, cal, c, o);
    const double e = g->elem_bytes;
    const int zero1 = g->layout.zero1;
    const cost_group *dp = &g->group[GRP_AX3];
    o->reduce_kind = zero1 ? COLL_REDUCESCATTER : COLL_ALLREDUCE;
    const double B = fw_dp_bucket_bytes(tr, pp->dp, g->layout.overlap, e); /* framework.h */
    o->gather_overlap = fw_param_gather_overlap(tr, &g->layout, pp->dp);
    o->reduce_after_flush = fw_mg_reduce_after_flush(tr);
    const double er = g->sched.reduce_elem_bytes; /* gradients as reduced (reduce_dtype) */
    /* the reduce's bucket as layout_tensor.c prices it: Megatron's default counts elements (the
     * same buckets in any reduce dtype), a given bucket_MB is bytes of the reduced gradient */
    const double Br = fw_dp_bucket_bytes(tr, pp->dp, g->layout.overlap, er);
    for (int k = 0; k < V && pp->dp > 1; k++) {
        double S = pp->vstage_params[k] * er;
        o->reduce_s[k] = cost_coll_best(cal, o->reduce_kind, S, layout_pipe_calls(S, Br, pp->vstage_units[k]), dp, NULL);
    }
    for (int s = 0; s < pp->p; s++) {
        double S = pp->stage_params[s] * e;
        if (pp->dp > 1 && zero1)
            o->gather_s[s] = cost_coll_best(cal, COLL_ALLGATHER, S, layout_pipe_calls(S, B, pp->stage_units[s]), dp, NULL);
        o->opt_s[s] = stage_opt_s(g, tr, cal, c, s);
    }
    o->emb_s = tied_s(g, cal, c);
}

/* What a walk adds up (an_result's fields before dividing by the p stages). */
typedef struct pipe_tot {
    double step, busy, opt, exposed[N_COLLS];
    int stalled; /* a stage never got its next op's input: a schedule that deadlocks */
} pipe_tot;

/* The boundary after the last op: each stage's reduces, Adam and all-gather (opt, exposed); with
 * --overlap-param-gather the all-gather hidden up to first[s], the end of the stage's first op
 * (the next step's pipeline fill and first forward run beside it). A tied head: stages 0 and
 * p - 1 meet for the word-embedding all-reduce once both have reduced (emb_s), then step. */
static void boundary(const an_pipe_timed *t, const lo_pipe *pp, const double *freet, const double *lastb,
                     const double *first, pipe_tot *o)
{
    double done[LO_MAX_STAGES];
    for (int s = 0; s < pp->p; s++) {
        /* the chunks' reduces in the order their last backwards end, one at a time */
        int order[LO_MAX_VSTAGES], n = 0;
        for (int cc = 0; cc < pp->v; cc++) {
            int k = layout_pipe_vstage(pp, s, cc), j = n++;
            for (; j > 0 && lastb[order[j - 1]] > lastb[k]; j--)
                order[j] = order[j - 1];
            order[j] = k;
        }
        double comm = t->reduce_after_flush ? freet[s] : 0; /* Megatron-LM v2.x: after the flush */
        for (int j = 0; j < n; j++)
            comm = (comm > lastb[order[j]] ? comm : lastb[order[j]]) + t->reduce_s[order[j]];
        done[s] = comm > freet[s] ? comm : freet[s];
        o->exposed[t->reduce_kind] += done[s] - freet[s];
    }
    const double emb_end = t->emb_s > 0 ? fmax(done[0], done[pp->p - 1]) + t->emb_s : 0;
    for (int s = 0; s < pp->p; s++) {
        double at = done[s];
        if (t->emb_s > 0 && (s == 0 || s == pp->p - 1)) { /* waits for the other (idle: the
                                                                 flush's skew), then all-reduces */
            o->exposed[COLL_ALLREDUCE] += t->emb_s;
            at = emb_end;
        }
        double gth = t->gather_s[s];
        if (t->gather_overlap)
            gth = gth > first[s] ? gth - first[s] : 0;
        double end = at + t->opt_s[s] + gth;
        o->exposed[COLL_ALLGATHER] += gth;
        o->opt += t->opt_s[s];
        if (end > o->step)
            o->step = end;
    }
}

/* Walks the schedule of pp (t's durations, pp's micro-batch count) op by op: time and memory
 * in proportion to p x v x m. With `ends`, hands the caller (who frees it) each op's end:
 * forward of virtual stage k, micro-batch i at [k m + i], backward at [(V + k) m + i].
 * SC_ERUNTIME out of memory. */
static int walk(const an_pipe_timed *t, const lo_pipe *pp, pipe_tot *o, double **ends)
{
    const int p = pp->p, V = pp->n_vstages, m = pp->m, n_ops = 2 * m * pp->v;
    memset(o, 0, sizeof *o);
    lo_pipe_op *ops = malloc(sizeof *ops * (size_t)n_ops * (size_t)p);
    double *fend = malloc(sizeof(double) * (size_t)V * (size_t)m * 2);
    int *idx = calloc((size_t)p, sizeof(int));
    double *freet = calloc((size_t)p, sizeof(double));
    double *lastb = calloc((size_t)V, sizeof(double)); /* end of each virtual stage's last backward */
    double *first = calloc((size_t)p, sizeof(double));  /* end of each stage's first op        */
    if (!ops || !fend || !idx || !freet || !lastb || !first) {
        free(ops), free(fend), free(idx), free(freet), free(lastb), free(first);
        return SC_ERUNTIME;
    }
    double *bend = fend + (size_t)V * m;
    for (size_t i = 0; i < (size_t)V * m * 2; i++)
        fend[i] = NAN; /* not yet run */
    for (int s = 0; s < p; s++)
        layout_pipe_order(pp, s, ops + (size_t)s * n_ops);
    /* run every stage as far as its next op's input allows, until all are done (the schedules
     * are deadlock-free: each sweep runs at least one op) */
    for (int done = 0, progress = 1; done < p * n_ops && progress;) {
        progress = 0;
        for (int s = 0; s < p; s++)
            for (; idx[s] < n_ops; idx[s]++) {
                const lo_pipe_op *op = &ops[(size_t)s * n_ops + idx[s]];
                int k = layout_pipe_vstage(pp, s, op->chunk), i = op->mb;
                double ready;
                if (!op->bwd)
                    ready = k == 0 ? 0 : fend[(size_t)(k - 1) * m + i] + t->p2p_s;
                else
                    ready = k == V - 1 ? fend[(size_t)k * m + i] : bend[(size_t)(k + 1) * m + i] + t->p2p_s;
                if (isnan(ready))
                    break;
                const an_pipe_op_t *d = op->bwd ? &t->bwd[k] : &t->fwd[k];
                double start = freet[s] > ready ? freet[s] : ready;
                double gth = an_pipe_op_gather(t, op->bwd, k, V); /* its input's pieces */
                freet[s] = start + gth + d->dur;
                o->exposed[COLL_ALLGATHER] += gth;
                if (idx[s] == 0)
                    first[s] = freet[s];
                (op->bwd ? bend : fend)[(size_t)k * m + i] = freet[s];
                if (op->bwd)
                    lastb[k] = freet[s];
                /* it sends on: a blocking send holds the stage (an_pipe_op_holds) */
                if ((op->bwd ? k > 0 : k < V - 1) && an_pipe_op_holds(t, pp, s, idx[s]))
                    freet[s] += t->p2p_hold_s;
                o->busy += d->busy;
                for (int q = 0; q < N_COLLS; q++)
                    o->exposed[q] += d->exposed[q];
                done++;
                progress = 1;
            }
    }
    for (int s = 0; s < p; s++)
        o->stalled |= idx[s] < n_ops;
    if (!o->stalled)
        boundary(t, pp, freet, lastb, first, o);
    if (ends)
        *ends = fend;
    else
        free(fend);
    free(ops), free(idx), free(freet), free(lastb), free(first);
    return 0;
}

static void finish(const lo_pipe *pp, const pipe_tot *o, an_result *r)
{
    const int p = pp->p;
    if (o->stalled) { /* a schedule that deadlocks: a defect, reported as a non-finite step */
        r->step_s = NAN;
        return;
    }
    double step = o->step;
    r->step_s = step;
    r->compute_s = o->busy / p;
    r->optimizer_s = o->opt / p;
    double acc = r->compute_s + r->optimizer_s;
    for (int q = 0; q < N_COLLS; q++) {
        r->exposed_s[q] = o->exposed[q] / p;
        acc += r->exposed_s[q];
    }
    r->idle_s = step - acc > 1e-9 * step ? step - acc : 0;
    r->bubble_frac = layout_pipe_bubble(p, pp->v, pp->m);
}

int an_pipe_walk(const an_pipe_timed *t, an_result *r)
{
    pipe_tot o;
    int rc = walk(t, &t->pipe, &o, NULL);
    if (!rc)
        finish(&t->pipe, &o, r);
    return rc;
}

/* ---- the steady state in closed form ------------------------------------------------------
 * The walk is a max-plus recurrence with constant durations: an op ends at max(the end of its
 * stage's previous op, its input's end + send) + its duration. 1F1B and interleaved 1F1B have a
 * steady phase where each stage alternates forwards and backwards and a group of q micro-batches
 * (q = p interleaved: Megatron-LM's groups of p; else 1) maps the op order onto itself. Adding
 * a constant to every end in a window deep enough to hold all the inputs of later ops (D = 2p +
 * 2q micro-batches: more than are ever in flight) adds it to every later end (max-plus is
 * additive-homogeneous). So once, inside the steady phase of one walk, the ends of a window of
 * D micro-batches equal those of the window q earlier plus one Lambda (checked twice: windows
 * q and 2q earlier, to 1e-12 of the step), every further group of q micro-batches the schedule
 * has adds Lambda to the step and to every later end, the cool-down and boundary included,
 * and each op's busy and exposed time once per micro-batch. an_pipe_closed walks one probe of
 * m1 micro-batches (m1 congruent to m mod q, from 4(p + q), doubled while not yet periodic) and
 * extrapolates by the (m - m1) / q groups it did not walk: time and memory O(p v (p + q)),
 * independent of m, against the walk's O(p v m). GPipe (no steady alternation) and m under
 * twice the probe are walked. Agreement with the walk: to rounding (tests/test_pipe.c: 1e-9
 * relative on random stage times, 1F1B and interleaved, p 1-16, m to 4096; the walk sums up to
 * 2 p v m terms and is the less exact of the two). */
#define PIPE_PERIOD_TOL 1e-12

/* the smallest value >= x congruent to m mod q */
static int congruent(int x, int m, int q) { return x + (((m - x) % q) + q) % q; }

/* The end of the last micro-batch all of whose ops, on every stage, are in the steady phase
 * (alternating) of pp's schedule, or -1 when fewer than `need` consecutive ones are. */
static int steady_end(const lo_pipe *pp, int need)
{
    const int M = pp->m * pp->v, n_ops = 2 * M;
    char *bad = calloc((size_t)pp->m, 1);
    lo_pipe_op *ops = malloc(sizeof *ops * (size_t)n_ops);
    int hi = -1;
    if (!bad || !ops) {
        free(bad), free(ops);
        return -1;
    }
    for (int s = 0; s < pp->p; s++) {
        int warm = layout_pipe_warmup(pp, s);
        layout_pipe_order(pp, s, ops);
        for (int n = 0; n < n_ops; n++)
            if (n < warm || n >= warm + 2 * (M - warm))
                bad[ops[n].mb] = 1;
    }
    for (int i = pp->m - 1, run = 0; i >= 0; i--) {
        run = bad[i] ? 0 : run + 1;
        if (run >= need && hi < 0) { /* the last steady run long enough, from its end */
            int e = i;
            while (e < pp->m && !bad[e])
                e++;
            hi = e;
        }
    }
    free(bad), free(ops);
    return hi;
}

/* Lambda when the ends of micro-batches [hi - D, hi) are those of [hi - D - q, hi - q) plus
 * Lambda and those of [hi - D - 2q, hi - 2q) plus 2 Lambda (every op, every virtual stage), else
 * a negative number. */
static double period(const double *ends, const lo_pipe *pp, int hi, int D, int q, double scale)
{
    const int m = pp->m, V = pp->n_vstages;
    const double tol = PIPE_PERIOD_TOL * scale;
    double lambda = ends[(size_t)(V - 1) * m + hi - 1] - ends[(size_t)(V - 1) * m + hi - 1 - q];
    if (!(lambda > 0))
        return -1;
    for (int k = 0; k < 2 * V; k++)
        for (int i = hi - D; i < hi; i++) {
            const double *e = ends + (size_t)k * m;
            if (!(fabs(e[i] - e[i - q] - lambda) <= tol && fabs(e[i] - e[i - 2 * q] - 2 * lambda) <= 2 * tol))
                return -1;
        }
    return lambda;
}

int an_pipe_closed(const an_pipe_timed *t, an_result *r)
{
    const lo_pipe *pp = &t->pipe;
    const int m = pp->m, q = pp->v > 1 ? pp->p : 1, D = 2 * pp->p + 2 * q;
    if (pp->sched == PIPE_GPIPE)
        return 0;
    lo_pipe *probe = malloc(sizeof *probe);
    if (!probe)
        return SC_ERUNTIME;
    *probe = *pp;
    for (int m1 = congruent(4 * (pp->p + q), m, q); 2 * m1 < m; m1 = congruent(2 * m1, m, q)) {
        pipe_tot a;
        double *ends = NULL;
        probe->m = m1;
        if (walk(t, probe, &a, &ends)) {
            free(probe);
            return SC_ERUNTIME;
        }
        int hi = a.stalled ? -1 : steady_end(probe, D + 2 * q);
        double lambda = hi < 0 ? -1 : period(ends, probe, hi, D, q, fabs(a.step));
        free(ends);
        if (lambda < 0)
            continue;
        const double g = (double)((m - m1) / q); /* groups of q micro-batches not walked */
        double busy = 0, exposed[N_COLLS] = {0};
        for (int k = 0; k < pp->n_vstages; k++) {
            busy += t->fwd[k].busy + t->bwd[k].busy;
            for (int c = 0; c < N_COLLS; c++)
                exposed[c] += t->fwd[k].exposed[c] + t->bwd[k].exposed[c];
        }
        exposed[COLL_ALLGATHER] += 2.0 * (pp->n_vstages - 1) * t->recv_gather_s; /* ops that received */
        pipe_tot o = a;
        o.step = a.step + g * lambda;
        o.busy = a.busy + g * q * busy;
        for (int c = 0; c < N_COLLS; c++)
            o.exposed[c] = a.exposed[c] + g * q * exposed[c];
        finish(pp, &o, r);
        free(probe);
        return 1;
    }
    free(probe);
    return 0;
}

int an_pipe_run(const an_pipe_timed *t, an_result *r)
{
    int rc = an_pipe_closed(t, r);
    return rc == 1 ? 0 : rc ? rc : an_pipe_walk(t, r);
}

/* What walking a pipelined step costs, per unit of p stages x v chunks x m micro-batches,
 * measured on the project's 2-core build machine (release build, gpt3-13b on 16 p4d nodes,
 * megatron:t=8,p=8,vp=5, micro-batch 1, grad_accum 65536 = 2.62e6 units; issue 31 item 6):
 * --engine model 2.83 s and 115 MB peak RSS (1.1 us, 44 B a unit; at grad_accum 2^20,
 * 50.4 s and 1.77 GB), the simulator 135 s and 315 MB (51 us a unit). The caps keep one point
 * within about 5 s and 200 MB (model) and within the 120 s plan allows a simulation (sim). */
#define AN_PIPE_MAX_UNITS_MODEL (1 << 22)
#define AN_PIPE_MAX_UNITS_SIM (1 << 21)

int an_pipe_budget(const spec_layout *l, int m, int sim, sc_err *err)
{
    if (l->pp <= 1) /* no pipeline (megatron and fsdp2 take p stages) */
        return 0;
    if (!sim && l->sched != PIPE_GPIPE) /* an_pipe_closed: a probe of O(p + q) micro-batches */
        return 0;
    const int v = l->vp > 1 ? l->vp : 1;
    const double units = (double)l->pp * v * m, cap = sim ? AN_PIPE_MAX_UNITS_SIM : AN_PIPE_MAX_UNITS_MODEL;
    if (units <= cap)
        return 0;
    char lay[64];
    spec_layout_str(l, lay, sizeof lay);
    return sc_err_set(err, SC_EINPUT, "budget", "",
                      "%s walks %d stages x %d chunks x %d micro-batches = %.0f schedule steps, over the %.0f the %s "
                      "allows (about %s each); use fewer micro-batches (--grad-accum) or a larger --micro-batch",
                      lay, l->pp, v, m, units, cap, sim ? "simulator" : "analytical engine",
                      sim ? "51 us" : "1.1 us and 44 B");
}
