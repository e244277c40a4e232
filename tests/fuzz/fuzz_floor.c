/* fuzz_floor.c — the decision-quality floor file (validation/decision-floor.json, issue 30):
 * loaded, then checked against an empty set of decisions. */
#include "fuzz_common.h"

#include <string.h>

#include "../../predict/accuracy_floor.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    acc_floor f;
    sc_err err;
    int rc = acc_floor_load(fz_file(data, size), &f, &err);
    FZ_EXPECT(rc);
    if (rc == 0) {
        acc_decisions d;
        memset(&d, 0, sizeof d);
        char rep[512];
        int worse = 0;
        rep[0] = 0;
        acc_floor_check(&f, &d, rep, sizeof rep, &worse);
    }
    return 0;
}
