/* Force-included (nvcc -include) when building the measured programs with CUDA 13:
 * APIs that old benchmark suites call and newer toolkits dropped. Lines of the
 * programs' own files do not move. */
#pragma once
#include <cuda_runtime.h>
#define cudaThreadSynchronize cudaDeviceSynchronize
#define cudaThreadExit cudaDeviceReset
