#include "Driver.h"

#include <cuda_runtime.h>

#include <mutex>

namespace purlin {
namespace rt {

const Driver *driver(std::string &error) {
  static Driver d;
  static std::string missing;
  static std::once_flag once;
  std::call_once(once, [] {
    auto get = [](const char *name, auto &fn) {
      void *p = nullptr;
      cudaDriverEntryPointQueryResult q;
      if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault,
                                           &q) != cudaSuccess ||
          q != cudaDriverEntryPointSuccess || !p) {
        cudaGetLastError();
        if (missing.empty())
          missing = std::string("the CUDA driver lacks ") + name;
        return;
      }
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    get("cuMemCreate", d.memCreate);
    get("cuMemRelease", d.memRelease);
    get("cuMemExportToShareableHandle", d.memExportToShareableHandle);
    get("cuMemImportFromShareableHandle", d.memImportFromShareableHandle);
    get("cuMemAddressReserve", d.memAddressReserve);
    get("cuMemAddressFree", d.memAddressFree);
    get("cuMemMap", d.memMap);
    get("cuMemUnmap", d.memUnmap);
    get("cuMemSetAccess", d.memSetAccess);
    get("cuMemGetAllocationGranularity", d.memGetAllocationGranularity);
    get("cuMemGetAddressRange", d.memGetAddressRange);
    get("cuMemRetainAllocationHandle", d.memRetainAllocationHandle);
    get("cuDeviceGetAttribute", d.deviceGetAttribute);
    get("cuGetErrorString", d.getErrorString);
  });
  if (!missing.empty()) {
    error = missing;
    return nullptr;
  }
  return &d;
}

std::string driverError(const Driver *d, CUresult r, const char *what) {
  const char *s = nullptr;
  if (d && d->getErrorString)
    d->getErrorString(r, &s);
  return std::string(what) + ": " + (s ? s : "error " + std::to_string((int)r));
}

bool vmmSupported(int dev) {
  std::string err;
  const Driver *d = driver(err);
  if (!d)
    return false;
  int vmm = 0, fd = 0;
  d->deviceGetAttribute(&vmm,
                        CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                        (CUdevice)dev);
  d->deviceGetAttribute(
      &fd, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
      (CUdevice)dev);
  return vmm && fd;
}

} // namespace rt
} // namespace purlin
