#include "cli/progress_bar.hpp"

namespace gpuplan::cli {

namespace {
// Per thread, so that two Python threads running commands at once each see their own callback;
// a bar copies the hook when it is built, so pool threads that report through it need none.
thread_local ProgressHook t_hook;
} // namespace

void set_progress_hook(ProgressHook hook) {
    t_hook = std::move(hook);
}

const ProgressHook& progress_hook() {
    return t_hook;
}

} // namespace gpuplan::cli
