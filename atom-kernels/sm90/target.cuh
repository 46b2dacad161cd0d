// The sm_90 target: the SM load/store atoms (common/sm/) for this
// generation. Generated code includes this header once.
#pragma once

#define PURLIN_TARGET_NAME "sm_90"
#ifndef PURLIN_SM_THREADS
#define PURLIN_SM_THREADS 512
#endif
#include "common/sm/target.cuh"
