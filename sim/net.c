/* net.c — the links of the modelled cluster (inside nodes, NICs, the switches of sim/topo,
 * host, NVMe and in-network links) and the route of a flow over them. Not here: flows and their
 * rates (flow.c), latencies per collective step (coll_), completion events (the executor). */
#include "net_int.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- building ------------------------------------------------------------------------ */
static int bad_eff(double e)
{
    return !(e > 0.0 && e <= 1.0);
}

static void set_link(net_t *net, int id, double cap, double lat, const char *name)
{
    net->links[id].cap = cap;
    net->lat[id] = lat;
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
    return net_build_quotient(c, nodes, nodes, p, out, err);
}

/* The cluster's and the efficiencies' values a network needs, and the node count; src names the
 * cluster in errors. */
static int net_check_inputs(const spec_cluster *c, int nodes, const net_params *p, const char *src, sc_err *err)
{
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

    return 0;
}

/* Where each kind of link starts in net->links (per node, leaves, host, in-network node, NVMe) and
 * the arrays allocated; net is freed by the caller on error. */
static int net_alloc_links(net_t *net, const spec_cluster *c, int nodes, int unit, const char *src, sc_err *err)
{
    net->per_node = net->intra + 2 * net->nics;
    if ((long long)nodes * net->per_node + 2LL * net->topo.leaves > INT_MAX / 2)
        return sc_err_set(err, SC_EINPUT, "nodes", "", "%d nodes need too many links", nodes);
    /* leaves of the represented nodes: whole pods of them (a fat-tree / dragonfly leaf per pod, a
     * rail leaf per pod and NIC), or all of them */
    net->n_leaves = unit == nodes ? net->topo.leaves
                                  : net->topo.leaves / (nodes / unit);
    net->leaf_base = unit * net->per_node;
    net->n_links = net->leaf_base + (net->topo.spine ? 2 * net->n_leaves : 0);
    net->host_base = net->kind == FABRIC_PCIE ? -1 : net->n_links;
    if (net->host_base >= 0)
        net->n_links += 2 * net->n_gpus;
    net->innet_base = c->innet.present ? net->n_links : -1;
    if (net->innet_base >= 0)
        net->n_links += 3;
    net->nvme_base = c->nvme_read_Bps > 0 ? net->n_links : -1;
    if (net->nvme_base >= 0)
        net->n_links += 2 * unit;
    size_t lbytes = (size_t)net->n_links * sizeof *net->links; /* a multiple of 64 */
    net->links = aligned_alloc(_Alignof(net_link), lbytes); /* one cache line each (net_int.h) */
    if (net->links)
        memset(net->links, 0, lbytes);
    net->lsol = malloc((size_t)net->n_links * sizeof *net->lsol);
    net->lat = calloc((size_t)net->n_links, sizeof *net->lat);
    for (int i = 0; net->links && i < net->n_links; i++)
        net->links[i].capfl = NET_FL_SLOT; /* the list inline; flow.c grows it out */
    net->names = calloc((size_t)net->n_links, sizeof *net->names);
    net->comp_links = malloc((size_t)net->n_links * sizeof *net->comp_links);
    net->pend = malloc((size_t)net->n_links * sizeof *net->pend);
    net->heap = malloc((size_t)net->n_links * sizeof *net->heap);
    if (!net->links || !net->lat || !net->names || !net->comp_links || !net->lsol || !net->heap || !net->pend)
        return sc_err_set(err, SC_ERUNTIME, src, "", "out of memory for %d links", nodes);
    return 0;
}

/* Every node's GPU links (NVLink mesh, NVSwitch or PCIe) and NICs, and the leaves' uplinks. */
static void build_node_links(net_t *net, const spec_cluster *c, int unit, const net_params *p)
{
    const spec_fabric *f = &c->fabric;
    double nvs = f->links_per_gpu * f->link_bw_Bps * p->eff_nvlink;
    double pcie = c->pcie_bw_Bps * p->eff_pcie;
    double nic = c->nic_bw_Bps * p->eff_net;
    double lat = c->switch_latency_s;
    char name[NAME_LEN];
    for (int n = 0; n < unit; n++) {
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
        for (int l = 0; l < net->n_leaves; l++) {
            topo_leaf_names(&net->topo, l, name, down, NAME_LEN);
            set_link(net, net->leaf_base + 2 * l, up, lat, name);
            set_link(net, net->leaf_base + 2 * l + 1, up, lat, down);
        }
    }
}

int net_build_quotient(const spec_cluster *c, int nodes, int unit, const net_params *p, net_t **out, sc_err *err)
{
    if (!c || !p || !out)
        return sc_err_set(err, SC_EINPUT, "net_build", "", "NULL argument");
    *out = NULL;
    const char *src = c->source[0] ? c->source : c->name;
    int rc;
    if ((rc = net_check_inputs(c, nodes, p, src, err)))
        return rc;
    topo_shape full;
    topo_shape_make(c, nodes, &full);
    if (unit < 1 || unit > nodes || nodes % unit ||
        (unit < nodes && (c->innet.present || (full.spine && (unit % full.npl || nodes % full.npl)))))
        return sc_err_set(err, SC_EINPUT, "net_build", "",
                          "%d of %d nodes is not a unit the network's symmetry repeats (whole pods, no "
                          "in-network node)",
                          unit, nodes);
    net_t *net = calloc(1, sizeof *net);
    if (!net)
        return sc_err_set(err, SC_ERUNTIME, src, "", "out of memory");
    net->nodes = unit; /* the links of the represented nodes only; the shape is the whole cluster's */
    net->full_nodes = nodes;
    net->gpn = c->gpus_per_node;
    net->nics = c->nics_per_node;
    net->topo = full;
    net->n_gpus = unit * net->gpn;
    net->full_gpus = nodes * net->gpn;
    net->kind = c->fabric.kind;
    if (net->kind == FABRIC_NVLINK_MESH) {
        if ((rc = build_mesh(net, c, err))) {
            net_free(net);
            return rc;
        }
    } else {
        net->intra = 2 * net->gpn;
    }
    if ((rc = net_alloc_links(net, c, nodes, unit, src, err))) {
        net_free(net);
        return rc;
    }
    build_node_links(net, c, unit, p);
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
            if (net->links[i].capfl > NET_FL_SLOT) /* its own array, else inline */
                free(net->links[i].fl.own);
    free(net->links);
    free(net->lat);
    free(net->names);
    free(net->mesh_id);
    free(net->mesh_via);
    free(net->flows);
    idp_free_all(&net->free_ids);
    free(net->comp_flows);
    free(net->comp_links);
    free(net->lsol);
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
    return link_ok(net, link) ? net->lat[link] : NAN;
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
    if (src < 0 || src >= net->n_gpus || dst < 0 || dst >= net->full_gpus || ch < 0)
        return SC_EINPUT;
    if (src == dst)
        return 0;
    int out[NET_PATH_MAX], n = 0;
    int ns = src / net->gpn, ls = src % net->gpn, nd = dst / net->gpn, ld = dst % net->gpn;
    /* quotient: a destination outside the represented nodes stands for its representative,
     * nd mod unit; whether the path leaves the node or the leaf is decided on the real nodes */
    int nd_rep = nd % net->nodes;
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
            out[n++] = net->leaf_base + 2 * leaf_of(net, nd_rep, nic_d) + 1;
        }
        out[n++] = nd_rep * net->per_node + net->intra + 2 * nic_d + 1;
    }
    if (n > max || !links)
        return SC_EINPUT;
    memcpy(links, out, (size_t)n * sizeof *links);
    return n;
}
