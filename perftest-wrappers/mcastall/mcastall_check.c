/* mcastall_check: creates sockets from several threads and reports each kind's
   IP_MULTICAST_ALL as the kernel has it (getsockopt), then checks it against what the shim
   must do. Usage: mcastall_check off|default
     off      IPv4 UDP sockets (any SOCK_* flag, protocol 0 or IPPROTO_UDP) must read 0,
              TCP and raw-less others must keep the kernel's 1 (run it with the shim:
              LD_PRELOAD=libmcastall_off.so, or the ASan build that links the shim in);
     default  every socket reads 1 (run it without the shim: the kernel's default).
   Exit 0 when every socket matches, 1 otherwise, 2 on a usage or system error. Prints one
   line per kind: "<kind> <count> sockets IP_MULTICAST_ALL=<value>". */
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef IP_MULTICAST_ALL
#define IP_MULTICAST_ALL 49
#endif

#define THREADS 8
#define PER_THREAD 25

struct kind {
  const char *name;
  int type, protocol, expect_off;
};

static const struct kind kinds[] = {
  {"udp", SOCK_DGRAM, 0, 1},
  {"udp-cloexec-nonblock", SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, 1},
  {"udp-ipproto", SOCK_DGRAM, IPPROTO_UDP, 1},
  {"tcp", SOCK_STREAM, 0, 0},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

struct result {
  int value[NKINDS][PER_THREAD];
  int error;
};

static void *worker(void *arg)
{
  struct result *r = arg;
  for (size_t k = 0; k < NKINDS; k++) {
    for (int i = 0; i < PER_THREAD; i++) {
      int fd = socket(AF_INET, kinds[k].type, kinds[k].protocol);
      if (fd < 0) {
        r->error = 1;
        return NULL;
      }
      int v = -1;
      socklen_t len = sizeof v;
      if (getsockopt(fd, IPPROTO_IP, IP_MULTICAST_ALL, &v, &len) != 0) r->error = 1;
      r->value[k][i] = v;
      close(fd);
    }
  }
  return NULL;
}

int main(int argc, char **argv)
{
  if (argc != 2 || (strcmp(argv[1], "off") != 0 && strcmp(argv[1], "default") != 0)) {
    fprintf(stderr, "usage: mcastall_check off|default\n");
    return 2;
  }
  int want_off = strcmp(argv[1], "off") == 0;
  static struct result res[THREADS];
  pthread_t th[THREADS];
  for (int t = 0; t < THREADS; t++)
    if (pthread_create(&th[t], NULL, worker, &res[t]) != 0) return 2;
  for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
  int bad = 0;
  for (size_t k = 0; k < NKINDS; k++) {
    int expect = want_off && kinds[k].expect_off ? 0 : 1;
    int count = 0, wrong = 0;
    for (int t = 0; t < THREADS; t++) {
      if (res[t].error) {
        fprintf(stderr, "mcastall_check: socket() or getsockopt() failed\n");
        return 2;
      }
      for (int i = 0; i < PER_THREAD; i++, count++) wrong += res[t].value[k][i] != expect;
    }
    printf("%s %d sockets IP_MULTICAST_ALL=%d%s\n", kinds[k].name, count, expect,
           wrong ? " MISMATCH" : "");
    if (wrong) {
      printf("  %d of them read otherwise\n", wrong);
      bad = 1;
    }
  }
  return bad;
}
