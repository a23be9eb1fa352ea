// Fuzzes the sweep spec reader (issue 33): a spec parses or throws gpuplan::Error, never
// crashes, hangs or builds more points than kMaxSweepPoints.
#include "hwdb/sweep_spec.hpp"
#include "model/error.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const auto spec = gpuplan::hwdb::parse_sweep_spec(
            std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
        const std::size_t n = spec.point_count();
        if (n > gpuplan::hwdb::kMaxSweepPoints) {
            std::abort();
        }
        if (n > 0) {
            (void)spec.point(n - 1); // the last point, made on demand
        }
    } catch (const gpuplan::Error&) {
    }
    return 0;
}
