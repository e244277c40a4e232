/* layout_tensor.c — tensor-parallel layouts (rules in layout.h): placeholder until built. */
#include "layout_int.h"

void lo_build_tensor(lo_graph *g, const wl *w, const spec_training *t, const spec_cluster *c)
{
    (void)g; (void)w; (void)t; (void)c;
}
