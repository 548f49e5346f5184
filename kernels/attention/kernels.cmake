# The kernels of baton::attention_kernels, all in one translation unit (the GEMM's 4 rows and the
# FMHA's 4; cmake/BatonKernelTable.cmake): what baton::ops::Attention can
# plan (baton/ops/attention/attention_kernels.cuh, attention_kernels::Compiled). Each row:
#   name | configuration | stage | grid wait (none, before_loads, before_a)
# Eight kernels: the QKV GEMM plain and posting; the FMHA in the four forms of (input none or
# kblock) x (output none or kblock); the O-proj GEMM PDL-launched (weights first) and waiting. The unit
# takes ~3.5 min and ~5.7 GB of compiler memory on CI's machine (docs/mlp.md, "Build time").
set(BATON_ATTENTION_KERNEL_TABLE
  "qkv                  | GemmConfig | PlainStage        | none"
  "qkv_post             | GemmConfig | QkvStage          | none"
  "attn_after_grid      | FmhaConfig | PlainStage        | before_loads"
  "attn_post_after_grid | FmhaConfig | AttnPostStage     | before_loads"
  "attn_wait            | FmhaConfig | AttnWaitStage     | none"
  "attn_wait_post       | FmhaConfig | AttnWaitPostStage | none"
  "oproj_after_grid     | GemmConfig | PlainStage        | before_a"
  "oproj_wait           | GemmConfig | OprojStage        | none"
)
