/* support.h — fixtures shared by several test suites (kept here so that a change to a fixture
 * is made once). Not a test itself. */
#ifndef SC_TEST_SUPPORT_H
#define SC_TEST_SUPPORT_H

#include "../model/spec.h"

/* A tiny cluster whose numbers are easy to derive by hand: 2 GPUs per node on an NVSwitch with
 * 2 links of link_Bps each; one NIC of nic_Bps per node; peak 1e12 FLOP/s, HBM 80e9 B at
 * 1e12 B/s; PCIe 1e10 B/s; one non-blocking leaf of 16 nodes. */
spec_cluster test_duo_cluster(const char *name, double link_Bps, double nic_Bps);

#endif
