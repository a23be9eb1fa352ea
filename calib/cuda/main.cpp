// gpuplan-calib: the CUDA microbenchmark of issue 6 (calib/cuda/README.md). Exit codes: 0 done,
// 1 a measurement failed or an internal error, 2 bad flags or an unwritable output, 3 no GPU.
#include "calib/cuda/calibrate.hpp"
#include "calib/cuda/cuda_util.hpp"
#include "calib/cuda/options.hpp"

#include <exception>
#include <iostream>

int main(int argc, char** argv) {
    using namespace gpuplan::calib::bench;
    try {
        const CalibOptions options = parse_options(argc, argv);
        if (options.help) {
            std::cout << usage_text();
            return 0;
        }
        return run_calibration(options);
    } catch (const NoGpuError& e) {
        std::cerr << "gpuplan-calib: no CUDA GPU found (" << e.what() << ")\n";
        return 3;
    } catch (const gpuplan::InputError& e) {
        std::cerr << "gpuplan-calib: error: " << e.what() << '\n';
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "gpuplan-calib: internal error: " << e.what() << '\n';
        return 1;
    }
}
