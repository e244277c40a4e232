/* fit.h — `shardcast calibrate fit`: measurements.json (from shardcast-bench) -> calibration JSON
 * by GSL nonlinear least squares, each value with its standard error and residual.
 * Defined in cli/calfit.c (the fit itself: calibrate/measure.c); dispatched by cli/calibrate.c.
 * Not here: running the benchmarks (calibrate/bench, cli/calibrate.c). */
#ifndef SC_CAL_FIT_H
#define SC_CAL_FIT_H

/* argv[0] is "fit"; the rest are its options. Returns the exit status (0 ok, 1 runtime, 2 input). */
int cal_fit_main(int argc, char **argv);

#endif
