/* The agent's own Cyclone DDS XML configuration, merged with a user's CYCLONEDDS_URI. */
#ifndef PERFTEST_DDSCONFIG_H
#define PERFTEST_DDSCONFIG_H

#include "options.h"

/* Returns the agent's XML fragment (static storage). */
const char *pt_config_xml(const pt_options_t *o);

/* Cyclone HeartbeatInterval (seconds) chosen for a test with more than PT_LARGE_TEST
   participants: grows with the square of their number, 1 s to 3 s (see ddsconfig.c). */
double pt_heartbeat_interval_s(const pt_options_t *o);

/* Cyclone SPDPInterval (seconds; 0 = Cyclone's default): -spdpInterval, else 10 s in large
   tests (see ddsconfig.c). */
double pt_spdp_interval_s(const pt_options_t *o);

/* Sets CYCLONEDDS_URI to "<agent xml>,<user's CYCLONEDDS_URI>" so that the user's
   settings, applied last, override the agent's; prints both on stderr. */
void pt_apply_config(const pt_options_t *o);

/* One-line description of the transport and discovery choice. */
const char *pt_mode_description(const pt_options_t *o);

#endif
