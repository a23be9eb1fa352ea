#include "cli/mpi_job.hpp"

#include "model/error.hpp"

#ifdef GPUPLAN_HAVE_MPI
#include <mpi.h>
#endif

#include <climits>
#include <cstdlib>

namespace gpuplan::cli {

#ifdef GPUPLAN_HAVE_MPI

bool mpi_built() noexcept {
    return true;
}

MpiJob::MpiJob() {
    int ready = 0;
    MPI_Initialized(&ready);
    if (!ready) {
        MPI_Init(nullptr, nullptr);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiJob::~MpiJob() {
    release_window();
    MPI_Finalize();
}

void MpiJob::release_window() noexcept {
    if (window_ != nullptr) {
        auto* win = static_cast<MPI_Win*>(window_);
        MPI_Win_free(win);
        delete win;
        window_ = nullptr;
        counter_ = nullptr;
    }
}

void MpiJob::share_tasks(std::size_t count) {
    release_window();
    count_ = count;
    auto* win = new MPI_Win;
    const MPI_Aint bytes = rank_ == 0 ? static_cast<MPI_Aint>(sizeof(long long)) : 0;
    MPI_Win_allocate(bytes, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &counter_, win);
    window_ = win;
    if (rank_ == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, *win);
        *counter_ = 0;
        MPI_Win_unlock(0, *win);
    }
    MPI_Barrier(MPI_COMM_WORLD); // nobody takes a task before the counter is zero
}

std::optional<std::size_t> MpiJob::next_task() {
    if (window_ == nullptr) {
        return std::nullopt;
    }
    auto* win = static_cast<MPI_Win*>(window_);
    const long long one = 1;
    long long taken = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, *win);
    MPI_Fetch_and_op(&one, &taken, MPI_LONG_LONG, 0, 0, MPI_SUM, *win);
    MPI_Win_unlock(0, *win);
    if (taken < 0 || static_cast<std::size_t>(taken) >= count_) {
        return std::nullopt;
    }
    return static_cast<std::size_t>(taken);
}

std::vector<std::string> MpiJob::gather(const std::string& mine) {
    if (mine.size() > static_cast<std::size_t>(INT_MAX)) {
        throw InputError("rank " + std::to_string(rank_) + " holds " + std::to_string(mine.size()) +
                         " bytes of results, more than one MPI message carries; split the sweep "
                         "with --shard");
    }
    const int length = static_cast<int>(mine.size());
    std::vector<int> lengths(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
    MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<int> offsets(lengths.size());
    long long total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
        if (total > INT_MAX) {
            throw InputError("the ranks hold more than 2 GiB of results together; split the "
                             "sweep with --shard");
        }
        offsets[r] = static_cast<int>(total);
        total += lengths[r];
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                0, MPI_COMM_WORLD);
    std::vector<std::string> out;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
        out.push_back(
            all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
    }
    return out;
}

std::vector<std::string> MpiJob::all_gather(const std::string& mine) {
    if (mine.size() > static_cast<std::size_t>(INT_MAX)) {
        throw InputError("rank " + std::to_string(rank_) + " holds " + std::to_string(mine.size()) +
                         " bytes of results, more than one MPI message carries");
    }
    const int length = static_cast<int>(mine.size());
    std::vector<int> lengths(static_cast<std::size_t>(size_));
    MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::vector<int> offsets(lengths.size());
    long long total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
        if (total > INT_MAX) {
            throw InputError("the ranks hold more than 2 GiB of results together");
        }
        offsets[r] = static_cast<int>(total);
        total += lengths[r];
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                   MPI_CHAR, MPI_COMM_WORLD);
    std::vector<std::string> out;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
        out.push_back(
            all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
    }
    return out;
}

void MpiJob::abort(int code) noexcept {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code); // MPI_Abort does not return; this keeps [[noreturn]] honest
}

#else

bool mpi_built() noexcept {
    return false;
}

MpiJob::MpiJob() {
    throw UsageError("this gpuplan was built without MPI; install OpenMPI (libopenmpi-dev, "
                     "openmpi-bin; scripts/install-deps.sh does) and rebuild, or split the "
                     "sweep with --shard K/N");
}

MpiJob::~MpiJob() = default;
void MpiJob::release_window() noexcept {}
void MpiJob::share_tasks(std::size_t count) {
    count_ = count;
}
std::optional<std::size_t> MpiJob::next_task() {
    return std::nullopt;
}
std::vector<std::string> MpiJob::gather(const std::string& mine) {
    return {mine};
}
void MpiJob::abort(int code) noexcept {
    std::_Exit(code);
}

#endif

} // namespace gpuplan::cli
