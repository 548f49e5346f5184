# The kernels of baton::conv_kernels, all in one translation unit (cmake/BatonKernelTable.cmake):
# what baton::ops::Conv2dChain can plan
# (baton/ops/conv/conv_kernels.cuh, conv_kernels::Compiled) and the bench's serial baselines. Each row:
#   name | configuration | stage | grid wait (none, before_loads, before_a: CMakeLists.txt maps them to
#   sm90::NoGridWait, GridWaitBeforeLoads, GridWaitBeforeA)
# Seven kernels (~2 min and ~4 GB of compiler memory together; CI's budget, docs/conv.md): the first conv
# (bias + ReLU) plain and posting; the second either bias + ReLU (VGG) or bias + residual + ReLU
# (ResNet), each plain, waiting, and PDL-launched behind the first (filters first).
set(BATON_CONV_KERNEL_TABLE
  "relu                 | ReluConfig     | PlainStage    | none"
  "relu_post            | ReluConfig     | ProducerStage | none"
  "relu_wait            | ReluConfig     | ConsumerStage | none"
  "relu_after_grid      | ReluConfig     | PlainStage    | before_a"
  "residual             | ResidualConfig | PlainStage    | none"
  "residual_wait        | ResidualConfig | ConsumerStage | none"
  "residual_after_grid  | ResidualConfig | PlainStage    | before_a"
)
