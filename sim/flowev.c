/* flowev.c — flows' completion events on the event engine (see flowev.h). */
#include "flowev.h"

int fev_push_changed(net_t *net, ev_engine *eng, int flow_kind)
{
    const int *ids;
    int n, rc = 0;
    net_changed(net, &ids, &n);
    for (int i = 0; i < n; i++) {
        /* a batch changes thousands of flows at scale, their lines long evicted: fetched ahead
         * in three steps (the flow, then its event's record, then the event's neighbours and
         * group), each step's line asked for 4 flows before the next step reads it */
        if (i + 12 < n)
            net_flow_prefetch(net, ids[i + 12]);
        if (i + 8 < n)
            ev_engine_prefetch_pos(eng, net_flow_event(net, ids[i + 8]));
        if (i + 4 < n)
            ev_engine_prefetch_entry(eng, net_flow_event(net, ids[i + 4]));
        int id = ids[i];
        double t = net_flow_finish_time(net, id);
        uint32_t ver = net_flow_version(net, id);
        int32_t ev = net_flow_event(net, id);
        if (ev >= 0) {
            if (ev_engine_retime(eng, ev, t, ver))
                rc = SC_ERUNTIME;
        } else if (ev_engine_push_id(eng, t, flow_kind, id, 0, ver, &ev)) {
            rc = SC_ERUNTIME;
        } else {
            net_flow_set_event(net, id, ev);
        }
    }
    return rc;
}

int fev_current(const net_t *net, const ev_event *e)
{
    int id = e->a;
    return net_flow_live(net, id) && net_flow_version(net, id) == e->ver && net_flow_event(net, id) == e->id;
}

int fev_remove(net_t *net, ev_engine *eng, int solve_kind, int *solve_pending, int id, double now)
{
    net_flow_set_event(net, id, -1);
    if (!*solve_pending) {
        net_batch_begin(net);
        *solve_pending = 1;
        if (ev_engine_push(eng, now, solve_kind, 0, 0, 0))
            return SC_ERUNTIME;
    }
    return net_flow_remove(net, now, id) ? SC_ERUNTIME : 0;
}

int fev_solve(net_t *net, ev_engine *eng, int flow_kind, int *solve_pending)
{
    *solve_pending = 0;
    if (net_batch_end(net, ev_engine_now(eng)))
        return SC_ERUNTIME;
    return fev_push_changed(net, eng, flow_kind);
}
