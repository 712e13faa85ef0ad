/* The agent's own Cyclone DDS XML configuration, merged with a user's CYCLONEDDS_URI. */
#ifndef PERFTEST_DDSCONFIG_H
#define PERFTEST_DDSCONFIG_H

#include "options.h"

/* Returns the agent's XML fragment (static storage). */
const char *pt_config_xml(const pt_options_t *o);

/* Cyclone HeartbeatInterval (seconds) chosen for a test with more than PT_LARGE_TEST
   participants: grows with the square of their number, 1 s to 3 s (see ddsconfig.c). */
double pt_heartbeat_interval_s(const pt_options_t *o);

/* Socket receive buffer asked for in large tests (the kernel doubles it). */
#define PT_LARGE_RCVBUF (4 * 1024 * 1024)

/* Large test and net.core.rmem_max below PT_LARGE_RCVBUF: one warning line on stderr. */
void pt_rcvbuf_warning(const pt_options_t *o);

/* Sets CYCLONEDDS_URI to "<agent xml>,<user's CYCLONEDDS_URI>" so that the user's
   settings, applied last, override the agent's; prints both on stderr. */
void pt_apply_config(const pt_options_t *o);

/* One-line description of the transport and discovery choice. */
const char *pt_mode_description(const pt_options_t *o);

#endif
