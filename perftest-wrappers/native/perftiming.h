/* Perftest's heartbeat timing and socket buffers from the end of discovery on
   (-scaleDiscovery): see perftiming.c. */
#ifndef PERFTEST_PERFTIMING_H
#define PERFTEST_PERFTIMING_H

#include "dds/dds.h"
#include "options.h"

/* Once every peer has matched: the participant's domain gets Perftest's heartbeat interval
   (10 ms, 1 ms near a full window) and every UDP socket of the process Perftest's buffers;
   the changed effective QoS lines are printed again. Exits with status 2, naming the
   reason, when the domain's settings cannot be reached: a test never goes on silently
   with the discovery tuning it asked to leave. */
void pt_perftest_timing_after_discovery(const pt_options_t *o, dds_entity_t participant);

#endif
