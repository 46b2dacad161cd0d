// The C API's plain parts: the last error of each thread, status strings,
// and the queries of communicators and collective instances.
#include "Internal.h"

using namespace purlin;

namespace {
thread_local std::string gLastError;
} // namespace

purlinStatus rt::fail(purlinStatus s, const std::string &msg) {
  gLastError = msg;
  return s;
}

purlinStatus rt::ok() {
  gLastError.clear();
  return PURLIN_SUCCESS;
}

purlinStatus rt::cudaFail(cudaError_t e, const std::string &what) {
  cudaGetLastError(); // clear a non-sticky error
  return fail(PURLIN_ERR_CUDA, what + ": " + cudaGetErrorString(e));
}

extern "C" {

const char *purlinGetLastError(void) { return gLastError.c_str(); }

const char *purlinStatusString(purlinStatus s) {
  switch (s) {
  case PURLIN_SUCCESS:
    return "success";
  case PURLIN_ERR_INVALID_ARGUMENT:
    return "invalid argument";
  case PURLIN_ERR_BAD_RANK_COUNT:
    return "bad rank count";
  case PURLIN_ERR_NULL_BUFFER:
    return "null buffer";
  case PURLIN_ERR_MISALIGNED:
    return "misaligned buffer";
  case PURLIN_ERR_UNSUPPORTED_TYPE:
    return "unsupported element type";
  case PURLIN_ERR_UNSUPPORTED_OP:
    return "unsupported op";
  case PURLIN_ERR_PARAM_RANGE:
    return "parameter out of range";
  case PURLIN_ERR_NO_DEVICE:
    return "no such GPU";
  case PURLIN_ERR_NO_PEER_ACCESS:
    return "no peer access";
  case PURLIN_ERR_NO_PLAN:
    return "no plan fits";
  case PURLIN_ERR_CUDA:
    return "CUDA error";
  case PURLIN_ERR_TIMEOUT:
    return "timeout";
  case PURLIN_ERR_OUT_OF_MEMORY:
    return "out of memory";
  case PURLIN_ERR_BAD_COLLECTIVE:
    return "bad collective";
  case PURLIN_ERR_NOT_READY:
    return "kernels not ready";
  case PURLIN_ERR_COMPILE:
    return "first-use compile failed";
  case PURLIN_ERR_BOOTSTRAP:
    return "bootstrap failed";
  case PURLIN_ERR_NOT_REGISTERED:
    return "buffer not registered";
  case PURLIN_ERR_MISMATCH:
    return "ranks called with other arguments";
  }
  return "unknown status";
}

int purlinCommRank(purlinComm_t c) { return c ? c->rank : -1; }
int purlinCommIsMultiProcess(purlinComm_t c) { return c && c->multiProcess; }
int purlinCommDeviceCount(purlinComm_t c) {
  return c ? (int)c->devices.size() : 0;
}
int purlinCommDevice(purlinComm_t c, int i) {
  return c && i >= 0 && i < (int)c->devices.size() ? c->devices[i] : -1;
}

int purlinCollScalarCount(purlinColl_t c) {
  return c ? (int)c->scalarNames.size() : 0;
}
const char *purlinCollScalarName(purlinColl_t c, int i) {
  return c && i >= 0 && i < (int)c->scalarNames.size()
             ? c->scalarNames[i].c_str()
             : nullptr;
}
int purlinCollTableCount(purlinColl_t c) {
  return c ? (int)c->tableParams.size() : 0;
}
const char *purlinCollTableName(purlinColl_t c, int t) {
  return c && t >= 0 && t < (int)c->tableParams.size()
             ? c->desc.params[c->tableParams[t]].name.c_str()
             : nullptr;
}
int purlinCollTableDims(purlinColl_t c, int t) {
  return c && t >= 0 && t < (int)c->tableParams.size()
             ? (int)c->desc.params[c->tableParams[t]].dims.size()
             : -1;
}
int64_t purlinCollTableMax(purlinColl_t c, int t) {
  return c && t >= 0 && t < (int)c->tableParams.size() ? c->tableMax[t] : -1;
}
int purlinCollBufferCount(purlinColl_t c) {
  return c ? (int)c->desc.buffers.size() : 0;
}
const char *purlinCollLastPlan(purlinColl_t c) {
  return c ? c->lastPlan.c_str() : "";
}

} // extern "C"
