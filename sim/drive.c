/* drive.c — the simulator driver (see drive.h). */
#include "drive.h"

#include <gsl/gsl_randist.h>

#include "flowev.h"

net_params drv_net_params(const cost_calib *cal)
{
    return (net_params){cal->bw_eff[TIER_NVLINK].v, cal->bw_eff[TIER_PCIE].v, cal->bw_eff[TIER_NET].v};
}

/* A flow's completion event: the executor's callbacks around its removal, which opens (once per
 * instant) the batch the end-of-instant event closes. */
static int on_flow(void *ctx, const ev_event *e, ev_engine *eng)
{
    sim_drv *d = ctx;
    int id = e->a;
    if (!fev_current(d->net, e)) {
        d->stale++;
        return 0;
    }
    double now = ev_engine_now(eng);
    uint64_t tag = net_flow_tag(d->net, id);
    if (d->plug.flow_ended)
        d->plug.flow_ended(d->plug.ctx, id, now);
    if (fev_remove(d->net, eng, d->instant_kind, &d->instant_pending, id, now))
        return SC_ERUNTIME;
    int rc = d->plug.flow_done(d->plug.ctx, tag, now), kind;
    int32_t next;
    /* the flows of a collective end together: the next event is most often another flow's end,
     * whose record (past the caches at scale) is fetched while the queue is popped */
    if (ev_engine_peek(eng, &kind, &next) && kind == d->flow_kind)
        net_flow_prefetch(d->net, next);
    return rc;
}

/* The end of an instant at which flows ended: re-rate the network once (queued after every
 * event already due then). */
static int on_instant_end(void *ctx, const ev_event *e, ev_engine *eng)
{
    sim_drv *d = ctx;
    (void)e;
    if (fev_solve(d->net, eng, d->flow_kind, &d->instant_pending))
        return SC_ERUNTIME;
    return d->err_rc;
}

int drv_open(sim_drv *d, net_t *net, size_t ev_cap, unsigned long seed, int flow_kind, int instant_kind,
             const drv_plug *plug)
{
    *d = (sim_drv){.net = net, .plug = *plug, .flow_kind = flow_kind, .instant_kind = instant_kind};
    d->eng = ev_engine_new(ev_cap);
    d->rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!d->eng || !d->rng)
        return SC_ERUNTIME;
    gsl_rng_set(d->rng, seed);
    if (ev_engine_register(d->eng, flow_kind, on_flow, d) || ev_engine_register(d->eng, instant_kind, on_instant_end, d))
        return SC_ERUNTIME;
    return 0;
}

void drv_close(sim_drv *d)
{
    if (d->net)
        net_free(d->net);
    if (d->eng)
        ev_engine_free(d->eng);
    if (d->rng)
        gsl_rng_free(d->rng);
    d->net = NULL;
    d->eng = NULL;
    d->rng = NULL;
}

double drv_jitter(sim_drv *d, double jitter)
{
    if (!(jitter > 0))
        return 1;
    double f = 1 + jitter * gsl_ran_gaussian(d->rng, 1.0);
    return f > 0 ? f : 0;
}

void drv_begin(sim_drv *d, drv_batch *b, uint64_t tag, double now)
{
    *b = (drv_batch){d, tag, now, 0, !d->instant_pending};
    net_batch_begin(d->net);
}

void drv_add_flow(void *batch, int src, int dst, int ch, double bytes)
{
    drv_batch *b = batch;
    sim_drv *d = b->d;
    int id;
    if (net_flow_add(d->net, b->now, src, dst, ch, bytes, b->tag, &id)) {
        d->err_rc = SC_ERUNTIME;
        return;
    }
    b->n++;
    if (d->plug.flow_started && d->plug.flow_started(d->plug.ctx, id, src, dst, ch, b->now))
        d->err_rc = SC_ERUNTIME;
}

int drv_end(drv_batch *b)
{
    sim_drv *d = b->d;
    d->flows += (uint64_t)b->n;
    if (!b->own)
        return 0;
    if (net_batch_end(d->net, b->now) || fev_push_changed(d->net, d->eng, d->flow_kind))
        return SC_ERUNTIME;
    return 0;
}
