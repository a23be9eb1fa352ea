#include "hwdb/training_runs_io.hpp"

#include "hwdb/detail/yaml_reader.hpp"
#include "hwdb/file_io.hpp"

#include <algorithm>
#include <limits>

namespace gpuplan::hwdb {

const char* to_string(PublishedFigure f) {
    switch (f) {
    case PublishedFigure::StepTime: return "step_time";
    case PublishedFigure::TflopsPerGpu: return "tflops_per_gpu";
    case PublishedFigure::Mfu: return "mfu";
    case PublishedFigure::GpuHours: return "gpu_hours";
    }
    return "step_time";
}

namespace {

PublishedTrainingRun read_run(detail::MapReader m, const std::filesystem::path& folder) {
    PublishedTrainingRun r;
    r.scenario = folder / m.string("scenario");
    r.source = m.string("source");
    if (m.has("search")) {
        r.search = m.string_list("search");
        for (const auto& d : r.search) {
            if (std::find(kSearchableDimensions.begin(), kSearchableDimensions.end(), d) ==
                kSearchableDimensions.end()) {
                m.fail_at("search", "unknown layout dimension '" + d +
                                        "'; use tp, pp, cp, ep, zero, micro_batch, "
                                        "virtual_stages or recompute");
            }
        }
    }
    detail::MapReader p = m.map("published");
    constexpr double kHuge = std::numeric_limits<double>::max();
    int given = 0;
    if (const auto t = p.opt_quantity("step_time", model::Dimension::Seconds)) {
        r.figure = PublishedFigure::StepTime;
        r.value = *t;
        ++given;
    }
    if (const auto v = p.opt_number("tflops_per_gpu", 0, kHuge)) {
        r.figure = PublishedFigure::TflopsPerGpu;
        r.value = *v;
        ++given;
    }
    if (const auto v = p.opt_number("mfu", 0, 1)) {
        r.figure = PublishedFigure::Mfu;
        r.value = *v;
        ++given;
    }
    if (const auto v = p.opt_number("gpu_hours", 0, kHuge)) {
        r.figure = PublishedFigure::GpuHours;
        r.value = *v;
        ++given;
    }
    if (given != 1 || !(r.value > 0)) {
        p.fail_here("give exactly one positive published figure: step_time, tflops_per_gpu, mfu "
                    "or gpu_hours");
    }
    p.finish();
    m.finish();
    return r;
}

} // namespace

PublishedTrainingRuns read_training_runs_file(const std::filesystem::path& path) {
    const std::string file = path.string();
    const std::string text = read_text_file(path, "training runs");
    detail::MapReader root(detail::parse_strict(text, file), file, "");
    const int schema = root.integer("schema", 1, 1000);
    if (schema != 1) {
        root.fail_at("schema", "unsupported schema version " + std::to_string(schema) +
                                   "; this gpuplan reads schema 1");
    }
    PublishedTrainingRuns out;
    out.set = root.string("set");
    for (detail::MapReader& r : root.map_list("runs")) {
        out.runs.push_back(read_run(r, path.parent_path()));
    }
    if (out.runs.empty()) {
        root.fail_here("no runs: list them under `runs:`");
    }
    root.finish();
    return out;
}

} // namespace gpuplan::hwdb
