/* net.c — links of the modelled cluster, routing, and max-min fair flow rates by progressive
 * filling (Bertsekas & Gallager, Data Networks, 2nd ed., §6.5.2) restricted to the connected
 * component of the flow-link graph that a flow start or end touches. Not here: latencies per
 * collective step (coll_), completion events (the executor reads finish times and versions). */
#include "net.h"

#include "topo.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_LEN 48

typedef struct net_link {
    double cap;   /* capacity, B/s                                                          */
    double lat;   /* latency, s                                                             */
    double bytes; /* carried from time 0 to t, B                                            */
    double t;     /* time `bytes` is accounted up to, s                                     */
    double load;  /* sum of the rates of the flows on it since t, B/s                       */
    int *fl;      /* ids of the flows crossing it                                           */
    int nfl, capfl;
    /* scratch of one solve */
    double res;      /* capacity not yet given to frozen flows, B/s                          */
    int nun;         /* flows on it not yet frozen                                           */
    uint32_t stamp;  /* heap entries with another stamp are stale                            */
    uint64_t mark;   /* == net->epoch: in the component being solved                         */
    uint64_t pushed; /* == round: already re-queued in this filling round                    */
    int pending;     /* in the open batch's seed list                                         */
} net_link;

typedef struct net_flow {
    double remaining; /* B left at time t                                                   */
    double t;         /* s                                                                  */
    double rate;      /* B/s since t (NAN between attach and the first solve)               */
    double new_rate;  /* scratch: the rate the current solve gives it                        */
    uint64_t tag;
    uint64_t mark;   /* == net->epoch: in the component being solved                         */
    uint64_t frozen; /* round in which its rate was fixed; 0 = not yet                       */
    uint32_t version;
    int32_t event; /* the caller's completion event for it (net_flow_set_event), -1 = none */
    int live;
    int next_free; /* free list link when not live                                         */
    int nl;
    int lk[NET_PATH_MAX];  /* its links, in path order                                      */
    int pos[NET_PATH_MAX]; /* its index in each link's flow list                            */
} net_flow;

typedef struct heap_ent {
    double key; /* fair share res / nun of the link when pushed, B/s                        */
    int link;
    uint32_t stamp;
} heap_ent;

struct net {
    int nodes, gpn, nics, n_gpus;
    topo_shape topo; /* the switches between nodes (sim/topo.h)                             */
    spec_fabric_kind kind;
    int intra;     /* intra-node links per node                                            */
    int per_node;  /* links per node: intra + 2 * nics                                     */
    int leaf_base; /* id of leaf 0's up link                                               */
    int host_base; /* id of GPU 0's link to host memory (then its link back), 2 per GPU; -1:
                      the PCIe fabric's own links                                            */
    int innet_base;/* id of "sw>innet", then "innet>sw", "innet.update"; -1 = no such node  */
    int nvme_base; /* id of node 0's "n0.nvme>cpu" (read), then "n0.cpu>nvme" (write), 2 per
                      node; -1 = the cluster gives no NVMe                                   */
    int n_links;
    int *mesh_id;  /* [i * gpn + j]: offset of link i>j inside a node block, -1 = none       */
    int *mesh_via; /* [i * gpn + j]: intermediate GPU for i>j, -1 = direct                  */
    net_link *links;
    char (*names)[NAME_LEN];

    net_flow *flows;
    int flow_cap, flow_hw, n_live, free_head;
    int *comp_flows;  /* flow_cap entries                                                   */
    int *comp_links;  /* n_links entries                                                    */
    int *changed;     /* flow_cap entries                                                   */
    int n_changed;
    heap_ent *heap;   /* n_links + NET_PATH_MAX * flow_cap entries (bound of one solve)       */
    size_t heap_n;
    uint64_t epoch, round;
    double now; /* time of the last add / remove, s                                          */
    int batching;  /* between net_batch_begin and net_batch_end: solve once at the end         */
    int *pend;     /* the batch's seed links (n_links entries)                                 */
    int n_pend;
};

/* ---- building ------------------------------------------------------------------------ */
static int bad_eff(double e)
{
    return !(e > 0.0 && e <= 1.0);
}

static void set_link(net_t *net, int id, double cap, double lat, const char *name)
{
    net->links[id].cap = cap;
    net->links[id].lat = lat;
    snprintf(net->names[id], NAME_LEN, "%s", name);
}

/* Mesh: local link offsets and two-hop routes. */
static int build_mesh(net_t *net, const spec_cluster *c, sc_err *err)
{
    int g = net->gpn, n = 0;
    size_t gg = (size_t)g * (size_t)g;
    net->mesh_id = malloc(gg * sizeof *net->mesh_id);
    net->mesh_via = malloc(gg * sizeof *net->mesh_via);
    if (!net->mesh_id || !net->mesh_via)
        return sc_err_set(err, SC_ERUNTIME, c->name, "", "out of memory building the NVLink mesh");
    for (int i = 0; i < g; i++)
        for (int j = 0; j < g; j++) {
            net->mesh_id[i * g + j] = (i != j && c->fabric.links[i][j] > 0) ? n++ : -1;
            net->mesh_via[i * g + j] = -1;
        }
    for (int i = 0; i < g; i++)
        for (int j = 0; j < g; j++) {
            if (i == j || net->mesh_id[i * g + j] >= 0)
                continue;
            int best = -1, best_links = 0;
            for (int k = 0; k < g; k++) {
                if (k == i || k == j)
                    continue;
                int a = c->fabric.links[i][k], b = c->fabric.links[k][j];
                int m = a < b ? a : b;
                if (m > best_links) {
                    best_links = m;
                    best = k;
                }
            }
            if (best < 0)
                return sc_err_set(err, SC_EINPUT, c->source[0] ? c->source : c->name,
                                  "$.node.fabric.links",
                                  "GPU %d cannot reach GPU %d in two NVLink hops", i, j);
            net->mesh_via[i * g + j] = best;
        }
    net->intra = n;
    return 0;
}

/* GPU <-> host memory links and the in-network optimizer node's port and update engine. */
static void build_offload_links(net_t *net, const spec_cluster *c, const net_params *p)
{
    char name[NAME_LEN];
    for (int g = 0; net->host_base >= 0 && g < net->n_gpus; g++) {
        snprintf(name, sizeof name, "n%d.gpu%d>cpu", g / net->gpn, g % net->gpn);
        set_link(net, net->host_base + 2 * g, c->pcie_bw_Bps * p->eff_pcie, 0.0, name);
        snprintf(name, sizeof name, "n%d.cpu>gpu%d", g / net->gpn, g % net->gpn);
        set_link(net, net->host_base + 2 * g + 1, c->pcie_bw_Bps * p->eff_pcie, 0.0, name);
    }
    for (int n = 0; net->nvme_base >= 0 && n < net->nodes; n++) {
        /* sustained rates of the node's drives (no tier efficiency: the spec gives achieved ones) */
        snprintf(name, sizeof name, "n%d.nvme>cpu", n);
        set_link(net, net->nvme_base + 2 * n, c->nvme_read_Bps, 0.0, name);
        snprintf(name, sizeof name, "n%d.cpu>nvme", n);
        set_link(net, net->nvme_base + 2 * n + 1, c->nvme_write_Bps, 0.0, name);
    }
    if (net->innet_base < 0)
        return;
    double port = c->innet.port_bw_Bps * p->eff_net;
    set_link(net, net->innet_base, port, 0.0, "sw>innet");
    set_link(net, net->innet_base + 1, port, c->switch_latency_s, "innet>sw");
    set_link(net, net->innet_base + 2, c->innet.opt_params_per_s * 2.0, 0.0, "innet.update");
}

int net_build(const spec_cluster *c, int nodes, const net_params *p, net_t **out, sc_err *err)
{
    if (!c || !p || !out)
        return sc_err_set(err, SC_EINPUT, "net_build", "", "NULL argument");
    *out = NULL;
    const char *src = c->source[0] ? c->source : c->name;
    if (bad_eff(p->eff_nvlink) || bad_eff(p->eff_pcie) || bad_eff(p->eff_net))
        return sc_err_set(err, SC_EINPUT, "net_params", "",
                          "efficiencies must lie in (0, 1], got nvlink %g pcie %g net %g",
                          p->eff_nvlink, p->eff_pcie, p->eff_net);
    if (c->gpus_per_node < 1 || c->gpus_per_node > SPEC_MAX_GPUS_PER_NODE)
        return sc_err_set(err, SC_EINPUT, src, "$.node.gpus", "expected 1 to %d GPUs, got %d",
                          SPEC_MAX_GPUS_PER_NODE, c->gpus_per_node);
    if (nodes < 1 || nodes > INT_MAX / 4 / SPEC_MAX_GPUS_PER_NODE)
        return sc_err_set(err, SC_EINPUT, "nodes", "", "expected 1 to %d nodes, got %d",
                          INT_MAX / 4 / SPEC_MAX_GPUS_PER_NODE, nodes);
    if (c->nics_per_node < 1 || c->nics_per_node > 64 || !(c->nic_bw_Bps > 0) ||
        c->nodes_per_leaf < 1 || !(c->oversubscription > 0) || !(c->switch_latency_s >= 0))
        return sc_err_set(err, SC_EINPUT, src, "$.network",
                          "expected 1-64 NICs, positive bandwidth, nodes per leaf and "
                          "oversubscription, latency >= 0");
    if ((c->fabric.kind == FABRIC_PCIE && !(c->pcie_bw_Bps > 0)) ||
        (c->fabric.kind != FABRIC_PCIE && !(c->fabric.link_bw_Bps > 0)) ||
        (c->fabric.kind == FABRIC_NVSWITCH && c->fabric.links_per_gpu < 1))
        return sc_err_set(err, SC_EINPUT, src, "$.node.fabric", "expected positive bandwidths");

    net_t *net = calloc(1, sizeof *net);
    if (!net)
        return sc_err_set(err, SC_ERUNTIME, src, "", "out of memory");
    net->nodes = nodes;
    net->gpn = c->gpus_per_node;
    net->nics = c->nics_per_node;
    topo_shape_make(c, nodes, &net->topo);
    net->n_gpus = nodes * net->gpn;
    net->kind = c->fabric.kind;
    net->free_head = -1;
    int rc = 0;
    if (net->kind == FABRIC_NVLINK_MESH) {
        if ((rc = build_mesh(net, c, err))) {
            net_free(net);
            return rc;
        }
    } else {
        net->intra = 2 * net->gpn;
    }
    net->per_node = net->intra + 2 * net->nics;
    if ((long long)nodes * net->per_node + 2LL * net->topo.leaves > INT_MAX / 2) {
        net_free(net);
        return sc_err_set(err, SC_EINPUT, "nodes", "", "%d nodes need too many links", nodes);
    }
    net->leaf_base = nodes * net->per_node;
    net->n_links = net->leaf_base + (net->topo.spine ? 2 * net->topo.leaves : 0);
    net->host_base = net->kind == FABRIC_PCIE ? -1 : net->n_links;
    if (net->host_base >= 0)
        net->n_links += 2 * net->n_gpus;
    net->innet_base = c->innet.present ? net->n_links : -1;
    if (net->innet_base >= 0)
        net->n_links += 3;
    net->nvme_base = c->nvme_read_Bps > 0 ? net->n_links : -1;
    if (net->nvme_base >= 0)
        net->n_links += 2 * nodes;
    net->links = calloc((size_t)net->n_links, sizeof *net->links);
    net->names = calloc((size_t)net->n_links, sizeof *net->names);
    net->comp_links = malloc((size_t)net->n_links * sizeof *net->comp_links);
    net->pend = malloc((size_t)net->n_links * sizeof *net->pend);
    net->heap = malloc((size_t)net->n_links * sizeof *net->heap);
    if (!net->links || !net->names || !net->comp_links || !net->heap || !net->pend) {
        net_free(net);
        return sc_err_set(err, SC_ERUNTIME, src, "", "out of memory for %d links", nodes);
    }

    const spec_fabric *f = &c->fabric;
    double nvs = f->links_per_gpu * f->link_bw_Bps * p->eff_nvlink;
    double pcie = c->pcie_bw_Bps * p->eff_pcie;
    double nic = c->nic_bw_Bps * p->eff_net;
    double lat = c->switch_latency_s;
    char name[NAME_LEN];
    for (int n = 0; n < nodes; n++) {
        int base = n * net->per_node;
        for (int i = 0; i < net->gpn; i++) {
            if (net->kind == FABRIC_NVLINK_MESH) {
                for (int j = 0; j < net->gpn; j++) {
                    int off = net->mesh_id[i * net->gpn + j];
                    if (off < 0)
                        continue;
                    snprintf(name, sizeof name, "n%d.gpu%d>gpu%d", n, i, j);
                    set_link(net, base + off, f->links[i][j] * f->link_bw_Bps * p->eff_nvlink,
                             0.0, name);
                }
            } else {
                int sw = net->kind == FABRIC_NVSWITCH;
                double cap = sw ? nvs : pcie;
                snprintf(name, sizeof name, "n%d.gpu%d>%s", n, i, sw ? "nvs" : "host");
                set_link(net, base + 2 * i, cap, 0.0, name);
                snprintf(name, sizeof name, "n%d.%s>gpu%d", n, sw ? "nvs" : "host", i);
                set_link(net, base + 2 * i + 1, cap, 0.0, name);
            }
        }
        for (int k = 0; k < net->nics; k++) {
            snprintf(name, sizeof name, "n%d.nic%d>leaf", n, k);
            set_link(net, base + net->intra + 2 * k, nic, lat, name);
            snprintf(name, sizeof name, "n%d.leaf>nic%d", n, k);
            set_link(net, base + net->intra + 2 * k + 1, nic, 0.0, name);
        }
    }
    if (net->topo.spine) {
        /* a leaf's uplinks carry nodes_per_leaf nodes' worth of its downlinks / oversubscription
         * (rail: one NIC per node; dragonfly: the group's global links, x cost_net_global_frac) */
        double up = net->topo.up_Bps * p->eff_net;
        char down[NAME_LEN];
        for (int l = 0; l < net->topo.leaves; l++) {
            topo_leaf_names(&net->topo, l, name, down, NAME_LEN);
            set_link(net, net->leaf_base + 2 * l, up, lat, name);
            set_link(net, net->leaf_base + 2 * l + 1, up, lat, down);
        }
    }
    build_offload_links(net, c, p);
    *out = net;
    return 0;
}

int net_set_update_rate(net_t *net, double bytes_per_s)
{
    if (net->innet_base < 0 || !(bytes_per_s > 0))
        return SC_EINPUT;
    net->links[net->innet_base + 2].cap = bytes_per_s;
    return 0;
}

void net_free(net_t *net)
{
    if (!net)
        return;
    if (net->links)
        for (int i = 0; i < net->n_links; i++)
            free(net->links[i].fl);
    free(net->links);
    free(net->names);
    free(net->mesh_id);
    free(net->mesh_via);
    free(net->flows);
    free(net->comp_flows);
    free(net->comp_links);
    free(net->pend);
    free(net->changed);
    free(net->heap);
    free(net);
}

/* ---- links and paths ----------------------------------------------------------------- */
int net_n_gpus(const net_t *net)
{
    return net->n_gpus;
}

int net_n_links(const net_t *net)
{
    return net->n_links;
}

static int link_ok(const net_t *net, int l)
{
    return l >= 0 && l < net->n_links;
}

const char *net_link_name(const net_t *net, int link)
{
    return link_ok(net, link) ? net->names[link] : "";
}

double net_link_capacity(const net_t *net, int link)
{
    return link_ok(net, link) ? net->links[link].cap : NAN;
}

double net_link_latency(const net_t *net, int link)
{
    return link_ok(net, link) ? net->links[link].lat : NAN;
}

double net_link_bytes(const net_t *net, int link, double now)
{
    if (!link_ok(net, link))
        return NAN;
    const net_link *l = &net->links[link];
    return now > l->t ? l->bytes + l->load * (now - l->t) : l->bytes;
}

/* The switch NIC `nic` of `node` plugs into (sim/topo.h). */
static int leaf_of(const net_t *net, int node, int nic)
{
    return topo_leaf_of(&net->topo, node, nic);
}

/* GPU g to the optimizer node's switch (up = 1) or back: its NIC (ch), and the leaf-spine
 * link when that switch is the spine. */
static int to_switch(const net_t *net, int g, int ch, int up, int *out)
{
    int node = g / net->gpn, nic = ch % net->nics, n = 0, leaf = leaf_of(net, node, nic);
    int nic_link = node * net->per_node + net->intra + 2 * nic + (up ? 0 : 1);
    if (!up && net->topo.spine)
        out[n++] = net->leaf_base + 2 * leaf + 1;
    out[n++] = nic_link;
    if (up && net->topo.spine)
        out[n++] = net->leaf_base + 2 * leaf;
    return n;
}

/* Paths with a non-GPU endpoint (NET_EP_*); see net.h. */
static int special_path(const net_t *net, int src, int dst, int ch, int *out)
{
    int gpu = NET_EP_IS(src) ? dst : src, n = 0;
    if (net->innet_base >= 0 && NET_EP_IS(src) && NET_EP_IS(dst)) {
        /* the optimizer node's own links: update engine, port in (aggregated), port out (multicast) */
        int off = src == NET_EP_INNET && dst == NET_EP_UPDATE   ? 2
                  : src == NET_EP_SWITCH && dst == NET_EP_INNET ? 0
                  : src == NET_EP_INNET && dst == NET_EP_SWITCH ? 1
                                                                : -1;
        if (off < 0)
            return SC_EINPUT;
        out[0] = net->innet_base + off;
        return 1;
    }
    if (gpu < 0 || gpu >= net->n_gpus)
        return SC_EINPUT;
    int peer = NET_EP_IS(src) ? src : dst, up = !NET_EP_IS(src);
    if (peer == NET_EP_NVME || peer == NET_EP_NVME_HOST) {
        /* NVMe -> host [-> GPU] (a read), or [GPU ->] host -> NVMe (a write) */
        if (net->nvme_base < 0)
            return SC_EINPUT;
        int nv = net->nvme_base + 2 * (gpu / net->gpn) + (up ? 1 : 0);
        if (!up)
            out[n++] = nv;
        if (peer == NET_EP_NVME)
            n += special_path(net, up ? gpu : NET_EP_HOST, up ? NET_EP_HOST : gpu, 0, out + n);
        if (up)
            out[n++] = nv;
        return n;
    }
    if (peer == NET_EP_HOST) {
        int node = gpu / net->gpn, l = gpu % net->gpn;
        out[0] = net->host_base >= 0 ? net->host_base + 2 * gpu + (up ? 0 : 1)
                                     : node * net->per_node + 2 * l + (up ? 0 : 1);
        return 1;
    }
    if ((peer != NET_EP_SWITCH && peer != NET_EP_INNET) || net->innet_base < 0)
        return SC_EINPUT;
    if (!up && peer == NET_EP_INNET)
        out[n++] = net->innet_base + 1;
    n += to_switch(net, gpu, ch, up, out + n);
    if (up && peer == NET_EP_INNET)
        out[n++] = net->innet_base;
    return n;
}

int net_path(const net_t *net, int src, int dst, int ch, int *links, int max)
{
    if ((NET_EP_IS(src) || NET_EP_IS(dst)) && ch >= 0 && src != dst) {
        int out[NET_PATH_MAX];
        int n = special_path(net, src, dst, ch, out);
        if (n < 0 || n > max || !links)
            return SC_EINPUT;
        memcpy(links, out, (size_t)n * sizeof *links);
        return n;
    }
    if (src < 0 || src >= net->n_gpus || dst < 0 || dst >= net->n_gpus || ch < 0)
        return SC_EINPUT;
    if (src == dst)
        return 0;
    int out[NET_PATH_MAX], n = 0;
    int ns = src / net->gpn, ls = src % net->gpn, nd = dst / net->gpn, ld = dst % net->gpn;
    if (ns == nd) {
        int base = ns * net->per_node, g = net->gpn;
        if (net->kind == FABRIC_NVLINK_MESH) {
            int via = net->mesh_via[ls * g + ld];
            if (via < 0) {
                out[n++] = base + net->mesh_id[ls * g + ld];
            } else {
                out[n++] = base + net->mesh_id[ls * g + via];
                out[n++] = base + net->mesh_id[via * g + ld];
            }
        } else {
            out[n++] = base + 2 * ls;
            out[n++] = base + 2 * ld + 1;
        }
    } else {
        /* a channel uses one NIC at both ends (NCCL keeps a ring or tree channel on one rail:
         * search.cc crossNic); NET_CH_XNIC names two */
        int nic_s = ch % net->nics, nic_d = nic_s;
        if (ch >= NET_CH_X) {
            nic_s = ((ch - NET_CH_X) >> 10) % net->nics;
            nic_d = ((ch - NET_CH_X) & 1023) % net->nics;
        }
        int leaf_s = leaf_of(net, ns, nic_s), leaf_d = leaf_of(net, nd, nic_d);
        out[n++] = ns * net->per_node + net->intra + 2 * nic_s;
        if (leaf_s != leaf_d) {
            out[n++] = net->leaf_base + 2 * leaf_s;
            out[n++] = net->leaf_base + 2 * leaf_d + 1;
        }
        out[n++] = nd * net->per_node + net->intra + 2 * nic_d + 1;
    }
    if (n > max || !links)
        return SC_EINPUT;
    memcpy(links, out, (size_t)n * sizeof *links);
    return n;
}

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
 * same per component whether solved alone or with others. Writes new_rate of every flow. */
static void waterfill(net_t *net, int nf, int nl)
{
    net->heap_n = 0;
    for (int i = 0; i < nl; i++) {
        net_link *l = &net->links[net->comp_links[i]];
        l->res = l->cap;
        l->nun = l->nfl;
        l->stamp++;
        if (l->nun > 0)
            heap_push(net, l->res / l->nun, net->comp_links[i], l->stamp);
    }
    for (int i = 0; i < nf; i++)
        net->flows[net->comp_flows[i]].frozen = 0;
    while (net->heap_n > 0) {
        heap_ent top = heap_pop(net);
        net_link *l = &net->links[top.link];
        if (top.stamp != l->stamp || l->nun == 0)
            continue;
        double x = top.key;
        uint64_t round = ++net->round;
        for (int j = 0; j < l->nfl; j++) {
            net_flow *f = &net->flows[l->fl[j]];
            if (f->frozen)
                continue;
            f->frozen = round;
            f->new_rate = x;
            for (int k = 0; k < f->nl; k++) {
                net_link *m = &net->links[f->lk[k]];
                m->res -= x;
                if (m->res < 0)
                    m->res = 0;
                m->nun--;
            }
        }
        l->stamp++;
        for (int j = 0; j < l->nfl; j++) {
            net_flow *f = &net->flows[l->fl[j]];
            if (f->frozen != round)
                continue;
            for (int k = 0; k < f->nl; k++) {
                net_link *m = &net->links[f->lk[k]];
                if (m == l || m->nun == 0 || m->pushed == round)
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
        net_flow *f = &net->flows[id];
        if (f->new_rate == f->rate)
            continue;
        if (now > f->t) {
            f->remaining -= f->rate * (now - f->t);
            if (f->remaining < 0)
                f->remaining = 0;
        }
        f->t = now;
        f->rate = f->new_rate;
        f->version++;
        net->changed[net->n_changed++] = id;
    }
    for (int i = 0; i < nl; i++) {
        net_link *l = &net->links[net->comp_links[i]];
        double s = 0;
        for (int j = 0; j < l->nfl; j++)
            s += net->flows[l->fl[j]].rate;
        l->load = s;
    }
}

/* Breadth-first search of the flow-link graph from seed links: the union of their components
 * into comp_links / comp_flows. */
static void collect(net_t *net, const int *seeds, int n_seeds, int *nf_out, int *nl_out)
{
    uint64_t ep = ++net->epoch;
    int nf = 0, nl = 0;
    for (int i = 0; i < n_seeds; i++) {
        net_link *l = &net->links[seeds[i]];
        if (l->mark != ep) {
            l->mark = ep;
            net->comp_links[nl++] = seeds[i];
        }
    }
    for (int i = 0; i < nl; i++) {
        const net_link *l = &net->links[net->comp_links[i]];
        for (int j = 0; j < l->nfl; j++) {
            net_flow *f = &net->flows[l->fl[j]];
            if (f->mark == ep)
                continue;
            f->mark = ep;
            net->comp_flows[nf++] = l->fl[j];
            for (int k = 0; k < f->nl; k++) {
                net_link *m = &net->links[f->lk[k]];
                if (m->mark != ep) {
                    m->mark = ep;
                    net->comp_links[nl++] = f->lk[k];
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

/* Room for one more flow in every per-flow buffer. flow_cap moves only once all have grown. */
static int reserve_flow(net_t *net)
{
    if (net->free_head >= 0 || net->flow_hw < net->flow_cap)
        return 0;
    if (net->flow_cap > INT_MAX / 2 / NET_PATH_MAX - net->n_links)
        return SC_ERUNTIME;
    int cap = net->flow_cap ? 2 * net->flow_cap : 64;
    size_t heap = (size_t)net->n_links + (size_t)NET_PATH_MAX * (size_t)cap;
    if (grow((void **)&net->flows, (size_t)cap, sizeof *net->flows) ||
        grow((void **)&net->comp_flows, (size_t)cap, sizeof *net->comp_flows) ||
        grow((void **)&net->changed, (size_t)cap, sizeof *net->changed) ||
        grow((void **)&net->heap, heap, sizeof *net->heap))
        return SC_ERUNTIME;
    net->flow_cap = cap;
    return 0;
}

static int reserve_link(net_link *l)
{
    if (l->nfl < l->capfl)
        return 0;
    if (l->capfl > INT_MAX / 2)
        return SC_ERUNTIME;
    int cap = l->capfl ? 2 * l->capfl : 4;
    if (grow((void **)&l->fl, (size_t)cap, sizeof *l->fl))
        return SC_ERUNTIME;
    l->capfl = cap;
    return 0;
}

static int flow_ok(const net_t *net, int id)
{
    return id >= 0 && id < net->flow_hw && net->flows[id].live;
}

/* Batches: flows added or removed at one instant are re-rated together, once. */
static void defer(net_t *net, const int *links, int n)
{
    for (int i = 0; i < n; i++)
        if (!net->links[links[i]].pending) {
            net->links[links[i]].pending = 1;
            net->pend[net->n_pend++] = links[i];
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
        if (!net->links[net->pend[i]].pending)
            continue; /* already in a component solved below */
        int nf, nl;
        collect(net, &net->pend[i], 1, &nf, &nl);
        for (int j = 0; j < nl; j++)
            net->links[net->comp_links[j]].pending = 0;
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
    if (net->free_head >= 0) {
        fid = net->free_head;
        net->free_head = net->flows[fid].next_free;
    } else {
        fid = net->flow_hw++;
        net->flows[fid].version = 0;
    }
    net_flow *f = &net->flows[fid];
    f->remaining = bytes;
    f->t = now;
    f->rate = NAN;
    f->tag = tag;
    f->event = -1;
    f->mark = 0;
    f->frozen = 0;
    f->live = 1;
    f->next_free = -1;
    f->nl = np;
    for (int k = 0; k < np; k++) {
        net_link *l = &net->links[path[k]];
        f->lk[k] = path[k];
        f->pos[k] = l->nfl;
        l->fl[l->nfl++] = fid;
    }
    net->n_live++;
    net->now = now;
    if (!net->batching)
        net->n_changed = 0;
    *id = fid;
    if (np == 0) { /* nothing to share: done the moment it starts */
        f->remaining = 0;
        f->rate = INFINITY;
        f->version++;
        net->changed[net->n_changed++] = fid;
        return 0;
    }
    rerate(net, now, path, np);
    return 0;
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
        int last = l->fl[--l->nfl];
        if (last != id) {
            int p = f->pos[k];
            l->fl[p] = last;
            net_flow *g = &net->flows[last];
            for (int kk = 0; kk < g->nl; kk++)
                if (g->lk[kk] == f->lk[k])
                    g->pos[kk] = p;
        }
    }
    f->live = 0;
    f->nl = 0;
    f->next_free = net->free_head;
    net->free_head = id;
    net->n_live--;
    net->now = now;
    if (!net->batching)
        net->n_changed = 0;
    if (ns == 0)
        return 0;
    /* The links keep the removed flow's rate in their load until apply() accounts them. */
    rerate(net, now, seeds, ns);
    return 0;
}

void net_solve_full(net_t *net)
{
    int nf = 0;
    for (int i = 0; i < net->flow_hw; i++)
        if (net->flows[i].live && net->flows[i].nl > 0)
            net->comp_flows[nf++] = i;
    for (int i = 0; i < net->n_links; i++)
        net->comp_links[i] = i;
    net->n_changed = 0;
    waterfill(net, nf, net->n_links);
    apply(net, net->now, nf, net->n_links);
}

void net_changed(const net_t *net, const int **ids, int *n)
{
    *ids = net->changed;
    *n = net->n_changed;
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
    return flow_ok(net, id) ? net->flows[id].rate : NAN;
}

double net_flow_remaining(const net_t *net, int id, double now)
{
    if (!flow_ok(net, id))
        return NAN;
    const net_flow *f = &net->flows[id];
    if (!(now > f->t) || f->remaining == 0)
        return f->remaining;
    double r = f->remaining - f->rate * (now - f->t);
    return r > 0 ? r : 0;
}

double net_flow_finish_time(const net_t *net, int id)
{
    if (!flow_ok(net, id))
        return NAN;
    const net_flow *f = &net->flows[id];
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
