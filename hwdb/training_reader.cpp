// The `training:` block of a scenario: keys match model::TrainingConfig and TrainingLayout.
#include "hwdb/detail/training_reader.hpp"

#include "hwdb/detail/failures_reader.hpp"

#include "model/efficiency.hpp"

namespace gpuplan::hwdb::detail {

namespace {

template <class E, class F>
E read_enum(MapReader& m, const std::string& key, E fallback, F find, const char* accepted) {
    const auto text = m.opt_string(key);
    if (!text) {
        return fallback;
    }
    const auto v = find(*text);
    if (!v) {
        m.fail_at(key, "unknown value '" + *text + "'; use " + accepted);
    }
    return *v;
}

} // namespace

std::optional<model::TrainingConfig> read_training(std::optional<MapReader> m,
                                                   const model::Deployment& hw) {
    if (!m) {
        return std::nullopt;
    }
    model::TrainingConfig c;
    constexpr long long kMaxTokens = 1 << 28;
    c.tokens = m->number("tokens", 1.0, 1e18);
    c.global_batch = m->integer("global_batch", 1, 1 << 26);
    c.seq_len = m->integer("seq_len", 1, kMaxTokens);

    model::TrainingLayout& l = c.layout;
    l.tp = m->opt_integer("tp", 1, 4096).value_or(hw.par.tp);
    l.pp = m->opt_integer("pp", 1, 4096).value_or(hw.par.pp);
    l.cp = m->opt_integer("cp", 1, 4096).value_or(1);
    l.ep = m->opt_integer("ep", 1, 65536).value_or(hw.par.ep);
    const long long split = static_cast<long long>(l.tp) * l.pp * l.cp;
    const int gpus = hw.gpus(); // hardware.count (its dp follows from tp × pp)
    if (gpus % split != 0) {
        m->fail_at(m->has("tp") ? "tp" : "pp", "tp × pp × cp = " + std::to_string(split) +
                                                   " does not divide the " + std::to_string(gpus) +
                                                   " GPUs of hardware.count; change one of them");
    }
    l.dp = static_cast<int>(gpus / split);
    if (const auto dp = m->opt_integer("dp", 1, 1 << 24); dp && *dp != l.dp) {
        m->fail_at("dp", "dp " + std::to_string(*dp) + " is not GPUs / (tp × pp × cp) = " +
                             std::to_string(l.dp) + "; fix hardware.count or leave dp out");
    }
    l.zero = m->opt_integer("zero", 0, 3).value_or(0);
    l.micro_batch = m->opt_integer("micro_batch", 1, 1 << 20).value_or(1);
    l.virtual_stages = m->opt_integer("virtual_stages", 1, 64).value_or(1);
    l.recompute =
        read_enum(*m, "recompute", l.recompute, model::find_recompute, "none, selective or full");
    l.sequence_parallel = m->boolean_or("sequence_parallel", true);

    if (const auto compute = m->opt_string("compute")) {
        // A training step computes in one of the 16-bit formats or FP8 (the compute types the
        // training model has throughput for); spelled as every compute type is.
        const auto type = model::value_of<model::ComputeType>(*compute);
        if (type == model::ComputeType::Bf16 || type == model::ComputeType::Fp16 ||
            type == model::ComputeType::Fp8) {
            c.compute = *type;
        } else {
            m->fail_at("compute",
                       "unknown compute precision '" + *compute + "'; use bf16, fp16 or fp8");
        }
    }
    c.master_weights_fp32 = m->boolean_or("master_weights_fp32", true);
    c.optimizer = read_enum(*m, "optimizer", c.optimizer, model::find_optimizer,
                            "adam, adam-8bit or sgd-momentum");
    c.method =
        read_enum(*m, "method", c.method, model::find_finetune_method, "full, lora or qlora");
    if (auto lora = m->opt_map("lora")) {
        if (c.method == model::FinetuneMethod::Full) {
            m->fail_at("lora", "a lora block needs method: lora or qlora");
        }
        c.lora.rank = lora->opt_integer("rank", 1, 65536).value_or(c.lora.rank);
        if (lora->has("target_modules") && lora->node()["target_modules"].IsScalar()) {
            c.lora.target_modules = {lora->string("target_modules")};
        } else if (lora->has("target_modules")) {
            c.lora.target_modules = lora->string_list("target_modules");
        } else {
            (void)lora->opt_string("target_modules");
        }
        c.lora.qlora_base_bits =
            lora->opt_number("qlora_base_bits", 1.0, 16.0).value_or(c.lora.qlora_base_bits);
        lora->finish();
    }
    c.flash_attention = m->boolean_or("flash_attention", true);
    c.dropout = m->boolean_or("dropout", false);
    c.grad_reduce_overlap = m->opt_number("grad_reduce_overlap", 0.0, 1.0);
    if (const auto b = m->opt_quantity("grad_bucket", model::Dimension::Bytes)) {
        c.grad_bucket = Bytes(*b);
    }
    c.fsdp_prefetch = m->boolean_or("fsdp_prefetch", true);
    c.moe_load_imbalance = m->opt_number("moe_load_imbalance", 1.0, 1e6);
    c.ep_overlap = m->opt_number("ep_overlap", 0.0, 1.0);
    c.data_loader_tokens_per_s = m->opt_number("data_loader_tokens_per_s", 1e-6, 1e15);
    c.fragmentation = m->opt_number("fragmentation", 0.0, 0.9);
    if (const auto b = m->opt_quantity("runtime_overhead", model::Dimension::Bytes, false)) {
        c.runtime_overhead = Bytes(*b);
    }
    if (const auto w = m->opt_quantity("average_gpu_power", model::Dimension::Watts)) {
        c.average_gpu_power = Watts(*w);
    }
    c.failures = read_failures(m->opt_map("failures"));
    m->finish();

    // The layout must run on this hardware (the same check as the search's).
    try {
        const model::TrainingModel tm(hw, c, model::default_profile());
        const model::LayoutIssue issue = tm.evaluate(c.layout).issue;
        if (issue != model::LayoutIssue::None) {
            m->fail_here(std::string("layout tp ") + std::to_string(l.tp) + " × pp " +
                         std::to_string(l.pp) + " × dp " + std::to_string(l.dp) + " × cp " +
                         std::to_string(l.cp) + ": " + model::to_string(issue));
        }
    } catch (const ConfigError&) {
        throw;
    } catch (const InputError& e) {
        m->fail_here(e.what());
    }
    return c;
}

} // namespace gpuplan::hwdb::detail
