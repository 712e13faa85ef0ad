/* The agent's own Cyclone DDS XML configuration, merged with a user's CYCLONEDDS_URI. */
#ifndef PERFTEST_DDSCONFIG_H
#define PERFTEST_DDSCONFIG_H

#include <stdbool.h>

#include "options.h"
#include "perftest_qos.h"

/* Cyclone's General/MaxMessageSize for Perftest's 64 KiB message_size_max (the largest UDP
   payload, 65507, rounded down as Fast DDS's default), and Cyclone's default FragmentSize. */
#define PT_CYCLONE_MAX_MESSAGE_SIZE 65500
#define PT_CYCLONE_FRAGMENT_SIZE 1344

/* Returns the agent's XML fragment (static storage); trace_path: where Cyclone writes its
   configuration trace (NULL: none). */
const char *pt_config_xml(const pt_options_t *o, const char *trace_path);

/* -scaleSettings or -scaleDiscovery given and the test is large (more than PT_LARGE_TEST
   participants): the domain starts with the discovery tuning. */
bool pt_scale_settings(const pt_options_t *o);

/* -scaleDiscovery given and the test is large: the tuning holds until discovery completes,
   then Perftest's heartbeat timing and socket buffers (perftiming.c). */
bool pt_scale_discovery_only(const pt_options_t *o);
/* -multicastResendOnFirstNack with -multicast: repairs to the group from the first NACK
   (Cyclone RetransmitMerging adaptive). */
bool pt_first_nack_resend(const pt_options_t *o);

/* Cyclone HeartbeatInterval (seconds): Perftest's 10 ms, or with pt_scale_settings one that
   grows with the square of the participants, 1 s to 3 s (see ddsconfig.c). */
double pt_heartbeat_interval_s(const pt_options_t *o);

/* Cyclone SPDPInterval (seconds; 0 = Cyclone's default): -spdpInterval, else 10 s with
   pt_scale_settings (see ddsconfig.c). */
double pt_spdp_interval_s(const pt_options_t *o);

/* The send window in Cyclone's terms: bytes Cyclone's writer history counts for one sample,
   and the watermarks that hold exactly pt_window_samples unacknowledged samples. */
long long pt_sample_bytes(const pt_options_t *o);
long long pt_whc_high(const pt_options_t *o);
long long pt_whc_low(const pt_options_t *o);

/* Sets CYCLONEDDS_URI to "<agent xml>,<user's CYCLONEDDS_URI>" so that the user's
   settings, applied last, override the agent's; prints both on stderr. Cyclone's trace of
   its effective configuration goes to an in-memory file. */
void pt_apply_config(const pt_options_t *o);

/* After the participant exists: Cyclone's trace of its effective configuration (malloc'd,
   NUL-terminated; NULL when there is none, e.g. a user's Tracing setting took it). */
char *pt_effective_config(void);

/* One-line description of the transport and discovery choice. */
const char *pt_mode_description(const pt_options_t *o);

#endif
