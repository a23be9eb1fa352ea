#pragma once
/// Internal to the profile fit (fit.cpp, fit_profile.cpp, fit_refine.cpp): the fit's parameter
/// vector, the prepared points it is fitted to, and the helpers the steps share. Not part of
/// the calib API.

#include "calib/fit.hpp"

#include <Eigen/Dense>

#include <vector>

namespace gpuplan::calib::detail {

inline constexpr int kClasses = model::kOpClassCount;
inline constexpr int kWorstCases = 5;

[[nodiscard]] inline int cls_index(OpClass c) {
    return static_cast<int>(c);
}

// ---------------------------------------------------------------- parameters
//
// Every coefficient the fit can move, in one vector of plain values. The Levenberg-Marquardt
// refinement works on the logarithms of the free ones, which keeps them positive and makes
// the steps scale-free (an efficiency of 0.7 and a half-saturation of 2e6 bytes move alike).
enum Param : int {
    kGemmEmax,
    kGemmMHalf,
    kGemmNkHalf,
    kScale0, // + GemmClass index: the compute paths' dtype_scale, then the block-scaled classes
    kWoMax = kScale0 + static_cast<int>(model::kGemmClassCount),
    kWoHalf,
    kGrMax,
    kGrHalf,
    kMemMax,
    kMemHalf,
    kPreMax,
    kPreHalf,
    kDecMax,
    kDecHalf,
    kCommMax,
    kCommHalf,
    kCommOverhead,
    kOffset0, // + host-timed source index
};

/// The profile's coefficients as a parameter vector, with `offsets` host-timed offsets (0).
[[nodiscard]] std::vector<double> params_of(const model::EfficiencyProfile& p, std::size_t offsets);
/// Writes a parameter vector's coefficients into `p` (its other fields are kept). A
/// block-scaled class's scale is written only where `p` has one of its own (class_scale): the
/// others keep following their compute path's.
void set_params(const std::vector<double>& v, model::EfficiencyProfile& p);

/// Which operator classes a parameter's value reaches, as a bit mask (for skipping work in the
/// numerical Jacobian).
[[nodiscard]] unsigned classes_of(int param);

/// A parameter's value to and from the refinement's unconstrained coordinate.
[[nodiscard]] double to_theta(int param, double value);
[[nodiscard]] double from_theta(int param, double theta);

/// One measured point as the fit sees it.
struct Sample {
    PreparedPoint p;
    const Measurement* m = nullptr;
    int cls = 0;
    int source = -1; // host-timed data set index, -1 for kernel-timed points
    bool held_out = false;
    bool in_fit = true; // used by the fit (communication: scale-up links only)
};

/// The host-timed offset of the sample's data set in `v` (0 for kernel-timed points).
[[nodiscard]] double offset_of(const Sample& s, const std::vector<double>& v);

/// Signed relative error (pred − meas) / meas of the sample under `prof` and the offsets of `v`.
[[nodiscard]] double rel_error(const Sample& s, const model::EfficiencyProfile& prof,
                               const std::vector<double>& v);

/// Solves the least-squares problem min Σ_i (A_i · x − b_i)² by column-pivoted QR.
[[nodiscard]] Eigen::VectorXd least_squares(const Eigen::MatrixXd& a, const Eigen::VectorXd& b);

/// The kWorstCases samples with the largest |signed error|, worst first.
[[nodiscard]] std::vector<PointError> worst_of(const std::vector<const Sample*>& samples,
                                               const std::vector<double>& signed_errors);

/// The joint Levenberg-Marquardt refinement (fit_refine.cpp) of the `free` parameters of `v` on
/// the residuals weight_i × rel_error_i of `rows`, plus a pull of each free parameter toward
/// its start of strength options.prior_weight. Writes the refined values into `v` and returns
/// the iterations run (0 when options.refine is off or nothing is free).
int refine(const std::vector<const Sample*>& rows, const std::vector<double>& weights,
           const std::vector<int>& free, const model::EfficiencyProfile& base,
           const FitOptions& options, std::vector<double>& v);

} // namespace gpuplan::calib::detail
