#include "calib/training_runs.hpp"
#include "model/checked_format.hpp"

#include "hwdb/scenario_loader.hpp"
#include "model/error.hpp"
#include "model/training.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuplan::calib {

namespace fs = std::filesystem;

std::optional<fs::path> find_training_runs(const fs::path& root) {
    std::error_code ec;
    for (const fs::path& p :
         {root, root / "runs.yaml", root / "validation" / "published-training" / "runs.yaml"}) {
        if (p.filename() == "runs.yaml" && fs::is_regular_file(p, ec)) {
            return p;
        }
    }
    return std::nullopt;
}

namespace {

bool searched(const hwdb::PublishedTrainingRun& run, const std::string& dim) {
    return std::find(run.search.begin(), run.search.end(), dim) != run.search.end();
}

/// The search options that pin every dimension `run.search` does not name to `l`'s.
model::SearchOptions pinned(const hwdb::PublishedTrainingRun& run, const model::TrainingLayout& l) {
    model::SearchOptions o;
    o.top = 1;
    const auto pin = [&](const char* dim, std::optional<int>& slot, int value) {
        if (!searched(run, dim)) {
            slot = value;
        }
    };
    pin("tp", o.tp, l.tp);
    pin("pp", o.pp, l.pp);
    pin("cp", o.cp, l.cp);
    pin("ep", o.ep, l.ep);
    pin("zero", o.zero, l.zero);
    pin("micro_batch", o.micro_batch, l.micro_batch);
    pin("virtual_stages", o.virtual_stages, l.virtual_stages);
    if (!searched(run, "recompute")) {
        o.recompute = l.recompute;
    }
    return o;
}

std::string layout_text(const model::TrainingLayout& l) {
    return gpuplan::checked_format("tp {} pp {} dp {} cp {} ep {} zero {} mb {} vs {} {}", l.tp,
                                   l.pp, l.dp, l.cp, l.ep, l.zero, l.micro_batch, l.virtual_stages,
                                   model::to_string(l.recompute));
}

} // namespace

TrainingComparison replay_training_run(
    const hwdb::PublishedTrainingRun& run, const hwdb::Database& db,
    const std::function<std::optional<model::EfficiencyProfile>(const model::AcceleratorSpec&)>&
        profile_for) {
    const model::Scenario s = hwdb::load_scenario(run.scenario, db);
    if (!s.training) {
        throw ConfigError(run.scenario.string(), 0, 0, "training",
                          "no training block: a published training run needs one; add "
                          "`training:` with the run's layout");
    }
    const model::Deployment& d = s.deployment;
    const model::EfficiencyProfile profile = profile_for(d.gpu).value_or(model::default_profile());
    model::TrainingConfig cfg = *s.training;
    TrainingComparison c;
    c.name = s.name;
    c.source = run.source;
    c.gpu = d.gpu.name;
    c.gpus = d.gpus();
    c.figure = run.figure;
    c.published = run.value;
    if (!run.search.empty()) {
        const model::SearchResult r =
            model::search_layouts(d, cfg, profile, pinned(run, cfg.layout));
        if (!r.top.empty()) {
            cfg.layout = r.top.front().layout;
            c.searched = true;
        }
    }
    const model::TrainingEstimate e = model::estimate_training(d, cfg, profile);
    const model::LayoutResult& r = e.result;
    c.layout = layout_text(r.layout);
    c.fits = r.fits;
    const double step = r.step.total.si();
    switch (run.figure) {
    case hwdb::PublishedFigure::StepTime:
        c.predicted = step;
        c.step_error = c.predicted / c.published - 1;
        break;
    case hwdb::PublishedFigure::TflopsPerGpu:
        c.predicted = step > 0 ? r.hardware_flops.si() / (step * c.gpus) / 1e12 : 0;
        c.step_error = c.published / c.predicted - 1;
        break;
    case hwdb::PublishedFigure::Mfu:
        c.predicted = r.mfu;
        c.step_error = c.published / c.predicted - 1;
        break;
    case hwdb::PublishedFigure::GpuHours:
        c.predicted = r.gpu_hours;
        c.step_error = c.predicted / c.published - 1;
        break;
    }
    const model::BandQuery q = model::training_band_query(d, cfg.compute);
    c.cls = {q.gpu, q.engine, q.moe, q.precision, model::BandRegime::Training, q.family};
    return c;
}

std::vector<BandSample> training_band_samples(const std::vector<TrainingComparison>& runs,
                                              const std::string& set) {
    std::vector<BandSample> out;
    out.reserve(runs.size());
    for (const TrainingComparison& c : runs) {
        out.push_back(
            {model::BandFigure::TrainingStep, c.cls, c.step_error, set, "training-run", false});
    }
    return out;
}

} // namespace gpuplan::calib
