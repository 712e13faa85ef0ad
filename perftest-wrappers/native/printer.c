/* Output tables in RTI Perftest 4.x formats (reference: rtiperftest PerftestPrinter.cxx). */
#include "printer.h"

#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static pt_format_t fmt;
static bool show_intervals, show_cpu;
static int data_len;
static bool summary_headers = true;
static bool json_initialized, json_first_interval;
static bool header_done;
static bool begun;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

void pr_init(pt_format_t f, bool intervals, bool cpu, int len)
{
  fmt = f;
  show_intervals = intervals;
  show_cpu = cpu;
  data_len = len;
  (void)pr_cpu_instant();
}

static void begin_locked(void)
{
  if (!begun && fmt == FMT_JSON) printf("{\"perftest\":\n\t[\n\t\t{\n");
  begun = true;
}

void pr_end(void)
{
  if (fmt == FMT_JSON && begun) {
    pthread_mutex_lock(&out_lock);
    printf("\n\t]\n}\n");
    fflush(stdout);
    pthread_mutex_unlock(&out_lock);
  }
}

static void json_open_block(void)
{
  if (json_initialized)
    printf(",\n\t\t{\n");
  else
    json_initialized = true;
  printf("\t\t\t\"length\":%d,\n", data_len);
  if (show_intervals) {
    printf("\t\t\t\"intervals\":[\n");
    json_first_interval = true;
  }
}

static void header_locked(bool latency)
{
  begin_locked();
  header_done = true;
  switch (fmt) {
  case FMT_CSV:
    if (!show_intervals) break;
    if (latency) {
      printf("\nIntervals One-way Latency for %d Bytes:\n", data_len);
      printf("Length (Bytes), Latency (us), Ave (us), Std (us), Min (us), Max (us)");
    } else {
      printf("\nInterval Throughput for %d Bytes:\n", data_len);
      printf("Length (Bytes), Total Samples,  Samples/s, Ave Samples/s,     Mbps,  Ave Mbps"
             ", Lost Samples, Lost Samples (%%)");
    }
    if (show_cpu) printf(", CPU (%%)");
    printf("\n");
    break;
  case FMT_JSON:
    json_open_block();
    break;
  case FMT_LEGACY:
    if (show_intervals) printf("\n\n********** New data length is %d\n", data_len);
    break;
  }
  fflush(stdout);
}

void pr_throughput_header(void)
{
  pthread_mutex_lock(&out_lock);
  header_locked(false);
  pthread_mutex_unlock(&out_lock);
}

void pr_latency_header(void)
{
  pthread_mutex_lock(&out_lock);
  header_locked(true);
  pthread_mutex_unlock(&out_lock);
}

void pr_throughput_interval(const pt_throughput_info_t *t)
{
  pthread_mutex_lock(&out_lock);
  switch (fmt) {
  case FMT_CSV:
    printf("%14d,%14llu,%11llu,%14.0f,%9.1f,%10.1f, %12llu, %16.2f", data_len, t->packets,
           t->packets_per_s, t->packets_ave, t->mbps, t->mbps_ave, t->lost, t->lost_percent);
    if (show_cpu) printf(",%8.2f", t->cpu);
    printf("\n");
    break;
  case FMT_JSON:
    if (json_first_interval) json_first_interval = false;
    else printf(",");
    printf("\n\t\t\t\t{\n\t\t\t\t\t\"length\": %d,\n\t\t\t\t\t\"packets\": %llu,\n"
           "\t\t\t\t\t\"packets/s\": %llu,\n\t\t\t\t\t\"packets/s_ave\": %1.2f,\n"
           "\t\t\t\t\t\"mbps\": %1.1f,\n\t\t\t\t\t\"mbps_ave\": %1.1f,\n"
           "\t\t\t\t\t\"lost\": %llu,\n\t\t\t\t\t\"lost_percent\": %1.2f",
           data_len, t->packets, t->packets_per_s, t->packets_ave, t->mbps, t->mbps_ave, t->lost,
           t->lost_percent);
    if (show_cpu) printf(",\n\t\t\t\t\t\"cpu\": %1.2f", t->cpu);
    printf("\n\t\t\t\t}");
    break;
  case FMT_LEGACY:
    printf("Packets: %8llu  Packets/s: %7llu  Packets/s(ave): %7.0f  Mbps: %7.1f  Mbps(ave): %7.1f"
           "  Lost: %5llu (%1.2f%%)",
           t->packets, t->packets_per_s, t->packets_ave, t->mbps, t->mbps_ave, t->lost,
           t->lost_percent);
    if (show_cpu) printf(" CPU %1.2f (%%)", t->cpu);
    printf("\n");
    break;
  }
  fflush(stdout);
  pthread_mutex_unlock(&out_lock);
}

void pr_throughput_summary(const pt_throughput_info_t *t)
{
  pthread_mutex_lock(&out_lock);
  if (!header_done) header_locked(false);
  switch (fmt) {
  case FMT_CSV:
    if (summary_headers) {
      summary_headers = false;
      if (show_intervals) printf("\nThroughput Summary:\n");
      printf("Length (Bytes), Total Samples, Ave Samples/s,    Ave Mbps, Lost Samples, "
             "Lost Samples (%%)");
      if (show_cpu) printf(", CPU (%%)");
      printf("\n");
    }
    printf("%14d,%14llu,%14llu,%12.1f, %12llu, %16.2f", data_len, t->packets, t->packets_per_s,
           t->mbps_ave, t->lost, t->lost_percent);
    if (show_cpu) printf(",%8.2f", t->cpu);
    printf("\n");
    break;
  case FMT_JSON:
    if (show_intervals) printf("\t\t\t],\n");
    printf("\t\t\t\"summary\":{\n\t\t\t\t\"packets\": %llu,\n\t\t\t\t\"packets/sAve\": %llu,\n"
           "\t\t\t\t\"mbpsAve\": %1.1f,\n\t\t\t\t\"lost\": %llu,\n\t\t\t\t\"lostPercent\": %1.2f",
           t->packets, t->packets_per_s, t->mbps_ave, t->lost, t->lost_percent);
    if (show_cpu) printf(",\n\t\t\t\t\"cpu\": %1.2f", t->cpu);
    printf("\n\t\t\t}\n\t\t}");
    break;
  case FMT_LEGACY:
    printf("Length: %5d  Packets: %8llu  Packets/s(ave): %7llu  Mbps(ave): %7.1f  Lost: %5llu "
           "(%1.2f%%)",
           data_len, t->packets, t->packets_per_s, t->mbps_ave, t->lost, t->lost_percent);
    if (show_cpu) printf(" CPU %1.2f (%%)", t->cpu);
    printf("\n");
    break;
  }
  fflush(stdout);
  pthread_mutex_unlock(&out_lock);
}

void pr_latency_interval(const pt_latency_info_t *l)
{
  pthread_mutex_lock(&out_lock);
  switch (fmt) {
  case FMT_CSV:
    printf("%14d,%13lu,%9.0f,%9.1f,%9lu,%9lu", data_len, l->latency, l->average, l->std,
           l->minimum, l->maximum);
    if (show_cpu) printf(",%8.2f", l->cpu);
    printf("\n");
    break;
  case FMT_JSON:
    if (json_first_interval) json_first_interval = false;
    else printf(",");
    printf("\n\t\t\t\t{\n\t\t\t\t\t\"latency\": %lu,\n\t\t\t\t\t\"latency_ave\": %1.2f,\n"
           "\t\t\t\t\t\"latency_std\": %1.2f,\n\t\t\t\t\t\"latency_min\": %lu,\n"
           "\t\t\t\t\t\"latency_max\": %lu",
           l->latency, l->average, l->std, l->minimum, l->maximum);
    if (show_cpu) printf(",\n\t\t\t\t\t\"cpu\": %1.2f", l->cpu);
    printf("\n\t\t\t\t}");
    break;
  case FMT_LEGACY:
    printf("One way Latency: %6lu us Ave %6.0f us Std %6.1f us Min %6lu us Max %6lu us",
           l->latency, l->average, l->std, l->minimum, l->maximum);
    if (show_cpu) printf(" CPU %1.2f (%%)", l->cpu);
    printf("\n");
    break;
  }
  fflush(stdout);
  pthread_mutex_unlock(&out_lock);
}

void pr_latency_summary(const pt_latency_info_t *l)
{
  pthread_mutex_lock(&out_lock);
  if (!header_done) header_locked(true);
  switch (fmt) {
  case FMT_CSV:
    if (summary_headers) {
      summary_headers = false;
      if (show_intervals) printf("\nOne-way Latency Summary:\n");
      printf("Length (Bytes), Ave (us), Std (us), Min (us), Max (us), 50%% (us), 90%% (us), "
             "99%% (us), 99.99%% (us), 99.9999%% (us)");
      if (show_cpu) printf(", CPU (%%)");
      printf("\n");
    }
    printf("%14d,%9.0f,%9.1f,%9lu,%9lu,%9lu,%9lu,%9lu,%12lu,%14lu", data_len, l->average, l->std,
           l->minimum, l->maximum, l->p50, l->p90, l->p99, l->p9999, l->p999999);
    if (show_cpu) printf(",%8.2f", l->cpu);
    printf("\n");
    break;
  case FMT_JSON:
    if (show_intervals) printf("\n\t\t\t],\n");
    printf("\t\t\t\"summary\":{\n\t\t\t\t\"latency_ave\": %1.2f,\n\t\t\t\t\"latency_std\": %1.2f,\n"
           "\t\t\t\t\"latency_min\": %lu,\n\t\t\t\t\"latency_max\": %lu,\n"
           "\t\t\t\t\"latency_50\": %lu,\n\t\t\t\t\"latency_90\": %lu,\n"
           "\t\t\t\t\"latency_99\": %lu,\n\t\t\t\t\"latency_99.99\": %lu,\n"
           "\t\t\t\t\"latency_99.9999\": %lu",
           l->average, l->std, l->minimum, l->maximum, l->p50, l->p90, l->p99, l->p9999,
           l->p999999);
    if (show_cpu) printf(",\n\t\t\t\t\"cpu\": %1.2f", l->cpu);
    printf("\n\t\t\t}\n\t\t}");
    break;
  case FMT_LEGACY:
    printf("Length: %5d Latency: Ave %6.0f us Std %6.1f us Min %6lu us Max %6lu us 50%% %6lu us "
           "90%% %6lu us 99%% %6lu us 99.99%% %6lu us 99.9999%% %6lu us",
           data_len, l->average, l->std, l->minimum, l->maximum, l->p50, l->p90, l->p99, l->p9999,
           l->p999999);
    if (show_cpu) printf(" CPU %1.2f (%%)", l->cpu);
    printf("\n");
    break;
  }
  fflush(stdout);
  pthread_mutex_unlock(&out_lock);
}

double pr_cpu_instant(void)
{
  static double last_cpu, last_wall;
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  struct rusage ru;
  struct timespec ts;
  getrusage(RUSAGE_SELF, &ru);
  clock_gettime(CLOCK_MONOTONIC, &ts);
  double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
               ru.ru_stime.tv_usec / 1e6;
  double wall = (double)ts.tv_sec + ts.tv_nsec / 1e9;
  pthread_mutex_lock(&lock);
  double pct = 0.0;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  if (last_wall > 0 && wall > last_wall)
    pct = (cpu - last_cpu) / (wall - last_wall) * 100.0 / (double)(ncpu > 0 ? ncpu : 1);
  last_cpu = cpu;
  last_wall = wall;
  pthread_mutex_unlock(&lock);
  return pct;
}
