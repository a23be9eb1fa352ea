#include "model/precision.hpp"

#include "model/error.hpp"

#include <gtest/gtest.h>

using namespace gpuplan;
using namespace gpuplan::model;

TEST(Precision, PlainFormatsHaveTheirWidth) {
    EXPECT_DOUBLE_EQ(parse_precision("bf16").bits_per_element, 16);
    EXPECT_DOUBLE_EQ(parse_precision("FP8").bits_per_element, 8);
    EXPECT_DOUBLE_EQ(parse_precision("e5m2").bits_per_element, 8);
    EXPECT_DOUBLE_EQ(parse_precision("fp32").bits_per_element, 32);
    EXPECT_EQ(parse_precision("fp8").compute, ComputeType::Fp8);
}

TEST(Precision, GroupQuantizationAddsScaleAndZeroPointBits) {
    // docs/domain.md §2: a 16-bit scale per 128 weights adds 0.125 bit; a 4-bit zero point 4/128.
    EXPECT_DOUBLE_EQ(parse_precision("gptq-int4").bits_per_element, 4 + 16.0 / 128 + 4.0 / 128);
    EXPECT_DOUBLE_EQ(parse_precision("awq:g64").bits_per_element, 4 + 16.0 / 64 + 4.0 / 64);
    EXPECT_DOUBLE_EQ(parse_precision("int4").bits_per_element, 4 + 0.125);
    EXPECT_TRUE(parse_precision("awq").weight_only);
    EXPECT_EQ(parse_precision("awq:g64").name, "awq-int4:g64");
}

TEST(Precision, GgufTypesUseLlamaCppBitsPerWeight) {
    EXPECT_DOUBLE_EQ(parse_precision("Q4_K_M").bits_per_element, 4.89);
    EXPECT_DOUBLE_EQ(parse_precision("q8_0").bits_per_element, 8.5);
    EXPECT_DOUBLE_EQ(parse_precision("q4_0").bits_per_element, 4.5);
    // docs/domain.md §3: Q4_K_M brings a 7B model to about 4.1 GB.
    EXPECT_NEAR(6.74e9 * parse_precision("q4_k_m").bytes_per_element() / 1e9, 4.1, 0.05);
}

TEST(Precision, MicroscaledFp4) {
    EXPECT_DOUBLE_EQ(parse_precision("mxfp4").bits_per_element, 4.25);
    EXPECT_DOUBLE_EQ(parse_precision("nvfp4").bits_per_element, 4.5);
}

TEST(Precision, UnknownNameListsTheFormats) {
    EXPECT_FALSE(find_precision("int3"));
    EXPECT_FALSE(find_precision("awq:gx"));
    try {
        (void)parse_precision("int3");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("bf16"), std::string::npos);
    }
}
