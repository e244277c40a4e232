/* pace.h — when a long loop should print its next progress line: by elapsed time (a line every
 * period), not by a count of items, so a sweep of slow simulated points still reports and one of
 * fast analytical points does not flood stderr. Pure arithmetic on times the caller reads from
 * its clock (so tests inject one). Not here: reading a clock, printing. */
#ifndef SC_BASE_PACE_H
#define SC_BASE_PACE_H

typedef struct sc_pace {
    double period_s; /* seconds between lines                         */
    double next_s;   /* the time from which the next line is due      */
} sc_pace;

/* Start pacing at time now_s: the first line is due period_s later. */
void sc_pace_start(sc_pace *p, double now_s, double period_s);

/* 1 when a line is due at now_s (period_s or more since the last one, or since the start), or
 * when last is set (the loop's final line, always printed); then the next is due a period
 * after now_s. 0 otherwise. Times that go backwards print nothing until the period is reached
 * again from the latest line. */
int sc_pace_due(sc_pace *p, double now_s, int last);

#endif
