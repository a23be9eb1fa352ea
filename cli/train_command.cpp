// `gpuplan train`: memory per GPU, step time, MFU, time and cost to train, and the layout search
// (model/training.hpp). A scenario file with a `training:` block and/or flags.
#include "cli/band_notes.hpp"
#include "cli/cli_context.hpp"
#include "cli/command_reports.hpp"
#include "cli/interrupt.hpp"
#include "cli/json_out.hpp"
#include "cli/options.hpp"
#include "cli/power_report.hpp"
#include "cli/report_json.hpp"
#include "cli/scenario_options.hpp"
#include "cli/table.hpp"
#include "hwdb/model_resolver.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/checked_format.hpp"
#include "model/power.hpp"
#include "model/price_list.hpp"
#include "model/training.hpp"
#include "model/unit_parser.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <ostream>

namespace gpuplan::cli {

model::TrainingCostInputs training_cost_inputs(CliContext& ctx, const model::Scenario& s) {
    model::TrainingCostInputs p;
    if (const auto rent = model::gpu_hour_price(s)) {
        p.gpu_hour = rent->price;
    }
    p.electricity = s.prices.electricity;
    p.pue = s.power.pue;
    p.power_model = s.power_model;
    // A power cap (or a node/rack budget) becomes a per-GPU limit, as for serving.
    if (has_power_limit(s) && (s.deployment.gpu.board_power || s.power_model.board_power)) {
        const model::GpuPowerLevels levels = model::power_levels(s.deployment.gpu, s.power_model);
        p.gpu_power_limit = model::gpu_power_limit(s.power, levels, scenario_node(ctx, s, nullptr),
                                                   s.power_model, s.rack.nodes_per_rack)
                                .per_gpu;
    }
    return p;
}

namespace {

using model::format_gib;

struct TrainFlags {
    std::string file, model, gpu, node, profile, recompute, method, optimizer, compute, rank_by;
    std::optional<int> gpus, global_batch, seq_len, tp, pp, dp, cp, ep, zero, micro_batch,
        virtual_stages, lora_rank, top;
    std::optional<double> tokens, loader;
    std::vector<std::string> sets;
    bool search = false;
    bool json = false;
};

std::string pct(double f) {
    return fixed(f * 100, 1) + " %";
}

std::string secs(Seconds s) {
    const double v = s.si();
    if (v >= 2 * 86400)
        return fixed(v / 86400, 1) + " days";
    if (v >= 2 * 3600)
        return fixed(v / 3600, 1) + " h";
    if (v >= 120)
        return fixed(v / 60, 1) + " min";
    if (v >= 1)
        return fixed(v, 2) + " s";
    return fixed(v * 1e3, 1) + " ms";
}

std::string sci(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return mark_non_finite(v, buf);
}

std::string layout_text(const model::TrainingLayout& l) {
    std::string s = "tp " + std::to_string(l.tp) + " x pp " + std::to_string(l.pp) + " x dp " +
                    std::to_string(l.dp);
    if (l.cp > 1)
        s += " x cp " + std::to_string(l.cp);
    if (l.ep > 1)
        s += " (ep " + std::to_string(l.ep) + ")";
    return s;
}

model::Scenario build(CliContext& ctx, const TrainFlags& f) {
    for (const auto& [v, name] : {std::pair{f.gpus, "gpus"},
                                  {f.global_batch, "global-batch"},
                                  {f.seq_len, "seq-len"},
                                  {f.tp, "tp"},
                                  {f.pp, "pp"},
                                  {f.dp, "dp"},
                                  {f.cp, "cp"},
                                  {f.ep, "ep"},
                                  {f.micro_batch, "micro-batch"},
                                  {f.virtual_stages, "virtual-stages"},
                                  {f.lora_rank, "lora-rank"},
                                  {f.top, "top"}}) {
        if (v && *v <= 0) {
            throw UsageError(std::string("--") + name + " must be a positive whole number, got " +
                             std::to_string(*v));
        }
    }
    if (f.zero && (*f.zero < 0 || *f.zero > 3)) {
        throw UsageError("--zero takes a ZeRO stage 0, 1, 2 or 3, got " + std::to_string(*f.zero));
    }
    const auto& db = ctx.db();
    model::Scenario s;
    if (!f.file.empty()) {
        s = hwdb::load_scenario(f.file, db, parse_set_flags(f.sets));
    } else if (!f.sets.empty()) {
        (void)parse_set_flags(f.sets);
        throw UsageError("--set changes a key of a scenario FILE; give the file, or use the "
                         "matching flag (--tp, --global-batch, ...)");
    } else if (f.model.empty() || f.gpu.empty()) {
        throw UsageError("give a scenario FILE with a training: block, or at least --model, --gpu, "
                         "--tokens, --global-batch and --seq-len (e.g. --model llama-3.1-8b --gpu "
                         "h100-sxm --gpus 8 --tokens 1e9 --global-batch 64 --seq-len 4096)");
    }
    auto& d = s.deployment;
    if (!f.model.empty()) {
        const hwdb::ResolvedModel resolved = hwdb::resolve_model(db, f.model);
        if (!resolved.note.empty()) {
            *ctx.err << "note: " << resolved.note << '\n';
        }
        d.model = resolved.spec;
        s.model_ref = f.model;
    }
    if (!f.gpu.empty() || !f.node.empty()) {
        hwdb::set_hardware(s, db, f.gpu.empty() ? d.gpu.name : f.gpu, f.node);
    }
    // The training layout lives in TrainingConfig; the deployment carries only the GPU count, as
    // dp with tp = pp = ep = 1, so d.gpus() is that count.
    d.par = model::Parallelism{1, 1, f.gpus ? *f.gpus : d.gpus(), 1};
    if (!d.inter_node_link && d.gpus() > d.gpus_per_node) {
        // Every layout would have a group spanning nodes with no network: say which flag helps.
        std::string nodes;
        int matching = 0;
        for (const auto& n : db.servers()) {
            if (n.accelerator == d.gpu.name) {
                nodes += (nodes.empty() ? "" : ", ") + n.name;
                ++matching;
            }
        }
        if (matching == 1 && f.node.empty()) {
            // The hwdb's only node for this accelerator: use it, and say so.
            *ctx.err << "note: " << d.gpus() << " GPUs span several nodes and no --node was given; "
                     << "using " << nodes << ", the hwdb's only node for " << d.gpu.name
                     << " (its GPUs per node and network)\n";
            hwdb::set_hardware(s, db, d.gpu.name, nodes);
        }
    }
    if (!d.inter_node_link && d.gpus() > d.gpus_per_node) {
        std::string nodes;
        for (const auto& n : db.servers()) {
            if (n.accelerator == d.gpu.name) {
                nodes += (nodes.empty() ? "" : ", ") + n.name;
            }
        }
        throw UsageError(std::to_string(d.gpus()) + " GPUs span nodes of " +
                         std::to_string(d.gpus_per_node) +
                         " but no network between nodes is known; give --node" +
                         (nodes.empty() ? std::string(" (an hwdb server with an inter-node link)")
                                        : " (e.g. " + nodes + " for " + d.gpu.name + ")") +
                         (f.file.empty() ? "" : " or hardware.inter_node_link in the file"));
    }
    if (!s.training) {
        if (!f.tokens || !f.global_batch || !f.seq_len) {
            throw UsageError(
                "the scenario has no training: block; give --tokens, --global-batch and "
                "--seq-len (or add a training: block, docs/training.md)");
        }
        s.training = model::TrainingConfig{};
    }
    model::TrainingConfig& c = *s.training;
    if (f.tokens) {
        if (!(*f.tokens > 0) || !std::isfinite(*f.tokens)) {
            throw UsageError("--tokens must be a positive number of tokens, e.g. 300e9");
        }
        c.tokens = *f.tokens;
    }
    if (f.global_batch)
        c.global_batch = *f.global_batch;
    if (f.seq_len)
        c.seq_len = *f.seq_len;
    auto& l = c.layout;
    if (f.tp)
        l.tp = *f.tp;
    if (f.pp)
        l.pp = *f.pp;
    if (f.cp)
        l.cp = *f.cp;
    if (f.ep)
        l.ep = *f.ep;
    if (f.zero)
        l.zero = *f.zero;
    if (f.micro_batch)
        l.micro_batch = *f.micro_batch;
    if (f.virtual_stages)
        l.virtual_stages = *f.virtual_stages;
    const long long split = static_cast<long long>(l.tp) * l.pp * l.cp;
    if (d.gpus() % split != 0) {
        throw UsageError("tp x pp x cp = " + std::to_string(split) + " does not divide the " +
                         std::to_string(d.gpus()) + " GPUs; change --gpus, --tp, --pp or --cp");
    }
    l.dp = static_cast<int>(d.gpus() / split);
    if (f.dp && *f.dp != l.dp) {
        throw UsageError("--dp " + std::to_string(*f.dp) + " is not GPUs / (tp x pp x cp) = " +
                         std::to_string(l.dp) + "; change --gpus or leave --dp out");
    }
    if (!f.recompute.empty()) {
        const auto r = model::find_recompute(f.recompute);
        if (!r)
            throw UsageError("--recompute takes none, selective or full, got '" + f.recompute +
                             "'");
        l.recompute = *r;
    }
    if (!f.method.empty()) {
        const auto m = model::find_finetune_method(f.method);
        if (!m)
            throw UsageError("--method takes full, lora or qlora, got '" + f.method + "'");
        c.method = *m;
    }
    if (f.lora_rank)
        c.lora.rank = *f.lora_rank;
    if (!f.optimizer.empty()) {
        const auto o = model::find_optimizer(f.optimizer);
        if (!o)
            throw UsageError("--optimizer takes adam, adam-8bit or sgd-momentum, got '" +
                             f.optimizer + "'");
        c.optimizer = *o;
    }
    if (!f.compute.empty()) {
        if (f.compute == "bf16")
            c.compute = model::ComputeType::Bf16;
        else if (f.compute == "fp16")
            c.compute = model::ComputeType::Fp16;
        else if (f.compute == "fp8")
            c.compute = model::ComputeType::Fp8;
        else
            throw UsageError("--compute takes bf16, fp16 or fp8, got '" + f.compute + "'");
    }
    if (f.loader) {
        if (!(*f.loader > 0))
            throw UsageError("--loader-tokens-per-s must be positive");
        c.data_loader_tokens_per_s = *f.loader;
    }
    if (s.name.empty()) {
        s.name = d.model.name + "-train-" + std::to_string(d.gpus()) + "x-" + d.gpu.name;
    }
    model::validate(d);
    return s;
}

nlohmann::json layout_json(const model::TrainingLayout& l) {
    return {{"tp", l.tp},
            {"pp", l.pp},
            {"dp", l.dp},
            {"cp", l.cp},
            {"ep", l.ep},
            {"zero", l.zero},
            {"micro_batch", l.micro_batch},
            {"virtual_stages", l.virtual_stages},
            {"recompute", model::to_string(l.recompute)},
            {"sequence_parallel", l.sequence_parallel}};
}

nlohmann::json stage_json(const model::StageMemory& m) {
    return {{"stage", m.stage},
            {"layers", m.layers},
            {"in_flight", m.in_flight},
            {"weights_bytes", m.weights.si()},
            {"gradients_bytes", m.gradients.si()},
            {"optimizer_states_bytes", m.optimizer_states.si()},
            {"activations_bytes", m.activations.si()},
            {"logits_bytes", m.logits.si()},
            {"buffers_bytes", m.buffers.si()},
            {"runtime_bytes", m.runtime.si()},
            {"fragmentation_bytes", m.fragmentation.si()},
            {"total_bytes", m.total.si()},
            {"capacity_bytes", m.capacity.si()},
            {"free_bytes", m.free.si()},
            {"fits", m.fits}};
}

nlohmann::json breakdown_json(const model::StepBreakdown& b) {
    return {{"compute_s", b.compute.si()},         {"exposed_comm_s", b.exposed_comm.si()},
            {"bubble_s", b.bubble.si()},           {"optimizer_s", b.optimizer.si()},
            {"input_stall_s", b.input_stall.si()}, {"tp_comm_s", b.tp_comm.si()},
            {"pp_comm_s", b.pp_comm.si()},         {"dp_comm_s", b.dp_comm.si()},
            {"dp_exposed_s", b.dp_exposed.si()},   {"ep_comm_s", b.ep_comm.si()},
            {"cp_comm_s", b.cp_comm.si()}};
}

nlohmann::json result_json(const model::LayoutResult& r) {
    return {{"layout", layout_json(r.layout)},
            {"fits", r.fits},
            {"memory_per_gpu_bytes", r.memory.total.si()},
            {"binding_stage", r.memory.stage},
            {"step_time_s", r.step.total.si()},
            {"breakdown", breakdown_json(r.step)},
            {"micro_batches", r.micro_batches},
            {"tokens_per_s", r.tokens_per_s},
            {"tokens_per_s_per_gpu", r.tokens_per_s_per_gpu},
            {"mfu", r.mfu},
            {"hfu", r.hfu},
            {"time_to_train_s", r.time_to_train.si()},
            {"gpu_hours", r.gpu_hours},
            {"cost", r.cost}};
}

nlohmann::json failures_json(const model::FailureConfig& c, const model::TrainingFailures& f) {
    nlohmann::json spares = nullptr;
    if (f.spare_nodes) {
        spares = *f.spare_nodes;
    }
    return {{"gpu_mtbf_s", f.gpu_mtbf.si()},
            {"gpu_mtbf_default", !c.gpu_mtbf.has_value()},
            {"node_mtbf_s", f.node_mtbf.si()},
            {"job_mtbf_s", f.job_mtbf.si()},
            {"nodes", f.nodes},
            {"checkpoint_bytes", f.checkpoint_size.si()},
            {"restart_read_bytes", f.restart_read.si()},
            {"write_bandwidth_bytes_per_s", f.write_bandwidth.si()},
            {"read_bandwidth_bytes_per_s", f.read_bandwidth.si()},
            {"storage_bandwidth_default", !c.write_bandwidth || !c.read_bandwidth},
            {"checkpoint_time_s", f.checkpoint_time.si()},
            {"restart_overhead_s", f.restart_overhead.si()},
            {"restart_time_s", f.restart_time.si()},
            {"young_interval_s", f.young_interval.si()},
            {"daly_interval_s", f.daly_interval.si()},
            {"interval_s", f.interval.si()},
            {"interval_basis", f.interval_given ? "given" : "young"},
            {"time_without_failures_s", f.solve_time.si()},
            {"finishes", f.finishes},
            {"expected_time_s", f.finishes ? nlohmann::json(f.wall_time.si()) : nullptr},
            {"goodput", f.goodput},
            {"expected_failures", f.expected_failures},
            {"checkpoint_overhead_s", f.checkpoint_overhead.si()},
            {"restart_time_total_s", f.restart_time_total.si()},
            {"lost_work_s", f.lost_work.si()},
            {"gpu_hours", f.gpu_hours},
            {"repair_time_s", f.repair_time.si()},
            {"spares_target", f.spares_target},
            {"node_availability", f.node_up},
            {"spare_nodes", spares},
            {"availability_with_spares", f.availability_with_spares},
            {"availability_without_spares", f.availability_without_spares}};
}

void print_failures(std::ostream& out, const model::FailureConfig& c,
                    const model::TrainingFailures& f, Seconds step,
                    const std::optional<model::Money>& rent) {
    const auto gbps = [](BytesPerSecond b) { return fixed(b.si() / 1e9, 2) + " GB/s"; };
    const auto dflt = [](bool is_default) { return is_default ? " (default)" : ""; };
    out << "\nfailures and checkpoints (docs/failures.md)\n"
        << "job MTBF             " << secs(f.job_mtbf) << " (per GPU "
        << fixed(f.gpu_mtbf.si() / 3600, 0) << " h"
        << (c.gpu_mtbf ? "" : ": Llama 3's 419 interruptions in 54 days on 16,384 GPUs")
        << "; per node " << fixed(f.node_mtbf.si() / 3600, 0) << " h)\n"
        << "checkpoint           " << format_gib(f.checkpoint_size)
        << " (16-bit weights + optimizer states) at " << gbps(f.write_bandwidth)
        << dflt(!c.write_bandwidth) << " = " << secs(f.checkpoint_time) << '\n'
        << "restart              " << format_gib(f.restart_read) << " at " << gbps(f.read_bandwidth)
        << dflt(!c.read_bandwidth) << " + " << secs(f.restart_overhead) << " start-up"
        << dflt(!c.restart_overhead) << " = " << secs(f.restart_time) << '\n'
        << "checkpoint interval  " << secs(f.interval) << " of training"
        << (step.si() > 0 ? " (about " + fixed(f.interval / step, 0) + " steps)" : "")
        << (f.interval_given ? ", given" : ", Young's sqrt(2 x checkpoint x job MTBF)")
        << "; Daly's higher-order optimum " << secs(f.daly_interval) << '\n'
        << "expected time        ";
    if (f.finishes) {
        out << secs(f.wall_time) << " with failures, " << secs(f.solve_time) << " without: goodput "
            << pct(f.goodput) << '\n'
            << "  checkpoints        " << secs(f.checkpoint_overhead) << '\n'
            << "  restarts           " << fixed(f.expected_failures, 1) << " failures x "
            << secs(f.restart_time) << " = " << secs(f.restart_time_total) << '\n'
            << "  lost work          " << secs(f.lost_work) << " of training redone\n"
            << "GPU-hours            " << fixed(f.gpu_hours, 0) << " expected with failures";
        if (rent) {
            out << ", rent " << model::to_string(*rent);
        }
        out << '\n';
    } else {
        out << "never finishes in practice: the job fails every " << secs(f.job_mtbf)
            << " but a restart takes " << secs(f.restart_time) << " and a checkpoint "
            << secs(f.checkpoint_time) << " (" << secs(f.solve_time)
            << " without failures); raise gpu_mtbf or the storage bandwidth\n";
    }
    out << "spare nodes          ";
    if (f.spare_nodes) {
        out << *f.spare_nodes << " beside the " << f.nodes << " keep the run at full size with "
            << "probability " << fixed(f.availability_with_spares, 4) << " (target "
            << fixed(f.spares_target, 4) << dflt(!c.spares_target) << "; "
            << fixed(f.availability_without_spares, 4) << " with none; repair "
            << secs(f.repair_time) << dflt(!c.repair_time) << ")\n";
    } else {
        out << "no number of spares reaches the target " << fixed(f.spares_target, 4) << '\n';
    }
}

nlohmann::json train_json(const model::Scenario& s, const model::TrainingEstimate& e) {
    const auto& d = s.deployment;
    const auto& c = *s.training;
    const auto& r = e.result;
    nlohmann::json j = result_json(r);
    j["name"] = s.name;
    j["model"] = d.model.name;
    j["accelerator"] = d.gpu.name;
    j["gpus"] = d.gpus();
    j["tokens"] = c.tokens;
    j["global_batch"] = c.global_batch;
    j["seq_len"] = c.seq_len;
    j["method"] = model::to_string(c.method);
    j["optimizer"] = model::to_string(c.optimizer);
    j["compute"] = std::string(model::to_string(c.compute));
    j["memory"] = stage_json(r.memory);
    nlohmann::json stages = nlohmann::json::array();
    for (const auto& st : e.stages)
        stages.push_back(stage_json(st));
    j["stages"] = stages;
    j["model_flops_per_step"] = r.model_flops.si();
    j["hardware_flops_per_step"] = r.hardware_flops.si();
    j["steps"] = r.steps;
    j["total_flops"] = e.total_flops.si();
    j["pf_days"] = e.pf_days;
    j["params"] = e.params;
    j["trainable_params"] = e.trainable_params;
    j["state_bytes_per_param"] = e.state_bytes_per_param;
    j["scaling"] = {{"single_gpu_step_s", e.single_gpu_step.si()},
                    {"speedup", e.speedup},
                    {"efficiency", e.scaling_efficiency},
                    {"serial_fraction", e.serial_fraction},
                    {"amdahl_limit",
                     e.amdahl_limit ? nlohmann::json(*e.amdahl_limit) : nlohmann::json(nullptr)}};
    j["input"] = {{"consumed_tokens_per_s", e.consumed_tokens_per_s},
                  {"loader_tokens_per_s", e.loader_tokens_per_s > 0
                                              ? nlohmann::json(e.loader_tokens_per_s)
                                              : nlohmann::json(nullptr)}};
    const auto opt_num = [](const std::optional<double>& v) {
        return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    };
    j["power_limit"] = {{"per_gpu_w", e.power_limit ? nlohmann::json(e.power_limit->si())
                                                    : nlohmann::json(nullptr)},
                        {"clock", e.clock},
                        {"slowdown", e.power_slowdown},
                        {"busy_gpu_power_w", r.busy_gpu_power.si()}};
    j["energy"] = {{"basis", e.power_basis},
                   {"average_gpu_power_w", r.average_gpu_power.si()},
                   {"energy_kwh", opt_num(e.energy_kwh)},
                   {"facility_energy_kwh", opt_num(e.facility_energy_kwh)}};
    nlohmann::json cost = nlohmann::json::object();
    if (e.rent_cost)
        cost["rent"] = {{"amount", e.rent_cost->amount}, {"currency", e.rent_cost->currency}};
    if (e.energy_cost)
        cost["electricity"] = {{"amount", e.energy_cost->amount},
                               {"currency", e.energy_cost->currency}};
    j["costs"] = cost;
    const auto ch = model::chinchilla_for_params(e.params);
    j["chinchilla"] = {{"tokens", ch.tokens},
                       {"compute_flops", ch.compute.si()},
                       {"tokens_per_param", c.tokens / e.params}};
    j["defaults"] = {{"grad_reduce_overlap", e.grad_reduce_overlap},
                     {"fragmentation", e.fragmentation},
                     {"runtime_overhead_bytes", e.runtime_overhead.si()}};
    j["notes"] = e.notes;
    if (e.failures) {
        j["failures"] = failures_json(*s.training->failures, *e.failures);
        if (e.rent_cost_with_failures) {
            j["failures"]["rent"] = {{"amount", e.rent_cost_with_failures->amount},
                                     {"currency", e.rent_cost_with_failures->currency}};
        }
    }
    return j;
}

void print_estimate(std::ostream& out, const model::Scenario& s, const model::TrainingEstimate& e,
                    const model::ErrorBands& bands) {
    const auto& d = s.deployment;
    const auto& c = *s.training;
    const auto& r = e.result;
    const auto& l = r.layout;
    out << s.name << ": " << d.model.name << " (" << sci(e.params) << " parameters";
    if (c.method != model::FinetuneMethod::Full) {
        out << ", " << model::to_string(c.method) << " rank " << c.lora.rank << ": "
            << sci(e.trainable_params) << " trained";
    }
    out << ") on " << d.gpus() << " x " << d.gpu.name << ", " << sci(c.tokens)
        << " tokens, global batch " << c.global_batch << " x " << c.seq_len << " tokens\n"
        << "layout " << layout_text(l) << ", zero " << l.zero << ", micro-batch " << l.micro_batch
        << " (" << r.micro_batches << " per step)";
    if (l.virtual_stages > 1)
        out << ", " << l.virtual_stages << " virtual stages";
    out << ", " << model::to_string(l.recompute) << " recomputation"
        << (l.sequence_parallel ? ", sequence parallel" : "") << ", " << model::to_string(c.compute)
        << ", " << model::to_string(c.optimizer) << " (" << fixed(e.state_bytes_per_param, 0)
        << " B per trained parameter of model states before sharding)\n\n";

    const auto& m = r.memory;
    out << "memory per GPU"
        << (r.layout.pp > 1 ? " (binding stage " + std::to_string(m.stage) + ")" : "") << '\n';
    Table t({"item", "size", "share"});
    const auto row = [&](const std::string& name, Bytes b) {
        t.add_row({name, format_gib(b), pct(b / m.capacity)});
    };
    row("weights", m.weights);
    row("gradients", m.gradients);
    row("optimizer states", m.optimizer_states);
    row("activations (" + fixed(m.in_flight, 1) + " micro-batches)", m.activations);
    row("logits (loss)", m.logits);
    row("buffers", m.buffers);
    row("runtime (CUDA, NCCL)", m.runtime);
    row("fragmentation", m.fragmentation);
    row("total", m.total);
    t.add_row({"capacity (as CUDA reports)", format_gib(m.capacity), "100.0 %"});
    t.print(out);
    out << "verdict              " << (r.fits ? "fits" : "does NOT fit") << ", "
        << format_gib(Bytes(std::abs(m.free.si()))) << (m.free.si() >= 0 ? " free" : " short")
        << '\n';
    if (e.stages.size() > 1) {
        Table st({"stage", "layers", "in flight", "total", "free", "fits"});
        for (const auto& x : e.stages) {
            st.add_row({std::to_string(x.stage), std::to_string(x.layers), fixed(x.in_flight, 1),
                        format_gib(x.total), format_gib(x.free), x.fits ? "yes" : "no"});
        }
        out << "\nper pipeline stage\n";
        st.print(out);
    }

    const auto& b = r.step;
    BandNotes notes(bands, model::training_band_query(d, c.compute));
    out << "\nstep time " << secs(b.total) << " (band "
        << notes.cell(model::BandFigure::TrainingStep, model::BandRegime::Training) << ")\n";
    notes.print(out);
    Table bt({"part", "time", "share"});
    const auto brow = [&](const std::string& name, Seconds v) {
        bt.add_row({name, secs(v), pct(b.total.si() > 0 ? v / b.total : 0.0)});
    };
    brow("compute", b.compute);
    brow("exposed communication", b.exposed_comm);
    if (b.tp_comm.si() > 0)
        brow("  tensor parallel", b.tp_comm);
    if (b.pp_comm.si() > 0)
        brow("  pipeline sends", b.pp_comm);
    if (b.dp_comm.si() > 0)
        brow("  data parallel (of " + secs(b.dp_comm) + ")", b.dp_exposed);
    if (b.ep_comm.si() > 0)
        brow("  expert all-to-all", b.ep_comm);
    if (b.cp_comm.si() > 0)
        brow("  context parallel", b.cp_comm);
    brow("pipeline bubble", b.bubble);
    brow("optimizer step", b.optimizer);
    brow("input stall", b.input_stall);
    bt.print(out);

    out << "\nthroughput           " << fixed(r.tokens_per_s, 0) << " tokens/s ("
        << fixed(r.tokens_per_s_per_gpu, 0) << " per GPU)\n"
        << "utilization          MFU " << pct(r.mfu) << ", HFU " << pct(r.hfu) << " (of "
        << fixed(r.hfu > 0 ? r.hardware_flops.si() / (r.hfu * b.total.si() * d.gpus()) / 1e12 : 0.0,
                 1)
        << " TFLOP/s dense " << model::to_string(c.compute) << " per GPU)\n"
        << "time to train        " << secs(r.time_to_train) << " (" << fixed(r.steps, 0)
        << " steps), " << fixed(r.gpu_hours, 0) << " GPU-hours\n"
        << "total compute        " << sci(e.total_flops.si()) << " FLOPs = " << fixed(e.pf_days, 1)
        << " PF-days\n"
        << "scaling 1 -> " << d.gpus()
        << std::string(d.gpus() < 10 ? 8 : (d.gpus() < 100 ? 7 : (d.gpus() < 1000 ? 6 : 5)), ' ')
        << fixed(e.speedup, 2) << "x (" << pct(e.scaling_efficiency)
        << " efficiency), Amdahl serial fraction " << pct(e.serial_fraction);
    if (e.amdahl_limit)
        out << ", limit " << fixed(*e.amdahl_limit, 1) << "x";
    out << '\n';
    out << "energy               ";
    if (e.energy_kwh) {
        out << fixed(*e.energy_kwh, 0) << " kWh for the GPUs at "
            << fixed(r.average_gpu_power.si(), 0) << " W each (" << e.power_basis << ")";
        if (e.facility_energy_kwh)
            out << ", " << fixed(*e.facility_energy_kwh, 0) << " kWh with PUE";
    } else {
        out << "unknown (" << e.power_basis << ")";
    }
    out << '\n';
    if (e.rent_cost || e.energy_cost) {
        out << "cost                 ";
        if (e.rent_cost)
            out << "rent " << model::to_string(*e.rent_cost);
        if (e.rent_cost && e.energy_cost)
            out << "; ";
        if (e.energy_cost)
            out << "electricity (owned) " << model::to_string(*e.energy_cost);
        out << '\n';
    }
    if (c.method == model::FinetuneMethod::Full) {
        const auto ch = model::chinchilla_for_params(e.params);
        out << "chinchilla           " << fixed(c.tokens / e.params, 1)
            << " tokens per parameter; compute-optimal pre-training is ~20 (" << sci(ch.tokens)
            << " tokens, " << sci(ch.compute.si()) << " FLOPs)\n";
    }
    for (const auto& n : e.notes)
        out << "  - " << n << '\n';
    if (e.failures) {
        print_failures(out, *c.failures, *e.failures, b.total, e.rent_cost_with_failures);
    }
}

void print_search(std::ostream& out, const model::SearchResult& sr, model::RankBy by) {
    out << "layout search (ranked by " << model::to_string(by) << ")\n";
    Table t({"#", "layout", "zero", "mb", "vpp", "recompute", "GiB/GPU", "step", "MFU",
             "time to train", "cost"});
    int i = 0;
    for (const auto& r : sr.top) {
        const auto& l = r.layout;
        t.add_row({std::to_string(++i), layout_text(l), std::to_string(l.zero),
                   std::to_string(l.micro_batch), std::to_string(l.virtual_stages),
                   model::to_string(l.recompute), fixed(r.memory.total.si() / kGiB, 1),
                   secs(r.step.total), pct(r.mfu), secs(r.time_to_train),
                   r.cost > 0 ? fixed(r.cost, 0) : "-"});
    }
    t.print(out);
    out << '\n' << sr.why << "\n\n";
}

} // namespace

namespace {

/// The measured error band of the step time of `s`'s training (model/error_bands.hpp).
nlohmann::json step_time_band_json(CliContext& ctx, const model::Scenario& s) {
    return band_json(model::band_for(
        ctx.error_bands(), model::BandFigure::TrainingStep, model::BandRegime::Training,
        model::training_band_query(s.deployment, s.training->compute)));
}

} // namespace

nlohmann::json train_report(CliContext& ctx, const model::Scenario& s,
                            const model::EfficiencyProfile& profile) {
    if (!s.training) {
        throw InputError("scenario '" + s.name +
                         "' has no training: block; 'train' needs one (docs/training.md)");
    }
    const model::TrainingEstimate e =
        model::estimate_training(s.deployment, *s.training, profile, training_cost_inputs(ctx, s));
    nlohmann::json j = train_json(s, e);
    j["layout_chosen_by"] = "given";
    j["step_time_band"] = step_time_band_json(ctx, s);
    return j;
}

int run_train(CliContext& ctx) {
    po::options_description desc("options");
    TrainFlags f;
    // clang-format off
    desc.add_options()
        ("file", po::value(&f.file), "scenario YAML with a training: block (flags override it)")
        ("model", po::value(&f.model), "catalog model, e.g. llama-3.1-8b")
        ("gpu", po::value(&f.gpu), "hwdb accelerator, e.g. h100-sxm")
        ("node", po::value(&f.node), "hwdb server, e.g. dgx-h100 (links, GPUs per node)")
        ("gpus", po::value<int>()->notifier([&f](int v) { f.gpus = v; }), "all GPUs")
        ("tokens", po::value<double>()->notifier([&f](double v) { f.tokens = v; }), "tokens to train on, e.g. 300e9")
        ("global-batch", po::value<int>()->notifier([&f](int v) { f.global_batch = v; }), "sequences per optimizer step")
        ("seq-len", po::value<int>()->notifier([&f](int v) { f.seq_len = v; }), "tokens per sequence")
        ("tp", po::value<int>()->notifier([&f](int v) { f.tp = v; }), "tensor parallel size")
        ("pp", po::value<int>()->notifier([&f](int v) { f.pp = v; }), "pipeline stages")
        ("dp", po::value<int>()->notifier([&f](int v) { f.dp = v; }), "data parallel size (checked: GPUs / (tp x pp x cp))")
        ("cp", po::value<int>()->notifier([&f](int v) { f.cp = v; }), "context parallel size")
        ("ep", po::value<int>()->notifier([&f](int v) { f.ep = v; }), "expert parallel size (MoE)")
        ("zero", po::value<int>()->notifier([&f](int v) { f.zero = v; }), "ZeRO stage 0-3 (3 = FSDP full shard)")
        ("recompute", po::value(&f.recompute), "none, selective or full")
        ("micro-batch", po::value<int>()->notifier([&f](int v) { f.micro_batch = v; }), "sequences per micro-batch")
        ("virtual-stages", po::value<int>()->notifier([&f](int v) { f.virtual_stages = v; }), "interleaved pipeline chunks per stage")
        ("method", po::value(&f.method), "full, lora or qlora")
        ("lora-rank", po::value<int>()->notifier([&f](int v) { f.lora_rank = v; }), "LoRA rank")
        ("optimizer", po::value(&f.optimizer), "adam, adam-8bit or sgd-momentum")
        ("compute", po::value(&f.compute), "bf16, fp16 or fp8")
        ("loader-tokens-per-s", po::value<double>()->notifier([&f](double v) { f.loader = v; }), "data-loader throughput per node")
        ("search", po::bool_switch(&f.search), "search the layouts and rank them")
        ("top", po::value<int>()->notifier([&f](int v) { f.top = v; }), "layouts shown by --search (default 5)")
        ("rank-by", po::value(&f.rank_by), "time (default) or cost")
        ("profile", po::value(&f.profile), "efficiency profile YAML")
        ("set", po::value(&f.sets)->composing(), "override a key of the scenario FILE: --set training.global_batch=512 (repeatable)")
        ("json", po::bool_switch(&f.json), "machine-readable output (keys: docs/cli-json.md)");
    // clang-format on
    PowerFlags pflags;
    add_power_options(desc, pflags);
    po::positional_options_description pos;
    pos.add("file", 1);
    po::variables_map vm;
    if (!parse_options(
            "train", ctx.args, desc, pos, vm, *ctx.out,
            "[FILE] [--model M --gpu G --gpus N --tokens T --global-batch B --seq-len S ...] "
            "[--search [--top N]] [--json]")) {
        return 0;
    }
    model::Scenario s = build(ctx, f);
    apply_power_flags(s, pflags);
    // A GPU count without a layout (no file, no --tp/--pp/--dp/--cp/--ep): the best valid
    // layout is chosen by the same search as --search, and the report says so.
    const bool auto_layout =
        !f.search && f.file.empty() && !f.tp && !f.pp && !f.dp && !f.cp && !f.ep;
    ScenarioFlags pf;
    pf.profile = f.profile;
    const model::EfficiencyProfile profile = choose_profile(ctx, pf, s.deployment.gpu);
    if (f.json && !f.search && !auto_layout) {
        *ctx.out << json_text(train_report(ctx, s, profile)) << '\n';
        return 0;
    }
    const model::TrainingCostInputs prices = training_cost_inputs(ctx, s);
    model::TrainingConfig cfg = *s.training;

    nlohmann::json search_j;
    std::optional<model::SearchResult> sr;
    model::RankBy by = model::RankBy::Time;
    if (f.search || auto_layout) {
        if (!f.rank_by.empty() && f.rank_by != "time" && f.rank_by != "cost") {
            throw UsageError("--rank-by takes time or cost, got '" + f.rank_by + "'");
        }
        by = f.rank_by == "cost" ? model::RankBy::Cost : model::RankBy::Time;
        model::SearchOptions o;
        o.top = f.top.value_or(5);
        o.rank_by = by;
        // Flags pin dimensions; the file's layout is the starting point, not a constraint.
        o.tp = f.tp;
        o.pp = f.pp;
        o.cp = f.cp;
        o.ep = f.ep;
        o.zero = f.zero;
        o.micro_batch = f.micro_batch;
        o.virtual_stages = f.virtual_stages;
        if (!f.recompute.empty())
            o.recompute = cfg.layout.recompute;
        sr = model::search_layouts(s.deployment, cfg, profile, o, prices);
        throw_if_interrupted();
        nlohmann::json top = nlohmann::json::array();
        for (const auto& r : sr->top)
            top.push_back(result_json(r));
        search_j = {{"rank_by", model::to_string(by)},
                    {"enumerated", sr->enumerated},
                    {"fitting", sr->fitting},
                    {"not_fitting", sr->not_fitting},
                    {"invalid", sr->invalid},
                    {"why", sr->why},
                    {"top", top}};
        if (!sr->top.empty()) {
            cfg.layout = sr->top.front().layout;
        }
    }
    std::optional<model::TrainingEstimate> est;
    try {
        est = model::estimate_training(s.deployment, cfg, profile, prices);
    } catch (const InvalidArgument&) {
        if (!sr) {
            throw;
        }
        // Nothing fits and the file's own layout cannot run: the search result is the answer.
    }
    if (!est) {
        if (f.json) {
            *ctx.out << json_text(nlohmann::json{{"fits", false}, {"search", search_j}}) << '\n';
        } else {
            print_search(*ctx.out, *sr, by);
        }
        return 0;
    }
    const model::TrainingEstimate& e = *est;
    model::Scenario shown = s;
    shown.training = cfg;
    if (f.json) {
        nlohmann::json j = train_json(shown, e);
        if (sr)
            j["search"] = search_j;
        j["layout_chosen_by"] = auto_layout && sr && !sr->top.empty() ? "search" : "given";
        j["step_time_band"] = step_time_band_json(ctx, shown);
        *ctx.out << json_text(j) << '\n';
        return 0;
    }
    if (sr && auto_layout && !sr->top.empty()) {
        *ctx.out << "layout               chosen by the layout search (as --search; no layout was "
                    "given): "
                 << layout_text(cfg.layout) << ", the best by " << model::to_string(by) << " of "
                 << sr->fitting << " fitting layouts\n\n";
    } else if (sr) {
        print_search(*ctx.out, *sr, by);
        if (sr->top.empty()) {
            *ctx.out << "the configured layout, for reference:\n\n";
        } else {
            *ctx.out << "the best layout in detail:\n\n";
        }
    }
    print_estimate(*ctx.out, shown, e, ctx.error_bands());
    return 0;
}

} // namespace gpuplan::cli
