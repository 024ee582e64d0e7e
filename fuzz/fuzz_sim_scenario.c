/* fuzz_sim_scenario.c — fuzzes the simulator's scenario file parser
 * (sim/sim_int.h): any bytes must give a scenario or an error with a position,
 * never a crash; a parsed scenario's events are sorted and within the knob
 * ranges the parser enforces. */
#include "util/base.h"

#include <stdlib.h>

#include "sim/sim_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) return 0;
    sim_scenario_t sc;
    im_err_t err;
    im_err_clear(&err);
    if (sim__scenario_parse_yaml((const char *)data, size, &sc, &err) != IM_OK) return 0;
    for (int i = 0; i < sc.nevents; i++) {
        const sim_event_t *e = &sc.events[i];
        if (i > 0 && e->at_ms < sc.events[i - 1].at_ms) abort();
        for (int j = 0; j < e->nset; j++) {
            double lo, hi;
            if (!sim__knob_range(e->names[j], &lo, &hi)) abort();
            if (!(e->values[j] >= lo && e->values[j] <= hi)) abort();
        }
    }
    sim__scenario_free(&sc);
    return 0;
}
