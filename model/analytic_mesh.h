/* analytic_mesh.h — a copy's inline collectives per local index on an NVLink mesh, for the
 * recurrence (analytic.c): the slowest chain and each local index's lead (analytic_mesh.c).
 * Internal to the analytical engine. */
#ifndef SC_ANALYTIC_MESH_H
#define SC_ANALYTIC_MESH_H

#include "analytic.h"

/* o (item it, its inline collectives timed in o->in at their axes' slowest groups): fills
 * o->nlead, lead, lead_f and igain (analytic.h). Nothing (nlead 0, igain 0) off a mesh, where the
 * groups of every axis are alike, or where the chain is not one stream's. */
void an_mesh_leads(const lo_graph *g, const cost_calib *cal, const spec_cluster *c, const lo_item *it, an_titem *o);

#endif
