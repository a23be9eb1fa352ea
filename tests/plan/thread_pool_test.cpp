// The thread pool (plan/thread_pool.hpp): every index runs once whatever the worker count, and
// the reported failure is the lowest failing index, not the first in time.
#include "plan/thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuplan::plan {
namespace {

TEST(ThreadPool, RunsEveryIndexExactlyOnceForAnyWorkerCount) {
    for (const int threads : {0, 1, 2, 3, 8, 64}) {
        SCOPED_TRACE(threads);
        const std::size_t n = 37;
        std::vector<std::atomic<int>> runs(n);
        parallel_for(n, threads, [&](std::size_t i) { ++runs[i]; });
        for (std::size_t i = 0; i < n; ++i) {
            EXPECT_EQ(runs[i].load(), 1) << "index " << i;
        }
    }
}

TEST(ThreadPool, NoJobsRunsNothing) {
    int calls = 0;
    parallel_for(0, 4, [&](std::size_t) { ++calls; });
    EXPECT_EQ(calls, 0);
}

TEST(ThreadPool, RethrowsTheLowestFailingIndexAfterRunningEveryJob) {
    for (const int threads : {1, 4}) {
        SCOPED_TRACE(threads);
        const std::size_t n = 20;
        std::vector<std::atomic<int>> runs(n);
        try {
            parallel_for(n, threads, [&](std::size_t i) {
                ++runs[i];
                if (i == 17 || i == 5 || i == 11) {
                    throw std::runtime_error("job " + std::to_string(i));
                }
            });
            FAIL() << "expected an exception";
        } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "job 5");
        }
        for (std::size_t i = 0; i < n; ++i) {
            EXPECT_EQ(runs[i].load(), 1) << "index " << i;
        }
    }
}

TEST(ThreadPool, WorkerThreadsTakesAPositiveRequestAsGiven) {
    EXPECT_EQ(worker_threads(3), 3);
    EXPECT_EQ(worker_threads(1), 1);
    EXPECT_GE(worker_threads(0), 1); // hardware_concurrency, at least one
    EXPECT_GE(worker_threads(-2), 1);
}

} // namespace
} // namespace gpuplan::plan
