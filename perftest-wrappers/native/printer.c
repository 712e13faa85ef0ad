/* Output tables in RTI Perftest 4.3's formats. Reference (read, not copied): rtiperftest
   release 4.3, srcCppCommon/PerftestPrinter.cxx (format strings) and srcCpp/perftest_cpp.cxx
   (when each line is printed). The layout is checked byte for byte against the fixture
   generator tests/helpers/perftest43_format.py, itself written from those format strings. */
#include "printer.h"

#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define US "\xce\xbc" "s" /* "μs" in UTF-8, as Perftest 4.x prints it */

static pt_format_t fmt;
static bool show_intervals, show_headers, show_cpu;
static int data_len;
static bool summary_headers = true; /* Perftest's _printSummaryHeaders */
static bool json_initialized, json_first_interval, begun;
static bool header_done;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

void pr_init(pt_format_t f, bool intervals, bool headers, bool cpu, int len)
{
  fmt = f;
  show_intervals = intervals;
  show_headers = headers;
  show_cpu = cpu;
  data_len = len;
  pr_cpu_start();
}

void pr_begin(void)
{
  pthread_mutex_lock(&out_lock);
  if (!begun && fmt == FMT_JSON) printf("{\"perftest\":\n\t[\n\t\t{\n");
  begun = true;
  fflush(stdout);
  pthread_mutex_unlock(&out_lock);
}

void pr_end(void)
{
  pthread_mutex_lock(&out_lock);
  if (begun && fmt == FMT_JSON) printf("\n\t]\n}\n");
  begun = false;
  fflush(stdout);
  pthread_mutex_unlock(&out_lock);
}

static void cpu_column_title(void)
{
  if (show_cpu) printf(", CPU (%%)");
  printf("\n");
}

static void cpu_csv(double cpu)
{
  if (show_cpu) printf(",%8.2f", cpu);
  printf("\n");
}

static void cpu_json(const char *indent, double cpu)
{
  if (show_cpu) printf(",\n%s\"CPU\": %1.2f", indent, cpu);
}

static void cpu_legacy(double cpu)
{
  if (show_cpu) printf(" CPU %1.2f (%%)", cpu);
  printf("\n");
}

static void header_locked(bool latency)
{
  header_done = true;
  switch (fmt) {
  case FMT_CSV:
    if (!show_headers || !show_intervals) break;
    if (latency) {
      printf("\nIntervals One-Way Latency for %d Bytes:\n", data_len);
      printf("Length (Bytes), Latency (" US "), Ave (" US "), Std (" US "), Min (" US "), Max (" US
             ")");
    } else {
      printf("\nInterval Throughput for %d Bytes:\n", data_len);
      printf("Length (Bytes), Total Samples,  Samples/s, Avg Samples/s,     Mbps,  Avg Mbps"
             ", Lost Samples, Lost Samples (%%)");
    }
    cpu_column_title();
    break;
  case FMT_JSON:
    if (json_initialized) printf(",\n\t\t{\n");
    else json_initialized = true;
    printf("\t\t\t\"length\":%d,\n", data_len);
    if (show_intervals) {
      printf("\t\t\t\"intervals\":[\n");
      json_first_interval = true;
    }
    break;
  case FMT_LEGACY:
    if (show_headers && show_intervals) printf("\n\n********** New data length is %d\n", data_len);
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

static void json_interval_separator(void)
{
  if (json_first_interval) json_first_interval = false;
  else printf(",");
}

void pr_throughput_interval(const pt_throughput_interval_t *t)
{
  double mbps = (double)t->bytes_per_s * 8.0 / 1000.0 / 1000.0;
  double mbps_ave = t->bytes_ave * 8.0 / 1000.0 / 1000.0;
  pthread_mutex_lock(&out_lock);
  switch (fmt) {
  case FMT_CSV:
    printf("%14d,%14llu,%11llu,%14.0f,%9.1f,%10.1f, %12llu, %16.2f", data_len, t->packets,
           t->packets_per_s, t->packets_ave, mbps, mbps_ave, t->lost, (double)t->lost_percent);
    cpu_csv(t->cpu);
    break;
  case FMT_JSON:
    json_interval_separator();
    printf("\n\t\t\t\t{\n\t\t\t\t\t\"length\": %d,\n\t\t\t\t\t\"packets\": %llu,\n"
           "\t\t\t\t\t\"packets/s\": %llu,\n\t\t\t\t\t\"packets/s_ave\": %1.2f,\n"
           "\t\t\t\t\t\"mbps\": %1.1f,\n\t\t\t\t\t\"mbps_ave\": %1.1f,\n"
           "\t\t\t\t\t\"lost\": %llu,\n\t\t\t\t\t\"lost_percent\": %1.2f",
           data_len, t->packets, t->packets_per_s, t->packets_ave, mbps, mbps_ave, t->lost,
           (double)t->lost_percent);
    cpu_json("\t\t\t\t\t", t->cpu);
    printf("\n\t\t\t\t}");
    break;
  case FMT_LEGACY:
    printf("Packets: %8llu  Packets/s: %7llu  Packets/s(ave): %7.0f  Mbps: %7.1f  Mbps(ave): %7.1f"
           "  Lost: %5llu (%1.2f%%)",
           t->packets, t->packets_per_s, t->packets_ave, mbps, mbps_ave, t->lost,
           (double)t->lost_percent);
    cpu_legacy(t->cpu);
    break;
  }
  fflush(stdout);
  pthread_mutex_unlock(&out_lock);
}

void pr_throughput_summary(const pt_throughput_summary_t *t)
{
  /* Perftest divides by the time unguarded; a zero span (nothing received) prints zeros. */
  unsigned long long per_s = t->time_us ? t->packets * 1000000ULL / t->time_us : 0;
  double mbps = t->time_us ? (double)t->bytes * 1000000.0 / (double)t->time_us * 8.0 / 1000.0 / 1000.0
                           : 0.0;
  pthread_mutex_lock(&out_lock);
  if (!header_done) header_locked(false);
  switch (fmt) {
  case FMT_CSV:
    if (summary_headers && show_headers) {
      if (!show_intervals) summary_headers = false;
      if (show_intervals) printf("\nThroughput Summary:\n");
      printf("Sample Size (Bytes), Total Samples, Avg Samples/s,    Avg Mbps, Lost Samples, "
             "Lost Samples (%%)");
      cpu_column_title();
    }
    printf("%19d,%14llu,%14.0llu,%12.1f, %12llu, %16.2f", t->length, t->packets, per_s, mbps,
           t->lost, (double)t->lost_percent);
    cpu_csv(t->cpu);
    break;
  case FMT_JSON:
    if (show_intervals) printf("\t\t\t],\n");
    printf("\t\t\t\"summary\":{\n\t\t\t\t\"packets\": %llu,\n\t\t\t\t\"packets/sAve\": %llu,\n"
           "\t\t\t\t\"mbpsAve\": %1.1f,\n\t\t\t\t\"lost\": %llu,\n\t\t\t\t\"lostPercent\": %1.2f",
           t->packets, per_s, mbps, t->lost, (double)t->lost_percent);
    cpu_json("\t\t\t\t", t->cpu);
    printf("\n\t\t\t}\n\t\t}");
    break;
  case FMT_LEGACY:
    printf("Length: %5d  Packets: %8llu  Packets/s(ave): %7llu  Mbps(ave): %7.1f  Lost: %5llu "
           "(%1.2f%%)",
           t->length, t->packets, per_s, mbps, t->lost, (double)t->lost_percent);
    cpu_legacy(t->cpu);
    break;
  }
  fflush(stdout);
  pthread_mutex_unlock(&out_lock);
}

void pr_latency_interval(const pt_latency_interval_t *l)
{
  pthread_mutex_lock(&out_lock);
  switch (fmt) {
  case FMT_CSV:
    printf("%14d,%13lu,%9.0f,%9.1f,%9lu,%9lu", data_len, l->latency, l->average, l->std,
           l->minimum, l->maximum);
    cpu_csv(l->cpu);
    break;
  case FMT_JSON:
    json_interval_separator();
    printf("\n\t\t\t\t{\n\t\t\t\t\t\"latency\": %lu,\n\t\t\t\t\t\"latency_ave\": %1.2f,\n"
           "\t\t\t\t\t\"latency_std\": %1.2f,\n\t\t\t\t\t\"latency_min\": %lu,\n"
           "\t\t\t\t\t\"latency_max\": %lu",
           l->latency, l->average, l->std, l->minimum, l->maximum);
    cpu_json("\t\t\t\t\t", l->cpu);
    printf("\n\t\t\t\t}");
    break;
  case FMT_LEGACY:
    printf("One-Way Latency: %6lu " US " Ave %6.0f " US " Std %6.1f " US " Min %6lu " US
           " Max %6lu " US,
           l->latency, l->average, l->std, l->minimum, l->maximum);
    cpu_legacy(l->cpu);
    break;
  }
  fflush(stdout);
  pthread_mutex_unlock(&out_lock);
}

void pr_latency_summary(const pt_latency_summary_t *l)
{
  pthread_mutex_lock(&out_lock);
  if (!header_done) header_locked(true);
  switch (fmt) {
  case FMT_CSV:
    if (summary_headers && show_headers) {
      if (!show_intervals) summary_headers = false;
      if (show_intervals) printf("\nOne-way Latency Summary:\n");
      printf("Sample Size (Bytes), Ave (" US "), Std (" US "), Min (" US "), Max (" US "), 50%% ("
             US "), 90%% (" US "), 99%% (" US "), 99.99%% (" US "), 99.9999%% (" US ")");
      cpu_column_title();
    }
    printf("%19d,%9.0f,%9.1f,%9lu,%9lu,%9lu,%9lu,%9lu,%12lu,%14lu", l->length, l->average, l->std,
           l->minimum, l->maximum, l->p50, l->p90, l->p99, l->p9999, l->p999999);
    cpu_csv(l->cpu);
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
    cpu_json("\t\t\t\t", l->cpu);
    printf("\n\t\t\t}\n\t\t}");
    break;
  case FMT_LEGACY:
    printf("Length: %5d Latency: Ave %6.0f " US " Std %6.1f " US " Min %6lu " US " Max %6lu " US
           " 50%% %6lu " US " 90%% %6lu " US " 99%% %6lu " US " 99.99%% %6lu " US
           " 99.9999%% %6lu " US,
           l->length, l->average, l->std, l->minimum, l->maximum, l->p50, l->p90, l->p99,
           l->p9999, l->p999999);
    cpu_legacy(l->cpu);
    break;
  }
  fflush(stdout);
  pthread_mutex_unlock(&out_lock);
}

/* ---- CPU (Perftest's CpuMonitor on getrusage) --------------------------------------- */

static pthread_mutex_t cpu_lock = PTHREAD_MUTEX_INITIALIZER;
static double cpu_last, wall_last, cpu_total;
static unsigned long cpu_count;

static void cpu_now(double *cpu, double *wall)
{
  struct rusage ru;
  struct timespec ts;
  getrusage(RUSAGE_SELF, &ru);
  clock_gettime(CLOCK_MONOTONIC, &ts);
  *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
  *wall = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void pr_cpu_start(void)
{
  pthread_mutex_lock(&cpu_lock);
  cpu_now(&cpu_last, &wall_last);
  cpu_total = 0.0;
  cpu_count = 0;
  pthread_mutex_unlock(&cpu_lock);
}

static double cpu_instant_locked(void)
{
  double cpu, wall, pct = 0.0;
  cpu_now(&cpu, &wall);
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  if (wall > wall_last && cpu >= cpu_last) {
    pct = (cpu - cpu_last) / (wall - wall_last) * 100.0 / (double)(ncpu > 0 ? ncpu : 1);
    cpu_last = cpu;
    wall_last = wall;
  }
  cpu_total += pct;
  cpu_count++;
  return pct;
}

double pr_cpu_instant(void)
{
  pthread_mutex_lock(&cpu_lock);
  double pct = cpu_instant_locked();
  pthread_mutex_unlock(&cpu_lock);
  return pct;
}

double pr_cpu_average(void)
{
  pthread_mutex_lock(&cpu_lock);
  if (cpu_count == 0) (void)cpu_instant_locked();
  double avg = cpu_total / (double)cpu_count;
  pthread_mutex_unlock(&cpu_lock);
  pr_cpu_start();
  return avg;
}
