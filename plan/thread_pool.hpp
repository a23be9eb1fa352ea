#pragma once
/// The one thread pool of gpuplan's libraries and front ends: a parallel loop over independent
/// jobs. The sizing search (plan/sizing_search.hpp) and the CLI's `simulate --sweep` run their
/// simulations through it. model/ and sim/ stay single-threaded values-in, values-out code; a
/// caller that wants parallelism runs them here, each job on its own values.

#include <cstddef>
#include <functional>

namespace gpuplan::plan {

/// The worker count for a request of `requested` threads: `requested` when positive, else
/// std::thread::hardware_concurrency() (at least 1, since it may report 0).
[[nodiscard]] int worker_threads(int requested = 0);

/// Runs job(0) … job(n − 1) on min(n, max(1, threads)) workers (the calling thread alone when
/// that is 1), each index exactly once, in no fixed order, and returns when all have finished.
/// Every job runs even when another throws; then the exception of the lowest failing index is
/// rethrown, so failures are as deterministic as results. Jobs must not share mutable state
/// except through their own index.
void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& job);

} // namespace gpuplan::plan
