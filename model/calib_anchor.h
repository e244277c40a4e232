/* calib_anchor.h — the "anchor" object of a calibration: the stack parameters `calibrate anchor`
 * fitted to measured training steps (compute-kernel efficiency as a factor on the base's, the
 * framework's per-hook overhead, the network's bandwidth efficiency), read and applied to the
 * calibration that carries them, and the moves the spread of a prediction makes on them.
 * Not here: the fit itself (calibrate/anchor.h) or writing the file. */
#ifndef SC_CALIB_ANCHOR_H
#define SC_CALIB_ANCHOR_H

#include "../base/jsonrd.h"
#include "cost.h"

/* Names of the stack parameters as the "anchor" object keys them, and their units there. */
const char *cost_anchor_key(int which);
const char *cost_anchor_status_str(int status);

/* The largest compute factor that keeps every compute-kernel efficiency of c at or below 1
 * (the physical bound: a kernel cannot beat the datasheet peak). */
double cost_anchor_compute_max(const cost_calib *c);
/* Multiply every compute-kernel efficiency of c (GEMMs of the roofline and of the kernel
 * models, per-math ones, fused attention forward / backward, FlashAttention-3) by f: the math
 * of a step then takes 1/f as long; launch costs and memory-bound kernels are left as they are. */
void cost_anchor_scale_compute(cost_calib *c, double f);
/* Set stack parameter `which` of an anchored calibration to v (compute: a factor relative to
 * the base, applied relative to the anchored value; hook: s; net: efficiency). */
void cost_anchor_set(cost_calib *c, int which, double v);

/* Read root's optional "anchor" object into c->anchor and apply it to c (after the rest of the
 * calibration is read). Absent: c->anchor.on = 0. Errors name the JSON path. */
int cost_anchor_read(jr *r, json_t *root, cost_calib *c) SC_MUST_CHECK;

#endif
