// The CUDA driver calls of one-process-per-GPU memory (VMM: cuMemCreate,
// shareable handles, cuMemMap; cuMemGetAddressRange for registration),
// reached through the runtime's cudaGetDriverEntryPointByVersion, so the
// runtime does not link libcuda (the driver is there whenever a GPU is).
#pragma once

#include <cuda.h>

#include <string>

namespace purlin {
namespace rt {

struct Driver {
  CUresult (*memCreate)(CUmemGenericAllocationHandle *, size_t,
                        const CUmemAllocationProp *, unsigned long long);
  CUresult (*memRelease)(CUmemGenericAllocationHandle);
  CUresult (*memExportToShareableHandle)(void *, CUmemGenericAllocationHandle,
                                         CUmemAllocationHandleType,
                                         unsigned long long);
  CUresult (*memImportFromShareableHandle)(CUmemGenericAllocationHandle *,
                                           void *, CUmemAllocationHandleType);
  CUresult (*memAddressReserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
                                unsigned long long);
  CUresult (*memAddressFree)(CUdeviceptr, size_t);
  CUresult (*memMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                     unsigned long long);
  CUresult (*memUnmap)(CUdeviceptr, size_t);
  CUresult (*memSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc *,
                           size_t);
  CUresult (*memGetAllocationGranularity)(size_t *, const CUmemAllocationProp *,
                                          CUmemAllocationGranularity_flags);
  CUresult (*memGetAddressRange)(CUdeviceptr *, size_t *, CUdeviceptr);
  CUresult (*memRetainAllocationHandle)(CUmemGenericAllocationHandle *, void *);
  CUresult (*deviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*getErrorString)(CUresult, const char **);
};

/// The driver's entry points, loaded once; null with `error` when one is
/// missing.
const Driver *driver(std::string &error);
/// "cuMemMap: CUDA_ERROR_...: <text>".
std::string driverError(const Driver *d, CUresult r, const char *what);
/// Whether device `dev` has VMM with POSIX file-descriptor handles.
bool vmmSupported(int dev);

} // namespace rt
} // namespace purlin
