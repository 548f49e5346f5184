for preset in gpt3 llama; do for g in 1 2 4 auto; do
  mkdir -p /tmp/gs/$preset-g$g
  timeout 120 .device/bin/baton_bench_mlp --preset $preset --m 256,512,1024,2048 --group-m $g --variants cutlass-graph,cutlass-pdl-graph,baton-row,baton-kblock --reps 30 --out-dir /tmp/gs/$preset-g$g > /tmp/gs/$preset-g$g/log 2>&1
  echo "== $preset group $g"; grep -A6 "median us per MLP" /tmp/gs/$preset-g$g/log | tail -5
done; done
