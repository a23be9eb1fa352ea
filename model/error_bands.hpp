#pragma once
/// Measured error bands per printed figure: how far whole steps and whole serving runs of real
/// engines were from the model, per class (GPU x engine x dense/MoE x precision x regime), and
/// where that measurement comes from. The bands are produced by `gpuplan calib validate
/// --write-bands` from validation sets the model was not fitted on (docs/validation.md), stored
/// in hwdb/error_bands.yaml and looked up here for every figure that estimate, train and plan
/// print. A class without a measurement gets a wider stated default, labelled as such.

#include "model/deployment.hpp"
#include "model/enum_names.hpp"

#include <array>
#include <string>
#include <vector>

namespace gpuplan::model {

/// A printed figure whose error is measured.
enum class BandFigure { Ttft, Tpot, E2e, Throughput, TrainingStep };

[[nodiscard]] constexpr std::array<EnumName<BandFigure>, 5> enum_names(BandFigure) noexcept {
    return {{{"ttft", BandFigure::Ttft},
             {"tpot", BandFigure::Tpot},
             {"e2e", BandFigure::E2e},
             {"throughput", BandFigure::Throughput},
             {"training_step", BandFigure::TrainingStep}}};
}

/// The regime a band was measured in: whole prefill steps (compute-bound), whole decode steps
/// (memory-bound), whole serving runs replayed through the simulator, training steps.
enum class BandRegime { Prefill, Decode, Serving, Training };

[[nodiscard]] constexpr std::array<EnumName<BandRegime>, 4> enum_names(BandRegime) noexcept {
    return {{{"prefill", BandRegime::Prefill},
             {"decode", BandRegime::Decode},
             {"serving", BandRegime::Serving},
             {"training", BandRegime::Training}}};
}

/// The class a band holds for.
struct ValidationClass {
    std::string gpu;       ///< hwdb accelerator name; empty for a family aggregate
    std::string engine;    ///< serving engine measured ("vllm"), "unstated" when the set omits it
    bool moe = false;      ///< mixture-of-experts model
    std::string precision; ///< weight width class: "16-bit", "8-bit", "4-bit" (precision_class)
    BandRegime regime = BandRegime::Decode;
    /// The GPU family: the accelerator's hwdb `architecture` ("ampere", "hopper", "ada",
    /// "blackwell", "cdna3", ...); empty when unknown.
    std::string family;
    friend bool operator==(const ValidationClass&, const ValidationClass&) = default;
};

/// The measured error of one figure in one class on one validation set.
struct MeasuredBand {
    BandFigure figure = BandFigure::Tpot;
    ValidationClass cls;
    int points = 0;           ///< validation points behind the figures
    double mean_signed = 0.0; ///< mean of (predicted - measured) / measured; +: the model is slow
    double p90 = 0.0;         ///< nearest-rank 90th percentile of |predicted - measured| / measured
    std::string set;          ///< the validation set, with its public source
    std::string level;        ///< "whole-step" or "serving-run"
    bool fitted_on = false;   ///< the model was fitted on this set (then it is no validation)
    /// The accelerators whose points it holds: the one GPU of a per-GPU band, every measured
    /// member of the family (sorted) for a family aggregate (cls.gpu empty).
    std::vector<std::string> measured_on;
    friend bool operator==(const MeasuredBand&, const MeasuredBand&) = default;
};

/// Every measured band, as hwdb/error_bands.yaml holds them.
struct ErrorBands {
    std::string generated_by; ///< the command that wrote them
    std::vector<MeasuredBand> bands;
    friend bool operator==(const ErrorBands&, const ErrorBands&) = default;
};

/// The band printed for a class without a measurement: wider than any measured whole-step or
/// serving band (docs/validation.md: 25 % to more than 100 % off where nothing was validated), and
/// labelled as a default.
inline constexpr double kUnvalidatedBand = 0.5;

/// What is asked: a deployment's class.
struct BandQuery {
    std::string gpu;
    std::string engine;
    bool moe = false;
    std::string precision; ///< precision_class of the weights
    std::string family;    ///< the GPU's architecture; empty: no family fallback
};

/// The band of one printed figure.
struct FigureBand {
    double p90 = kUnvalidatedBand;
    double mean_signed = 0.0;
    int points = 0;
    bool validated = false;
    std::string source; ///< where it comes from, one phrase
};

/// The weight width class of a precision of `bits_per_element` bits: "16-bit" (>= 12), "8-bit"
/// (>= 6), "4-bit" (below), so fp16 and bf16 share a class.
[[nodiscard]] std::string precision_class(double bits_per_element);

/// The class of a deployment: its accelerator, engine, MoE or dense, weight width class and the
/// accelerator's family (its architecture).
[[nodiscard]] BandQuery band_query(const Deployment& d);

/// The class of a training run of `d` computing in `compute`: engine "training".
[[nodiscard]] BandQuery training_band_query(const Deployment& d, ComputeType compute);

/// The band of `figure` in `regime` for `q`, the most specific measured class first
/// (docs/validation.md, "Which class a figure borrows"):
///   1. the same GPU and engine;
///   2. the same GPU, another engine: whole-step regimes only (prefill, decode), where a step's
///      time is its kernels' and the engine is a property of the set;
///   3. the family aggregate (every measured GPU of q.family pooled), same engine;
///   4. the family aggregate, another engine: whole-step regimes only;
/// each with the same figure, regime, dense/MoE and weight width class, the most points first.
/// A serving run's error is its scheduler's, so serving bands are never borrowed across engines;
/// nothing is borrowed across families, dense/MoE or weight width (other kernels), and nothing is
/// widened. Sets the model was fitted on never count. None: kUnvalidatedBand, not validated. The
/// source says what the band was measured on: "P90 of 315 whole-step validation points measured
/// on h100-sxm, same family (hopper), engine unstated (not vllm), dense 16-bit; SET".
[[nodiscard]] FigureBand band_for(const ErrorBands& bands, BandFigure figure, BandRegime regime,
                                  const BandQuery& q);

/// Which measured band each serving estimate figure carries, keyed as `estimate --json`'s
/// `bands` object keys them: the time to first token alone is a whole prefill step, under load a
/// serving run's; TPOT and throughput are whole decode steps. `estimate` and the desktop app's
/// estimate view both show these.
struct EstimateFigureBand {
    const char* key;
    BandFigure figure;
    BandRegime regime;
};
inline constexpr std::array<EstimateFigureBand, 5> kEstimateFigureBands = {
    {{"ttft", BandFigure::Ttft, BandRegime::Prefill},
     {"ttft_loaded", BandFigure::Ttft, BandRegime::Serving},
     {"tpot", BandFigure::Tpot, BandRegime::Decode},
     {"throughput", BandFigure::Throughput, BandRegime::Decode},
     {"peak_throughput", BandFigure::Throughput, BandRegime::Decode}}};

/// "±16 % (P90 of 40 whole-step validation points, <set>)" or "±50 % (default: no validation for
/// this class)".
[[nodiscard]] std::string band_text(const FigureBand& b);

} // namespace gpuplan::model
