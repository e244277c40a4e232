/* fuzz_spec.c — libFuzzer target for the spec loaders: any bytes, as a NUL-terminated string,
 * through the cluster, model and training parsers and the layout-string parser. They must
 * return 0 or SC_EINPUT, never crash, read out of bounds or leak (built with ASan + UBSan by
 * `make fuzz`). Not a correctness test: the Check suites say what the answers must be. */
#include "../../model/spec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    sc_err err;
    spec_cluster c;
    spec_model m;
    spec_training t;
    spec_layout l;
    int rc;
    rc = spec_parse_cluster(text, "fuzz", &c, &err);
    if (rc != 0 && rc != SC_EINPUT)
        abort();
    rc = spec_parse_model(text, "fuzz", &m, &err);
    if (rc != 0 && rc != SC_EINPUT)
        abort();
    spec_training_defaults(&t);
    rc = spec_parse_training(text, "fuzz", &t, &err);
    if (rc != 0 && rc != SC_EINPUT)
        abort();
    rc = spec_layout_parse(text, &l, &err);
    if (rc != 0 && rc != SC_EINPUT)
        abort();
    if (rc == 0) { /* a parsed layout prints and re-parses to itself */
        char buf[192];
        spec_layout l2;
        if (spec_layout_parse(spec_layout_str(&l, buf, sizeof buf), &l2, &err) || memcmp(&l2, &l, sizeof l))
            abort();
    }
    free(text);
    return 0;
}
