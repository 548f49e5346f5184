# The kernels of baton::mlp_kernels, in two translation units (cmake/BatonKernelTable.cmake):
# the GEMMs baton::ops::Mlp can plan
# (baton/ops/mlp_compiled.cuh, mlp_kernels::Compiled<A>) plus the PDL-waiting GEMM2 of the
# benchmark's kernel-granular baseline: BATON_MLP_KERNEL_TABLE always, BATON_MLP_EXTRA_KERNEL_TABLE
# (the forms plan_mlp never picks itself) with -DBATON_MLP_EXTRA_KERNELS=ON. Each row:
#   name | configuration | stage | grid wait (none, before_loads, before_a: CMakeLists.txt maps them to
#   sm90::NoGridWait, GridWaitBeforeLoads, GridWaitBeforeA)
# Configurations and stages are the names in baton::ops::mlp_kernels (baton/ops/mlp.cuh). The rows
# compile in two translation units, the standard GMMA widths and the extended ones
# (cmake/BatonKernelTable.cmake; times and memory in docs/mlp.md, "Build time").
set(BATON_MLP_KERNEL_TABLE
  # GEMM1, GeLU epilogue: the chain's (plain, posting for kblock / row waits), then the plain widths
  "up_gelu                | UpConfig<Activation::gelu>         | PlainStage                | none"
  "up_gelu_kblock         | UpConfig<Activation::gelu>         | ProducerStage<KBlock>     | none"
  "up_gelu_row            | UpConfig<Activation::gelu>         | ProducerStage<Row>        | none"
  "up_gelu_wide           | WideUpConfig<Activation::gelu>     | PlainStage                | none"
  "up_gelu_mid            | MidUpConfig<Activation::gelu>      | PlainStage                | none"
  "up_gelu_narrow         | NarrowUpConfig<Activation::gelu>   | PlainStage                | none"
  "up_gelu_swapped144     | SwapUpConfigT<Activation::gelu, 144>   | PlainStage            | none"
  "up_gelu_swapped160     | SwapUpConfigT<Activation::gelu, 160>   | PlainStage            | none"
  "up_gelu_swapped192     | SwapUpConfigT<Activation::gelu, 192>   | PlainStage            | none"
  "up_gelu_swapped224     | SwapUpConfigT<Activation::gelu, 224>   | PlainStage            | none"
  "up_gelu_swapped176     | SwapUpConfigT<Activation::gelu, 176>   | PlainStage            | none"
  "up_gelu_swapped208     | SwapUpConfigT<Activation::gelu, 208>   | PlainStage            | none"
  "up_gelu_band           | BandUpConfig<Activation::gelu>     | PlainStage                | none"
  "up_gelu_160            | PlainUpConfigT<Activation::gelu, 160>  | PlainStage            | none"
  "up_gelu_224            | PlainUpConfigT<Activation::gelu, 224>  | PlainStage            | none"
  # (the _band rows: 128x192 band pairs, 2x1 clusters multicasting the weights; tuning's candidates)
  # GEMM1, SwiGLU pairs (the swapped ones: wide token tiles only)
  "up_swiglu              | UpConfig<Activation::swiglu>       | PlainStage                | none"
  "up_swiglu_kblock       | UpConfig<Activation::swiglu>       | ProducerStage<KBlock>     | none"
  "up_swiglu_row          | UpConfig<Activation::swiglu>       | ProducerStage<Row>        | none"
  "up_swiglu_wide         | WideUpConfig<Activation::swiglu>   | PlainStage                | none"
  "up_swiglu_mid          | MidUpConfig<Activation::swiglu>    | PlainStage                | none"
  "up_swiglu_narrow       | NarrowUpConfig<Activation::swiglu> | PlainStage                | none"
  "up_swiglu_swapped144   | SwapUpConfigT<Activation::swiglu, 144> | PlainStage            | none"
  "up_swiglu_swapped160   | SwapUpConfigT<Activation::swiglu, 160> | PlainStage            | none"
  "up_swiglu_swapped192   | SwapUpConfigT<Activation::swiglu, 192> | PlainStage            | none"
  "up_swiglu_swapped224   | SwapUpConfigT<Activation::swiglu, 224> | PlainStage            | none"
  "up_swiglu_swapped176   | SwapUpConfigT<Activation::swiglu, 176> | PlainStage            | none"
  "up_swiglu_swapped208   | SwapUpConfigT<Activation::swiglu, 208> | PlainStage            | none"
  "up_swiglu_band         | BandUpConfig<Activation::swiglu>   | PlainStage                | none"
  "up_swiglu_160          | PlainUpConfigT<Activation::swiglu, 160> | PlainStage           | none"
  "up_swiglu_224          | PlainUpConfigT<Activation::swiglu, 224> | PlainStage           | none"
  # GEMM2: the chain's (plain, waiting per k-block / per row), PDL-launched forms, the plain widths
  "down                   | DownConfig                         | PlainStage                | none"
  "down_kblock            | DownConfig                         | ConsumerStage<KBlock>     | none"
  "down_row               | DownConfig                         | ConsumerStage<Row>        | none"
  "down_after_grid        | DownConfig                         | PlainStage                | before_a"
  "down_pdl_wait          | DownConfig                         | PlainStage                | before_loads"
  "down_wide              | WideDownConfig                     | PlainStage                | none"
  "down_wide_after_grid   | WideDownConfig                     | PlainStage                | before_a"
  "down_mid               | MidDownConfig                      | PlainStage                | none"
  "down_mid_after_grid    | MidDownConfig                      | PlainStage                | before_a"
  "down_band              | BandDownConfig                     | PlainStage                | none"
  "down_band_after_grid   | BandDownConfig                     | PlainStage                | before_a"
  "down_narrow            | NarrowDownConfig                   | PlainStage                | none"
  "down_narrow_after_grid | NarrowDownConfig                   | PlainStage                | before_a"
  "down_swapped144        | SwapDownConfigT<144>               | PlainStage                | none"
  "down_swapped144_after_grid | SwapDownConfigT<144>           | PlainStage                | before_loads"
  "down_swapped160        | SwapDownConfigT<160>               | PlainStage                | none"
  "down_swapped160_after_grid | SwapDownConfigT<160>           | PlainStage                | before_loads"
  "down_swapped192        | SwapDownConfigT<192>               | PlainStage                | none"
  "down_swapped192_after_grid | SwapDownConfigT<192>           | PlainStage                | before_loads"
  "down_swapped224        | SwapDownConfigT<224>               | PlainStage                | none"
  "down_swapped224_after_grid | SwapDownConfigT<224>           | PlainStage                | before_loads"
  "down_swapped176        | SwapDownConfigT<176>               | PlainStage                | none"
  "down_swapped176_after_grid | SwapDownConfigT<176>           | PlainStage                | before_loads"
  "down_swapped208        | SwapDownConfigT<208>               | PlainStage                | none"
  "down_swapped208_after_grid | SwapDownConfigT<208>           | PlainStage                | before_loads"
  # GEMM2 in the plain extended widths (kMlpExtendedTileWidths), plain and PDL-launched
  "down_160               | PlainDownConfigT<160>              | PlainStage                | none"
  "down_160_after_grid    | PlainDownConfigT<160>              | PlainStage                | before_a"
  "down_224               | PlainDownConfigT<224>              | PlainStage                | none"
  "down_224_after_grid    | PlainDownConfigT<224>              | PlainStage                | before_a"
)
# The optional forms (MlpKernelForms in baton/ops/mlp.hpp), 7 kernels: plan_mlp never picks them on
# its own, only a request (GemmFormRequest::cta_pairs; GemmOperands::swapped at m <= 32) or tuning
# (MlpRunOptions::tune_cta_pairs; the 32-token swapped candidates at m <= 32) does, and they measured
# no faster than the kernels above (docs/mlp.md). Left out by default to keep CI's build within its
# time; with the option ON the library has them and carries BATON_MLP_EXTRA_KERNELS=1 to its users
# (kernels/mlp/CMakeLists.txt), so Compiled<A> links them; without it the op refuses them by name.
set(BATON_MLP_EXTRA_KERNEL_TABLE
  # GEMM1 and GEMM2 as 128x96 CTA pairs (1x2 clusters multicasting A; GEMM2 also PDL-launched)
  "up_gelu_pair           | PairUpConfig<Activation::gelu>     | PlainStage                | none"
  "up_swiglu_pair         | PairUpConfig<Activation::swiglu>   | PlainStage                | none"
  "down_pair              | PairDownConfig                     | PlainStage                | none"
  "down_pair_after_grid   | PairDownConfig                     | PlainStage                | before_a"
  # the 32-token swapped GEMMs (decode): GeLU GEMM1, GEMM2 plain and PDL-waiting
  "up_gelu_swapped        | SwapGeluConfig                     | PlainStage                | none"
  "down_swapped           | SwapDownConfig                     | PlainStage                | none"
  "down_swapped_after_grid| SwapDownConfig                     | PlainStage                | before_loads"
)
if(BATON_MLP_EXTRA_KERNELS)
  list(APPEND BATON_MLP_KERNEL_TABLE ${BATON_MLP_EXTRA_KERNEL_TABLE})
endif()
# The rows whose tile width is not one of CuTe's standard GMMA widths (the swapped tiles of 144-224 tokens, the
# plain 160- and 224-wide tiles):
# their translation units define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED, every other one compiles
# without it (~30 s less each; baton/cutlass/sm90_gemm.cuh). A row missing here that needs it fails
# GemmConfig's static_assert, naming the macro.
set(BATON_MLP_EXTENDED_MMA_ROWS up_gelu_swapped160 up_swiglu_swapped160 down_swapped160 down_swapped160_after_grid
    up_gelu_swapped224 up_swiglu_swapped224 down_swapped224 down_swapped224_after_grid
    up_gelu_swapped144 up_swiglu_swapped144 down_swapped144 down_swapped144_after_grid
    up_gelu_swapped176 up_swiglu_swapped176 down_swapped176 down_swapped176_after_grid
    up_gelu_swapped208 up_swiglu_swapped208 down_swapped208 down_swapped208_after_grid
    up_gelu_160 up_swiglu_160 down_160 down_160_after_grid up_gelu_224 up_swiglu_224 down_224 down_224_after_grid)
