// The accelerators, systems and racks added for issue 37 (Blackwell Ultra, GB300 NVL72, RTX PRO
// 6000, the everyday inference cards, TPU v6e/v7, Trainium2/3 and the preliminary MI455X and
// Rubin), each checked against the figures of its datasheet. Every expected value below is
// written from the vendor's own document (cited at each test), not read back from the hwdb: a
// typo in a YAML file fails here.
#include "hwdb/database.hpp"
#include "hwdb/profile_loader.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/comm.hpp"
#include "model/error.hpp"
#include "model/scenario.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

using namespace gpuplan;

namespace {

const hwdb::Database& builtin() {
    static const hwdb::Database db =
        hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    return db;
}

constexpr double kT = 1e12; // TFLOPS, TB/s
constexpr double kG = 1e9;  // GB/s

double si(const std::optional<FlopsPerSecond>& f) {
    return f ? f->si() : -1.0;
}

} // namespace

// NVIDIA Blackwell Ultra per-GPU table (dense = the sparse headline / 2), as reproduced in S29
// and in NVIDIA's HGX B300 figures: FP4 18 sparse | 14 dense PFLOPS, FP8 4.5, BF16 2.25 PFLOPS,
// 1,100 W; nvidia-smi shows 275040 MiB on an HGX B300 (ai-dynamo/aiconfigurator systems file).
TEST(HardwareCatalog, B300MatchesTheBlackwellUltraDatasheet) {
    const auto& a = builtin().accelerator("NVIDIA B300 SXM6 AC"); // nvidia-smi's name
    EXPECT_EQ(a.name, "b300");
    EXPECT_EQ(a.architecture, "blackwell");
    EXPECT_DOUBLE_EQ(a.memory.si(), 275040.0 * kMiB);
    EXPECT_DOUBLE_EQ(a.memory_bandwidth.si(), 7.7 * kT);
    EXPECT_DOUBLE_EQ(si(a.dense.fp4), 14000 * kT);
    EXPECT_DOUBLE_EQ(si(a.dense.fp8), 4500 * kT);
    EXPECT_DOUBLE_EQ(si(a.dense.bf16), 2250 * kT);
    EXPECT_DOUBLE_EQ(a.board_power->si(), 1100);
    EXPECT_DOUBLE_EQ(a.scale_up_bandwidth->si(), 1.8 * kT); // NVLink 5, 18 x 100 GB/s
    EXPECT_FALSE(hwdb::is_preliminary(a));
    ASSERT_FALSE(a.prices.empty()); // Ornn: $5.00-7.25 per GPU-hour on-demand
    EXPECT_DOUBLE_EQ(a.prices.front().price.money.amount, 5.00);
}

// NVIDIA GB300 NVL72 page: 1,080 PFLOPS dense FP4 and 360 PFLOPS FP8 for 72 GPUs, 576 TB/s of
// HBM bandwidth; 1,400 W per GPU (S29); 284208 MiB as nvidia-smi reports it.
TEST(HardwareCatalog, Gb300IsOneSeventySecondOfTheNvl72Rack) {
    const auto& a = builtin().accelerator("gb300");
    EXPECT_DOUBLE_EQ(si(a.dense.fp4), 1080e15 / 72);
    EXPECT_DOUBLE_EQ(si(a.dense.fp8), 360e15 / 72);
    EXPECT_DOUBLE_EQ(a.memory_bandwidth.si(), 576e12 / 72);
    EXPECT_DOUBLE_EQ(a.memory.si(), 284208.0 * kMiB);
    EXPECT_DOUBLE_EQ(a.board_power->si(), 1400);
    ASSERT_FALSE(a.prices.empty()); // the rack's press estimate, per GPU
    EXPECT_NEAR(a.prices.front().price.money.amount, 3e6 / 72, 1.0);
}

// RTX PRO 6000 Blackwell Server Edition datasheet: 96 GB GDDR7 at 1,597 GB/s, FP32 120 TFLOPS,
// 4 PFLOPS FP4 (sparse), 400-600 W configurable; nvidia-smi: 97887 MiB.
TEST(HardwareCatalog, RtxPro6000ServerMatchesItsDatasheet) {
    const auto& a = builtin().accelerator("RTX PRO 6000 Blackwell Server Edition");
    EXPECT_EQ(a.name, "rtx-pro-6000-server");
    EXPECT_DOUBLE_EQ(a.memory.si(), 97887.0 * kMiB);
    EXPECT_DOUBLE_EQ(a.memory_bandwidth.si(), 1597 * kG);
    EXPECT_DOUBLE_EQ(si(a.dense.fp32), 120 * kT);
    EXPECT_DOUBLE_EQ(si(a.dense.fp4), 4000 * kT / 2);
    EXPECT_DOUBLE_EQ(a.power_limit_min->si(), 400);
    EXPECT_DOUBLE_EQ(a.power_limit_max->si(), 600);
    EXPECT_FALSE(a.scale_up_bandwidth.has_value()); // no NVLink on the server card
}

// NVIDIA L40 datasheet (non-sparse column): BF16 181.05 (362.1 sparse), FP8 362, 864 GB/s, 300 W.
TEST(HardwareCatalog, L40MatchesItsDatasheet) {
    const auto& a = builtin().accelerator("L40");
    EXPECT_DOUBLE_EQ(a.memory.si(), 48 * kGiB);
    EXPECT_DOUBLE_EQ(a.memory_bandwidth.si(), 864 * kG);
    EXPECT_DOUBLE_EQ(si(a.dense.bf16), 362.1 * kT / 2);
    EXPECT_DOUBLE_EQ(si(a.dense.fp8), 362 * kT);
    EXPECT_DOUBLE_EQ(a.board_power->si(), 300);
}

// NVIDIA A40 datasheet: 696 GB/s, BF16 149.7 (299.4 sparse), INT8 299.3, 300 W, NVLink 112.5 GB/s.
TEST(HardwareCatalog, A40MatchesItsDatasheet) {
    const auto& a = builtin().accelerator("A40");
    EXPECT_DOUBLE_EQ(a.memory_bandwidth.si(), 696 * kG);
    EXPECT_DOUBLE_EQ(si(a.dense.bf16), 149.7 * kT);
    EXPECT_DOUBLE_EQ(si(a.dense.int8), 299.3 * kT);
    EXPECT_DOUBLE_EQ(a.board_power->si(), 300);
    EXPECT_DOUBLE_EQ(a.scale_up_bandwidth->si(), 112.5 * kG);
}

// NVIDIA RTX A6000 datasheet: FP32 38.7 TFLOPS, tensor 309.7 TFLOPS (FP16, sparse), 768 GB/s, 300
// W.
TEST(HardwareCatalog, RtxA6000MatchesItsDatasheet) {
    const auto& a = builtin().accelerator("RTX A6000");
    EXPECT_DOUBLE_EQ(a.memory_bandwidth.si(), 768 * kG);
    EXPECT_DOUBLE_EQ(si(a.dense.fp32), 38.7 * kT);
    EXPECT_NEAR(si(a.dense.fp16), 309.7 * kT / 2, 0.1 * kT);
    EXPECT_DOUBLE_EQ(a.board_power->si(), 300);
}

// NVIDIA T4 datasheet: FP16/FP32 mixed 65 TFLOPS, INT8 130 TOPS, 16 GB at 320 GB/s, 70 W;
// no BF16. nvidia-smi shows 15360 MiB with ECC on.
TEST(HardwareCatalog, T4MatchesItsDatasheet) {
    const auto& a = builtin().accelerator("Tesla T4");
    EXPECT_EQ(a.name, "t4");
    EXPECT_DOUBLE_EQ(a.memory.si(), 15360 * kMiB);
    EXPECT_DOUBLE_EQ(a.memory_bandwidth.si(), 320 * kG);
    EXPECT_DOUBLE_EQ(si(a.dense.fp16), 65 * kT);
    EXPECT_DOUBLE_EQ(si(a.dense.int8), 130 * kT);
    EXPECT_FALSE(a.dense.bf16.has_value());
    EXPECT_DOUBLE_EQ(a.board_power->si(), 70);
}

// NVIDIA V100 datasheet: SXM2 FP64 7.8, FP32 15.7, tensor 125 TFLOPS, 900 GB/s, 300 W, NVLink
// 300 GB/s; PCIe FP64 7, tensor 112 TFLOPS, 250 W.
TEST(HardwareCatalog, V100MatchesItsDatasheet) {
    const auto& sxm = builtin().accelerator("V100");
    EXPECT_EQ(sxm.name, "v100-sxm2-32gb");
    EXPECT_DOUBLE_EQ(sxm.memory.si(), 32 * kGiB);
    EXPECT_DOUBLE_EQ(sxm.memory_bandwidth.si(), 900 * kG);
    EXPECT_DOUBLE_EQ(si(sxm.dense.fp16), 125 * kT);
    EXPECT_DOUBLE_EQ(si(sxm.dense.fp64), 7.8 * kT);
    EXPECT_DOUBLE_EQ(sxm.board_power->si(), 300);
    EXPECT_DOUBLE_EQ(sxm.scale_up_bandwidth->si(), 300 * kG);
    const auto& pcie = builtin().accelerator("V100 PCIe");
    EXPECT_DOUBLE_EQ(si(pcie.dense.fp16), 112 * kT);
    EXPECT_DOUBLE_EQ(pcie.board_power->si(), 250);
}

// Ada whitepaper, RTX 4080: 16 GB GDDR6X at 22.4 Gbps on a 256-bit bus, FP16 tensor with FP32
// accumulate 97.5 TFLOPS dense, 320 W.
TEST(HardwareCatalog, Rtx4080IsTheSixteenGigabyteCard) {
    const auto& a = builtin().accelerator("RTX 4080");
    EXPECT_DOUBLE_EQ(a.memory.si(), 16 * kGiB);
    EXPECT_NEAR(a.memory_bandwidth.si(), 22.4e9 * 256 / 8, 1e6);
    EXPECT_DOUBLE_EQ(si(a.dense.bf16), 97.5 * kT);
    EXPECT_DOUBLE_EQ(a.board_power->si(), 320);
}

// Google Cloud TPU docs: v6e 918 TFLOPS BF16, 1836 TOPS INT8, 32 GB at 1638 GBps, ICI 800 GBps
// bidirectional; TPU7x 2307 BF16 / 4614 FP8 TFLOPS, 192 GiB, ICI 1200 GBps. No chip power.
TEST(HardwareCatalog, TpuV6eAndV7MatchGoogleDocs) {
    const auto& v6e = builtin().accelerator("Trillium");
    EXPECT_EQ(v6e.name, "tpu-v6e");
    EXPECT_DOUBLE_EQ(si(v6e.dense.bf16), 918 * kT);
    EXPECT_DOUBLE_EQ(si(v6e.dense.int8), 1836 * kT);
    EXPECT_DOUBLE_EQ(v6e.memory_bandwidth.si(), 1638 * kG);
    EXPECT_DOUBLE_EQ(v6e.scale_up_bandwidth->si(), 800 * kG);
    EXPECT_FALSE(v6e.board_power.has_value());
    ASSERT_FALSE(v6e.prices.empty());
    EXPECT_DOUBLE_EQ(v6e.prices.front().price.money.amount, 2.70);
    const auto& v7 = builtin().accelerator("Ironwood");
    EXPECT_EQ(v7.name, "tpu-v7");
    EXPECT_DOUBLE_EQ(si(v7.dense.bf16), 2307 * kT);
    EXPECT_DOUBLE_EQ(si(v7.dense.fp8), 4614 * kT);
    EXPECT_DOUBLE_EQ(v7.memory.si(), 192 * kGiB);
    EXPECT_DOUBLE_EQ(v7.scale_up_bandwidth->si(), 1200 * kG);
}

// AWS Neuron docs: Trainium2 1,299 FP8 / 667 BF16 / 181 FP32 TFLOPS, 96 GiB at 2.9 TB/s;
// Trainium3 2,517 MXFP8 / 671 BF16 / 183 FP32 TFLOPS, 144 GiB at 4.9 TB/s.
TEST(HardwareCatalog, TrainiumMatchesTheNeuronDocs) {
    const auto& t2 = builtin().accelerator("Trn2");
    EXPECT_EQ(t2.name, "trainium2");
    EXPECT_DOUBLE_EQ(si(t2.dense.fp8), 1299 * kT);
    EXPECT_DOUBLE_EQ(si(t2.dense.bf16), 667 * kT);
    EXPECT_DOUBLE_EQ(si(t2.dense.fp32), 181 * kT);
    EXPECT_DOUBLE_EQ(t2.memory.si(), 96 * kGiB);
    EXPECT_DOUBLE_EQ(t2.memory_bandwidth.si(), 2.9 * kT);
    const auto& t3 = builtin().accelerator("Trainium3");
    EXPECT_DOUBLE_EQ(si(t3.dense.fp8), 2517 * kT);
    EXPECT_DOUBLE_EQ(si(t3.dense.bf16), 671 * kT);
    EXPECT_DOUBLE_EQ(t3.memory.si(), 144 * kGiB);
    EXPECT_DOUBLE_EQ(t3.memory_bandwidth.si(), 4.9 * kT);
}

// AMD (12 Jun 2025): MI400 series 432 GB HBM4, 19.6 TB/s, 40 PFLOPS FP4, 20 PFLOPS FP8. NVIDIA
// (CES 2026): Rubin 288 GB HBM4 at 22 TB/s, NVFP4 35 PFLOPS for training. Both announced only,
// so both flagged preliminary.
TEST(HardwareCatalog, AnnouncedPartsAreFlaggedPreliminary) {
    const auto& mi = builtin().accelerator("MI400");
    EXPECT_EQ(mi.name, "mi455x");
    EXPECT_TRUE(hwdb::is_preliminary(mi));
    EXPECT_DOUBLE_EQ(mi.memory.si(), 432 * kGiB);
    EXPECT_DOUBLE_EQ(mi.memory_bandwidth.si(), 19.6 * kT);
    EXPECT_DOUBLE_EQ(si(mi.dense.fp4), 40e15);
    EXPECT_DOUBLE_EQ(si(mi.dense.fp8), 20e15);
    const auto& rubin = builtin().accelerator("Rubin");
    EXPECT_TRUE(hwdb::is_preliminary(rubin));
    EXPECT_DOUBLE_EQ(rubin.memory_bandwidth.si(), 22 * kT);
    EXPECT_DOUBLE_EQ(si(rubin.dense.fp4), 35e15);
    for (const char* shipping : {"b300", "gb300", "mi355x", "tpu-v7", "trainium3"}) {
        EXPECT_FALSE(hwdb::is_preliminary(builtin().accelerator(shipping))) << shipping;
    }
}

// GB300 and B300 have no kernel measurements yet: they take b200's fitted profile (same
// architecture) with the extrapolation named in the provenance.
TEST(HardwareCatalog, BlackwellUltraBorrowsTheB200ProfileWithTheExtrapolationFlag) {
    const auto folders = hwdb::profile_folders({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    for (const char* gpu : {"b300", "gb300"}) {
        const auto p = hwdb::find_profile_for_gpu(folders, builtin().accelerator(gpu));
        ASSERT_TRUE(p.has_value()) << gpu;
        EXPECT_NE(p->provenance.description.find(std::string("extrapolated from b200 (same "
                                                             "architecture 'blackwell') to ") +
                                                 gpu),
                  std::string::npos)
            << p->provenance.description;
    }
}

// NVIDIA: 130 TB/s of NVLink across the 72 GPUs of a GB300 NVL72 = 1.8 TB/s per GPU both ways.
TEST(HardwareCatalog, Gb300Nvl72IsOneSeventyTwoGpuNvlinkDomain) {
    const auto& nvl72 = builtin().server("GB300 NVL72");
    EXPECT_EQ(nvl72.accelerators, 72);
    const auto& link = builtin().interconnect(nvl72.intra_node_link);
    EXPECT_NEAR(link.bandwidth_per_direction.si(), 130e12 / 72 / 2, 0.01 * 130e12 / 72 / 2);
    EXPECT_EQ(builtin().server("gb200-nvl36").accelerators, 36);
    const auto& rack = builtin().rack("gb300-nvl72");
    EXPECT_EQ(rack.servers, 1);
    EXPECT_EQ(rack.cooling, "liquid");
}

// DeepSeek-V3 with EP72: on a GB300 NVL72 the all-to-all group stays inside the NVLink domain
// (900 GB/s per direction); on 8-GPU HGX B300 nodes the same group crosses the XDR network
// (800 Gb/s = 100 GB/s per GPU and direction).
TEST(HardwareCatalog, Ep72AllToAllPricesNvlinkOnTheNvl72AndTheNetworkOnEightGpuNodes) {
    model::Scenario rack;
    rack.deployment.model = builtin().model("deepseek-v3");
    hwdb::set_hardware(rack, builtin(), "gb300", "gb300-nvl72");
    const model::Link in_rack = model::group_link(rack.deployment, 72, 1);
    EXPECT_FALSE(in_rack.inter_node);
    EXPECT_DOUBLE_EQ(in_rack.bandwidth.si(), 900 * kG);

    model::Scenario nodes;
    nodes.deployment.model = builtin().model("deepseek-v3");
    hwdb::set_hardware(nodes, builtin(), "b300", "hgx-b300");
    const model::Link across = model::group_link(nodes.deployment, 72, 1);
    EXPECT_TRUE(across.inter_node);
    EXPECT_DOUBLE_EQ(across.bandwidth.si(), 800e9 / 8);
}

namespace {

struct Folder {
    std::filesystem::path path;
    explicit Folder(const std::string& name)
        : path(std::filesystem::temp_directory_path() / ("gpuplan-catalog-" + name)) {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~Folder() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    void write(const std::string& file, const std::string& text) const {
        std::ofstream(path / file) << text;
    }
};

} // namespace

// `--hwdb .` in a folder that also holds a scenario: the scenario is skipped with a note.
TEST(HardwareCatalog, AScenarioInAnHwdbFolderIsSkippedWithANote) {
    const Folder f("scenario");
    f.write("my-scenario.yaml", "schema: 1\nmodel: llama-3.1-8b\nhardware:\n  gpu: h100-sxm\n");
    const auto db =
        hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb", f.path.string()});
    bool noted = false;
    for (const auto& n : db.notes()) {
        noted = noted || n.find("skipped " + (f.path / "my-scenario.yaml").string() +
                                ": not a hardware file") != std::string::npos;
    }
    EXPECT_TRUE(noted);
}

// A reference to a missing interconnect names the file, line and column of the key.
TEST(HardwareCatalog, AnUnknownReferenceNamesFileLineAndColumn) {
    const Folder f("xref");
    f.write("server.yaml", "schema: 1\n"
                           "servers:\n"
                           "  - name: my-box\n"
                           "    accelerators: 8\n"
                           "    intra_node_link: nvlink-9\n"
                           "    max_power: 10 kW\n"
                           "    host_power: 2 kW\n"
                           "    host_memory: 1 TiB\n"
                           "    rack_units: 4\n"
                           "    sources: \"mine\"\n");
    try {
        (void)hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb", f.path.string()});
        FAIL() << "expected an error";
    } catch (const InputError& e) {
        const std::string want =
            (f.path / "server.yaml").string() + ":5:22: servers[0].intra_node_link: my-box";
        EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
}
