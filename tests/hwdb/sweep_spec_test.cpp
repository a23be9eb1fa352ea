#include "hwdb/scenario_loader.hpp"
#include "hwdb/sweep_spec.hpp"
#include "model/error.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace gpuplan;

namespace {

const std::string kHead = "id: s\ncommand: simulate\nbase: scenarios/base.yaml\n";

// The ConfigError of parsing `text` as a spec named "spec.yaml".
ConfigError spec_error(const std::string& text) {
    try {
        (void)hwdb::parse_sweep_spec(text, "dir/spec.yaml");
    } catch (const ConfigError& e) {
        return e;
    }
    ADD_FAILURE() << "no error for:\n" << text;
    return ConfigError("", 0, 0, "", "");
}

std::vector<std::string> values(const hwdb::SweepSpec& s, std::size_t point) {
    std::vector<std::string> out;
    for (const auto& v : s.point(point)) {
        out.push_back(v.value);
    }
    return out;
}

} // namespace

// 2 x (zip of 2) x 3 = 12 points, the last axis fastest; a range includes its stop; the base is
// relative to the spec's folder.
TEST(SweepSpec, AxesGiveTheCartesianProductInRowMajorOrder) {
    const auto s = hwdb::parse_sweep_spec(
        kHead + "set:\n  workload.requests: 200\naxes:\n"
                "  - key: hardware.tp\n    values: [2, 4]\n"
                "  - zip:\n"
                "      - {key: hardware.accelerator, values: [h100-sxm, h200-sxm]}\n"
                "      - {key: hardware.node, values: [dgx-h100, dgx-h200]}\n"
                "  - key: workload.requests_per_s\n    range: {start: 0.5, stop: 1.5, step: 0.5}\n",
        "dir/spec.yaml");
    EXPECT_EQ(s.id, "s");
    EXPECT_EQ(s.command, "simulate");
    EXPECT_EQ(s.base_file, std::filesystem::path("dir/scenarios/base.yaml"));
    ASSERT_EQ(s.sets.size(), 1u);
    EXPECT_EQ(s.sets[0].key, "workload.requests");
    EXPECT_EQ(s.sets[0].value, "200");
    EXPECT_EQ(s.keys, (std::vector<std::string>{"hardware.tp", "hardware.accelerator",
                                                "hardware.node", "workload.requests_per_s"}));
    ASSERT_EQ(s.point_count(), 12u);
    EXPECT_EQ(values(s, 0), (std::vector<std::string>{"2", "h100-sxm", "dgx-h100", "0.5"}));
    EXPECT_EQ(values(s, 5),
              (std::vector<std::string>{"2", "h200-sxm", "dgx-h200", "1.5"})); // 5 = 0*6 + 1*3 + 2
    EXPECT_EQ(values(s, 7),
              (std::vector<std::string>{"4", "h100-sxm", "dgx-h100", "1"})); // 7 = 1*6 + 0*3 + 1
    // Each value names where it was written, for scenario errors about it: "4" is on line 8
    // ("    values: [2, 4]"), after 16 characters.
    EXPECT_EQ(s.point(7)[0].origin, "dir/spec.yaml:8:17 (axes[0] hardware.tp)");
}

TEST(SweepSpec, IntegerRangesAreWholeNumbers) {
    const auto s = hwdb::parse_sweep_spec(
        kHead + "axes:\n  - key: engine.max_num_seqs\n    range: {start: 16, stop: 64, step: 16}\n",
        "spec.yaml");
    ASSERT_EQ(s.point_count(), 4u);
    EXPECT_EQ(values(s, 3), (std::vector<std::string>{"64"}));
}

// Issue 33: points are made on demand, so the documented maximum of 10^7 points costs no memory
// per point; the last one is 1000 * 10000 - 1 in row-major order: (999, 9999).
TEST(SweepSpec, TenMillionPointsAreMadeOnDemand) {
    const auto s = hwdb::parse_sweep_spec(
        kHead + "axes:\n  - key: workload.concurrency\n    range: {start: 1, stop: 1000, step: 1}\n"
                "  - key: workload.input_tokens\n    range: {start: 1, stop: 10000, step: 1}\n",
        "spec.yaml");
    EXPECT_EQ(s.point_count(), 10'000'000u);
    EXPECT_EQ(values(s, 9'999'999), (std::vector<std::string>{"1000", "10000"}));
    EXPECT_EQ(values(s, 12'345), (std::vector<std::string>{"2", "2346"})); // 1 * 10000 + 2345
    EXPECT_EQ(s.groups[1][0].values.size(), 0u); // a range holds no values
}

TEST(SweepSpec, BadAxesNameFileLineColumnAndKey) {
    auto e = spec_error(kHead + "axes:\n  - key: hardware.tp\n    values: []\n");
    EXPECT_EQ(e.line(), 6);
    EXPECT_EQ(e.key_path(), "axes[0].values");
    e = spec_error(kHead +
                   "axes:\n  - key: hardware.tp\n    range: {start: 1, stop: 4, step: 0}\n");
    EXPECT_EQ(e.line(), 6);
    EXPECT_EQ(e.key_path(), "axes[0].range.step");
    e = spec_error(
        kHead +
        "axes:\n  - key: hardware.tp\n    values: [1]\n  - key: hardware.tp\n    values: [2]\n");
    EXPECT_EQ(e.line(), 7);
    EXPECT_NE(std::string(e.what()).find("'hardware.tp' is swept twice"), std::string::npos)
        << e.what();
    e = spec_error(kHead + "axes:\n  - key: hardware..tp\n    values: [1]\n");
    EXPECT_EQ(e.key_path(), "axes[0].key");
    e = spec_error("id: s\ncommand: plot\nbase: b.yaml\naxes:\n  - {key: a, values: [1]}\n");
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.key_path(), "command");
    e = spec_error(kHead + "axes:\n  - {key: a, values: [1]}\nextra: 1\n");
    EXPECT_EQ(e.line(), 6);
    EXPECT_EQ(e.key_path(), "extra");
    e = spec_error(kHead);
    EXPECT_EQ(e.key_path(), "axes");
}

// Regression: an unknown key given by --set was reported at the scenario file without a line;
// it names the flag.
TEST(SweepSpec, UnknownOverrideKeyNamesItsOrigin) {
    const hwdb::Database db = hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    try {
        (void)hwdb::parse_scenario(
            "schema: 1\nmodel: llama-3.1-8b\nhardware:\n  accelerator: h100-sxm\n", "s.yaml", db,
            {{"workload.concurency", "8", "spec.yaml:9:14 (axes[0] workload.concurency)"}});
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.file(), "spec.yaml:9:14 (axes[0] workload.concurency)");
        EXPECT_EQ(e.key_path(), "workload.concurency");
    }
}
