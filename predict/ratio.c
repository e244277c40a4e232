/* ratio.c — throughput ratios between two predictions (ratio.h). Not here: choosing the rows. */
#include "ratio.h"

#include <math.h>

int ratio_same_batch(const an_result *a, const an_result *b) { return a->samples_per_step == b->samples_per_step; }

double ratio_speedup(const an_result *a, const an_result *b)
{
    double num = b->samples_per_s, den = a->samples_per_s;
    if (ratio_same_batch(a, b)) /* the same work per step: the step times' ratio */
        num = a->step_s, den = b->step_s;
    double r = den > 0 ? num / den : 0;
    return isfinite(r) ? r : 0;
}
