// The sm_90_tma target: the TMA bulk atoms (tma/) on sm_90, the SM atoms'
// lanes and signals around them. Generated code includes this header once.
#pragma once

#define PURLIN_TARGET_NAME "sm_90_tma"
#ifndef PURLIN_SM_THREADS
#define PURLIN_SM_THREADS 512
#endif
#include "tma/target.cuh"
