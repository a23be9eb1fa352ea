// The joint Levenberg-Marquardt refinement of the profile fit (fit_params.hpp: detail::refine).
#include "calib/fit_params.hpp"

#include <algorithm>
#include <cmath>

namespace gpuplan::calib::detail {
namespace {

// r_i = w_i (pred_i / meas_i − 1) over the training rows, then one row per free parameter:
// prior_weight × (θ_j − θ0_j), a weak pull of each parameter toward its start.
class Residuals {
  public:
    Residuals(const std::vector<const Sample*>& rows, const std::vector<double>& weights,
              const std::vector<int>& free, const model::EfficiencyProfile& base,
              double prior_weight, const std::vector<double>& v, const Eigen::VectorXd& theta0)
        : rows_(rows), weights_(weights), free_(free), prior_weight_(prior_weight), v_(v),
          theta0_(theta0), work_(base) {}

    [[nodiscard]] Eigen::Index size() const {
        return static_cast<Eigen::Index>(rows_.size() + free_.size());
    }

    // Fills the rows of the classes in `mask` (and every prior row); others keep their value.
    void operator()(const Eigen::VectorXd& theta, Eigen::VectorXd& r, unsigned mask) {
        const auto nf = static_cast<Eigen::Index>(free_.size());
        std::vector<double> vv = v_;
        for (Eigen::Index j = 0; j < nf; ++j) {
            const int param = free_[static_cast<std::size_t>(j)];
            vv[static_cast<std::size_t>(param)] = from_theta(param, theta(j));
        }
        set_params(vv, work_);
        for (std::size_t i = 0; i < rows_.size(); ++i) {
            const Sample& s = *rows_[i];
            if (mask & (1u << s.cls)) {
                r(static_cast<Eigen::Index>(i)) = weights_[i] * rel_error(s, work_, vv);
            }
        }
        for (Eigen::Index j = 0; j < nf; ++j) {
            r(static_cast<Eigen::Index>(rows_.size()) + j) =
                prior_weight_ * (theta(j) - theta0_(j));
        }
    }

  private:
    const std::vector<const Sample*>& rows_;
    const std::vector<double>& weights_;
    const std::vector<int>& free_;
    double prior_weight_;
    const std::vector<double>& v_;
    const Eigen::VectorXd& theta0_;
    model::EfficiencyProfile work_;
};

// Forward-difference Jacobian at θ (residuals r), recomputing only the rows a parameter reaches.
void jacobian(Residuals& residuals, const std::vector<int>& free, const Eigen::VectorXd& theta,
              const Eigen::VectorXd& r, Eigen::MatrixXd& jac) {
    const double h = 1e-6;
    for (Eigen::Index j = 0; j < jac.cols(); ++j) {
        Eigen::VectorXd tp = theta;
        tp(j) += h;
        Eigen::VectorXd rp = r;
        const int param = free[static_cast<std::size_t>(j)];
        unsigned mask = classes_of(param);
        residuals(tp, rp, mask);
        jac.col(j) = (rp - r) / h;
    }
}

// One Levenberg-Marquardt step from θ: up to 12 damped Gauss-Newton trials (damping μ, steps
// clamped to ±2 in θ), the first that lowers the cost accepted. Updates θ, r, cost and μ and
// returns whether a step was accepted.
bool lm_step(Residuals& residuals, const Eigen::MatrixXd& jac, Eigen::VectorXd& theta,
             Eigen::VectorXd& r, double& cost, double& mu) {
    const Eigen::Index nf = jac.cols();
    const Eigen::MatrixXd jtj = jac.transpose() * jac;
    const Eigen::VectorXd g = jac.transpose() * r;
    for (int tries = 0; tries < 12; ++tries) {
        Eigen::MatrixXd a = jtj;
        for (Eigen::Index j = 0; j < nf; ++j) {
            a(j, j) += mu * std::max(jtj(j, j), 1e-12);
        }
        Eigen::VectorXd step = a.ldlt().solve(-g);
        for (Eigen::Index j = 0; j < nf; ++j) {
            step(j) = std::clamp(step(j), -2.0, 2.0);
        }
        Eigen::VectorXd trial = theta + step;
        Eigen::VectorXd rt(residuals.size());
        residuals(trial, rt, ~0u);
        const double new_cost = rt.squaredNorm();
        if (std::isfinite(new_cost) && new_cost < cost) {
            theta = trial;
            r = rt;
            cost = new_cost;
            mu = std::max(mu / 3.0, 1e-12);
            return true;
        }
        mu *= 4.0;
    }
    return false;
}

} // namespace

int refine(const std::vector<const Sample*>& rows, const std::vector<double>& weights,
           const std::vector<int>& free, const model::EfficiencyProfile& base,
           const FitOptions& options, std::vector<double>& v) {
    const auto nf = static_cast<Eigen::Index>(free.size());
    Eigen::VectorXd theta0(nf);
    for (Eigen::Index j = 0; j < nf; ++j) {
        const int param = free[static_cast<std::size_t>(j)];
        theta0(j) = to_theta(param, v[static_cast<std::size_t>(param)]);
    }
    Residuals residuals(rows, weights, free, base, options.prior_weight, v, theta0);
    Eigen::VectorXd theta = theta0;
    int iterations = 0;
    if (options.refine && nf > 0) {
        Eigen::VectorXd r(residuals.size());
        residuals(theta, r, ~0u);
        double cost = r.squaredNorm();
        double mu = 1e-3;
        Eigen::MatrixXd jac(residuals.size(), nf);
        for (int it = 0; it < options.max_iterations; ++it) {
            iterations = it + 1;
            jacobian(residuals, free, theta, r, jac);
            const double old_cost = cost;
            if (!lm_step(residuals, jac, theta, r, cost, mu)) {
                break;
            }
            const double gain = old_cost - cost;
            if (gain <= 1e-14 * std::max(cost, 1e-30) || cost < 1e-28) {
                break;
            }
        }
    }
    for (Eigen::Index j = 0; j < nf; ++j) {
        const int param = free[static_cast<std::size_t>(j)];
        v[static_cast<std::size_t>(param)] = from_theta(param, theta(j));
    }
    return iterations;
}

} // namespace gpuplan::calib::detail
