// The text-output filter of the CLI: the last line of defence against NaN and infinity in
// reports (issue 12). Lines before the first non-finite word pass; it and the rest are withheld.
#include "cli/finite_output.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <sstream>

namespace {

using gpuplan::cli::FiniteLineFilter;

TEST(FiniteOutput, RecognisesNonFiniteWordsOnly) {
    EXPECT_TRUE(FiniteLineFilter::has_non_finite("facility nan W"));
    EXPECT_TRUE(FiniteLineFilter::has_non_finite("TTFT inf ms"));
    EXPECT_TRUE(FiniteLineFilter::has_non_finite("x -nan y"));
    EXPECT_TRUE(FiniteLineFilter::has_non_finite("-inf"));
    EXPECT_TRUE(FiniteLineFilter::has_non_finite("NaN"));
    EXPECT_FALSE(FiniteLineFilter::has_non_finite("link infinity-fabric"));
    EXPECT_FALSE(FiniteLineFilter::has_non_finite("info: inference on nano"));
    EXPECT_FALSE(FiniteLineFilter::has_non_finite("TTFT 12.5 ms"));
}

TEST(FiniteOutput, WithholdsTheFirstBadLineAndEverythingAfter) {
    std::stringbuf sink;
    FiniteLineFilter filter(&sink);
    std::ostream out(&filter);
    out << "power 700 W\n"
        << "facility " << 0.0 / 0.0 << " W\n"
        << "after\n"
        << std::flush;
    const std::string bad = filter.finish();
    EXPECT_EQ(sink.str(), "power 700 W\n");
    EXPECT_EQ(bad.substr(0, 9), "facility ");
}

TEST(FiniteOutput, ForwardsCleanOutputIncludingAnUnterminatedLastLine) {
    std::stringbuf sink;
    FiniteLineFilter filter(&sink);
    std::ostream out(&filter);
    out << "a 1\nb 2";
    EXPECT_EQ(filter.finish(), "");
    EXPECT_EQ(sink.str(), "a 1\nb 2");
}

} // namespace
