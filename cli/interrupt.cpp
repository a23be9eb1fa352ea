#include "cli/interrupt.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

namespace gpuplan::cli {
namespace {

// A signal handler may only touch lock-free atomics and async-signal-safe calls, and
// std::stop_source::request_stop is neither guaranteed to be; so the handler writes the signal
// number into a pipe and a watcher thread requests the stop (the self-pipe pattern).
std::atomic<int> g_signal{0};
int g_pipe[2] = {-1, -1};
std::stop_source& source() {
    static std::stop_source s;
    return s;
}

extern "C" void on_signal(int sig) {
    int expected = 0;
    if (!g_signal.compare_exchange_strong(expected, sig)) {
        // The second signal: the user insists; end now with the default action.
        std::signal(sig, SIG_DFL);
        std::raise(sig);
        return;
    }
    const int saved = errno;
    const char byte = static_cast<char>(sig);
    [[maybe_unused]] const auto n = ::write(g_pipe[1], &byte, 1);
    errno = saved;
}

} // namespace

void install_interrupt_handlers() {
    static_assert(std::atomic<int>::is_always_lock_free);
    if (::pipe2(g_pipe, O_CLOEXEC) != 0) {
        return; // no handler: the default action still ends the process
    }
    std::thread([] {
        char byte = 0;
        while (::read(g_pipe[0], &byte, 1) < 0 && errno == EINTR) {
        }
        source().request_stop();
    }).detach();
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (const int sig : {SIGINT, SIGTERM}) {
        struct sigaction old {};
        // A shell running us in the background with SIGINT ignored expects it to stay ignored.
        if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) {
            continue;
        }
        ::sigaction(sig, &sa, nullptr);
    }
}

void request_interrupt(int sig) {
    int expected = 0;
    if (g_signal.compare_exchange_strong(expected, sig)) {
        source().request_stop();
    }
}

void reset_interrupt() {
    g_signal.store(0);
    source() = std::stop_source{};
}

std::stop_token interrupt_token() {
    return source().get_token();
}

int interrupt_signal() {
    return g_signal.load();
}

void throw_if_interrupted() {
    if (const int sig = g_signal.load()) {
        throw Interrupted(sig);
    }
}

} // namespace gpuplan::cli
