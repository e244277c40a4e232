/* flow.c — flows on the network's links and their max-min fair rates by progressive filling
 * (Bertsekas & Gallager, Data Networks, 2nd ed., §6.5.2), re-solved only on the connected
 * component of the flow-link graph that a flow start or end touches. Not here: which links exist
 * or how a flow is routed (net.c), completion events (the executor reads finish times). */
#include "net_int.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(net_link) == 64, "a link is one cache line");
_Static_assert(sizeof(net_flow) == 64, "a flow is one cache line");
_Static_assert(sizeof(net_fclk) == 32, "two flow clocks to a cache line");

/* ---- water-filling ------------------------------------------------------------------- */
static int ent_before(const heap_ent *x, const heap_ent *y)
{
    return x->key < y->key || (x->key == y->key && x->link < y->link);
}

static void heap_push(net_t *net, double key, int link, uint32_t stamp)
{
    heap_ent e = {key, link, stamp};
    size_t i = net->heap_n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!ent_before(&e, &net->heap[p]))
            break;
        net->heap[i] = net->heap[p];
        i = p;
    }
    net->heap[i] = e;
}

static heap_ent heap_pop(net_t *net)
{
    heap_ent top = net->heap[0], last = net->heap[--net->heap_n];
    size_t i = 0, n = net->heap_n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && ent_before(&net->heap[c + 1], &net->heap[c]))
            c++;
        if (!ent_before(&net->heap[c], &last))
            break;
        net->heap[i] = net->heap[c];
        i = c;
    }
    if (n > 0)
        net->heap[i] = last;
    return top;
}

/* Progressive filling over comp_links[0..nl) and comp_flows[0..nf) (a union of whole
 * components): all unfrozen flows grow together; the link with the smallest fair share
 * res / nun saturates first and freezes its flows at that share. Shares never decrease as flows
 * freeze ((res - x) / (n - 1) >= res / n when x <= res / n), so a heap with lazily discarded
 * stale entries pops links in saturation order. Ties break by link id: deterministic, and the
 * same per component whether solved alone or with others. Writes fsol[0..nf).new_rate.
 * A link's res, nun, stamp and pushed are lsol[its comp_ix], a flow's new_rate and frozen
 * fsol[its comp_ix]: dense, and fresh for each solve. */
/* A component of at most one flow, solved without the heap: no flow, nothing to give; one flow
 * alone on every link of its path (nfl 1: a second crossing of one link would count twice)
 * gets the least of their shares cap / 1, the key water-filling would pop first (ties by link
 * id give the same value). Returns 0 where the general filling is needed. */
static int waterfill_alone(net_t *net, int nf)
{
    if (nf == 0)
        return 1;
    if (nf > 1)
        return 0;
    const net_flow *f = &net->flows[net->comp_flows[0]];
    if (f->nl == 0)
        return 0;
    double x = INFINITY;
    for (int k = 0; k < f->nl; k++) {
        const net_link *l = &net->links[f->lk[k]];
        if (l->nfl != 1)
            return 0;
        double key = l->cap / l->nfl;
        if (key < x)
            x = key;
    }
    net->fsol[0].new_rate = x;
    net->fsol[0].frozen = ++net->round;
    return 1;
}

static void waterfill(net_t *net, int nf, int nl)
{
    if (waterfill_alone(net, nf))
        return;
    net_lsol *sol = net->lsol;
    net->heap_n = 0;
    for (int i = 0; i < nl; i++) {
        const net_link *l = &net->links[net->comp_links[i]];
        net_lsol *s = &sol[i];
        s->res = l->cap;
        s->nun = l->nfl;
        s->stamp = 0;
        s->pushed = 0;
        if (s->nun > 0)
            heap_push(net, s->res / s->nun, net->comp_links[i], s->stamp);
    }
    net_fsol *fs = net->fsol;
    for (int i = 0; i < nf; i++)
        fs[i].frozen = 0;
    while (net->heap_n > 0) {
        heap_ent top = heap_pop(net);
        const net_link *l = &net->links[top.link];
        net_lsol *ls = &sol[l->comp_ix];
        if (top.stamp != ls->stamp || ls->nun == 0)
            continue;
        double x = top.key;
        uint64_t round = ++net->round;
        const int *lfl = net_link_cfl(l);
        for (int j = 0; j < l->nfl; j++) {
            const net_flow *f = &net->flows[lfl[j]];
            net_fsol *g = &fs[f->comp_ix];
            if (g->frozen)
                continue;
            g->frozen = round;
            g->new_rate = x;
            for (int k = 0; k < f->nl; k++) {
                net_lsol *m = &sol[net->links[f->lk[k]].comp_ix];
                m->res -= x;
                if (m->res < 0)
                    m->res = 0;
                m->nun--;
            }
        }
        ls->stamp++;
        for (int j = 0; j < l->nfl; j++) {
            const net_flow *f = &net->flows[lfl[j]];
            if (fs[f->comp_ix].frozen != round)
                continue;
            for (int k = 0; k < f->nl; k++) {
                net_lsol *m = &sol[net->links[f->lk[k]].comp_ix];
                if (m == ls || m->nun == 0 || m->pushed == round)
                    continue;
                m->pushed = round;
                m->stamp++;
                heap_push(net, m->res / m->nun, f->lk[k], m->stamp);
            }
        }
    }
}

static void account(net_link *l, double now)
{
    if (now > l->t) {
        l->bytes += l->load * (now - l->t);
        l->t = now;
    }
}

/* Give the solved rates to the component at time now: link byte counters are brought to now
 * at their old load, flows whose rate changes are advanced to now at their old rate. */
static void apply(net_t *net, double now, int nf, int nl)
{
    for (int i = 0; i < nl; i++)
        account(&net->links[net->comp_links[i]], now);
    for (int i = 0; i < nf; i++) {
        int id = net->comp_flows[i];
        double r = net->fsol[i].new_rate;
        net_fclk *f = &net->fclk[id];
        if (r == f->rate)
            continue;
        if (now > f->t) {
            f->remaining -= f->rate * (now - f->t);
            if (f->remaining < 0)
                f->remaining = 0;
        }
        f->t = now;
        f->rate = r;
        net->flows[id].version++;
        net->changed[net->n_changed++] = id;
    }
    for (int i = 0; i < nl; i++) {
        net_link *l = &net->links[net->comp_links[i]];
        double s = 0;
        const int *lfl = net_link_cfl(l);
        for (int j = 0; j < l->nfl; j++)
            s += net->fclk[lfl[j]].rate;
        l->load = s;
    }
}

/* Is link id among comp_links[0..nl)? (comp_ix is a sparse-set index: no clearing needed.) */
static int in_comp(const net_t *net, int id, int nl)
{
    int ix = net->links[id].comp_ix;
    return ix >= 0 && ix < nl && net->comp_links[ix] == id;
}

/* Breadth-first search of the flow-link graph from seed links: the union of their components
 * into comp_links / comp_flows, each one's place there in its comp_ix. */
static void collect(net_t *net, const int *seeds, int n_seeds, int *nf_out, int *nl_out)
{
    int nf = 0, nl = 0;
    for (int i = 0; i < n_seeds; i++) {
        if (!in_comp(net, seeds[i], nl)) {
            net->links[seeds[i]].comp_ix = nl;
            net->comp_links[nl++] = seeds[i];
        }
    }
    for (int i = 0; i < nl; i++) {
        const net_link *l = &net->links[net->comp_links[i]];
        const int *lfl = net_link_cfl(l);
        for (int j = 0; j < l->nfl; j++) {
            int id = lfl[j];
            net_flow *f = &net->flows[id];
            if (f->comp_ix >= 0 && f->comp_ix < nf && net->comp_flows[f->comp_ix] == id)
                continue;
            f->comp_ix = nf;
            net->comp_flows[nf++] = id;
            for (int k = 0; k < f->nl; k++) {
                int m = f->lk[k];
                if (!in_comp(net, m, nl)) {
                    net->links[m].comp_ix = nl;
                    net->comp_links[nl++] = m;
                }
            }
        }
    }
    *nf_out = nf;
    *nl_out = nl;
}

/* ---- flows --------------------------------------------------------------------------- */
static int grow(void **p, size_t n, size_t size)
{
    void *q = realloc(*p, n * size);
    if (!q)
        return SC_ERUNTIME;
    *p = q;
    return 0;
}

/* The per-flow arrays for cap flows in one 64-byte aligned block (net_flow first, so each
 * flow is one cache line; then the clocks and the solve scratch), the first flow_hw entries
 * copied from the old block (scratch is not kept), which is freed; the free ids' bitmap grown
 * to cap. net_free frees the block through net->flows. */
static int grow_flows(net_t *net, int cap)
{
    size_t n = (size_t)cap, hw = (size_t)net->flow_hw;
    size_t o_clk = n * sizeof(net_flow), o_sol = o_clk + n * sizeof(net_fclk);
    size_t size = o_sol + n * sizeof(net_fsol);
    size = (size + 63) / 64 * 64; /* aligned_alloc wants a multiple of the alignment */
    if (idp_reserve(&net->free_ids, (int32_t)((n + 63) / 64)))
        return SC_ERUNTIME;
    char *b = aligned_alloc(64, size);
    if (!b)
        return SC_ERUNTIME;
    net_flow *fl = (net_flow *)b;
    net_fclk *clk = (net_fclk *)(b + o_clk);
    net_fsol *sol = (net_fsol *)(b + o_sol);
    if (hw) {
        memcpy(fl, net->flows, hw * sizeof *fl);
        memcpy(clk, net->fclk, hw * sizeof *clk);
    }
    free(net->flows);
    net->flows = fl;
    net->fclk = clk;
    net->fsol = sol;
    return 0;
}

/* Room for one more flow in every per-flow buffer. flow_cap moves only once all have grown. */
static int reserve_flow(net_t *net)
{
    if (net->free_ids.n > 0 || net->flow_hw < net->flow_cap)
        return 0;
    if (net->flow_cap > INT_MAX / 2 / NET_PATH_MAX - net->n_links)
        return SC_ERUNTIME;
    int cap = net->flow_cap ? 2 * net->flow_cap : 64;
    size_t heap = (size_t)net->n_links + (size_t)NET_PATH_MAX * (size_t)cap;
    if (grow_flows(net, cap) ||
        grow((void **)&net->comp_flows, (size_t)cap, sizeof *net->comp_flows) ||
        grow((void **)&net->changed, (size_t)cap, sizeof *net->changed) ||
        grow((void **)&net->heap, heap, sizeof *net->heap))
        return SC_ERUNTIME;
    net->flow_cap = cap;
    return 0;
}

/* Room for one more flow on link l: its inline list (NET_FL_SLOT entries), then its own array,
 * doubled as needed (the entries and their order unchanged). */
static int reserve_link(net_link *l)
{
    if (l->nfl < l->capfl)
        return 0;
    if (l->capfl > INT_MAX / 2)
        return SC_ERUNTIME;
    int cap = 2 * l->capfl;
    if (l->capfl <= NET_FL_SLOT) { /* leaving the record: the inline entries copied out */
        int *own = malloc((size_t)cap * sizeof *own);
        if (!own)
            return SC_ERUNTIME;
        memcpy(own, l->fl.in, (size_t)l->nfl * sizeof *own);
        l->fl.own = own;
    } else if (grow((void **)&l->fl.own, (size_t)cap, sizeof *l->fl.own)) {
        return SC_ERUNTIME;
    }
    l->capfl = cap;
    return 0;
}

static int flow_ok(const net_t *net, int id)
{
    return id >= 0 && id < net->flow_hw && net->flows[id].live;
}

/* Batches: flows added or removed at one instant are re-rated together, once. A pend entry is
 * a link id (solved at the batch's end, in pend order), -1 (struck: solved with an earlier
 * entry's component) or EMPTIED(id): the link lost its last flow in this batch and was settled
 * then (defer_removed), while its line was in the cache; it keeps its place, so that a flow added
 * to it later in the batch puts it back where it was (the same components in the same order). */
#define EMPTIED(id) (-2 - (id))

static int pending(const net_t *net, int id)
{
    int ix = net->links[id].pend_ix;
    return ix >= 0 && ix < net->n_pend && (net->pend[ix] == id || net->pend[ix] == EMPTIED(id));
}

static void defer(net_t *net, const int *links, int n)
{
    for (int i = 0; i < n; i++) {
        net_link *l = &net->links[links[i]];
        if (!pending(net, links[i])) {
            l->pend_ix = net->n_pend;
            net->pend[net->n_pend++] = links[i];
        } else {
            net->pend[l->pend_ix] = links[i]; /* an emptied link refilled: solved at the end */
        }
    }
}

void net_batch_begin(net_t *net)
{
    if (net->batching)
        return;
    net->batching = 1;
    net->n_pend = 0;
    net->n_changed = 0;
}

/* Re-rate the flows of the component(s) touching these links now, or record the links for the
 * open batch. */
static void rerate(net_t *net, double now, const int *links, int n)
{
    if (net->batching) {
        defer(net, links, n);
        return;
    }
    int nf, nl;
    collect(net, links, n, &nf, &nl);
    waterfill(net, nf, nl);
    apply(net, now, nf, nl);
}

int net_batch_end(net_t *net, double now)
{
    if (!net->batching)
        return 0;
    if (!isfinite(now) || now != net->now) {
        if (net->n_pend == 0 && now >= net->now) {
            net->batching = 0;
            return 0;
        }
        return SC_EINPUT; /* every change of a batch happens at one instant */
    }
    net->batching = 0;
    /* one solve per connected component touched (flows that share no link are solved apart,
     * so a batch costs what its flows would have cost one by one, without the repeats) */
    for (int i = 0; i < net->n_pend; i++) {
        /* the seeds' links, then the flows on them (collect's and apply's first reads), fetched ahead: at
         * scale a batch has thousands of seeds, their lines long evicted. Inline, not a helper:
         * gcc 12 deletes calls of a function that only prefetches. */
        if (i + 4 < net->n_pend && net->pend[i + 4] >= 0)
            __builtin_prefetch(&net->links[net->pend[i + 4]]);
        if (i + 2 < net->n_pend && net->pend[i + 2] >= 0) {
            const net_link *p = &net->links[net->pend[i + 2]];
            const int *pfl = net_link_cfl(p);
            for (int j = 0; j < p->nfl && j < NET_FL_SLOT; j++) {
                __builtin_prefetch(&net->flows[pfl[j]]);
                __builtin_prefetch(&net->fclk[pfl[j]]); /* apply's first read */
            }
        }
        if (net->pend[i] < 0)
            continue; /* already in a component solved below */
        int nf, nl;
        collect(net, &net->pend[i], 1, &nf, &nl);
        for (int j = 0; j < nl; j++) /* no longer pending: struck out of pend */
            if (pending(net, net->comp_links[j]))
                net->pend[net->links[net->comp_links[j]].pend_ix] = -1;
        waterfill(net, nf, nl);
        apply(net, now, nf, nl);
    }
    net->n_pend = 0;
    return 0;
}

int net_flow_add(net_t *net, double now, int src, int dst, int ch, double bytes, uint64_t tag,
                 int *id)
{
    if (!id || !isfinite(now) || now < net->now || !isfinite(bytes) || bytes < 0)
        return SC_EINPUT;
    int path[NET_PATH_MAX];
    int np = net_path(net, src, dst, ch, path, NET_PATH_MAX);
    if (np < 0)
        return np;
    if (bytes == 0)
        np = 0;
    if (reserve_flow(net))
        return SC_ERUNTIME;
    for (int k = 0; k < np; k++)
        if (reserve_link(&net->links[path[k]]))
            return SC_ERUNTIME;

    int fid;
    if (net->free_ids.n > 0) {
        fid = idp_take(&net->free_ids);
        /* the flows of a collective are added one after another: the next one takes the next
         * free slot, whose lines (past the caches at scale) are fetched while this one is set */
        int nx = idp_peek(&net->free_ids);
        if (nx >= 0) {
            __builtin_prefetch(&net->flows[nx], 1);
            __builtin_prefetch(&net->fclk[nx], 1);
        }
    } else {
        fid = net->flow_hw++;
        net->flows[fid].version = 0;
    }
    net_flow *f = &net->flows[fid];
    net_fclk *c = &net->fclk[fid];
    c->remaining = bytes;
    c->t = now;
    c->rate = NAN;
    f->tag = tag;
    f->event = -1;
    f->live = 1;
    f->comp_ix = -1;
    f->nl = np;
    for (int k = 0; k < np; k++) {
        net_link *l = &net->links[path[k]];
        f->lk[k] = path[k];
        f->pos[k] = l->nfl;
        net_link_fl(l)[l->nfl++] = fid;
    }
    net->n_live++;
    net->now = now;
    if (!net->batching)
        net->n_changed = 0;
    *id = fid;
    if (np == 0) { /* nothing to share: done the moment it starts */
        c->remaining = 0;
        c->rate = INFINITY;
        f->version++;
        net->changed[net->n_changed++] = fid;
        return 0;
    }
    rerate(net, now, path, np);
    return 0;
}

/* A flow removed in a batch: its links are deferred in path order, as rerate would; one that
 * carries no flow any more is settled now, while its line is in the cache: what the batch's end
 * would do for it (a component of one link and no flow: its bytes accounted to now at the old
 * load, load 0), its pend entry EMPTIED. */
static void defer_removed(net_t *net, double now, const int *seeds, int n)
{
    for (int i = 0; i < n; i++) {
        net_link *l = &net->links[seeds[i]];
        if (l->nfl) {
            defer(net, &seeds[i], 1);
            continue;
        }
        account(l, now);
        l->load = 0;
        if (!pending(net, seeds[i]))
            l->pend_ix = net->n_pend++;
        net->pend[l->pend_ix] = EMPTIED(seeds[i]);
    }
}

int net_flow_remove(net_t *net, double now, int id)
{
    if (!flow_ok(net, id) || !isfinite(now) || now < net->now)
        return SC_EINPUT;
    net_flow *f = &net->flows[id];
    int seeds[NET_PATH_MAX], ns = f->nl;
    for (int k = 0; k < ns; k++) { /* detach: swap the link's last flow into our place */
        net_link *l = &net->links[f->lk[k]];
        seeds[k] = f->lk[k];
        int *lfl = net_link_fl(l);
        int last = lfl[--l->nfl];
        if (last != id) {
            int p = f->pos[k];
            lfl[p] = last;
            net_flow *g = &net->flows[last];
            for (int kk = 0; kk < g->nl; kk++)
                if (g->lk[kk] == f->lk[k])
                    g->pos[kk] = p;
        }
    }
    f->live = 0;
    f->nl = 0;
    idp_put(&net->free_ids, id);
    net->n_live--;
    net->now = now;
    if (!net->batching)
        net->n_changed = 0;
    if (ns == 0)
        return 0;
    /* The links keep the removed flow's rate in their load until apply() accounts them. */
    if (net->batching)
        defer_removed(net, now, seeds, ns);
    else
        rerate(net, now, seeds, ns);
    return 0;
}

void net_solve_full(net_t *net)
{
    int nf = 0;
    for (int i = 0; i < net->flow_hw; i++)
        if (net->flows[i].live && net->flows[i].nl > 0) {
            net->flows[i].comp_ix = nf;
            net->comp_flows[nf++] = i;
        }
    for (int i = 0; i < net->n_links; i++) {
        net->comp_links[i] = i;
        net->links[i].comp_ix = i;
    }
    net->n_changed = 0;
    waterfill(net, nf, net->n_links);
    apply(net, net->now, nf, net->n_links);
}

void net_changed(const net_t *net, const int **ids, int *n)
{
    *ids = net->changed;
    *n = net->n_changed;
}

void net_flow_prefetch(const net_t *net, int id)
{
    if (id >= 0 && id < net->flow_hw) {
        __builtin_prefetch(&net->flows[id]);
        __builtin_prefetch(&net->fclk[id]);
    }
}

int net_flow_live(const net_t *net, int id)
{
    return flow_ok(net, id);
}

int net_n_flows(const net_t *net)
{
    return net->n_live;
}

double net_flow_rate(const net_t *net, int id)
{
    return flow_ok(net, id) ? net->fclk[id].rate : NAN;
}

double net_flow_remaining(const net_t *net, int id, double now)
{
    if (!flow_ok(net, id))
        return NAN;
    const net_fclk *f = &net->fclk[id];
    if (!(now > f->t) || f->remaining == 0)
        return f->remaining;
    double r = f->remaining - f->rate * (now - f->t);
    return r > 0 ? r : 0;
}

double net_flow_finish_time(const net_t *net, int id)
{
    if (!flow_ok(net, id))
        return NAN;
    const net_fclk *f = &net->fclk[id];
    if (f->remaining == 0)
        return f->t;
    return f->rate > 0 ? f->t + f->remaining / f->rate : INFINITY;
}

uint32_t net_flow_version(const net_t *net, int id)
{
    return flow_ok(net, id) ? net->flows[id].version : 0;
}

uint64_t net_flow_tag(const net_t *net, int id)
{
    return flow_ok(net, id) ? net->flows[id].tag : 0;
}

int32_t net_flow_event(const net_t *net, int id)
{
    return flow_ok(net, id) ? net->flows[id].event : -1;
}

void net_flow_set_event(net_t *net, int id, int32_t ev)
{
    if (flow_ok(net, id))
        net->flows[id].event = ev;
}
