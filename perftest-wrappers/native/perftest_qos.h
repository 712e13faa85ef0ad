/* RTI Perftest 4.3's ThroughputQos, the values both agents take as their defaults
   (rticommunity/rtiperftest: perftest_qos_profiles.xml, profiles Perftest.ReliableSettings,
   Perftest.Throughput.ResourceLimits and Perftest.Transport.UDPv4.IncreaseSendReceiveBuffers;
   srcCpp/connextDDS/RTIDDSImpl.cxx, configure_writer_qos, for the values set from the command
   line). The whole table, as data, is perftest-wrappers/perftest_throughput_qos.toml; each
   agent's README says how it maps every entry onto its middleware. */
#ifndef PERFTEST_QOS_H
#define PERFTEST_QOS_H

/* Writer: heartbeat_period, fast_heartbeat_period (between the watermarks). */
#define PT_HEARTBEAT_PERIOD_S 0.010
#define PT_FAST_HEARTBEAT_PERIOD_S 0.001
/* UDPv4 recv_socket_buffer_size and send_socket_buffer_size (bytes). */
#define PT_RECV_SOCKET_BUFFER 2097152
#define PT_SEND_SOCKET_BUFFER 1048576
/* Reader resource limits: max_samples (and max_samples_per_instance, max_samples_per_remote_
   writer), initial_samples, max_samples_per_read. */
#define PT_READER_MAX_SAMPLES 10000
#define PT_READER_INITIAL_SAMPLES 128
#define PT_READER_MAX_SAMPLES_PER_READ 65536

#endif
