#include "plan/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

namespace gpuplan::plan {

int worker_threads(int requested) {
    return requested > 0 ? requested
                         : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& job) {
    const std::size_t workers =
        std::min<std::size_t>(n, static_cast<std::size_t>(std::max(1, threads)));
    // One slot per job: the first failure by index, not by time, is the one reported.
    std::vector<std::exception_ptr> errors(n);
    if (workers <= 1) {
        for (std::size_t i = 0; i < n; ++i) {
            try {
                job(i);
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
    } else {
        std::atomic<std::size_t> next{0};
        std::vector<std::jthread> pool;
        pool.reserve(workers);
        for (std::size_t w = 0; w < workers; ++w) {
            pool.emplace_back([&] {
                for (std::size_t i = next++; i < n; i = next++) {
                    try {
                        job(i);
                    } catch (...) {
                        errors[i] = std::current_exception();
                    }
                }
            });
        }
    } // the jthreads join here
    for (const auto& e : errors) {
        if (e) {
            std::rethrow_exception(e);
        }
    }
}

} // namespace gpuplan::plan
