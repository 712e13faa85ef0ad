// The Fast DDS agent's effective QoS, printed at start (measure.h, "effective QoS").
#pragma once

#include <fastdds/dds/domain/qos/DomainParticipantQos.hpp>
#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>

#include "options.h"

namespace perftest {

// The effective QoS block of the Throughput writer (wq, a publisher) or reader (rq, a
// subscriber), as read back from Fast DDS, with the participant's transports (pq).
void report_qos(const pt_options_t &o, const eprosima::fastdds::dds::DomainParticipantQos &pq,
                const eprosima::fastdds::dds::DataWriterQos *wq,
                const eprosima::fastdds::dds::DataReaderQos *rq);

}  // namespace perftest
