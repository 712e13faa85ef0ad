#include "paths.hpp"

#include "rtps_count.hpp"

#include <arpa/inet.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include <fastdds/rtps/transport/ChainingTransport.h>
#include <fastdds/rtps/transport/ChainingTransportDescriptor.h>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>

using eprosima::fastdds::rtps::ChainingTransport;
using eprosima::fastdds::rtps::ChainingTransportDescriptor;
using eprosima::fastdds::rtps::SharedMemTransportDescriptor;
using eprosima::fastdds::rtps::TransportDescriptorInterface;
using eprosima::fastdds::rtps::TransportInterface;
using eprosima::fastdds::rtps::TransportReceiverInterface;
using eprosima::fastdds::rtps::UDPv4TransportDescriptor;
using eprosima::fastrtps::rtps::Locator_t;
using eprosima::fastrtps::rtps::LocatorsIterator;
using eprosima::fastrtps::rtps::octet;
using eprosima::fastrtps::rtps::SenderResource;

namespace perftest {
namespace {

std::atomic<uint64_t> n_shm{0}, n_this{0}, n_other{0};

enum class Path { SHM, UDP };

// ChainingTransport takes its low-level transport from a descriptor of this kind.
struct Wrapping : ChainingTransportDescriptor {
  explicit Wrapping(std::shared_ptr<TransportDescriptorInterface> low)
      : ChainingTransportDescriptor(std::move(low)) {}
  TransportInterface *create_transport() const override { return nullptr; }
};

class CountingTransport : public ChainingTransport {
 public:
  CountingTransport(const ChainingTransportDescriptor &d, Path path, const std::string &host_ip)
      : ChainingTransport(d), path_(path)
  {
    struct in_addr a;
    has_ip_ = !host_ip.empty() && inet_pton(AF_INET, host_ip.c_str(), &a) == 1;
    if (has_ip_) std::memcpy(ip_, &a, 4);
  }

  // Fast DDS 2.9's shared-memory transport opens one sender resource for all its
  // destinations, and finds it again in the list by its type; wrapped, it no longer finds
  // it and adds one more per remote locator, each sending every message again (measured:
  // each sample arrived 14 to 23 times). One output channel per shared-memory transport,
  // as unwrapped.
  bool OpenOutputChannel(eprosima::fastdds::rtps::SendResourceList &list, const Locator_t &loc) override
  {
    if (path_ != Path::SHM) return ChainingTransport::OpenOutputChannel(list, loc);
    std::lock_guard<std::mutex> g(output_lock_);
    if (output_open_) return IsLocatorSupported(loc);
    output_open_ = ChainingTransport::OpenOutputChannel(list, loc);
    return output_open_;
  }

  eprosima::fastdds::rtps::TransportDescriptorInterface *get_configuration() override
  {
    return low_level_transport_->get_configuration();
  }

  bool send(SenderResource *low, const octet *buf, uint32_t size, LocatorsIterator *begin,
            LocatorsIterator *end, const std::chrono::steady_clock::time_point &timeout) override
  {
    return low->send(buf, size, begin, end, timeout);
  }

  void receive(TransportReceiverInterface *next, const octet *buf, uint32_t size,
               const Locator_t &local, const Locator_t &remote) override
  {
    unsigned n = user_data_submessages(buf, size);
    if (n) {
      if (path_ == Path::SHM) n_shm += n;
      else if (has_ip_ && std::memcmp(remote.address + 12, ip_, 4) == 0) n_this += n;
      else n_other += n;
    }
    next->OnDataReceived(buf, size, local, remote);
  }

 private:
  Path path_;
  std::mutex output_lock_;
  bool output_open_ = false;
  bool has_ip_ = false;
  unsigned char ip_[4] = {0, 0, 0, 0};
};

struct CountingShmDescriptor : SharedMemTransportDescriptor {
  TransportInterface *create_transport() const override
  {
    Wrapping d(std::make_shared<SharedMemTransportDescriptor>(*this));
    return new CountingTransport(d, Path::SHM, "");
  }
};

struct CountingUdpDescriptor : UDPv4TransportDescriptor {
  std::string host_ip;
  TransportInterface *create_transport() const override
  {
    Wrapping d(std::make_shared<UDPv4TransportDescriptor>(*this));
    return new CountingTransport(d, Path::UDP, host_ip);
  }
};

}  // namespace

PathCounts path_counts()
{
  PathCounts c;
  c.shm = n_shm.load();
  c.udp_this_host = n_this.load();
  c.udp_other_hosts = n_other.load();
  return c;
}

std::shared_ptr<TransportDescriptorInterface> counting_shm()
{
  return std::make_shared<CountingShmDescriptor>();
}

std::shared_ptr<TransportDescriptorInterface> counting_udp(
    const std::shared_ptr<TransportDescriptorInterface> &udp, const std::string &host_ip)
{
  auto d = std::make_shared<CountingUdpDescriptor>();
  static_cast<UDPv4TransportDescriptor &>(*d) = static_cast<const UDPv4TransportDescriptor &>(*udp);
  d->host_ip = host_ip;
  return d;
}

}  // namespace perftest
