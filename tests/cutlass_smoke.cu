// Compiles CUTLASS 4.2's sm90 building blocks with baton's flags: proves the dependency resolves.
#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/grid_dependency_control.h>
#include <cutlass/cutlass.h>

#include "baton/baton.cuh"

__global__ void baton_cutlass_smoke_kernel(float* out) {
  using namespace cute;
  auto layout = make_layout(make_shape(Int<4>{}, Int<8>{}));
  out[threadIdx.x] = float(size(layout));
}
