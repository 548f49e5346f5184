# The kernels of baton::mlp_kernels, one per translation unit: the GEMMs baton::ops::Mlp can plan
# (baton/ops/mlp_compiled.cuh, mlp_kernels::Compiled<A>) plus the PDL-waiting GEMM2 of the
# benchmark's kernel-granular baseline. Each row:
#   name | configuration | stage | griddepcontrol.wait before the loads | weights (B) first
# Configurations and stages are the names in baton::ops::mlp_kernels (baton/ops/mlp.cuh). A kernel
# takes ~1 min and ~3 GB of compiler memory to build; CI builds them two at a time (docs/mlp.md).
set(BATON_MLP_KERNEL_TABLE
  # GEMM1, GeLU epilogue: the chain's (plain, posting for kblock / row waits), then the plain widths
  "up_gelu                | UpConfig<activation::gelu>         | PlainStage                | false | false"
  "up_gelu_kblock         | UpConfig<activation::gelu>         | ProducerStage<KBlock>     | false | false"
  "up_gelu_row            | UpConfig<activation::gelu>         | ProducerStage<Row>        | false | false"
  "up_gelu_wide           | WideUpConfig<activation::gelu>     | PlainStage                | false | false"
  "up_gelu_mid            | MidUpConfig<activation::gelu>      | PlainStage                | false | false"
  "up_gelu_narrow         | NarrowUpConfig<activation::gelu>   | PlainStage                | false | false"
  "up_gelu_pair           | PairUpConfig<activation::gelu>     | PlainStage                | false | false"
  "up_gelu_swapped        | SwapGeluConfig                     | PlainStage                | false | false"
  # GEMM1, SwiGLU pairs
  "up_swiglu              | UpConfig<activation::swiglu>       | PlainStage                | false | false"
  "up_swiglu_kblock       | UpConfig<activation::swiglu>       | ProducerStage<KBlock>     | false | false"
  "up_swiglu_row          | UpConfig<activation::swiglu>       | ProducerStage<Row>        | false | false"
  "up_swiglu_wide         | WideUpConfig<activation::swiglu>   | PlainStage                | false | false"
  "up_swiglu_mid          | MidUpConfig<activation::swiglu>    | PlainStage                | false | false"
  "up_swiglu_narrow       | NarrowUpConfig<activation::swiglu> | PlainStage                | false | false"
  "up_swiglu_pair         | PairUpConfig<activation::swiglu>   | PlainStage                | false | false"
  # GEMM2: the chain's (plain, waiting per k-block / per row), PDL-launched forms, the plain widths
  "down                   | DownConfig                         | PlainStage                | false | false"
  "down_kblock            | DownConfig                         | ConsumerStage<KBlock>     | false | false"
  "down_row               | DownConfig                         | ConsumerStage<Row>        | false | false"
  "down_after_grid        | DownConfig                         | PlainStage                | true  | true"
  "down_pdl_wait          | DownConfig                         | PlainStage                | true  | false"
  "down_wide              | WideDownConfig                     | PlainStage                | false | false"
  "down_wide_after_grid   | WideDownConfig                     | PlainStage                | true  | true"
  "down_mid               | MidDownConfig                      | PlainStage                | false | false"
  "down_mid_after_grid    | MidDownConfig                      | PlainStage                | true  | true"
  "down_narrow            | NarrowDownConfig                   | PlainStage                | false | false"
  "down_narrow_after_grid | NarrowDownConfig                   | PlainStage                | true  | true"
  "down_pair              | PairDownConfig                     | PlainStage                | false | false"
  "down_pair_after_grid   | PairDownConfig                     | PlainStage                | true  | true"
  "down_swapped           | SwapDownConfig                     | PlainStage                | false | false"
  "down_swapped_after_grid| SwapDownConfig                     | PlainStage                | true  | false"
)
