/* accuracy_floor.h — the decision-quality floor (issue 30): a hand-kept file naming the pick/best
 * every compare group must reach, the median the suite must reach, and the groups known to be
 * below the floor with why. Checked against a run's decisions (shardcast accuracy --floor).
 * Not here: the relative guard against committed figures (accuracy_stats.h), computing
 * pick/best (accuracy_field.h). */
#ifndef SHARDCAST_ACCURACY_FLOOR_H
#define SHARDCAST_ACCURACY_FLOOR_H

#include <stddef.h>

#include "../base/err.h"
#include "accuracy_field.h"

#define ACC_FLOOR_MAX_BELOW 32

typedef struct acc_floor {
    double min;    /* every group judged: pick/best >= min, unless listed below          */
    double median; /* overall median pick/best >= median                                  */
    int n_below;
    char below[ACC_FLOOR_MAX_BELOW][128]; /* groups known to be below min (each with a why) */
} acc_floor;

/* Reads FILE: {"schema": "shardcast-decision-floor/1", "source", "min", "median",
 * "below": {GROUP: why, ...}}; min and median in (0, 1]; every why a non-empty string. */
SC_MUST_CHECK int acc_floor_load(const char *path, acc_floor *f, sc_err *err);

/* One report line per breach (acc_report_line): a judged group under min that is not listed,
 * a listed group that is judged and no longer under min (stale: remove it), a listed group
 * that no run judged, the overall median under median. *worse counts them. */
void acc_floor_check(const acc_floor *f, const acc_decisions *d, char *report, size_t len, int *worse);

#endif
