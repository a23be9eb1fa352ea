// Fuzzes the trace CSV reader (Azure, Vidur and plain formats, detected from the header).
#include "hwdb/trace_loader.hpp"
#include "model/error.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        (void)gpuplan::hwdb::parse_trace(
            std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.csv");
    } catch (const gpuplan::Error&) {
    }
    return 0;
}
