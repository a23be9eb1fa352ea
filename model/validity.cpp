#include "model/validity.hpp"
#include "model/checked_format.hpp"

#include "model/autoscaler.hpp"
#include "model/error.hpp"
#include "model/replica_failures.hpp"
#include "model/scenario.hpp"

#include <cmath>
#include <cstdio>

namespace gpuplan::model {
namespace {

std::string watts_text(Watts w) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f W", w.si());
    return mark_non_finite(w.si(), buf);
}

// The GPU's own peak for a path (PeakCompute::for_type lets bf16 and fp16 stand in for each
// other when only one is listed; a validity rule must not).
bool has_peak(const AcceleratorSpec& gpu, ComputeType t) {
    const std::optional<FlopsPerSecond> p = t == ComputeType::Bf16   ? gpu.dense.bf16
                                            : t == ComputeType::Fp16 ? gpu.dense.fp16
                                                                     : gpu.dense.for_type(t);
    return p && p->si() > 0;
}

// The 16-bit tensor-core paths whose absence is an error (fp32 runs on the CUDA cores of any
// GPU, so it is not checked here).
bool is_16_bit_path(ComputeType t) {
    return t == ComputeType::Bf16 || t == ComputeType::Fp16;
}

// The other 16-bit path, when the GPU has it: the alternative a message offers.
std::string alternative_16_bit(const AcceleratorSpec& gpu, ComputeType t) {
    if (t == ComputeType::Bf16 && has_peak(gpu, ComputeType::Fp16)) {
        return "; use fp16 (the GPU has fp16 peaks)";
    }
    if (t == ComputeType::Fp16 && has_peak(gpu, ComputeType::Bf16)) {
        return "; use bf16 (the GPU has bf16 peaks)";
    }
    return "; choose a format the GPU's hwdb entry lists under dense";
}

} // namespace

bool is_gguf(const Precision& p) {
    const std::string& n = p.name;
    return n == "q8_0" || n == "q6_k" || n == "q5_k_m" || n == "q4_k_m" || n == "q4_0";
}

FormatSupport format_support(EngineKind engine, const Precisions& prec,
                             const AcceleratorSpec& gpu) {
    FormatSupport r;
    const Precision& w = prec.weights;
    const std::string on = " on " + gpu.name;
    const auto refuse = [&r](std::string why) {
        r.runs = false;
        r.problem = std::move(why);
        return r;
    };
    // The 16-bit (or wider) paths must exist on the GPU: activations always, and weights that
    // are not narrow (narrow ones without their own tensor cores run weight-only).
    if (is_16_bit_path(prec.activations.compute) && !has_peak(gpu, prec.activations.compute)) {
        return refuse("activations in " + prec.activations.name + on + ": the GPU has no " +
                      std::string(to_string(prec.activations.compute)) + " peak" +
                      alternative_16_bit(gpu, prec.activations.compute));
    }
    if (!w.weight_only && is_16_bit_path(w.compute) && !has_peak(gpu, w.compute)) {
        return refuse("weights in " + w.name + on + ": the GPU has no " +
                      std::string(to_string(w.compute)) + " peak" +
                      alternative_16_bit(gpu, w.compute));
    }
    const bool narrow_native =
        w.weight_only || w.bits_per_element >= 16.0 || has_peak(gpu, w.compute);
    switch (engine) {
    case EngineKind::LlamaCpp:
        if (!(is_gguf(w) || w.name == "mxfp4" || w.name == "bf16" || w.name == "fp16" ||
              w.name == "fp32")) {
            return refuse("llama.cpp loads GGUF files only and has no " + w.name +
                          " weights; use a GGUF quantization (q8_0, q6_k, q5_k_m, q4_k_m, q4_0) "
                          "or f16/bf16, or serve this checkpoint with vllm");
        }
        break;
    case EngineKind::TensorRtLlm:
        if (is_gguf(w)) {
            return refuse("tensorrt-llm has no GGUF loader, so it cannot run " + w.name +
                          " weights; use vllm or llama.cpp, or a tensorrt-llm format (fp8, "
                          "int8, awq-int4, gptq-int4)");
        }
        if (!narrow_native) {
            return refuse("tensorrt-llm's " + w.name + " kernels need the GPU's own " +
                          std::string(to_string(w.compute)) + " tensor cores, which " + gpu.name +
                          " lacks; use int8-weight-only or awq-int4 weights, or vllm "
                          "(it runs " +
                          w.name + " weight-only there)");
        }
        break;
    case EngineKind::Vllm:
        if (is_gguf(w)) {
            r.note = "vLLM's GGUF support is experimental and under-optimized (vLLM docs, "
                     "Quantization: GGUF); llama.cpp is the reference engine for " +
                     w.name;
        }
        [[fallthrough]];
    case EngineKind::Sglang:
        if (!narrow_native) {
            const std::string n = w.name + " weights" + on +
                                  " run weight-only (dequantized to 16 bit in the kernel): "
                                  "the GPU has no " +
                                  std::string(to_string(w.compute)) + " tensor cores";
            r.note = r.note.empty() ? n : r.note + "; " + n;
        }
        break;
    }
    return r;
}

void check_format_support(const Deployment& d) {
    const FormatSupport s = format_support(d.engine.kind, d.prec, d.gpu);
    if (!s.runs) {
        throw InvalidArgument("deployment of '" + d.model.name + "' with " +
                              to_string(d.engine.kind) + ": " + s.problem);
    }
}

void check_context_length(const Deployment& d) {
    // llama.cpp runs past the trained context with a warning ("n_ctx_train < n_ctx: possible
    // training context overflow"), so only the engines that refuse to start are checked.
    if (d.engine.allow_long_context || d.model.max_context < 1 ||
        d.engine.kind == EngineKind::LlamaCpp) {
        return;
    }
    const int len = resolve_engine(d).max_model_len;
    if (len > d.model.max_context) {
        throw InvalidArgument(
            "deployment of '" + d.model.name + "': max_model_len " + std::to_string(len) +
            " exceeds the model's maximum context of " + std::to_string(d.model.max_context) +
            " tokens, so " + to_string(d.engine.kind) +
            " refuses to start; lower max_model_len to at most " +
            std::to_string(d.model.max_context) +
            ", or set engine.allow_long_context: true if the model runs with rope scaling "
            "beyond it");
    }
}

void check_request_length(long long input, long long output, int max_model_len,
                          const std::string& where) {
    const long long total = input + output; // 64 bits: two int counts may pass INT_MAX
    if (total > max_model_len) {
        throw InvalidArgument(where + "input_tokens + output_tokens = " + std::to_string(total) +
                              " exceeds max_model_len " + std::to_string(max_model_len) +
                              "; raise max_model_len or shorten the requests");
    }
}

void check_gpu_cap(const AcceleratorSpec& gpu, Watts cap, const std::string& what) {
    const std::string found = what + " " + watts_text(cap) + " on " + gpu.name;
    if (!(cap.si() > 0) || !std::isfinite(cap.si())) {
        throw InvalidArgument(found + " is not a power; give a positive figure such as '350 W'");
    }
    if (gpu.power_limit_min && cap < *gpu.power_limit_min) {
        throw InvalidArgument(found + " is below the lowest power limit the driver accepts (" +
                              watts_text(*gpu.power_limit_min) +
                              ", nvidia-smi -q \"Min Power "
                              "Limit\"); set at least " +
                              watts_text(*gpu.power_limit_min));
    }
    const std::optional<Watts> max = gpu.power_limit_max ? gpu.power_limit_max : gpu.board_power;
    if (max && cap > *max) {
        throw InvalidArgument(
            found + " is above the highest power limit the driver accepts (" + watts_text(*max) +
            (gpu.power_limit_max ? ", nvidia-smi -q \"Max Power Limit\"" : ", the board power") +
            "); set at most " + watts_text(*max) + " or leave the cap out");
    }
}

void check_compute_path(const AcceleratorSpec& gpu, ComputeType type, const std::string& what) {
    if (is_16_bit_path(type) && !has_peak(gpu, type)) {
        throw InvalidArgument(what + " " + std::string(to_string(type)) + " on " + gpu.name +
                              ": the GPU has no " + std::string(to_string(type)) + " peak" +
                              alternative_16_bit(gpu, type));
    }
}

void validate_scenario(const Scenario& s) {
    validate(s.deployment);
    if (s.power.gpu_cap) {
        check_gpu_cap(s.deployment.gpu, *s.power.gpu_cap, "power.gpu_cap");
    }
    if (s.cluster.failures) {
        check_replica_failures(*s.cluster.failures);
    }
    if (s.cluster.autoscaler && s.cluster.pools.empty()) {
        check_autoscaler(*s.cluster.autoscaler, s.cluster.replicas.value_or(s.deployment.par.dp));
    }
}

void check_autoscaler(const Autoscaler& a, int initial) {
    const std::string where = "cluster.autoscaler: ";
    const bool fraction = a.metric != ScaleMetric::QueueLength;
    if (!(a.target > 0) || !std::isfinite(a.target) || (fraction && a.target > 1)) {
        throw InvalidArgument(
            where + "target " + std::to_string(a.target) + " is out of range; " +
            (fraction ? "give a fraction in (0, 1] for " + std::string(to_string(a.metric))
                      : std::string("give a queue length > 0 per replica")));
    }
    if (!(a.interval.si() > 0)) {
        throw InvalidArgument(where + "interval must be > 0; give the scrape interval (e.g. 15 s)");
    }
    if (!(a.provisioning.si() >= 0) || !(a.cooldown.si() >= 0) || !(a.tolerance >= 0)) {
        throw InvalidArgument(where + "provisioning, cooldown and tolerance must be >= 0");
    }
    if (a.min_replicas < 1 || a.max_replicas < a.min_replicas) {
        throw InvalidArgument(where + "min_replicas " + std::to_string(a.min_replicas) +
                              " and max_replicas " + std::to_string(a.max_replicas) +
                              " are not a range; give 1 <= min_replicas <= max_replicas");
    }
    if (initial < a.min_replicas || initial > a.max_replicas) {
        throw InvalidArgument(
            where + "the cluster starts with " + std::to_string(initial) +
            " replicas, outside [min_replicas, max_replicas] = [" + std::to_string(a.min_replicas) +
            ", " + std::to_string(a.max_replicas) + "]; set cluster.replicas within the range");
    }
}

void check_replica_failures(const ReplicaFailures& f) {
    const std::string where = "cluster.failures: ";
    if (f.mtbf && !(f.mtbf->si() > 0 && std::isfinite(f.mtbf->si()))) {
        throw InvalidArgument(where + "mtbf must be > 0; give the mean time between failures of "
                                      "one replica (e.g. 2000 h)");
    }
    if (f.mttr && !(f.mttr->si() >= 0 && std::isfinite(f.mttr->si()))) {
        throw InvalidArgument(where + "mttr must be >= 0; give the mean repair time (e.g. 4 h)");
    }
    if (f.spares < 0) {
        throw InvalidArgument(where + "spares must be >= 0");
    }
    if (const auto& l = f.degraded_link) {
        if (!(l->mtbf.si() > 0 && std::isfinite(l->mtbf.si()))) {
            throw InvalidArgument(where + "degraded_link.mtbf must be > 0; give the mean time "
                                          "between link failures of one replica (e.g. 500 h)");
        }
        if (l->mttr && !(l->mttr->si() >= 0 && std::isfinite(l->mttr->si()))) {
            throw InvalidArgument(where + "degraded_link.mttr must be >= 0; give the mean repair "
                                          "time (e.g. 4 h)");
        }
        if (!(l->bandwidth_factor > 0 && l->bandwidth_factor <= 1)) {
            throw InvalidArgument(where + "degraded_link.bandwidth_factor must be in (0, 1]; give "
                                          "the share of the link's bandwidth left (e.g. 17/18 = "
                                          "0.944 for one NVLink lane of 18 down)");
        }
    }
}

} // namespace gpuplan::model
