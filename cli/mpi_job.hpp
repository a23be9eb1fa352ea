#pragma once
/// An MPI job for `gpuplan sweep --mpi` (docs/sweep.md, "MPI"). The ranks take tasks from one
/// shared counter, so a rank that finishes early takes the next task (points differ in cost),
/// and every rank's results are gathered at rank 0, which writes the output. The counter lives
/// in an MPI window at rank 0 and is advanced with MPI_Fetch_and_op (passive-target RMA): rank 0
/// works on tasks like every other rank instead of only handing them out.
///
/// Built only when CMake finds MPI (GPUPLAN_HAVE_MPI); without it, constructing a job throws
/// UsageError saying how to get an MPI build.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan::cli {

/// True when this gpuplan was built with MPI.
[[nodiscard]] bool mpi_built() noexcept;

class MpiJob {
  public:
    /// Initialises MPI (MPI_Init). Throws UsageError when the binary has no MPI.
    MpiJob();
    ~MpiJob();
    MpiJob(const MpiJob&) = delete;
    MpiJob& operator=(const MpiJob&) = delete;

    [[nodiscard]] int rank() const noexcept { return rank_; }
    [[nodiscard]] int size() const noexcept { return size_; }

    /// Starts handing out the tasks 0 … count − 1 (collective: every rank calls it).
    void share_tasks(std::size_t count);
    /// The next task for this rank, or nullopt when every task has been handed out.
    [[nodiscard]] std::optional<std::size_t> next_task();
    /// Every rank's bytes, in rank order, at rank 0; empty on the other ranks (collective).
    /// Throws InputError when one rank's bytes exceed what one MPI message carries (2 GiB).
    [[nodiscard]] std::vector<std::string> gather(const std::string& mine);
    /// Every rank's bytes, in rank order, on every rank (collective). Throws as gather does.
    [[nodiscard]] std::vector<std::string> all_gather(const std::string& mine);
    /// Ends the whole job now with `code` (a rank that cannot go on must not leave the others
    /// waiting in a collective call).
    [[noreturn]] void abort(int code) noexcept;

  private:
    void release_window() noexcept;
    int rank_ = 0;
    int size_ = 1;
    std::size_t count_ = 0;
    void* window_ = nullptr; // MPI_Win, opaque here so that mpi.h stays out of the header
    long long* counter_ = nullptr;
};

} // namespace gpuplan::cli
