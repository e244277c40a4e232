/* analytic_predict.c — the analytical engine end to end (analytic.h): one configuration through
 * the op graph, the times, the recurrence (analytic.c) or the pipeline schedule (analytic_pipe.c),
 * throughput and memory; and a pipelined graph's op durations, each virtual stage's graph through
 * the recurrence. It sits above both halves, which call neither it nor each other.
 * Not here: the recurrence itself (analytic.c) or the schedule (analytic_pipe.c). */
#include "analytic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Forward (bwd = 0) or backward of one micro-batch through a virtual stage's graph. */
static void time_pass(const an_timed *all, int n_layers, int bwd, an_pipe_op_t *o)
{
    an_timed t = *all;
    t.n_items = n_layers;
    t.grad_accum = 1;
    t.prefetch = 0;
    t.n_boundary = 0;
    for (int i = 0; i < n_layers; i++)
        t.last[i] = t.micro[i] = all->micro[(bwd ? n_layers : 0) + i];
    an_result r;
    memset(&r, 0, sizeof r);
    an_run(&t, &r);
    o->dur = r.step_s;
    o->busy = r.compute_s;
    memcpy(o->exposed, r.exposed_s, sizeof o->exposed);
}

void an_pipe_time(const lo_graph *g, const wl *w, const spec_training *tr, const cost_calib *cal,
                  const spec_cluster *c, an_pipe_timed *o)
{
    an_pipe_time_comm(g, tr, cal, c, o); /* zeroes o, then the sends and the boundary */
    const lo_pipe *pp = &g->pipe;
    const int V = pp->n_vstages;
    /* virtual stages differ only by embedding, head and block count: time each kind once */
    int memo_key[8][3], n_memo = 0;
    int memo_k[8];
    for (int k = 0; k < V; k++) {
        int key[3] = {k == 0, pp->blocks[k], k == V - 1}, hit = -1;
        for (int i = 0; i < n_memo; i++)
            if (!memcmp(memo_key[i], key, sizeof key))
                hit = memo_k[i];
        if (hit >= 0) {
            o->fwd[k] = o->fwd[hit];
            o->bwd[k] = o->bwd[hit];
            continue;
        }
        lo_graph sg;
        wl sw;
        layout_pipe_stage(g, w, tr, k, &sg, &sw);
        an_timed t;
        an_time(&sg, &sw, cal, c, &t);
        time_pass(&t, sw.n_layers, 0, &o->fwd[k]);
        time_pass(&t, sw.n_layers, 1, &o->bwd[k]);
        if (n_memo < 8) {
            memcpy(memo_key[n_memo], key, sizeof key);
            memo_k[n_memo++] = k;
        }
    }
}

void an_derive_layout(const wl *w, const spec_training *tr, const spec_layout *l, const spec_cluster *c,
                      int n_ranks, an_result *r)
{
    an_derive(w, tr, c, n_ranks, r);
    double share = spec_layout_batch_share(l);
    if (share == 1)
        return;
    r->samples_per_step /= share;
    r->samples_per_s /= share;
    r->tokens_per_s /= share;
    r->model_tflops_per_gpu /= share;
    r->hw_tflops_per_gpu /= share;
    r->mfu /= share;
}

void an_predict(const wl *w, const spec_training *tr, const spec_layout *l, const spec_cluster *c, int nodes,
                const cost_calib *cal, an_result *r)
{
    (void)an_predict_memo(NULL, w, tr, l, c, nodes, cal, r); /* out of memory: step_s NaN */
}

int an_predict_memo(an_memo *sw, const wl *w, const spec_training *tr, const spec_layout *l, const spec_cluster *c,
                    int nodes, const cost_calib *cal, an_result *r)
{
    int rc = 0;
    memset(r, 0, sizeof *r);
    an_memo_slot slot = {0};
    if (sw) { /* the graph's timings kept from another grad_accum: only the recurrence runs */
        int n_ranks = an_memo_graph_run(sw, w, tr, l, c, nodes, cal, &slot, r);
        if (n_ranks >= 0) { /* r->mem too */
            an_derive_layout(w, tr, l, c, n_ranks, r);
            return 0;
        }
    }
    lo_graph g;
    layout_build(w, tr, l, c, nodes, &g);
    if (g.pipelined) {
        an_pipe_timed *pt = malloc(sizeof *pt);
        if (!pt || (an_pipe_time(&g, w, tr, cal, c, pt), an_pipe_run(pt, r))) {
            r->step_s = NAN; /* out of memory */
            rc = SC_ERUNTIME;
        }
        free(pt);
        r->comm_bytes = layout_comm_bytes(&g, NULL);
    } else if (slot.e) { /* timed into the slot and kept for the next grad_accum */
        an_memo_graph_keep(sw, &slot, &g, w, tr, l, nodes, cal, c, r);
    } else {
        an_timed t;
        an_time_memo(&g, w, cal, c, sw, &t);
        an_run(&t, r);
        r->comm_bytes = layout_comm_bytes(&g, NULL);
    }
    an_derive_layout(w, tr, l, c, g.n_ranks, r);
    if (g.pipelined || !slot.e) /* kept: an_memo_graph_keep planned the memory */
        mem_plan(w, tr, l, g.n_ranks, c, &r->mem);
    return rc;
}
