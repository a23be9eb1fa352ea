#include "cli/plot_option.hpp"

#include "cli/interrupt.hpp"
#include "hwdb/scenario_writer.hpp"
#include "model/error.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <ostream>
#include <vector>

extern char** environ;

namespace gpuplan::cli {

namespace {

/// gpuplan-plot in the folder of the running executable.
std::filesystem::path plot_program() {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) {
        return "gpuplan-plot";
    }
    return self.parent_path() / "gpuplan-plot";
}

} // namespace

void write_plots(const model::Scenario& s, const std::string& dir, bool simulate,
                 std::optional<int> requests, std::ostream& log) {
    const std::filesystem::path program = plot_program();
    if (!std::filesystem::exists(program)) {
        throw InputError("--plot: " + program.string() +
                         " is not installed; it is built with the desktop app (Qt6 with Qt Charts, "
                         "configure with -DGPUPLAN_BUILD_GUI=ON)");
    }
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
        throw InputError("--plot " + dir + ": cannot create the folder: " + ec.message());
    }
    const std::filesystem::path scenario = std::filesystem::path(dir) / "scenario.yaml";
    hwdb::save_scenario(scenario, s); // the effective scenario: flags and --set applied

    std::vector<std::string> args = {program.string(), scenario.string(), "--out", dir};
    if (simulate) {
        args.emplace_back("--simulate");
    }
    if (requests) {
        args.emplace_back("--requests");
        args.emplace_back(std::to_string(*requests));
    }
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    // The child's report goes to stderr, so that --json output on stdout stays clean.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
    log.flush();
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        throw InputError("--plot: cannot run " + program.string());
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            throw InputError("--plot: lost track of " + program.string());
        }
    }
    // Ctrl-C reaches the whole process group: the child ended because of it, not of bad input.
    throw_if_interrupted();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        throw InputError("--plot: " + program.string() + " failed (exit " +
                         std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                         "); its message is above");
    }
}

} // namespace gpuplan::cli
