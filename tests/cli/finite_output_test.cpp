// The text-output filter of the CLI: the last line of defence against NaN and infinity in
// reports (issue 12). Lines before the first marked non-finite number pass; it and the rest are
// withheld. Words that read as numbers ("inf", "nan") are names, never withheld (issue 33).
#include "cli/finite_output.hpp"

#include "model/unit_parser.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <locale>
#include <ostream>
#include <sstream>

namespace {

using gpuplan::cli::FiniteLineFilter;

TEST(FiniteOutput, RecognisesMarkedNumbersNotWords) {
    // Names that read as numbers are text, not numbers (issue 33): none is withheld.
    for (const char* name :
         {"facility nan W", "TTFT inf ms", "x -nan y", "-inf", "NaN budget", "scenario inf-test",
          "nan.yaml", "Infinity", "INF", "\"name\": \"inf\","}) {
        EXPECT_FALSE(FiniteLineFilter::has_non_finite(name)) << name;
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_TRUE(FiniteLineFilter::has_non_finite(gpuplan::checked_format("TTFT {:.1f} ms", inf)));
    EXPECT_TRUE(FiniteLineFilter::has_non_finite(gpuplan::checked_format("{} W", -inf)));
    EXPECT_TRUE(FiniteLineFilter::has_non_finite(gpuplan::checked_format("{:.3g}", nan)));
    EXPECT_FALSE(
        FiniteLineFilter::has_non_finite(gpuplan::checked_format("{} {:.1f}", "inf", 2.5)));
    // The same text inside a JSON string, where nlohmann::json escapes the SOH.
    EXPECT_TRUE(FiniteLineFilter::has_non_finite(R"("reason": "\u0001non-finite:nan W")"));
    // The formatters of the model mark by value as well.
    EXPECT_TRUE(FiniteLineFilter::has_non_finite(gpuplan::model::format_fixed(nan, 2)));
    EXPECT_TRUE(FiniteLineFilter::has_non_finite(gpuplan::model::format_percent(inf)));
    EXPECT_TRUE(
        FiniteLineFilter::has_non_finite(gpuplan::model::format_seconds(gpuplan::Seconds(nan))));
    EXPECT_FALSE(FiniteLineFilter::has_non_finite(gpuplan::model::format_fixed(12.5, 1)));
    EXPECT_EQ(FiniteLineFilter::without_marks(gpuplan::checked_format("TTFT {} ms", inf)),
              "TTFT inf ms");
}

TEST(FiniteOutput, StreamsMarkNonFiniteNumbersThroughTheFacet) {
    std::ostringstream out;
    out.imbue(std::locale(std::locale::classic(), new gpuplan::cli::NonFiniteMarkingNumPut));
    out << "inf " << 1.5 << ' ';
    EXPECT_FALSE(FiniteLineFilter::has_non_finite(out.str()));
    EXPECT_EQ(out.str(), "inf 1.5 ");
    out << std::numeric_limits<double>::infinity();
    EXPECT_TRUE(FiniteLineFilter::has_non_finite(out.str()));
}

TEST(FiniteOutput, WithholdsTheFirstBadLineAndEverythingAfter) {
    std::stringbuf sink;
    FiniteLineFilter filter(&sink);
    std::ostream out(&filter);
    out.imbue(std::locale(std::locale::classic(), new gpuplan::cli::NonFiniteMarkingNumPut));
    out << "power 700 W\n"
        << "scenario inf-test\n"
        << "facility " << std::numeric_limits<double>::quiet_NaN() << " W\n"
        << "after\n"
        << std::flush;
    const std::string bad = filter.finish();
    EXPECT_EQ(sink.str(), "power 700 W\nscenario inf-test\n");
    EXPECT_EQ(FiniteLineFilter::without_marks(bad), "facility nan W\n");
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
