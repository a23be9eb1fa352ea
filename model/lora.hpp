#pragma once
/// Multi-LoRA serving (`engine.lora`): adapter sizes, the GPU memory the engine reserves for
/// its adapter slots, the per-token work of the batched LoRA kernels, adapter popularity and
/// the steady-state hit rate of the GPU and CPU adapter caches (Che's approximation).
/// docs/simulator.md, "Multi-LoRA serving", explains the model and its limits.

#include "model/deployment.hpp"
#include "model/lora_config.hpp"
#include "model/units.hpp"

#include <span>
#include <string_view>
#include <vector>

namespace gpuplan::model {

/// name_of(module): "q_proj", ...
[[nodiscard]] const char* to_string(LoraModule module);
/// name_of(popularity): "uniform", "zipf".
[[nodiscard]] const char* to_string(LoraPopularity popularity);

/// Input and output width of one target module of one layer, whole (not sharded).
struct LoraModuleDims {
    double in = 0;
    double out = 0;
};

/// True for the MLP's gate_proj, up_proj and down_proj; false for the attention projections.
[[nodiscard]] bool lora_module_is_mlp(LoraModule module);

/// The whole module's widths: q_proj h → heads × head_dim, k_proj and v_proj h → kv_heads ×
/// head_dim, o_proj heads × head_dim → h, gate_proj and up_proj h → ffn, down_proj ffn → h.
[[nodiscard]] LoraModuleDims lora_module_dims(const ModelSpec& m, LoraModule module);

/// Decoder layers a target module is in: every layer for attention modules; the dense-MLP
/// layers for gate/up/down (a MoE model's experts are not adapted; a plain MLP has no gate).
[[nodiscard]] int lora_module_layers(const ModelSpec& m, LoraModule module);

/// Bytes of one whole adapter: Σ over target modules and their layers of rank × (in + out) ×
/// bytes per element (its A and B matrices; Hu et al., arXiv:2106.09685). `element_bytes`: the
/// LoRA dtype, vLLM's default the model's activation dtype.
[[nodiscard]] Bytes lora_adapter_bytes(const ModelSpec& m, const LoraServingConfig& c, int rank,
                                       double element_bytes);

/// One module's A input and B output widths on one tensor-parallel rank (A is rank × in, B
/// out × rank there): column-parallel q/k/v/gate/up keep A whole and shard B, row-parallel
/// o/down shard A and keep B whole, as vLLM's LoRA layers do.
[[nodiscard]] LoraModuleDims lora_rank_dims(const Deployment& d, LoraModule module);

/// Bytes of one adapter of `rank` on one GPU of the deployment: tensor parallelism as vLLM's
/// LoRA layers shard it (column-parallel q/k/v/gate/up: A whole, B by tp; row-parallel
/// o/down: A by tp, B whole), the layers of the largest pipeline stage. 0 without engine.lora.
[[nodiscard]] Bytes lora_gpu_bytes(const Deployment& d, int rank);

/// GPU memory the engine reserves for adapters: max_loras slots of max_lora_rank on the
/// target modules (vLLM allocates its stacked LoRA buffers before profiling, so they come out
/// of the KV budget). 0 without engine.lora.
[[nodiscard]] Bytes lora_reserved_bytes(const Deployment& d);

/// The probability of each adapter: uniform 1/N, or Zipf i^-s / H_{N,s} (i = 1..N).
[[nodiscard]] std::vector<double> lora_popularity(const LoraServingConfig& c);

/// Che's approximation of an LRU cache's hit rate under independent requests with
/// probabilities `p` (Che, Tung and Wang, IEEE JSAC 20(7), 2002; Fricker, Robert and Roberts,
/// ITC 2012): the characteristic time T solves Σ_i (1 − e^(−p_i T)) = C and the hit rate is
/// Σ_i p_i (1 − e^(−p_i T)). 1 when the cache holds every item (C >= N); 0 when C <= 0.
[[nodiscard]] double lru_hit_rate(std::span<const double> p, double capacity);

/// Steady-state figures of a LoRA deployment at `requests_per_s` per replica.
struct LoraFigures {
    int adapters = 0;
    int rank = 0;
    int max_loras = 0;
    int max_lora_rank = 0;
    int max_cpu_loras = 0;
    Bytes adapter_bytes;     ///< one whole adapter
    Bytes adapter_gpu_bytes; ///< one adapter on one GPU (what a load copies per GPU)
    Bytes reserved_per_gpu;  ///< the slots' reservation per GPU (out of the KV budget)
    double gpu_hit_rate = 0; ///< requests whose adapter is in a GPU slot (Che, C = max_loras)
    double cpu_hit_rate = 0; ///< requests whose adapter is in host memory (C = max_cpu_loras)
    Seconds load_time;       ///< one host → GPU load: adapter_gpu_bytes ÷ load bandwidth
    Seconds disk_time;       ///< one disk → host read: adapter_bytes ÷ disk bandwidth
    double loads_per_s = 0;  ///< host → GPU loads per second per replica
    double disk_loads_per_s = 0;
    Seconds mean_load_delay; ///< per request: (1 − h_gpu) load_time + (1 − h_cpu) disk_time
    friend bool operator==(const LoraFigures&, const LoraFigures&) = default;
};

/// The figures of engine.lora at `requests_per_s` arrivals per replica; throws InvalidArgument
/// when the deployment has no engine.lora.
[[nodiscard]] LoraFigures lora_figures(const Deployment& d, double requests_per_s);

/// The most sequences one replica runs while their distinct adapters stay within max_loras at
/// `percentile` (vLLM schedules no request whose adapter would make max_loras + 1 distinct
/// adapters in a batch, so the rest wait for a slot). The adapters of R requests drawn by
/// popularity: adapter i is among them with probability q_i = 1 − (1 − p_i)^R; their count has
/// mean Σ q_i and variance Σ q_i (1 − q_i), read as normal. At least max_loras (that many
/// requests never name more adapters), at most `cap`.
[[nodiscard]] int lora_running_limit(const LoraServingConfig& c, double percentile, int cap);

/// The adapter load a request waits for at `percentile`: the disk read and the host → GPU copy
/// when more requests than 1 − percentile miss the host cache, the copy alone when more miss
/// the GPU slots, else nothing.
[[nodiscard]] Seconds lora_load_delay_at(const LoraFigures& f, double percentile);

/// The load bandwidth resolved (the block's, else kDefaultLoraLoadBandwidth).
[[nodiscard]] BytesPerSecond lora_load_bandwidth(const LoraServingConfig& c);
/// The disk bandwidth resolved (the block's, else kDefaultLoraDiskBandwidth).
[[nodiscard]] BytesPerSecond lora_disk_bandwidth(const LoraServingConfig& c);

/// Throws InvalidArgument when the model cannot take the block: MLA attention (its low-rank
/// projections are not Llama-style target modules), or MLP targets on a model without dense
/// MLP layers.
void check_lora_model(const ModelSpec& m, const LoraServingConfig& c);

} // namespace gpuplan::model
