/* analytic_mesh.h — a copy's inline collectives per local index on an NVLink mesh, for the
 * recurrence (analytic.c): the slowest chain and each local index's lead (analytic_mesh.c).
 * Internal to the analytical engine. */
#ifndef SC_ANALYTIC_MESH_H
#define SC_ANALYTIC_MESH_H

#include "analytic.h"

/* Decided once per graph (an_mesh_plan_make): per axis and local index, the rate of that index's
 * own group where it is faster than the axis's slowest (cost_group_make), 0 where the group is
 * timed as it is; `on` 0 where no axis's groups differ (off a mesh, or every group alike): then
 * an_mesh_leads has nothing to do and is not called. */
typedef struct an_mesh_plan {
    int on;
    double bw[4][SPEC_MAX_GPUS_PER_NODE];
} an_mesh_plan;
void an_mesh_plan_make(const lo_graph *g, const spec_cluster *c, an_mesh_plan *p);
/* o (item it, its inline collectives timed in o->in at their axes' slowest groups; p->on): fills
 * o->nlead, lead, lead_f and igain (analytic.h). Nothing (nlead 0, igain 0) where the chain is
 * not one stream's or every local index ends it alike. */
void an_mesh_leads(const lo_graph *g, const cost_calib *cal, const spec_cluster *c, const an_mesh_plan *p,
                   const lo_item *it, an_titem *o);

#endif
