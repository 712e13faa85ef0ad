/* Perftest 4.3's output tables (csv, json, legacy) on stdout: same titles, columns, units,
   field widths and JSON layout as rtiperftest 4.3's srcCppCommon/PerftestPrinter.cxx. */
#ifndef PERFTEST_PRINTER_H
#define PERFTEST_PRINTER_H

#include <stdbool.h>
#include <stdint.h>

#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One throughput interval row (subscriber), Perftest's quantities: cumulative samples,
   this interval's samples/s and bytes/s, their running means, cumulative losses. */
typedef struct {
  unsigned long long packets, packets_per_s, bytes_per_s, lost;
  double packets_ave, bytes_ave;
  float lost_percent;
  double cpu;
} pt_throughput_interval_t;

/* The throughput summary: totals over [first sample, last FINISHED], time in µs. */
typedef struct {
  int length;
  unsigned long long packets, time_us, bytes, lost;
  float lost_percent;
  double cpu;
} pt_throughput_summary_t;

typedef struct {
  unsigned long latency, minimum, maximum;
  double average, std;
  double cpu;
} pt_latency_interval_t;

typedef struct {
  int length;
  double average, std;
  unsigned long minimum, maximum, p50, p90, p99, p9999, p999999;
  double cpu;
} pt_latency_summary_t;

/* headers: false with -noOutputHeaders. */
void pr_init(pt_format_t fmt, bool intervals, bool headers, bool cpu, int data_len);
/* JSON opening brackets (Perftest: when the test starts, both roles). */
void pr_begin(void);
/* JSON closing brackets (after pr_begin). */
void pr_end(void);
void pr_throughput_header(void);
void pr_throughput_interval(const pt_throughput_interval_t *t);
void pr_throughput_summary(const pt_throughput_summary_t *t);
void pr_latency_header(void);
void pr_latency_interval(const pt_latency_interval_t *l);
void pr_latency_summary(const pt_latency_summary_t *l);

/* Perftest's CpuMonitor: pr_cpu_start sets the origin; pr_cpu_instant returns the process
   CPU since the previous call in % of all cores and accumulates it; pr_cpu_average returns
   the mean of the instants taken since pr_cpu_start (one instant over the whole span when
   none was taken, e.g. with -noPrintIntervals) and starts over. */
void pr_cpu_start(void);
double pr_cpu_instant(void);
double pr_cpu_average(void);

#ifdef __cplusplus
}
#endif

#endif
