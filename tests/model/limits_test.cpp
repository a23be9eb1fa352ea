// Issue 12: counts and rates that used to wrap or turn non-finite are refused with a message
// (GPU counts in 64 bits, KV block counts, token sums, physical minimums of rates).
#include "fixtures.hpp"
#include "model/deployment.hpp"
#include "model/error.hpp"
#include "model/memory.hpp"
#include "model/serving.hpp"
#include "model/training.hpp"
#include "model/unit_parser.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gpuplan::model {
namespace {

template <class F> std::string error_of(F&& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

TEST(Limits, GpuCountProductIsCheckedInSixtyFourBits) {
    // 64 × 80 × 1,048,576 = 5,368,709,120 wraps a 32-bit int to 1,073,741,824.
    Deployment d = test::deploy(test::llama3_8b(), test::h100());
    d.par.tp = 64;
    d.par.pp = 80;
    d.par.dp = 1048576;
    EXPECT_EQ(error_of([&] { validate(d); }),
              "deployment of 'llama-3-8b' on 'h100-sxm': tp × pp × dp is 5368709120 GPUs (ep 1); "
              "at most 16777216 are supported, lower the parallel sizes");
}

TEST(Limits, GpuCountIsDerivedFromTheLayoutWithACheckedProduct) {
    Deployment d = test::deploy(test::llama3_8b(), test::h100());
    d.par = Parallelism{4, 2, 3, 1};
    EXPECT_EQ(d.gpus(), 24); // 4 × 2 × 3
    d.par.dp = 5;
    EXPECT_EQ(d.gpus(), 40); // follows the layout: nothing to keep in sync
    d.par = Parallelism{4096, 4096, 1, 1};
    EXPECT_EQ(d.gpus(), 16777216); // exactly kMaxGpus = 2^24
    // 64 × 80 × 1,048,576 = 5,368,709,120 would wrap a 32-bit int to 1,073,741,824.
    d.par = Parallelism{64, 80, 1048576, 1};
    EXPECT_EQ(error_of([&] { (void)d.gpus(); }),
              "parallelism tp=64 pp=80 dp=1048576 is more than 16777216 GPUs; lower the parallel "
              "sizes");
    // (2^31 − 1)^3 would overflow even 64 bits; tp × pp alone is already past the limit.
    d.par = Parallelism{2147483647, 2147483647, 2147483647, 1};
    EXPECT_THROW((void)d.gpus(), InvalidArgument);
}

TEST(Limits, KvCacheOfAbsurdMemoryIsRefusedNotWrapped) {
    // 1e30 GiB of memory would give about 1e34 blocks, which wrapped to -9.2e18 with "fits".
    AcceleratorSpec g = test::h100();
    g.memory = Bytes(1e30 * kGiB);
    const Deployment d = test::deploy(test::llama3_8b(), g);
    const std::string e = error_of([&] { (void)estimate_memory(d); });
    EXPECT_EQ(e.rfind("the KV cache would hold more than 2^53 ", 0), 0u) << e;
    EXPECT_NE(e.find("check the accelerator's memory and the model's size"), std::string::npos);
}

TEST(Limits, TokenSumBeyondIntMaxStillFailsTheMaxModelLenCheck) {
    Deployment d = test::deploy(test::llama3_8b(), test::h100());
    d.engine.max_model_len = 8192;
    Workload w;
    w.input_tokens = 1024;
    w.output_tokens = 2147483647; // input + output = 2147484671 > INT_MAX
    const std::string e = error_of([&] { (void)estimate_serving(d, w, default_profile()); });
    EXPECT_EQ(e, "workload: input_tokens + output_tokens = 2147484671 exceeds max_model_len 8192; "
                 "raise max_model_len or shorten the requests");
}

TEST(Limits, TrainingTokensBeyondTheKeysRangeAreRefused) {
    // 1e300 tokens gave an infinite total compute ("inf PF-days").
    Deployment d = test::deploy(test::llama3_8b(), test::h100());
    TrainingConfig c;
    c.tokens = 1e300;
    c.global_batch = 8;
    c.seq_len = 4096;
    c.layout.dp = 1;
    EXPECT_EQ(error_of([&] { (void)TrainingModel(d, c, default_profile()); }),
              "training 'llama-3-8b' on 'h100-sxm': tokens to train must be from 1 to 1e18; give "
              "e.g. 'tokens: 300e9'");
}

TEST(Limits, RatesBelowPhysicalMinimumsAndNonFiniteNumbersAreRefused) {
    EXPECT_EQ(parse_quantity("1e-300 B/s", Dimension::BytesPerSecond).error,
              "'1e-300 B/s' is below any real bandwidth; give at least 1 kB/s (check the unit)");
    EXPECT_EQ(
        parse_quantity("0.5 FLOPS", Dimension::FlopsPerSecond).error,
        "'0.5 FLOPS' is below any real compute rate; give at least 1 GFLOPS (check the unit)");
    EXPECT_TRUE(parse_quantity("2 kB/s", Dimension::BytesPerSecond).si.has_value());
    EXPECT_EQ(parse_quantity("1e30 GiB", Dimension::Bytes).error,
              "'1e30 GiB' is beyond any real size; give at most 1e21 B (check the unit)");
    EXPECT_TRUE(parse_quantity("141 GB", Dimension::Bytes).si.has_value());
    for (const char* text : {"nan GB/s", "inf GB/s", "-inf GB/s"}) {
        EXPECT_FALSE(parse_quantity(text, Dimension::BytesPerSecond).si.has_value()) << text;
    }
}

} // namespace
} // namespace gpuplan::model
