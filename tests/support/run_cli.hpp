#pragma once
/// Runs the gpuplan binary (GPUPLAN_CLI, a compile definition) with arguments, for tests that
/// check the command line's output and exit codes.

#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace gpuplan::test {

struct RunResult {
    int exit_code;
    std::string out; ///< stdout and stderr together
};

/// Runs `gpuplan ARGS` through the shell and collects its output and exit status.
inline RunResult run_cli(const std::string& args) {
    const std::string cmd = std::string(GPUPLAN_CLI) + " " + args + " 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    while (std::size_t n = fread(buf, 1, sizeof buf, pipe)) {
        out.append(buf, n);
    }
    const int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

} // namespace gpuplan::test
