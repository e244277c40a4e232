/* pace.c — progress lines by elapsed time (see pace.h). */
#include "pace.h"

void sc_pace_start(sc_pace *p, double now_s, double period_s)
{
    p->period_s = period_s;
    p->next_s = now_s + period_s;
}

int sc_pace_due(sc_pace *p, double now_s, int last)
{
    if (!last && !(now_s >= p->next_s))
        return 0;
    p->next_s = now_s + p->period_s;
    return 1;
}
