#pragma once
/// Fitting an efficiency profile to measured times by least squares on the relative error of
/// the predicted time, with a deterministic hold-out split and error statistics per operator
/// class. Also the building blocks, exposed for tests: the linearised saturating-curve fit,
/// the alpha-beta fit, error statistics and the hold-out rule.

#include "calib/predict.hpp"
#include "hwdb/profile_loader.hpp"
#include "model/efficiency.hpp"
#include "model/measurement.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpuplan::calib {

/// Whether a point is held out of the fit: a stable FNV-1a hash of its shape (GPU, class, op,
/// dimensions, data type, group, link) modulo `every` is 0, so about 1 in `every` shapes are
/// held out, the same ones on every run and machine, and repeated measurements of one shape
/// fall on the same side. `every` <= 1 holds nothing out.
[[nodiscard]] bool is_held_out(const Measurement& m, int every);

/// The stable 64-bit shape hash behind is_held_out.
[[nodiscard]] unsigned long long shape_hash(const Measurement& m);

/// "file:row op shape dtype", for worst-case listings.
[[nodiscard]] std::string describe(const Measurement& m);

/// Summary of absolute relative errors |pred − meas| / meas.
struct ErrorStats {
    int n = 0;
    double mape = 0;   ///< mean
    double median = 0; ///< nearest rank, as p90
    double p90 = 0;    ///< 90th percentile (nearest rank, calib/stats.hpp)
    double max = 0;
    int worst = -1; ///< index of the largest error in the input
    friend bool operator==(const ErrorStats&, const ErrorStats&) = default;
};

/// Statistics of absolute relative errors (any order; empty gives n = 0).
[[nodiscard]] ErrorStats error_stats(const std::vector<double>& abs_rel_errors);

/// The same with each error weighted (e.g. by the measured time, so that the figures describe
/// the error of a sum of kernels rather than of a typical kernel): weighted mean, weighted
/// median and 90th percentile; `max` and `worst` as unweighted.
[[nodiscard]] ErrorStats weighted_error_stats(const std::vector<double>& abs_rel_errors,
                                              const std::vector<double>& weights);

/// A saturating efficiency curve fitted from points where time = ideal / (max × x / (x + half)),
/// ideal being the time at 100 % of the peak: time / ideal = 1/max + (half/max) / x is linear in
/// 1/x, so minimising the relative error of time is a linear least-squares problem.
struct CurvePoint {
    double x = 0;     ///< curve argument (bytes, tokens)
    double ideal = 0; ///< work / peak, seconds
    double time = 0;  ///< measured seconds
};
/// Fits {max, half}; nullopt with fewer than 2 points or a degenerate fit (non-positive max).
/// A negative half is clamped to 0 (constant efficiency).
[[nodiscard]] std::optional<model::SaturatingCurve>
fit_saturating(const std::vector<CurvePoint>& pts);

/// time = alpha + bytes / bandwidth, fitted on the relative error.
struct AlphaBeta {
    double alpha_s = 0;
    double bandwidth = 0; ///< bytes per second
    double mape = 0;
};
/// Fits alpha-beta to (bytes, time) pairs; nullopt with fewer than 2 points.
[[nodiscard]] std::optional<AlphaBeta> fit_alpha_beta(const std::vector<double>& bytes,
                                                      const std::vector<double>& times);

/// Options of fit_profile.
struct FitOptions {
    int holdout_every = 5; ///< 1 in this many shapes held out (<= 1: none)
    int min_points = 8;    ///< training points a class needs for its curve to be fitted
    /// Weight of a pull toward the base profile in log-parameter space (keeps parameters the data
    /// does not determine where they were); 0 for none.
    double prior_weight = 1e-2;
    int max_iterations = 200; ///< Levenberg-Marquardt iterations of the joint refinement
    bool refine = true;       ///< run the joint refinement after the linear starts
    /// Operators (Measurement::op) that are validated but not fitted. Default: Vidur's "emb",
    /// a vocab-parallel embedding of several masking kernels that the model costs as one gather
    /// once per step, not a per-layer streaming kernel; and aiter's block-scaled FP8 fused MoE
    /// (1x128 activation and 128x128 weight scales), a kernel class of its own as the
    /// block-scaled dense GEMMs are (docs/calibration.md §5).
    std::vector<std::string> validation_only_ops{"emb", "aiter_fmoe_fp8_per_1x128"};
    /// Parameters kept at the base profile's values whatever the data: "gemm.m_half",
    /// "gemm.nk_half" (e.g. when small kernels are latency-bound, a cost the GEMM curve has no
    /// term for, and would otherwise be read as a low efficiency at small M).
    std::vector<std::string> keep;
};

/// The parameter names FitOptions::keep accepts.
[[nodiscard]] const std::vector<std::string>& keepable_parameters();

/// One point's prediction error, for worst-case lists.
struct PointError {
    Measurement point;
    double predicted_s = 0;
    double rel_error = 0; ///< signed (pred − meas) / meas
    friend bool operator==(const PointError&, const PointError&) = default;
};

/// Errors of one operator class.
struct ClassReport {
    OpClass op_class = OpClass::Gemm;
    /// Set on the per-kernel-class reports (FitReport::kernel_classes): the GEMM kernel class
    /// (model/gemm_class.hpp) the errors are of.
    std::optional<model::GemmClass> kernel_class;
    bool fitted = false;           ///< its curve was fitted (enough training points)
    ErrorStats train;              ///< fitted profile, training points
    ErrorStats held_out;           ///< fitted profile, held-out points
    ErrorStats default_held_out;   ///< base profile, held-out points
    ErrorStats default_train;      ///< base profile, training points
    std::vector<PointError> worst; ///< the largest held-out errors, worst first (at most 5)
};

/// The result of a fit.
struct FitReport {
    model::EfficiencyProfile profile; ///< the fitted coefficients
    std::vector<ClassReport> classes; ///< classes with points, in OpClass order
    /// Per GEMM kernel class (fitted: its scale was fitted on its own points), for the GEMM and
    /// grouped-GEMM classes whose points span two or more kernel classes; in OpClass, then
    /// GemmClass order.
    std::vector<ClassReport> kernel_classes;
    ErrorStats held_out;         ///< all held-out points, fitted profile
    ErrorStats default_held_out; ///< the same with the base profile
    /// All held-out points weighted by their measured time: the error of a sum of kernels such
    /// as a step, where the long kernels dominate. The profile's error band.
    ErrorStats held_out_time_weighted;
    ErrorStats default_held_out_time_weighted;
    int holdout_every = 5; ///< the hold-out rule used
    std::vector<hwdb::CommLinkFit> comm_links;
    std::vector<hwdb::TimingOffset> offsets; ///< fitted harness offsets of host-timed sets
    std::vector<std::string> notes;          ///< what was kept, skipped or excluded, and why
    int points = 0;                          ///< points used (predictable)
    int skipped = 0;                         ///< points the model cannot predict
    int iterations = 0;
};

/// Fits `base`'s curves to the points measured on `hw.gpu` (points of other GPUs are ignored):
/// linear least-squares starts per class (GEMM over M and N×K per data type, the memory curve,
/// prefill and decode attention, communication over the GPU's scale-up links), then a joint
/// Levenberg-Marquardt refinement of the relative time error through the same predictions the
/// model makes (predict.hpp), each class weighted equally. Host-timed data sets get a fitted
/// constant offset each. Classes with fewer than `min_points` training points keep the base
/// curve. Throws InputError when no point of the GPU can be predicted.
[[nodiscard]] FitReport fit_profile(const std::vector<Measurement>& points, const Hardware& hw,
                                    const model::EfficiencyProfile& base,
                                    const FitOptions& options = {});

/// Errors of a profile on points (those of hw.gpu that can be predicted), per class.
struct Evaluation {
    struct Class {
        OpClass op_class = OpClass::Gemm;
        ErrorStats stats;
        std::vector<PointError> worst; ///< at most 5, worst first
    };
    std::vector<Class> classes; ///< classes with points, in OpClass order
    /// The same per operator name within each class (e.g. gemm/mlp_up_proj), sorted.
    struct Op {
        OpClass op_class = OpClass::Gemm;
        std::string op;
        ErrorStats stats;
        double mean_signed = 0; ///< mean signed relative error (bias: + over-predicts)
    };
    std::vector<Op> ops;
    ErrorStats all;
    ErrorStats all_time_weighted; ///< every point weighted by its measured time
    int skipped = 0;
};

/// Which points evaluate() looks at.
enum class Subset { All, HeldOut, Train };

/// Evaluates a profile (with harness offsets) on the points of `hw.gpu` in `subset`.
[[nodiscard]] Evaluation evaluate(const std::vector<Measurement>& points, const Hardware& hw,
                                  const model::EfficiencyProfile& profile,
                                  const std::vector<hwdb::TimingOffset>& offsets, Subset subset,
                                  int holdout_every = 5);

} // namespace gpuplan::calib
