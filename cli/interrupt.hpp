#pragma once
/// SIGINT and SIGTERM for the command line: the first signal asks the running command to stop
/// at its next safe point (through a std::stop_token the long calls take); a second one ends
/// the process at once. A stopped command writes no output and exits 128 + the signal number
/// (130 for SIGINT, 143 for SIGTERM), the shell convention.

#include <exception>
#include <stop_token>

namespace gpuplan::cli {

/// Thrown by a command that stopped because of a signal; main() turns it into 128 + signal.
class Interrupted : public std::exception {
  public:
    explicit Interrupted(int signal) : signal_(signal) {}
    [[nodiscard]] int signal() const { return signal_; }
    [[nodiscard]] const char* what() const noexcept override { return "interrupted"; }

  private:
    int signal_;
};

/// Installs the SIGINT and SIGTERM handlers (once, from main before any thread starts).
void install_interrupt_handlers();

/// Requested when SIGINT or SIGTERM arrives; pass it to sim::simulate, the sizing search, ...
[[nodiscard]] std::stop_token interrupt_token();

/// The signal that arrived (SIGINT or SIGTERM), or 0.
[[nodiscard]] int interrupt_signal();

/// Throws Interrupted when a signal has arrived: call before writing an output and after each
/// long step that takes no stop token.
void throw_if_interrupted();

/// Asks the running commands to stop at their next safe point, as signal `sig` would: what an
/// in-process front end (the Python module) calls when its own SIGINT handler ran. Thread-safe.
void request_interrupt(int sig);

/// Forgets an interrupt, so that the next command runs to its end. Call only when no command
/// is running (a command still holding the old token would keep seeing the stop).
void reset_interrupt();

} // namespace gpuplan::cli
