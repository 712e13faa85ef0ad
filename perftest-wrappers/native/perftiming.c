/* Perftest's heartbeat timing and socket buffers from the end of discovery on.

   Cyclone DDS has one HeartbeatInterval and one set of socket buffers per domain: the
   discovery writers and sockets get Perftest's 10 ms and 2 MiB / 1 MiB as much as the
   Throughput writer does, and at that pace 50 + 50 discovery took 61-134 s on 2 cores
   (README, "-scaleDiscovery"). With -scaleDiscovery the domain starts with the discovery
   tuning of -scaleSettings and, the moment every peer has matched, takes Perftest's
   timing: Cyclone reads the interval at every heartbeat decision (q_hbcontrol.c,
   writer_hbcontrol_intv), so writing it in the domain's configuration takes effect from
   the next heartbeat on, and the buffers are set on every UDP socket of the process.

   Cyclone has no API for either. The domain is reached through the type of a sample of
   the participant's own DCPSParticipant builtin topic (ddsi_serdata -> ddsi_sertype ->
   the domain), with the headers of the installed Cyclone DDS (cyclonedds-dev, the
   library's own version). The interval found there must be the one this agent
   configured, or nothing is written and the agent exits: a layout that does not match
   the library is caught, not written through. */
#define asm __asm__ /* ddsrt's atomics header uses GNU asm; the agent is strict C11 */

#include "perftiming.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "dds/ddsi/ddsi_domaingv.h"
#include "dds/ddsi/ddsi_serdata.h"
#include "dds/ddsi/ddsi_sertype.h"
#include "ddsconfig.h"
#include "effective.h"
#include "measure.h"
#include "perftest_qos.h"

/* The domain of a participant, or NULL. Its own DCPSParticipant sample is there from the
   moment it exists. */
static struct ddsi_domaingv *domain_of(dds_entity_t participant)
{
  dds_entity_t rd = dds_create_reader(participant, DDS_BUILTIN_TOPIC_DCPSPARTICIPANT, NULL, NULL);
  if (rd < 0) return NULL;
  struct ddsi_domaingv *gv = NULL;
  for (int i = 0; i < 100 && gv == NULL; i++) {
    struct ddsi_serdata *sd[1] = {NULL};
    dds_sample_info_t si[1];
    if (dds_readcdr(rd, sd, 1, si, DDS_ANY_STATE) > 0) {
      gv = ddsrt_atomic_ldvoidp(&sd[0]->type->gv);
      ddsi_serdata_unref(sd[0]);
    } else {
      dds_sleepfor(DDS_MSECS(10));
    }
  }
  dds_delete(rd);
  return gv;
}

static void fail(const char *why)
{
  fprintf(stderr, "perftest_cyclone: -scaleDiscovery: %s; the test cannot take Perftest's heartbeat timing "
                  "after discovery (use -scaleSettings or neither)\n", why);
  fflush(stderr);
  exit(2);
}

void pt_perftest_timing_after_discovery(const pt_options_t *o, dds_entity_t participant)
{
  struct ddsi_domaingv *gv = domain_of(participant);
  if (gv == NULL) fail("the participant's domain could not be found (no DCPSParticipant sample)");
  int64_t configured = llround(pt_heartbeat_interval_s(o) * 1e3) * 1000000; /* whole ms */
  int64_t found = __atomic_load_n(&gv->config.const_hb_intv_sched, __ATOMIC_RELAXED);
  if (found != configured) {
    char why[200];
    snprintf(why, sizeof why, "the domain's heartbeat interval reads %" PRId64 " ns where %" PRId64
             " ns was configured: the installed Cyclone DDS headers do not match the library", found,
             configured);
    fail(why);
  }
  int64_t fast = llround(PT_FAST_HEARTBEAT_PERIOD_S * 1e9);
  __atomic_store_n(&gv->config.const_hb_intv_sched_min, fast, __ATOMIC_RELAXED);
  __atomic_store_n(&gv->config.const_hb_intv_min, fast, __ATOMIC_RELAXED);
  __atomic_store_n(&gv->config.const_hb_intv_sched, llround(PT_HEARTBEAT_PERIOD_S * 1e9),
                   __ATOMIC_RELAXED);
  int fds[MS_MAX_UDP_SOCKETS];
  int n = ms_udp_sockets(fds, MS_MAX_UDP_SOCKETS), refused = 0;
  for (int i = 0; i < n && i < MS_MAX_UDP_SOCKETS; i++) {
    int rcv = pt_recv_socket_buffer(o), snd = PT_SEND_SOCKET_BUFFER;
    if (setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv) != 0) refused++;
    if (setsockopt(fds[i], SOL_SOCKET, SO_SNDBUF, &snd, sizeof snd) != 0) refused++;
  }
  if (refused) fail("the kernel refused a socket buffer size");
  fprintf(stderr, "config: discovery complete: from now on Perftest's heartbeat timing (%g ms, "
                  "%g ms near a full window, for every writer) and socket buffers (%d B receive, "
                  "%d B send, on %d UDP sockets) (-scaleDiscovery; during discovery %.2f s)\n",
          PT_HEARTBEAT_PERIOD_S * 1e3, PT_FAST_HEARTBEAT_PERIOD_S * 1e3, pt_recv_socket_buffer(o),
          PT_SEND_SOCKET_BUFFER, n, pt_heartbeat_interval_s(o));
  if (o->pub) {
    double hb = PT_HEARTBEAT_PERIOD_S, minsched = PT_FAST_HEARTBEAT_PERIOD_S;
    char v[32];
    snprintf(v, sizeof v, "%g ms", hb * 1e3);
    ms_qos("writer.heartbeat_period", v,
           "Cyclone HeartbeatInterval from the end of discovery on (-scaleDiscovery), one setting "
           "for every writer, the discovery writers' too");
    pt_report_fast_heartbeat(hb, minsched, " (from the end of discovery)");
  }
  ms_qos_socket_buffers("set by the agent on every UDP socket at the end of discovery "
                        "(-scaleDiscovery)", "likewise");
}
