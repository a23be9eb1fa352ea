#include "calib/power_fit.hpp"
#include "model/checked_format.hpp"

#include "model/error.hpp"
#include "model/precision.hpp"

#include <Eigen/Dense>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace gpuplan::calib {
namespace {

std::string where(const CsvTable& t, const CsvRow& r) {
    return t.file + ":" + std::to_string(r.line);
}

// A finite number in [lo, hi] from a cell, else an error at the cell.
double bounded(const CsvTable& t, const CsvRow& r, int col, double lo, double hi) {
    const double v = t.number(r, col);
    if (v < lo || v > hi) {
        t.fail(r, col, gpuplan::checked_format("value {:g} is outside [{:g}, {:g}]", v, lo, hi));
    }
    return v;
}

std::string canonical(const GpuResolver& resolve, const std::string& name) {
    if (resolve) {
        if (const auto* a = resolve(name)) {
            return a->name;
        }
    }
    return name;
}

void add_note(std::map<std::string, int>& counts, const std::string& why) {
    ++counts[why];
}

void flush_notes(PowerSampleSet& s, const std::map<std::string, int>& counts,
                 const std::string& file) {
    for (const auto& [why, n] : counts) {
        s.skipped += n;
        s.notes.push_back(file + ": " + std::to_string(n) + " row" + (n == 1 ? "" : "s") + " " +
                          why);
    }
}

} // namespace

PowerSampleSet power_samples_from_plain(const CsvTable& t, const GpuResolver& resolve) {
    PowerSampleSet s;
    const int gpu = t.column("gpu");
    const int uc = t.column("u_compute");
    const int um = t.column("u_memory");
    const int pw = t.column("power_w");
    const int ck = t.has_column("clock_factor") ? t.column("clock_factor") : -1;
    for (const auto& r : t.rows) {
        PowerSample p;
        p.gpu = canonical(resolve, t.text(r, gpu));
        if (p.gpu.empty()) {
            t.fail(r, gpu, "empty GPU name");
        }
        p.u_compute = bounded(t, r, uc, 0.0, 2.0);
        p.u_memory = bounded(t, r, um, 0.0, 2.0);
        p.power_w = bounded(t, r, pw, 1e-3, 1e5);
        if (ck >= 0 && !t.text(r, ck).empty()) {
            p.clock = bounded(t, r, ck, 0.01, 1.5);
        }
        p.where = where(t, r);
        s.samples.push_back(std::move(p));
    }
    return s;
}

PowerSampleSet power_samples_from_calib(const CsvTable& t, const GpuResolver& resolve) {
    PowerSampleSet s;
    const int kind = t.column("kind");
    const int cls = t.column("op_class");
    const int cm = t.column("m");
    const int cn = t.column("n");
    const int ck = t.column("k");
    const int cbytes = t.column("bytes");
    const int cdtype = t.column("dtype");
    const int cgpu = t.column("gpu");
    const int ctime = t.column("time_s");
    const int cpower = t.column("power_mean_w");
    const int csm = t.column("sm_clock_mhz");
    const int csamples = t.column("power_samples");

    struct Pending {
        PowerSample sample;
        const model::AcceleratorSpec* spec;
        double sm_mhz;
    };
    std::vector<Pending> pending;
    std::map<std::string, double> max_sm; // per GPU, for GPUs without a boost clock
    std::map<std::string, int> skipped;
    for (const auto& r : t.rows) {
        const std::string& k = t.text(r, kind);
        const std::string& c = t.text(r, cls);
        if (k != "point" || (c != "gemm" && c != "memory_bound")) {
            add_note(skipped, "neither GEMM nor memory-bound points (" + k + " " + c + ")");
            continue;
        }
        if (t.number(r, csamples) < 1 || t.number(r, cpower) <= 0) {
            add_note(skipped, "without a power sample");
            continue;
        }
        const std::string& name = t.text(r, cgpu);
        const model::AcceleratorSpec* spec = resolve ? resolve(name) : nullptr;
        if (!spec) {
            t.fail(r, cgpu,
                   "unknown GPU '" + name + "'; use an hwdb name or alias (gpuplan hw list)");
        }
        const double time = t.number(r, ctime);
        if (!(time > 0)) {
            t.fail(r, ctime, "time must be positive");
        }
        const double bw = spec->memory_bandwidth.si();
        PowerSample p;
        p.gpu = spec->name;
        p.power_w = t.number(r, cpower);
        p.where = where(t, r);
        if (c == "gemm") {
            const std::string& dt = t.text(r, cdtype);
            const auto prec = model::find_precision(dt);
            if (!prec) {
                t.fail(r, cdtype, "unknown data type '" + dt + "'");
            }
            const auto peak = spec->dense.for_type(prec->compute);
            if (!peak) {
                add_note(skipped, "GEMMs in a data type the GPU has no datasheet peak for");
                continue;
            }
            const double m = t.number(r, cm);
            const double n = t.number(r, cn);
            const double kk = t.number(r, ck);
            p.u_compute = 2.0 * m * n * kk / (peak->si() * time);
            p.u_memory = (m * kk + kk * n + m * n) * prec->bytes_per_element() / (bw * time);
        } else {
            p.u_memory = t.number(r, cbytes) / (bw * time);
        }
        const double sm = t.number(r, csm);
        double& mx = max_sm[p.gpu];
        mx = std::max(mx, sm);
        pending.push_back({std::move(p), spec, sm});
    }
    for (auto& q : pending) {
        const double ref =
            q.spec->boost_clock ? q.spec->boost_clock->si() / 1e6 : max_sm[q.sample.gpu];
        if (q.sm_mhz > 0 && ref > 0) {
            q.sample.clock = std::min(1.0, q.sm_mhz / ref);
        }
        s.samples.push_back(std::move(q.sample));
    }
    flush_notes(s, skipped, t.file);
    return s;
}

PowerSampleSet read_power_samples(const std::filesystem::path& path, const GpuResolver& resolve) {
    const CsvTable t = read_csv(path, true);
    if (t.has_column("power_mean_w") && t.has_column("op_class")) {
        return power_samples_from_calib(t, resolve);
    }
    if (t.has_column("u_compute")) {
        return power_samples_from_plain(t, resolve);
    }
    throw ConfigError(t.file, 1, 1, "",
                      "not a power-sample CSV: expected the header "
                      "'gpu,u_compute,u_memory,power_w[,clock_factor]' or the CSV gpuplan-calib "
                      "writes (with op_class and power_mean_w)");
}

double predicted_power(const PowerSample& s, const PowerFitResult& r, const PowerFitOptions& o) {
    const double kd = std::pow(s.clock, o.dynamic_exponent - 1.0);
    const double xc = s.u_compute * kd;
    const double xm = s.u_memory * (1.0 - o.memory_core_share + o.memory_core_share * kd);
    const double act = std::min(1.0, r.compute_weight * xc + r.memory_weight * xm);
    return r.resident_w + (r.board_w - r.resident_w) * act;
}

PowerFitResult fit_power(const std::vector<PowerSample>& samples, const PowerFitOptions& o) {
    if (!(o.board_power_w > 0)) {
        throw InputError("the power fit needs the GPU's board power (hwdb board_power or "
                         "--board-power)");
    }
    PowerFitResult r;
    r.board_w = o.board_power_w;
    r.samples = static_cast<int>(samples.size());
    const model::PowerModel defaults;

    // Design matrix columns: [1 (P_res)], x_c, x_m. Saturated samples are left out.
    std::vector<const PowerSample*> used;
    std::vector<double> xc, xm;
    for (const auto& s : samples) {
        if (s.power_w >= o.saturation_fraction * o.board_power_w) {
            ++r.saturated;
            continue;
        }
        const double kd = std::pow(s.clock, o.dynamic_exponent - 1.0);
        used.push_back(&s);
        xc.push_back(s.u_compute * kd);
        xm.push_back(s.u_memory * (1.0 - o.memory_core_share + o.memory_core_share * kd));
    }
    r.fitted = static_cast<int>(used.size());

    bool fit_res = !o.resident_power_w.has_value();
    bool fit_c = std::any_of(xc.begin(), xc.end(), [](double v) { return v > 1e-9; });
    bool fit_m = std::any_of(xm.begin(), xm.end(), [](double v) { return v > 1e-9; });
    if (!fit_c) {
        r.notes.push_back(
            "no sample below the limit has compute activity: compute_weight held at " +
            gpuplan::checked_format("{:.6g}", defaults.compute_weight));
    }
    if (!fit_m) {
        r.notes.push_back("no sample below the limit has memory activity: memory_weight held at " +
                          gpuplan::checked_format("{:.6g}", defaults.memory_weight));
    }

    // Solves with the active columns; a negative weight drops its column (held at the default)
    // and the fit is repeated, at most twice.
    for (int pass = 0; pass < 3; ++pass) {
        const int cols = (fit_res ? 1 : 0) + (fit_c ? 1 : 0) + (fit_m ? 1 : 0);
        if (r.fitted < cols || cols == 0) {
            throw InputError("the power fit has " + std::to_string(r.fitted) +
                             " samples below the board limit (" + std::to_string(r.saturated) +
                             " at it) for " + std::to_string(cols) +
                             " coefficients; measure more low-power points");
        }
        const double res_fixed = o.resident_power_w.value_or(0.0);
        const double a_c_fixed = defaults.compute_weight;
        const double a_m_fixed = defaults.memory_weight;
        // With P_res fixed the held weights' terms are known: move them to the right-hand side.
        // With P_res fitted a held weight a contributes a·(B − P_res)·x = a·B·x − a·P_res·x, so
        // the P_res column becomes 1 − a·x.
        Eigen::MatrixXd A(r.fitted, cols);
        Eigen::VectorXd b(r.fitted);
        for (int i = 0; i < r.fitted; ++i) {
            const auto ui = static_cast<std::size_t>(i);
            double rhs = used[ui]->power_w;
            double held = 0; // sum of held a·x
            if (!fit_c) {
                held += a_c_fixed * xc[ui];
            }
            if (!fit_m) {
                held += a_m_fixed * xm[ui];
            }
            int c = 0;
            if (fit_res) {
                A(i, c++) = 1.0 - held;
                rhs -= o.board_power_w * held;
            } else {
                rhs -= res_fixed + (o.board_power_w - res_fixed) * held;
            }
            if (fit_c) {
                A(i, c++) = xc[ui];
            }
            if (fit_m) {
                A(i, c++) = xm[ui];
            }
            b(i) = rhs;
        }
        const auto qr = A.colPivHouseholderQr();
        if (qr.rank() < cols) {
            throw InputError("the power samples do not determine the coefficients (rank " +
                             std::to_string(qr.rank()) + " of " + std::to_string(cols) +
                             "): add samples at different compute and memory utilizations");
        }
        const Eigen::VectorXd x = qr.solve(b);
        int c = 0;
        r.resident_fitted = fit_res;
        r.resident_w = fit_res ? x(c++) : res_fixed;
        const double span = o.board_power_w - r.resident_w;
        if (!(r.resident_w >= 0) || !(span > 0)) {
            throw InputError(
                "the fitted resident power " + gpuplan::checked_format("{:.6g}", r.resident_w) +
                " W is outside [0, board " + gpuplan::checked_format("{:.6g}", o.board_power_w) +
                " W); fix it with --resident-power or add low-utilization samples");
        }
        r.compute_weight = fit_c ? x(c++) / span : a_c_fixed;
        r.memory_weight = fit_m ? x(c++) / span : a_m_fixed;
        bool again = false;
        if (fit_c && r.compute_weight < 0) {
            fit_c = false;
            again = true;
            r.notes.push_back("fitted compute_weight was negative: held at " +
                              gpuplan::checked_format("{:.6g}", a_c_fixed));
        }
        if (fit_m && r.memory_weight < 0) {
            fit_m = false;
            again = true;
            r.notes.push_back("fitted memory_weight was negative: held at " +
                              gpuplan::checked_format("{:.6g}", a_m_fixed));
        }
        if (!again) {
            break;
        }
    }

    double ss = 0, ss_fit = 0;
    r.residuals.reserve(samples.size());
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const double e = predicted_power(samples[i], r, o) - samples[i].power_w;
        r.residuals.push_back(e);
        ss += e * e;
        if (samples[i].power_w < o.saturation_fraction * o.board_power_w) {
            ss_fit += e * e;
        }
        if (std::abs(e) > r.max_abs_w) {
            r.max_abs_w = std::abs(e);
            r.worst = static_cast<int>(i);
        }
    }
    r.rms_w = samples.empty() ? 0 : std::sqrt(ss / static_cast<double>(samples.size()));
    r.fit_rms_w = r.fitted == 0 ? 0 : std::sqrt(ss_fit / r.fitted);
    return r;
}

std::string power_fit_yaml(const PowerFitResult& r, const std::string& gpu,
                           const std::string& command) {
    std::ostringstream o;
    o << "# Power model of " << gpu << " fitted to measured samples (docs/power.md,\n"
      << "# \"Calibrating from measurements\"). Keys of a scenario's `power:` block: paste them\n"
      << "# under `power:` indented by two spaces.\n"
      << "# command: " << command << "\n"
      << "# board power " << gpuplan::checked_format("{:.6g}", r.board_w) << " W; " << r.samples
      << " samples, " << r.fitted << " fitted, " << r.saturated
      << " at the board limit; residual RMS " << gpuplan::checked_format("{:.4g}", r.rms_w)
      << " W (fitted " << gpuplan::checked_format("{:.4g}", r.fit_rms_w) << " W), max "
      << gpuplan::checked_format("{:.4g}", r.max_abs_w) << " W\n";
    for (const auto& n : r.notes) {
        o << "# note: " << n << "\n";
    }
    o << "resident_power: " << gpuplan::checked_format("{:.6g}", r.resident_w) << " W"
      << (r.resident_fitted ? "" : "  # fixed, not fitted") << "\n"
      << "compute_weight: " << gpuplan::checked_format("{:.6g}", r.compute_weight) << "\n"
      << "memory_weight: " << gpuplan::checked_format("{:.6g}", r.memory_weight) << "\n";
    return o.str();
}

} // namespace gpuplan::calib
