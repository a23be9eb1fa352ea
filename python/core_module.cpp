// gpuplan._core: runs a gpuplan command in-process, on the same code as the executable
// (gpuplan::cli over the libraries), so what Python reads is what `gpuplan ... --json` prints.
// The command runs on a worker thread; the calling thread waits with the GIL released, waking
// every 50 ms to run Python's signal handlers (Ctrl-C becomes the command's own interrupt, the
// safe points of SIGINT) and the progress callback. Errors come back as values that the Python
// layer (gpuplan/_errors.py) raises as its exception classes.
#include "cli/cli_context.hpp"
#include "cli/interrupt.hpp"
#include "cli/progress_bar.hpp"
#include "model/error.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <exception>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace py = pybind11;

namespace {

using gpuplan::cli::CliContext;

// What the worker thread shares with the waiting caller.
struct Call {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    int code = 0;
    std::exception_ptr error;
    std::ostringstream out;
    std::ostringstream err;
    // The latest progress report, not yet handed to the callback.
    bool fresh = false;
    std::string label;
    double fraction = 0;
    std::string detail;
};

// The interrupt flag is one per process (like a signal); it is cleared when the first of a set
// of overlapping calls starts, never under a running command.
std::mutex g_in_flight_mutex;
int g_in_flight = 0;

void enter() {
    const std::lock_guard lock(g_in_flight_mutex);
    if (g_in_flight++ == 0) {
        gpuplan::cli::reset_interrupt();
    }
}

void leave() {
    const std::lock_guard lock(g_in_flight_mutex);
    --g_in_flight;
}

void run_on_worker(const std::shared_ptr<Call>& call, gpuplan::cli::Command command,
                   std::vector<std::string> args, std::vector<std::string> hwdb, bool progress) {
    if (progress) {
        gpuplan::cli::set_progress_hook(
            [call](const std::string& label, double fraction, const std::string& detail) {
                const std::lock_guard lock(call->m);
                call->fresh = true;
                call->label = label;
                call->fraction = fraction;
                call->detail = detail;
            });
    }
    CliContext ctx;
    ctx.args = std::move(args);
    ctx.extra_hwdb.assign(hwdb.begin(), hwdb.end());
    ctx.out = &call->out;
    ctx.err = &call->err;
    int code = 0;
    std::exception_ptr error;
    try {
        code = command(ctx);
    } catch (...) {
        error = std::current_exception();
    }
    gpuplan::cli::set_progress_hook({});
    {
        const std::lock_guard lock(call->m);
        call->code = code;
        call->error = error;
        call->done = true;
    }
    call->cv.notify_all();
}

// The error as a dict the Python layer raises from: kind, message and, for a scenario or
// hwdb file, where.
py::dict error_dict(const std::exception_ptr& error) {
    py::dict d;
    try {
        std::rethrow_exception(error);
    } catch (const gpuplan::cli::Interrupted& e) {
        d["kind"] = "interrupted";
        d["message"] = "interrupted";
        d["signal"] = e.signal();
    } catch (const gpuplan::ConfigError& e) {
        d["kind"] = "config";
        d["message"] = std::string(e.what());
        d["file"] = e.file();
        d["line"] = e.line();
        d["column"] = e.column();
        d["key"] = e.key_path();
    } catch (const gpuplan::UsageError& e) {
        d["kind"] = "usage";
        d["message"] = std::string(e.what());
    } catch (const gpuplan::InputError& e) {
        d["kind"] = "input";
        d["message"] = std::string(e.what());
    } catch (const std::exception& e) {
        d["kind"] = "internal";
        d["message"] = std::string(e.what());
    } catch (...) {
        d["kind"] = "internal";
        d["message"] = "unknown exception";
    }
    return d;
}

// Waits for the worker with the GIL released; between waits runs the signal handlers and the
// progress callback. A Python exception from either stops the command at its next safe point.
void wait_for(Call& call, std::thread& worker, const py::object& progress) {
    for (;;) {
        bool finished = false;
        bool fresh = false;
        std::string label;
        std::string detail;
        double fraction = 0;
        {
            const py::gil_scoped_release nogil;
            std::unique_lock lock(call.m);
            finished =
                call.cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return call.done; });
            fresh = std::exchange(call.fresh, false);
            label = call.label;
            fraction = call.fraction;
            detail = call.detail;
        }
        try {
            if (PyErr_CheckSignals() != 0) {
                throw py::error_already_set();
            }
            if (fresh && !progress.is_none()) {
                progress(label, fraction, detail);
            }
        } catch (...) {
            gpuplan::cli::request_interrupt(SIGINT);
            {
                const py::gil_scoped_release nogil;
                worker.join();
            }
            throw; // with the GIL held again: the exception is a Python one
        }
        if (finished) {
            const py::gil_scoped_release nogil;
            worker.join();
            return;
        }
    }
}

// Runs `gpuplan WORDS ARGS...` with extra hwdb folders; returns {code, out, err, error}.
py::dict run(const std::string& words, std::vector<std::string> args, std::vector<std::string> hwdb,
             const py::object& progress) {
    const gpuplan::cli::Subcommand* sub = gpuplan::cli::find_subcommand(words);
    if (sub == nullptr) {
        throw py::value_error("gpuplan has no command '" + words + "'");
    }
    auto call = std::make_shared<Call>();
    enter();
    struct Leave {
        ~Leave() { leave(); }
    } const guard;
    std::thread worker(run_on_worker, call, sub->run, std::move(args), std::move(hwdb),
                       !progress.is_none());
    wait_for(*call, worker, progress);
    py::dict result;
    result["code"] = call->code;
    result["out"] = call->out.str();
    result["err"] = call->err.str();
    result["error"] = call->error ? py::object(error_dict(call->error)) : py::object(py::none());
    return result;
}

py::list commands() {
    py::list out;
    for (const auto& s : gpuplan::cli::subcommands()) {
        out.append(py::make_tuple(s.words, s.summary));
    }
    return out;
}

} // namespace

PYBIND11_MODULE(_core, m) {
    m.doc() = "gpuplan's commands in-process (use the gpuplan package, not this module)";
    m.def("run", &run, py::arg("words"), py::arg("args"), py::arg("hwdb"),
          py::arg("progress") = py::none(),
          "Runs `gpuplan WORDS ARGS...`; returns {code, out, err, error}.");
    m.def("commands", &commands, "(words, summary) of every gpuplan command.");
    m.attr("version") = GPUPLAN_VERSION;
}
