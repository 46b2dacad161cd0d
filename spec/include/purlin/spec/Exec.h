// The generic executor of snac programs: what every target runs.
//
// purlinc lowers a snac program to straight-line calls of the step functions
// below (stage, notify, wait, consume), one per snac op, plus one struct per
// clause that evaluates the clause's maps (see "Clause contract"). The step
// functions turn a step into boxes of names and hand the data movement and
// the signalling to the target's atoms (`Tgt`, "Target contract"). The same
// header compiles with a plain host compiler (the host target) and with
// nvcc (the GPU targets).
//
// Execution model: rank r runs its program on L lanes (a thread block, a
// host thread). Lane l of rank r handles slice l of every step's names, and
// signals lane l of its peers, so lanes never wait on each other. Each step's
// names are cut into K*L pieces; piece (c, l) belongs to lane l in chunk c.
// Signal words are monotonic: a notify stores the lane's epoch, a wait waits
// until the word reaches it. Each lane keeps its epoch in device memory and
// bumps it once per launch, so repeated launches and graph replays agree.
//
// The executor in parts, each including the one before:
//   exec/State.h    vocabulary ints, Params, Shared, signal words, Box, slicing
//   exec/Names.h    the clause contract, boxes, flows, peers, scratch layout, Move
//   exec/Signals.h  the target contract, notify, wait, a lane's moves
//   exec/Steps.h    stage, consume, copy: the steps generated plans call
//   exec/Epilogue.h consumeRows: a consume through an epilogue (row-wise f32)
#pragma once

#include "purlin/spec/exec/Steps.h"
#include "purlin/spec/exec/Epilogue.h"
