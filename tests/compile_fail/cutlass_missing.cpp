// EXPECT: needs CUTLASS 4.2 on the include path: link the CMake target baton::cutlass
// A header of the CUTLASS glue without CUTLASS says how to get it, instead of compiling to nothing.
#include "baton/ops/mlp.cuh"
