/* Force-included for PolyBench/GPU's doitgen.cu only: it calls rtclock(), which the
 * other programs get from ../../common/polybench.c and doitgen includes from nowhere. */
#pragma once
#include <sys/time.h>
static double rtclock(void) { struct timeval t; gettimeofday(&t, 0); return t.tv_sec + t.tv_usec * 1.0e-6; }
