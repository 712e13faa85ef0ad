/* The native agent's effective QoS, printed at start (measure.h, "effective QoS"). */
#ifndef PERFTEST_EFFECTIVE_H
#define PERFTEST_EFFECTIVE_H

#include "dds/dds.h"
#include "options.h"

/* The effective QoS block of the Throughput writer (publisher) or reader (subscriber):
   entity is that writer or reader; Cyclone's configuration trace is copied to stderr
   afterwards unless -noPrintConfig. */
void pt_report_qos(const pt_options_t *o, dds_entity_t entity);

#endif
