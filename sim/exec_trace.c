/* exec_trace.c — the executor's trace (see exec_trace.h). */
#include "exec_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../traces/schema.h"

struct fmeta {
    double t0;
    int src, dst, ch; /* src -1: no open span for this flow id */
};

struct exec_tracer {
    tr_writer *w;
    int n, G, nics;
    char label[96]; /* the collective being drawn */
    struct fmeta *fm; /* open flow spans, by flow id */
    int fm_cap;
    int *nic_links, n_nic_links; /* the traced nodes' NIC up-links, sampled */
    double *nic_prev;            /* their bytes at the last sample           */
    double sample_last;
    long long *lane_end; /* per traced rank x TR_FLOW_LANES: end (ns) of the last flow drawn there */
    long undrawn;        /* flows with no free lane (more than TR_FLOW_LANES at once from a rank) */
};

static void names(exec_tracer *t, int streams)
{
    char name[64];
    for (int node = 0; node * t->G < t->n; node++) {
        snprintf(name, sizeof name, "node %d", node);
        tr_process_name(t->w, node, name);
    }
    for (int r = 0; r < t->n; r++) {
        int pid = r / t->G, lr = r % t->G;
        snprintf(name, sizeof name, "rank %d compute", r);
        tr_thread_name(t->w, pid, TR_TID(lr, TR_STREAM_COMPUTE), name);
        for (int st = 0; st < streams; st++) {
            if (st)
                snprintf(name, sizeof name, "rank %d comm %d", r, st);
            else
                snprintf(name, sizeof name, "rank %d comm", r);
            tr_thread_name(t->w, pid, TR_TID(lr, TR_STREAM_COMM + st), name);
        }
        for (int ch = 0; ch < TR_FLOW_LANES; ch++) {
            snprintf(name, sizeof name, "rank %d flows %d", r, ch);
            tr_thread_name(t->w, pid, TR_TID(lr, TR_STREAM_FLOW0 + ch), name);
        }
    }
}

int exec_trace_new(tr_writer *w, int n_traced, int gpus_per_node, int nics, int streams, const net_t *net,
                   double sample_s, exec_tracer **out)
{
    exec_tracer *t = calloc(1, sizeof *t);
    *out = NULL;
    if (!t)
        return SC_ERUNTIME;
    t->w = w;
    t->n = n_traced;
    t->G = gpus_per_node;
    t->nics = nics;
    t->lane_end = calloc((size_t)(n_traced > 0 ? n_traced : 1) * TR_FLOW_LANES, sizeof *t->lane_end);
    if (!t->lane_end) {
        free(t);
        return SC_ERUNTIME;
    }
    names(t, streams);
    if (sample_s > 0) {
        int nl = net_n_links(net), nodes_traced = (n_traced + t->G - 1) / t->G;
        t->nic_links = malloc(sizeof(int) * (size_t)nl);
        t->nic_prev = calloc((size_t)nl, sizeof(double));
        if (!t->nic_links || !t->nic_prev) {
            exec_trace_free(t);
            return SC_ERUNTIME;
        }
        for (int l = 0; l < nl; l++) {
            const char *nm = net_link_name(net, l);
            if (nm[0] == 'n' && strstr(nm, ">leaf") && atoi(nm + 1) < nodes_traced)
                t->nic_links[t->n_nic_links++] = l;
        }
    }
    *out = t;
    return 0;
}

void exec_trace_free(exec_tracer *t)
{
    if (!t)
        return;
    if (t->undrawn > 0) { /* said in the trace, not dropped silently */
        char name[128];
        snprintf(name, sizeof name, "%ld flows not drawn: more than %d at once from one rank", t->undrawn,
                 TR_FLOW_LANES);
        tr_thread_name(t->w, TR_NOTES_PID, TR_NOTE_UNDRAWN, name);
    }
    free(t->lane_end);
    free(t->fm);
    free(t->nic_links);
    free(t->nic_prev);
    free(t);
}

static int traced(const exec_tracer *t, int r) { return t && r < t->n; }

void exec_trace_compute(exec_tracer *t, int r, const char *name, double t0, double t1)
{
    if (traced(t, r))
        tr_span_at(t->w, r / t->G, TR_TID(r % t->G, TR_STREAM_COMPUTE), name, TR_CAT_COMPUTE, t0, t1, NULL);
}

void exec_trace_coll_begin(exec_tracer *t, const lo_coll *op)
{
    if (t)
        snprintf(t->label, sizeof t->label, "%s %s %.1f MB", layout_coll_name(op->kind),
                 layout_group_name(op->group), op->bytes / 1e6);
}

void exec_trace_coll_span(exec_tracer *t, int r, int stream, double t0, double t1)
{
    if (traced(t, r))
        tr_span_at(t->w, r / t->G, TR_TID(r % t->G, TR_STREAM_COMM + stream), t->label, TR_CAT_COLLECTIVE, t0, t1,
                   NULL);
}

int exec_trace_flow_start(exec_tracer *t, int id, int src, int dst, int ch, double now)
{
    if (!traced(t, src))
        return 0;
    if (id >= t->fm_cap) {
        int cap = t->fm_cap ? t->fm_cap : 1024;
        while (cap <= id)
            cap *= 2;
        void *m = realloc(t->fm, sizeof *t->fm * (size_t)cap);
        if (!m)
            return SC_ERUNTIME;
        t->fm = m;
        for (int i = t->fm_cap; i < cap; i++)
            t->fm[i].src = -1;
        t->fm_cap = cap;
    }
    t->fm[id] = (struct fmeta){now, src, dst, ch};
    return 0;
}

void exec_trace_flow_end(exec_tracer *t, int id, double now)
{
    if (!t || id >= t->fm_cap || t->fm[id].src < 0)
        return;
    const struct fmeta *f = &t->fm[id];
    /* the first of the sender's flow lanes free since this flow began: flows of concurrent
     * collectives (several streams, several channels) would otherwise overlap partially on one
     * channel's lane, which a viewer cannot nest. Flows end in time order, so a lane whose last
     * flow ended by this one's start stays free of overlaps. */
    long long *end = &t->lane_end[(size_t)f->src * TR_FLOW_LANES], t0 = tr_ns(f->t0);
    int lane = 0;
    while (lane < TR_FLOW_LANES && end[lane] > t0)
        lane++;
    if (lane == TR_FLOW_LANES) {
        t->undrawn++;
    } else {
        char name[64];
        snprintf(name, sizeof name, "flow to rank %d ch%d", f->dst, f->ch);
        tr_span_at(t->w, f->src / t->G, TR_TID(f->src % t->G, TR_STREAM_FLOW0 + lane), name, TR_CAT_FLOW, f->t0, now,
                   NULL);
        end[lane] = tr_ns(now);
    }
    t->fm[id].src = -1;
}

void exec_trace_sample(exec_tracer *t, const net_t *net, double now)
{
    if (!t)
        return;
    double dt = now - t->sample_last;
    if (dt > 0)
        for (int i = 0; i < t->n_nic_links; i++) {
            int l = t->nic_links[i];
            double b = net_link_bytes(net, l, now);
            double util = (b - t->nic_prev[i]) / dt / net_link_capacity(net, l);
            t->nic_prev[i] = b;
            char name[80];
            snprintf(name, sizeof name, "%s util", net_link_name(net, l));
            int node = atoi(net_link_name(net, l) + 1);
            tr_counter(t->w, node, name, t->sample_last, util);
        }
    t->sample_last = now;
}
