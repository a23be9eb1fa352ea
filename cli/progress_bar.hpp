#pragma once
/// A progress bar on standard error, drawn only when standard error is a terminal (so logs,
/// pipes and batch jobs get no control characters). `simulate` and `sweep` share it. A front end
/// that runs the commands in-process (the Python module) sets a progress hook on the thread that
/// runs a command; the bar then reports to the hook instead of drawing.

#include <cstdio>
#include <functional>
#include <string>
#include <utility>

#include <unistd.h>

namespace gpuplan::cli {

/// Receives a command's progress: its label ("simulating", "sweep"), the fraction done (0..1)
/// and a detail such as "12/24 points". It may be called from any thread of the command.
using ProgressHook =
    std::function<void(const std::string& label, double fraction, const std::string& detail)>;

/// The hook of commands that start on the calling thread from now on (empty: none, the
/// default). Each thread has its own, so concurrent in-process calls report separately.
void set_progress_hook(ProgressHook hook);

/// The calling thread's progress hook (empty when none is set).
[[nodiscard]] const ProgressHook& progress_hook();

class ProgressBar {
  public:
    ProgressBar(std::string label, bool enabled)
        : label_(std::move(label)), hook_(enabled ? progress_hook() : ProgressHook{}),
          enabled_(enabled && !hook_ && isatty(fileno(stderr)) != 0) {}
    ~ProgressBar() { clear(); }
    ProgressBar(const ProgressBar&) = delete;
    ProgressBar& operator=(const ProgressBar&) = delete;

    /// Shows fraction `f` (0..1) done, with `detail` after the percentage (e.g. "12/24 points").
    void operator()(double f, const std::string& detail = {}) {
        if (hook_) {
            hook_(label_, f, detail);
            return;
        }
        if (!enabled_) {
            return;
        }
        const int pct = static_cast<int>(f * 100);
        if (pct == shown_ && detail == detail_) {
            return;
        }
        shown_ = pct;
        detail_ = detail;
        const int bar = pct * 40 / 100;
        std::fprintf(stderr, "\r%s [%.*s%*s] %3d %%%s%s", label_.c_str(), bar,
                     "########################################", 40 - bar, "", pct,
                     detail.empty() ? "" : " ", detail.c_str());
        std::fflush(stderr);
    }

    /// Erases the bar (before printing anything else on standard error).
    void clear() {
        if (enabled_ && shown_ >= 0) {
            std::fprintf(stderr, "\r%90s\r", "");
            std::fflush(stderr);
            shown_ = -1;
        }
    }

  private:
    std::string label_;
    ProgressHook hook_;
    bool enabled_;
    int shown_ = -1;
    std::string detail_;
};

} // namespace gpuplan::cli
