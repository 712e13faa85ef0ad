/* The native agent's effective QoS, printed at start (measure.h, "effective QoS"). */
#ifndef PERFTEST_EFFECTIVE_H
#define PERFTEST_EFFECTIVE_H

#include "dds/dds.h"
#include "options.h"

/* The effective QoS block of the Throughput writer (publisher) or reader (subscriber):
   entity is that writer or reader; Cyclone's configuration trace is copied to stderr
   afterwards unless -noPrintConfig. */
void pt_report_qos(const pt_options_t *o, dds_entity_t entity);

/* The writer.fast_heartbeat_period line for Cyclone HeartbeatInterval hb_s and minsched
   minsched_s (-1: unknown); `when` ends its explanation (e.g. since when it holds). */
void pt_report_fast_heartbeat(double hb_s, double minsched_s, const char *when);

#endif
