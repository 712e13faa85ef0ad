/* libmcastall_off.so: an LD_PRELOAD shim that sets IP_MULTICAST_ALL = 0 on every IPv4 UDP socket
   the process creates (see README.md).

   Why. Linux delivers a multicast datagram to every socket bound to its destination port
   whose host joined the group on the arriving interface, when the socket's IP_MULTICAST_ALL
   is 1 (the default, ip(7)); with 0 a socket receives only the groups it joined itself.
   DDS participants of one host all bind the same RTPS multicast port, so with the default a
   publisher's socket also receives the Throughput topic's group that only subscribers
   joined. Neither Cyclone DDS 0.10.2 nor Fast DDS 2.9 sets the option; both create their
   sockets through libc's socket() (libddsc.so and libfastrtps.so import socket@GLIBC_2.2.5),
   which this library interposes.

   Evidence. With MCASTLAB_MCASTALL_LOG set, the first socket changed writes
   "mcastlab-mcastall: active: IP_MULTICAST_ALL=0 on UDP sockets of pid P" to stderr, every
   failure writes "mcastlab-mcastall: FAILED ..." (the socket is then left as the kernel made
   it), and at exit "mcastlab-mcastall: IP_MULTICAST_ALL=0 on N UDP sockets, F failed". The
   option is read back with getsockopt() after it is set, so "active" means the kernel has
   it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef IP_MULTICAST_ALL
#define IP_MULTICAST_ALL 49
#endif

typedef int (*socket_fn)(int, int, int);

static _Atomic(socket_fn) real_socket;
static atomic_uint n_set, n_failed;
static atomic_flag announced = ATOMIC_FLAG_INIT;
static int log_enabled;

static socket_fn resolve(void)
{
  socket_fn f = atomic_load(&real_socket);
  if (f == NULL) {
    /* dlsym returns void *; POSIX guarantees it converts to a function pointer. */
    void *p = dlsym(RTLD_NEXT, "socket");
    memcpy(&f, &p, sizeof f);
    atomic_store(&real_socket, f);
  }
  return f;
}

/* Unbuffered, async-signal-safe output: stdio may not be set up, or locked by the caller. */
static void say(const char *msg)
{
  if (!log_enabled) return;
  size_t n = strlen(msg);
  while (n > 0) {
    ssize_t w = write(2, msg, n);
    if (w <= 0) return;
    msg += w;
    n -= (size_t)w;
  }
}

/* 0 when the option is set and reads back as 0, else the errno of the failing call. */
static int multicast_all_off(int fd)
{
  int zero = 0, got = 1;
  socklen_t len = sizeof got;
  if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_ALL, &zero, sizeof zero) != 0) return errno;
  if (getsockopt(fd, IPPROTO_IP, IP_MULTICAST_ALL, &got, &len) != 0) return errno;
  return got == 0 ? 0 : EINVAL;
}

int socket(int domain, int type, int protocol)
{
  socket_fn f = resolve();
  if (f == NULL) {
    errno = ENOSYS;
    return -1;
  }
  int fd = f(domain, type, protocol);
  int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0 || domain != AF_INET || base != SOCK_DGRAM ||
      (protocol != 0 && protocol != IPPROTO_UDP))
    return fd;
  int saved = errno;
  int err = multicast_all_off(fd);
  char line[160];
  if (err == 0) {
    atomic_fetch_add(&n_set, 1);
    if (!atomic_flag_test_and_set(&announced)) {
      snprintf(line, sizeof line, "mcastlab-mcastall: active: IP_MULTICAST_ALL=0 on UDP sockets of pid %ld\n",
               (long)getpid());
      say(line);
    }
  } else {
    atomic_fetch_add(&n_failed, 1);
    snprintf(line, sizeof line, "mcastlab-mcastall: FAILED to set IP_MULTICAST_ALL=0 on fd %d: %s\n", fd,
             strerror(err));
    say(line);
  }
  errno = saved;
  return fd;
}

__attribute__((constructor)) static void init(void)
{
  const char *v = getenv("MCASTLAB_MCASTALL_LOG");
  log_enabled = v != NULL && *v != '\0' && strcmp(v, "0") != 0;
  (void)resolve();
}

__attribute__((destructor)) static void fini(void)
{
  char line[128];
  snprintf(line, sizeof line, "mcastlab-mcastall: IP_MULTICAST_ALL=0 on %u UDP sockets, %u failed\n",
           atomic_load(&n_set), atomic_load(&n_failed));
  say(line);
}
