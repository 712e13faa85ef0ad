/* Perftest's output tables (csv, json, legacy) on stdout, same titles, columns and units. */
#ifndef PERFTEST_PRINTER_H
#define PERFTEST_PRINTER_H

#include <stdbool.h>
#include <stdint.h>

#include "options.h"

typedef struct {
  unsigned long latency, minimum, maximum;
  double average, std;
  unsigned long p50, p90, p99, p9999, p999999;
  double cpu;
} pt_latency_info_t;

typedef struct {
  unsigned long long packets, packets_per_s, lost;
  double packets_ave, mbps, mbps_ave, lost_percent, cpu;
} pt_throughput_info_t;

void pr_init(pt_format_t fmt, bool intervals, bool cpu, int data_len);
/* Closes the JSON document when anything was printed. */
void pr_end(void);
void pr_throughput_header(void);
void pr_throughput_interval(const pt_throughput_info_t *t);
void pr_throughput_summary(const pt_throughput_info_t *t);
void pr_latency_header(void);
void pr_latency_interval(const pt_latency_info_t *l);
void pr_latency_summary(const pt_latency_info_t *l);

/* Process CPU use since the previous call, in % of all cores (as Perftest's CpuMonitor). */
double pr_cpu_instant(void);

#endif
