#include "hwdb/database.hpp"

#include "model/error.hpp"
#include "model/kv_cache.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace gpuplan;

namespace {
const hwdb::Database& builtin() {
    static const hwdb::Database db =
        hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    return db;
}
} // namespace

TEST(Database, BuiltInHwdbLoadsAtLeastThirtyAccelerators) {
    EXPECT_GE(builtin().accelerators().size(), 30u);
    EXPECT_GE(builtin().servers().size(), 5u);
    EXPECT_GE(builtin().interconnects().size(), 8u);
    EXPECT_GE(builtin().racks().size(), 1u);
}

TEST(Database, RequiredAcceleratorsArePresent) {
    for (const char* name : {"a100-sxm-40gb",
                             "a100-sxm-80gb",
                             "a100-pcie-40gb",
                             "a100-pcie-80gb",
                             "h100-sxm",
                             "h100-pcie",
                             "h100-nvl",
                             "h200-sxm",
                             "h200-nvl",
                             "h20",
                             "h800",
                             "l40s",
                             "l4",
                             "a10",
                             "rtx-3090",
                             "rtx-4090",
                             "rtx-5090",
                             "b100",
                             "b200",
                             "gb200",
                             "mi250x",
                             "mi300x",
                             "mi325x",
                             "mi355x",
                             "gaudi2",
                             "gaudi3",
                             "tpu-v5e",
                             "tpu-v5p",
                             "b300",
                             "gb300",
                             "rtx-pro-6000-server",
                             "l40",
                             "a40",
                             "rtx-a6000",
                             "t4",
                             "v100-sxm2-32gb",
                             "rtx-4080",
                             "tpu-v6e",
                             "tpu-v7",
                             "trainium2",
                             "trainium3",
                             "mi455x",
                             "rubin"}) {
        EXPECT_NE(builtin().find_accelerator(name), nullptr) << name;
    }
}

TEST(Database, EveryAcceleratorHasConsistentNumbers) {
    for (const auto& a : builtin().accelerators()) {
        SCOPED_TRACE(a.name);
        EXPECT_GT(a.memory.si(), 8e9);
        EXPECT_GT(a.memory_bandwidth.si(), 1e11);
        const auto bf16 = a.dense.bf16 ? a.dense.bf16 : a.dense.fp16;
        ASSERT_TRUE(bf16);
        // Sanity of dense (not sparse) peaks: below 5 PFLOPS bf16 for any shipping part
        // (announced parts such as MI455X and Rubin are flagged preliminary and exempt).
        if (!hwdb::is_preliminary(a)) {
            EXPECT_LT(bf16->si(), 5e15);
        }
        if (a.dense.fp8 && a.vendor == "nvidia" && a.architecture == "hopper") {
            EXPECT_NEAR(a.dense.fp8->si() / bf16->si(), 2.0, 0.01);
        }
        EXPECT_FALSE(a.sources.empty());
        if (a.vendor != "google" && a.vendor != "aws") { // neither publishes chip power
            ASSERT_TRUE(a.board_power);
            EXPECT_GT(a.board_power->si(), 0);
        }
    }
}

TEST(Database, DatasheetFiguresOfTheH100) {
    const auto& h100 = builtin().accelerator("H100 SXM5 80GB"); // alias, any case
    EXPECT_EQ(h100.name, "h100-sxm");
    EXPECT_DOUBLE_EQ(h100.memory.si(), 80.0 * kGiB);
    EXPECT_DOUBLE_EQ(h100.memory_bandwidth.si(), 3.35e12);
    EXPECT_NEAR(h100.dense.bf16->si(), 989.4e12, 1e12);
    EXPECT_DOUBLE_EQ(h100.board_power->si(), 700);
}

TEST(Database, UnknownNameSuggestsTheClosest) {
    try {
        (void)builtin().accelerator("h100-sxn");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("did you mean 'h100-sxm'"), std::string::npos)
            << e.what();
    }
}

TEST(Database, LaterFolderOverridesByName) {
    hwdb::Database db = builtin();
    db.add_yaml(R"(schema: 1
interconnects:
  - name: pcie4-x16
    kind: pcie
    bandwidth_per_direction: 20 GB/s
    latency: 9 us
    sources: my lab
)",
                "override.yaml");
    EXPECT_DOUBLE_EQ(db.interconnect("pcie4-x16").bandwidth_per_direction.si(), 20e9);
    EXPECT_EQ(db.interconnects().size(), builtin().interconnects().size());
}

TEST(Database, Llama31With70BMatchesTheIssueFigures) {
    const auto& m = builtin().model("Llama-3.1-70B");
    EXPECT_NEAR(model::count_params(m).total, 70.6e9, 0.35e9);
    EXPECT_DOUBLE_EQ(model::kv_bytes_per_token(m, model::parse_precision("bf16")).si(), 327680);
}
