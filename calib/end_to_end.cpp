#include "calib/end_to_end.hpp"
#include "model/checked_format.hpp"

#include "calib/csv.hpp"
#include "calib/stats.hpp"
#include "model/step_cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace gpuplan::calib {
namespace {

// Splitwise names -> hwdb and catalog names.
const std::map<std::string, std::string> kGpus = {{"a100-80gb", "a100-sxm-80gb"},
                                                  {"h100-80gb", "h100-sxm"}};
const std::map<std::string, std::string> kModels = {{"llama2-70b", "llama-2-70b"}};

struct Sample {
    double error; // signed relative error
    std::string what;
};

StepErrorStats stats_of(std::vector<Sample> s) {
    StepErrorStats out;
    out.points = static_cast<int>(s.size());
    if (s.empty()) {
        return out;
    }
    std::vector<double> abs_err;
    double sum_abs = 0;
    double sum = 0;
    const Sample* worst = &s.front();
    for (const auto& x : s) {
        abs_err.push_back(std::fabs(x.error));
        sum_abs += std::fabs(x.error);
        sum += x.error;
        if (std::fabs(x.error) > std::fabs(worst->error)) {
            worst = &x;
        }
    }
    out.mape = sum_abs / s.size();
    out.median = nearest_rank(abs_err, 0.5);
    out.p90 = nearest_rank(abs_err, 0.9);
    out.bias = sum / s.size();
    out.worst = worst->what;
    return out;
}

} // namespace

std::vector<StepRun> import_splitwise(const std::filesystem::path& csv, int* skipped) {
    const CsvTable t = read_csv(csv, true);
    const int c_model = t.column("model"), c_hw = t.column("hardware"),
              c_prompt = t.column("prompt_size"), c_batch = t.column("batch_size"),
              c_tokens = t.column("token_size"), c_pt = t.column("prompt_time"),
              c_tt = t.column("token_time"), c_tp = t.column("tensor_parallel");
    std::vector<StepRun> out;
    int skip = 0;
    for (const auto& row : t.rows) {
        const auto model = kModels.find(t.text(row, c_model));
        const auto gpu = kGpus.find(t.text(row, c_hw));
        if (model == kModels.end() || gpu == kGpus.end()) {
            ++skip;
            continue;
        }
        StepRun r;
        r.model = model->second;
        r.gpu = gpu->second;
        r.tp = static_cast<int>(t.number(row, c_tp));
        r.prompt = static_cast<int>(t.number(row, c_prompt));
        r.batch = static_cast<int>(t.number(row, c_batch));
        r.output = static_cast<int>(t.number(row, c_tokens));
        r.prompt_time_s = t.number(row, c_pt) / 1e3; // SOURCE.md: milliseconds
        r.token_time_s = t.number(row, c_tt) / 1e3;
        r.source = t.file + ":" + std::to_string(row.line);
        out.push_back(std::move(r));
    }
    if (skipped) {
        *skipped = skip;
    }
    return out;
}

EndToEndReport validate_step_runs(
    const std::vector<StepRun>& runs, const hwdb::Database& db,
    const std::function<model::EfficiencyProfile(const model::AcceleratorSpec&)>& profile_for) {
    std::vector<Sample> prompt;
    std::vector<Sample> token;
    std::map<std::string, std::vector<Sample>> prompt_gpu;
    std::map<std::string, std::vector<Sample>> token_gpu;
    std::vector<model::PrefillChunk> chunks;
    std::vector<model::DecodeSeq> decodes;
    int rejected_prompt = 0;
    std::vector<std::string> rejected_examples;
    EndToEndReport out;
    for (const auto& r : runs) {
        model::Deployment d;
        d.model = db.model(r.model);
        d.gpu = db.accelerator(r.gpu);
        d.par.tp = r.tp;
        d.intra_node_link =
            db.interconnect(d.gpu.scale_up_link.empty() ? d.gpu.host_link : d.gpu.scale_up_link);
        d.prec.weights = model::parse_precision("fp16");
        d.prec.activations = d.prec.weights;
        d.prec.kv_cache = d.prec.weights;
        d.engine.max_model_len = std::max(4096, r.prompt + r.output);
        // SplitwiseSim's runs reach past Llama-2's 4096-token context; the step-cost replay
        // allows it (model::check_context_length would refuse it for a served deployment).
        d.engine.allow_long_context = r.prompt + r.output > 4096;
        // The measured prompt phase is one forward pass over the whole batch.
        d.engine.max_num_batched_tokens = std::max(*d.engine.max_model_len, r.prompt * r.batch);
        d.engine.enable_chunked_prefill = false;
        const model::StepCostModel m(d, profile_for(d.gpu));
        chunks.assign(static_cast<std::size_t>(r.batch), model::PrefillChunk{r.prompt, 0});
        const model::StepCost prefill = m.cost(chunks, {});
        const double predicted_prompt = prefill.time.si();
        // A prompt time below model FLOPs / (GPUs × datasheet peak) is physically impossible:
        // such rows (Splitwise's batch sweep reports 64 × 512 tokens of a 70B model in 0.36 s on
        // two H100s, 4× faster than their peak allows) do not measure what the column says.
        const double floor_s = prefill.model_flops.si() / (m.peak_flops().si() * r.tp);
        if (r.prompt_time_s < floor_s) {
            ++rejected_prompt;
            rejected_examples.push_back(r.source);
        }
        // token_time is the mean decode iteration over the output: context prompt + output / 2.
        decodes.assign(static_cast<std::size_t>(r.batch),
                       model::DecodeSeq{r.prompt + r.output / 2});
        const double predicted_token = m.cost({}, decodes).time.si();
        const std::string what = r.gpu + " tp" + std::to_string(r.tp) + " prompt " +
                                 std::to_string(r.prompt) + " batch " + std::to_string(r.batch) +
                                 " (" + r.source + ")";
        const Sample sp{predicted_prompt / r.prompt_time_s - 1,
                        what +
                            gpuplan::checked_format(": prompt predicted {:f} ms, measured {:f} ms",
                                                    predicted_prompt * 1e3, r.prompt_time_s * 1e3)};
        const Sample st{predicted_token / r.token_time_s - 1,
                        what +
                            gpuplan::checked_format(": token predicted {:f} ms, measured {:f} ms",
                                                    predicted_token * 1e3, r.token_time_s * 1e3)};
        if (r.prompt_time_s >= floor_s) {
            prompt.push_back(sp);
            prompt_gpu[r.gpu].push_back(sp);
            out.prompt_errors.emplace_back(r.gpu, sp.error);
        }
        token.push_back(st);
        token_gpu[r.gpu].push_back(st);
        out.token_errors.emplace_back(r.gpu, st.error);
    }
    out.rejected_prompt_rows = rejected_prompt;
    out.rejected_examples.assign(rejected_examples.begin(),
                                 rejected_examples.begin() +
                                     std::min<std::size_t>(3, rejected_examples.size()));
    out.prompt = stats_of(prompt);
    out.token = stats_of(token);
    for (auto& [gpu, s] : prompt_gpu) {
        out.prompt_by_gpu.emplace_back(gpu, stats_of(s));
    }
    for (auto& [gpu, s] : token_gpu) {
        out.token_by_gpu.emplace_back(gpu, stats_of(s));
    }
    return out;
}

} // namespace gpuplan::calib
