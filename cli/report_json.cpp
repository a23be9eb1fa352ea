#include "cli/report_json.hpp"
#include "model/checked_format.hpp"

#include "cli/load_report.hpp"
#include "hwdb/profile_loader.hpp"

#include "model/cost.hpp"

#include <fmt/format.h>

#include <cmath>

namespace gpuplan::cli {

nlohmann::json scenario_json(const model::Scenario& s) {
    const auto& d = s.deployment;
    return {{"name", s.name},
            {"model", d.model.name},
            {"accelerator", d.gpu.name},
            {"gpus", d.gpus()},
            {"tp", d.par.tp},
            {"pp", d.par.pp},
            {"dp", d.par.dp},
            {"ep", d.par.ep},
            {"weights", d.prec.weights.name},
            {"kv_cache", d.prec.kv_cache.name},
            {"input_tokens", s.workload.input_tokens},
            {"output_tokens", s.workload.output_tokens},
            {"concurrency", s.workload.concurrency ? nlohmann::json(*s.workload.concurrency)
                                                   : nlohmann::json(nullptr)}};
}

nlohmann::json memory_json(const model::MemoryEstimate& m) {
    nlohmann::json j = {{"capacity_bytes", m.capacity.si()},
                        {"weights_bytes", m.weights.si()},
                        {"activations_bytes", m.activations.si()},
                        {"non_torch_bytes", m.non_torch.si()},
                        {"cuda_graphs_bytes", m.cuda_graphs.si()},
                        {"cuda_context_bytes", m.cuda_context.si()},
                        {"overhead_bytes", m.overhead.si()},
                        {"kv_bytes_per_token", m.kv_per_token.si()},
                        {"kv_bytes_per_token_model", m.kv_per_token_model.si()},
                        {"kv_budget_bytes", m.kv_budget.si()},
                        {"kv_blocks", m.kv_blocks},
                        {"kv_tokens", m.kv_tokens},
                        {"block_size", m.engine.block_size},
                        {"max_model_len", m.engine.max_model_len},
                        {"max_num_seqs", m.engine.max_num_seqs},
                        {"effective_concurrency", m.effective_concurrency},
                        {"concurrency_limit", model::to_string(m.concurrency_limit)},
                        {"total_used_bytes", m.total_used.si()},
                        {"free_bytes", m.free.si()},
                        {"binding_stage", m.binding_stage},
                        {"reasons", m.reasons}};
    if (m.lora_slots.si() > 0) {
        j["lora_slots_bytes"] =
            m.lora_slots.si(); // engine.lora only, so other outputs read as before
    }
    return j;
}

namespace {

nlohmann::json phase_json(const model::PhaseBottleneck& p) {
    return {{"resource", model::to_string(p.binding)},
            {"time_s", p.time.si()},
            {"compute_s", p.compute.si()},
            {"bandwidth_s", p.bandwidth.si()},
            {"interconnect_s", p.interconnect.si()},
            {"overhead_s", p.overhead.si()},
            {"share", p.share},
            {"detail", p.detail}};
}

nlohmann::json ops_json(const model::StepCost& c) {
    nlohmann::json ops = nlohmann::json::object();
    for (std::size_t i = 0; i < model::kOpCount; ++i) {
        const auto& op = c.ops[i];
        if (op.time.si() <= 0) {
            continue;
        }
        ops[model::to_string(static_cast<model::Op>(i))] = {{"time_s", op.time.si()},
                                                            {"flops", op.flops.si()},
                                                            {"bytes", op.bytes.si()},
                                                            {"bound", model::to_string(op.bound)},
                                                            {"kernels", op.kernels}};
    }
    return ops;
}

} // namespace

nlohmann::json estimate_json(const model::Scenario& s, const model::ServingEstimate& e,
                             const model::BottleneckReport& b,
                             const std::vector<model::WhatIf>& whatifs) {
    nlohmann::json j = scenario_json(s);
    j["operating_point"] = operating_point_json(e.operating_point);
    j["fits"] = e.memory.fits;
    j["memory"] = memory_json(e.memory);
    j["max_concurrency"] = e.memory.max_concurrency;
    j["ttft_s"] = e.ttft.si();
    j["ttft_loaded_s"] = e.ttft_loaded.si();
    j["tpot_s"] = e.tpot.si();
    j["running_per_replica"] = e.running;
    j["throughput_tok_s"] = e.throughput;
    j["peak_throughput_tok_s"] = e.peak_throughput;
    j["peak_concurrency"] = e.peak_concurrency;
    j["single_stream_bound_tok_s"] = e.single_stream_bound;
    j["mfu"] = {{"prefill", e.prefill.mfu}, {"decode", e.decode.mfu}};
    j["mbu"] = {{"prefill", e.prefill.mbu}, {"decode", e.decode.mbu}};
    j["bottleneck"] = {{"prefill", model::to_string(b.prefill.binding)},
                       {"decode", model::to_string(b.decode.binding)},
                       {"capacity_binds", b.capacity_binds},
                       {"capacity_detail", b.capacity_detail},
                       {"prefill_detail", phase_json(b.prefill)},
                       {"decode_detail", phase_json(b.decode)}};
    if (e.speculative) {
        const model::SpeculativeFigures& f = *e.speculative;
        j["speculative"] = {{"method", model::to_string(f.method)},
                            {"num_speculative_tokens", f.k},
                            {"acceptance", f.acceptance},
                            {"tokens_per_step", f.tokens_per_step},
                            {"verify_time_s", f.verify_time.si()},
                            {"draft_time_s", f.draft_time.si()},
                            {"tpot_without_s", f.tpot_off.si()},
                            {"speedup", f.speedup},
                            {"draft_weights_bytes", f.draft_weights.si()},
                            {"draft_kv_bytes_per_token", f.draft_kv_per_token.si()}};
    }
    if (e.kv_offload) {
        const model::KvOffloadFigures& f = *e.kv_offload;
        j["kv_offload"] = {{"host_bytes", f.tiers.host.capacity.si()},
                           {"nvme_bytes", f.tiers.nvme.capacity.si()},
                           {"host_bandwidth", f.tiers.host.bandwidth.si()},
                           {"nvme_bandwidth", f.tiers.nvme.bandwidth.si()},
                           {"working_set_tokens", f.working_set},
                           {"gpu_cache_tokens", f.gpu_cache_tokens},
                           {"host_tokens", f.host_tokens},
                           {"nvme_tokens", f.nvme_tokens},
                           {"shared_tokens", f.shared_tokens},
                           {"split",
                            {{"gpu", f.split.gpu},
                             {"host", f.split.host},
                             {"nvme", f.split.nvme},
                             {"miss", f.split.miss}}},
                           {"hit_rate", f.hit_rate},
                           {"hit_rate_without", f.hit_rate_without},
                           {"load_time_s", f.load_time.si()},
                           {"load_bytes_per_request", f.bytes_per_request.si()},
                           {"ttft_without_s", f.ttft_without.si()},
                           {"throughput_without_tok_s", f.throughput_without}};
    }
    if (e.lora) {
        const model::LoraFigures& f = *e.lora;
        j["lora"] = {{"adapters", f.adapters},
                     {"rank", f.rank},
                     {"max_loras", f.max_loras},
                     {"max_lora_rank", f.max_lora_rank},
                     {"max_cpu_loras", f.max_cpu_loras},
                     {"adapter_bytes", f.adapter_bytes.si()},
                     {"adapter_gpu_bytes", f.adapter_gpu_bytes.si()},
                     {"reserved_bytes_per_gpu", f.reserved_per_gpu.si()},
                     {"gpu_hit_rate", f.gpu_hit_rate},
                     {"cpu_hit_rate", f.cpu_hit_rate},
                     {"load_time_s", f.load_time.si()},
                     {"disk_time_s", f.disk_time.si()},
                     {"loads_per_s", f.loads_per_s},
                     {"disk_loads_per_s", f.disk_loads_per_s},
                     {"mean_load_delay_s", f.mean_load_delay.si()}};
    }
    j["decode_step_ops"] = ops_json(e.decode_step);
    j["prefill_step_ops"] = ops_json(e.prefill_step);
    j["provenance"] = {{"kind", model::to_string(e.provenance.kind)},
                       {"file", hwdb::shown_path(e.provenance.file)},
                       {"description", e.provenance.description}};
    j["error_band"] = {{"mape", e.error_band.mape},
                       {"p90", e.error_band.p90},
                       {"points", e.error_band.points},
                       {"validated_on", e.error_band.validated_on}};
    nlohmann::json w = nlohmann::json::array();
    for (const auto& x : whatifs) {
        w.push_back({{"name", x.name},
                     {"change", x.change},
                     {"applicable", x.applicable},
                     {"note", x.note},
                     {"fits", x.fits},
                     {"gpus", x.gpus},
                     {"max_concurrency", x.max_concurrency},
                     {"ttft_s", x.ttft.si()},
                     {"tpot_s", x.tpot.si()},
                     {"throughput_tok_s", x.throughput},
                     {"throughput_gain", x.throughput_gain}});
    }
    j["what_ifs"] = w;
    return j;
}

nlohmann::json slo_capacity_json(const model::SloCapacity& c) {
    const model::SloFigures& a = c.at;
    // Without targets the rate runs up to utilisation 1, where a queue's wait is unbounded: null.
    const auto s = [](Seconds t) {
        return std::isfinite(t.si()) ? nlohmann::json(t.si()) : nlohmann::json(nullptr);
    };
    return {{"requests_per_s", c.rate},
            {"output_tok_s", c.output_tok_s},
            {"throughput_capacity_requests_per_s", c.throughput_rate},
            {"ratio", c.ratio},
            {"percentile", c.percentile},
            {"has_targets", c.has_targets},
            {"bound", model::to_string(c.bound)},
            {"tpot_batch_per_replica", c.tpot_batch > 0 ? nlohmann::json(c.tpot_batch) : nullptr},
            {"at",
             {{"running_per_replica", a.running},
              {"utilisation", a.utilisation ? nlohmann::json(*a.utilisation) : nullptr},
              {"prefill_s", s(a.prefill)},
              {"queue_wait_s", s(a.queue_wait)},
              {"ttft_at_slo_s", s(a.ttft)},
              {"decode_step_s", s(a.chunks.decode_step)},
              {"chunk_extra_s", s(a.chunks.extra)},
              {"chunk_share", a.chunks.share},
              {"tpot_at_slo_s", s(a.tpot)},
              {"e2e_at_slo_s", s(a.e2e)}}}};
}

std::string slo_capacity_text(const model::SloCapacity& c) {
    if (!(c.throughput_rate > 0)) {
        return "none: the deployment does not fit";
    }
    if (!c.has_targets) {
        return gpuplan::checked_format("{:.2f} req/s: no slo targets, the throughput capacity",
                                       c.rate);
    }
    if (!(c.rate > 0)) {
        return gpuplan::checked_format(
            "none: a lone request misses the slo (bound: {}); throughput "
            "capacity {:.2f} req/s",
            model::to_string(c.bound), c.throughput_rate);
    }
    return gpuplan::checked_format(
        "{:.2f} req/s = {:.0f} % of the throughput capacity {:.2f} req/s "
        "(bound: {})",
        c.rate, c.ratio * 100, c.throughput_rate, model::to_string(c.bound));
}

} // namespace gpuplan::cli
