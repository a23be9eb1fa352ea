// `gpuplan sweep` and `gpuplan merge` (docs/sweep.md): the real binary, its files and exit codes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

struct Result {
    int exit_code;
    std::string out;
};

// No array-job variables leak in from the machine running the tests.
const std::string kCleanEnv = "env -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_COUNT -u "
                              "SLURM_ARRAY_TASK_MIN -u SLURM_ARRAY_TASK_MAX "
                              "-u JOB_COMPLETION_INDEX -u GPUPLAN_SWEEP_SHARDS ";

// `gpuplan ARGS` with `env` (VAR=value ...) set, stdout and stderr together.
Result run(const std::string& args, const std::string& env = "") {
    const std::string cmd = kCleanEnv + env + " " + GPUPLAN_CLI + " " + args + " 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    while (std::size_t n = fread(buf, 1, sizeof buf, pipe)) {
        out.append(buf, n);
    }
    const int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string src(const std::string& rel) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/" + rel;
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) {
        out.push_back(l);
    }
    return out;
}

void write(const fs::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
}

struct TempDir {
    fs::path path;
    explicit TempDir(const std::string& name)
        : path(fs::temp_directory_path() /
               ("gpuplan-sweep-" + name + "-" + std::to_string(::getpid()))) {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
};

const std::string kExample = src("examples/sweep-llama70b-gpus.yaml");

// The first column (the point index) of every data row.
std::vector<int> indices(const fs::path& csv) {
    std::vector<int> out;
    const auto ls = lines(slurp(csv));
    for (std::size_t i = 1; i < ls.size(); ++i) {
        out.push_back(std::stoi(ls[i].substr(0, ls[i].find(','))));
    }
    return out;
}

} // namespace

// 2 accelerators (zipped with their nodes) x 3 tp x 4 concurrencies = 24 points, the last axis
// fastest; the row's figures are the command's own --json and its cli reproduces them.
TEST(Sweep, EstimateGridRowsAreTheCommandsOwnAnswer) {
    TempDir d("grid");
    const auto r = run("sweep " + kExample + " -o " + (d.path / "a.csv").string());
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("24 points; 24 computed"), std::string::npos) << r.out;
    const auto csv = lines(slurp(d.path / "a.csv"));
    ASSERT_EQ(csv.size(), 25u);
    EXPECT_EQ(csv[0],
              "index,sweep_id,seed,hardware.accelerator,hardware.node,hardware.tp,workload."
              "concurrency,error,"
              "fits,max_concurrency,operating_point.concurrency,ttft_s,tpot_s,throughput_tok_s,"
              "peak_throughput_tok_s,bottleneck.decode,cli");
    const auto jsonl = lines(slurp(d.path / "a.jsonl"));
    ASSERT_EQ(jsonl.size(), 24u);
    // Point 17 = (accelerator 1, tp 1, concurrency 1): 17 = 1*12 + 1*4 + 1. The base seed is 1.
    const auto row = nlohmann::json::parse(jsonl[17]);
    EXPECT_EQ(row["index"], 17);
    EXPECT_EQ(row["seed"], 18);
    EXPECT_EQ(row["values"], (nlohmann::json{{"hardware.accelerator", "h200-sxm"},
                                             {"hardware.node", "dgx-h200"},
                                             {"hardware.tp", "4"},
                                             {"workload.concurrency", "32"}}));
    EXPECT_TRUE(csv[18].rfind("17,llama70b-gpus,18,h200-sxm,dgx-h200,4,32,,", 0) == 0) << csv[18];
    const std::string cli = row["cli"];
    ASSERT_TRUE(cli.rfind("gpuplan estimate ", 0) == 0) << cli;
    const auto own = run(cli.substr(8) + " --json");
    ASSERT_EQ(own.exit_code, 0) << own.out;
    EXPECT_EQ(nlohmann::json::parse(own.out), row["result"]);
    EXPECT_EQ(row["result"]["tp"], 4);
    EXPECT_EQ(row["result"]["operating_point"]["concurrency"], 32);
}

// A plan sweep: each point is a whole sizing search at the point's seed, its row the search's
// cheapest configuration, and its JSON the `gpuplan plan --json` of the row's command line (run
// there on all cores, in the sweep on one: the search's answer does not depend on the threads).
TEST(Sweep, PlanPointsAreThePlanCommandsOwnAnswer) {
    TempDir d("plan");
    const auto r = run("sweep " + src("examples/sweep-plan-rates.yaml") + " -o " +
                       (d.path / "p.csv").string());
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto csv = lines(slurp(d.path / "p.csv"));
    ASSERT_EQ(csv.size(), 5u);
    EXPECT_TRUE(csv[0].rfind("index,sweep_id,seed,workload.requests_per_s,error,found,simulated,"
                             "ranked.0.gpu,ranked.0.gpus,",
                             0) == 0)
        << csv[0];
    const auto jsonl = lines(slurp(d.path / "p.jsonl"));
    const auto row = nlohmann::json::parse(jsonl[2]);
    EXPECT_EQ(row["seed"], 3 + 2); // plan-search.yaml's seed 3 + index 2
    const std::string cli = row["cli"];
    ASSERT_TRUE(cli.rfind("gpuplan plan ", 0) == 0) << cli;
    EXPECT_NE(cli.find("--set seed=5"), std::string::npos) << cli;
    const auto own = run(cli.substr(8) + " --json");
    ASSERT_EQ(own.exit_code, 0) << own.out;
    // A sweep row is the search's answer; the serving choices plan compares beside it on the
    // answer (docs/plan.md, "KV offload and LoRA slots") are not part of the row.
    auto answer = nlohmann::json::parse(own.out);
    for (const char* key :
         {"kv_offload_choice", "max_loras_choice", "num_speculative_tokens_choice"}) {
        answer.erase(key);
    }
    EXPECT_EQ(answer, row["result"]);
    const auto& best = row["result"]["ranked"][0];
    EXPECT_TRUE(csv[3].rfind("2,plan-search-rates,5,12,,true,", 0) == 0) << csv[3];
    EXPECT_NE(csv[3].find("," + best["gpu"].get<std::string>() + "," +
                          std::to_string(best["gpus"].get<int>()) + ","),
              std::string::npos)
        << csv[3];
}

// Three shards (by flag, by Slurm's variables, by Kubernetes' index) merged in any order give
// the bytes of one process, and one process gives the same bytes twice.
TEST(Sweep, ShardsMergedAreByteIdenticalToOneRunAndRunsAreDeterministic) {
    TempDir d("shards");
    const auto p = [&](const std::string& n) { return (d.path / n).string(); };
    ASSERT_EQ(run("sweep " + kExample + " -o " + p("one.csv")).exit_code, 0);
    ASSERT_EQ(run("sweep " + kExample + " -o " + p("two.csv")).exit_code, 0);
    EXPECT_EQ(slurp(p("one.csv")), slurp(p("two.csv")));
    EXPECT_EQ(slurp(p("one.jsonl")), slurp(p("two.jsonl")));
    ASSERT_EQ(run("sweep " + kExample + " -o " + p("s0.csv") + " --shard 0/3").exit_code, 0);
    const auto s1 = run("sweep " + kExample + " -o " + p("s1.csv"),
                        "SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=3");
    ASSERT_EQ(s1.exit_code, 0) << s1.out;
    const auto s2 =
        run("sweep " + kExample + " -o " + p("s2.csv") + " --shards 3", "JOB_COMPLETION_INDEX=2");
    ASSERT_EQ(s2.exit_code, 0) << s2.out;
    const auto m =
        run("merge " + p("m.csv") + " " + p("s2.csv") + " " + p("s0.csv") + " " + p("s1.csv"));
    ASSERT_EQ(m.exit_code, 0) << m.out;
    EXPECT_EQ(slurp(p("m.csv")), slurp(p("one.csv")));
    EXPECT_EQ(slurp(p("m.jsonl")), slurp(p("one.jsonl")));
}

// MPI ranks take points as they finish, yet the table is the same bytes as one process's and as
// three merged shards', for an estimate sweep and a seeded simulate sweep.
TEST(Sweep, MpiRanksGiveTheSameBytesAsOneProcessAndAsMergedShards) {
#ifndef GPUPLAN_MPIEXEC
    GTEST_SKIP() << "built without MPI (install libopenmpi-dev and reconfigure)";
#else
    TempDir d("mpi");
    const auto p = [&](const std::string& n) { return (d.path / n).string(); };
    // As root, OpenMPI refuses to start without these; --oversubscribe lets 3 ranks share 2 cores.
    const std::string mpi =
        std::string("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ") +
        GPUPLAN_MPIEXEC + " --oversubscribe -np ";
    for (const std::string& spec : {kExample, src("examples/sweep-llama70b-simulate.yaml")}) {
        SCOPED_TRACE(spec);
        ASSERT_EQ(run("sweep " + spec + " -o " + p("one.csv")).exit_code, 0);
        for (const char* ranks : {"2", "3"}) {
            const std::string out = p(std::string("np") + ranks + ".csv");
            const std::string cmd = kCleanEnv + mpi + ranks + " " + GPUPLAN_CLI + " sweep " + spec +
                                    " -o " + out + " --mpi 2>&1";
            FILE* pipe = popen(cmd.c_str(), "r");
            std::string said;
            char buf[4096];
            while (std::size_t n = fread(buf, 1, sizeof buf, pipe)) {
                said.append(buf, n);
            }
            ASSERT_EQ(pclose(pipe), 0) << said;
            EXPECT_NE(said.find(std::string("ran on ") + ranks + " MPI ranks"), std::string::npos)
                << said;
            EXPECT_EQ(slurp(out), slurp(p("one.csv"))) << ranks << " ranks";
            EXPECT_EQ(slurp(p(std::string("np") + ranks + ".jsonl")), slurp(p("one.jsonl")));
        }
        for (const char* k : {"0", "1", "2"}) {
            ASSERT_EQ(run("sweep " + spec + " -o " + p(std::string("s") + k + ".csv") +
                          " --shard " + k + "/3")
                          .exit_code,
                      0);
        }
        ASSERT_EQ(
            run("merge " + p("m.csv") + " " + p("s0.csv") + " " + p("s1.csv") + " " + p("s2.csv"))
                .exit_code,
            0);
        EXPECT_EQ(slurp(p("m.csv")), slurp(p("one.csv")));
        EXPECT_EQ(slurp(p("m.jsonl")), slurp(p("one.jsonl")));
    }
#endif
}

// plan --mpi spreads the sizing search's simulations over the ranks; every rank goes on with
// every outcome, and rank 0 prints the answer one process prints, byte for byte.
TEST(Sweep, PlanOverMpiRanksPrintsTheSameAnswerAsOneProcess) {
#ifndef GPUPLAN_MPIEXEC
    GTEST_SKIP() << "built without MPI (install libopenmpi-dev and reconfigure)";
#else
    const std::string file = src("examples/plan-search.yaml");
    const auto one = run("plan " + file + " --json");
    ASSERT_EQ(one.exit_code, 0) << one.out;
    for (const char* ranks : {"2", "3"}) {
        const std::string cmd = kCleanEnv +
                                "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
                                GPUPLAN_MPIEXEC + " --oversubscribe -np " + ranks + " " +
                                GPUPLAN_CLI + " plan " + file + " --json --mpi 2>&1";
        FILE* pipe = popen(cmd.c_str(), "r");
        std::string out;
        char buf[4096];
        while (std::size_t n = fread(buf, 1, sizeof buf, pipe)) {
            out.append(buf, n);
        }
        ASSERT_EQ(pclose(pipe), 0) << out;
        EXPECT_EQ(out, one.out) << ranks << " ranks";
    }
#endif
}

// An array task picks every N-th point from its index: task 1 of 4 runs 1, 5, 9, 13, 17, 21;
// with SLURM_ARRAY_TASK_MIN/MAX (--array=5-8), task 7 is shard 2 of 4: 2, 6, 10, 14, 18, 22.
TEST(Sweep, SlurmArrayVariablesSetByHandPickThePoints) {
    TempDir d("slurm");
    const auto a = run("sweep " + kExample + " -o " + (d.path / "a.csv").string(),
                       "SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=4");
    ASSERT_EQ(a.exit_code, 0) << a.out;
    EXPECT_EQ(indices(d.path / "a.csv"), (std::vector<int>{1, 5, 9, 13, 17, 21}));
    const auto b = run("sweep " + kExample + " -o " + (d.path / "b.csv").string(),
                       "SLURM_ARRAY_TASK_ID=7 SLURM_ARRAY_TASK_MIN=5 SLURM_ARRAY_TASK_MAX=8");
    ASSERT_EQ(b.exit_code, 0) << b.out;
    EXPECT_EQ(indices(d.path / "b.csv"), (std::vector<int>{2, 6, 10, 14, 18, 22}));
    // The sbatch example runs by hand the same way.
    const auto sb = run("", "SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_COUNT=4 SPEC=" + kExample +
                                " OUT=" + (d.path / "out").string() + " GPUPLAN=" + GPUPLAN_CLI +
                                " bash " + src("docs/sweep-slurm.sbatch") + " #");
    ASSERT_EQ(sb.exit_code, 0) << sb.out;
    EXPECT_EQ(indices(d.path / "out" / "part-3.csv"), (std::vector<int>{3, 7, 11, 15, 19, 23}));
    // An index without a count is refused, naming what to set.
    const auto k8s =
        run("sweep " + kExample + " -o " + (d.path / "c.csv").string(), "JOB_COMPLETION_INDEX=1");
    EXPECT_EQ(k8s.exit_code, 2) << k8s.out;
    EXPECT_NE(k8s.out.find("--shards N"), std::string::npos) << k8s.out;
    const auto bad =
        run("sweep " + kExample + " -o " + (d.path / "c.csv").string() + " --shard 4/4");
    EXPECT_EQ(bad.exit_code, 2) << bad.out;
}

// --resume keeps the rows already there: nothing recomputed, the files untouched; rows lost
// from the end are computed again and the table is whole again.
TEST(Sweep, ResumeSkipsThePointsAlreadyInTheOutput) {
    TempDir d("resume");
    const fs::path out = d.path / "a.csv";
    ASSERT_EQ(run("sweep " + kExample + " -o " + out.string()).exit_code, 0);
    const std::string csv = slurp(out), jsonl = slurp(d.path / "a.jsonl");
    const auto mtime = fs::last_write_time(out);
    const auto again = run("sweep " + kExample + " -o " + out.string() + " --resume");
    ASSERT_EQ(again.exit_code, 0) << again.out;
    EXPECT_NE(again.out.find("0 computed, 24 skipped"), std::string::npos) << again.out;
    EXPECT_EQ(slurp(out), csv);
    EXPECT_EQ(fs::last_write_time(out), mtime);
    // Keep the header and the first 10 rows (and 10 JSON lines): 14 points are left to run.
    const auto cl = lines(csv), jl = lines(jsonl);
    std::string part_csv, part_jsonl;
    for (std::size_t i = 0; i < 11; ++i) {
        part_csv += cl[i] + '\n';
    }
    for (std::size_t i = 0; i < 10; ++i) {
        part_jsonl += jl[i] + '\n';
    }
    write(out, part_csv);
    write(d.path / "a.jsonl", part_jsonl);
    const auto rest = run("sweep " + kExample + " -o " + out.string() + " --resume");
    ASSERT_EQ(rest.exit_code, 0) << rest.out;
    EXPECT_NE(rest.out.find("14 computed"), std::string::npos) << rest.out;
    EXPECT_NE(rest.out.find("10 skipped"), std::string::npos) << rest.out;
    EXPECT_EQ(slurp(out), csv);
    EXPECT_EQ(slurp(d.path / "a.jsonl"), jsonl);
}

TEST(Sweep, MergeNamesMissingAndDuplicatedPoints) {
    TempDir d("merge");
    const auto p = [&](const std::string& n) { return (d.path / n).string(); };
    for (int k = 0; k < 3; ++k) {
        ASSERT_EQ(run("sweep " + kExample + " -o " + p("s" + std::to_string(k) + ".csv") +
                      " --shard " + std::to_string(k) + "/3")
                      .exit_code,
                  0);
    }
    const auto missing = run("merge " + p("m.csv") + " " + p("s0.csv") + " " + p("s2.csv"));
    EXPECT_EQ(missing.exit_code, 2) << missing.out;
    EXPECT_NE(missing.out.find("points 1, 4, 7, 10, 13, 16, 19, 22 of 24 are missing"),
              std::string::npos)
        << missing.out;
    const auto twice = run("merge " + p("m.csv") + " " + p("s0.csv") + " " + p("s1.csv") + " " +
                           p("s2.csv") + " " + p("s1.csv"));
    EXPECT_EQ(twice.exit_code, 2) << twice.out;
    EXPECT_NE(twice.out.find("points 1, 4, 7, 10, 13, 16, 19, 22 appear more than once"),
              std::string::npos)
        << twice.out;
    EXPECT_FALSE(fs::exists(p("m.csv")));
    // A part whose JSON lines were not written by a sweep is refused, naming the line.
    auto jl = lines(slurp(p("s1.jsonl")));
    jl[2] = "{\"index\": 7}";
    std::string text;
    for (const auto& l : jl) {
        text += l + '\n';
    }
    write(p("s1.jsonl"), text);
    const auto bad =
        run("merge " + p("m.csv") + " " + p("s0.csv") + " " + p("s1.csv") + " " + p("s2.csv"));
    EXPECT_EQ(bad.exit_code, 2) << bad.out;
    EXPECT_NE(bad.out.find(p("s1.jsonl") + ":3: the row does not match"), std::string::npos)
        << bad.out;
    EXPECT_FALSE(fs::exists(p("m.csv")));
}

// A bad axis names the spec, the line and column, and the key.
TEST(Sweep, BadAxesNameFileLineAndKey) {
    TempDir d("bad");
    const std::string head =
        "id: t\ncommand: estimate\nbase: " + src("examples/llama70b-2xh200.yaml") + "\naxes:\n";
    const auto check = [&](const std::string& axes, const std::string& expected) {
        const fs::path spec = d.path / "spec.yaml";
        write(spec, head + axes);
        const auto r = run("sweep " + spec.string() + " -o " + (d.path / "x.csv").string());
        EXPECT_EQ(r.exit_code, 2) << r.out;
        EXPECT_NE(r.out.find(spec.string() + expected), std::string::npos) << r.out;
        EXPECT_FALSE(fs::exists(d.path / "x.csv"));
    };
    // A misspelt key: the value of line 6, at column 14 ("    values: [" is 13 characters).
    check("  - key: workload.concurency\n    values: [8]\n",
          ":6:14 (axes[0] workload.concurency): workload.concurency: unknown key; did you mean "
          "'concurrency'?");
    // A value of the wrong kind: the second value of line 6.
    check("  - key: hardware.tp\n    values: [2, four]\n",
          ":6:17 (axes[0] hardware.tp): hardware.tp: expected a whole number");
    check("  - key: hardware.tp\n    range: {start: 4, stop: 1, step: 1}\n",
          ":6:29: axes[0].range.stop:");
    check("  - key: hardware.tp\n    valuez: [1]\n", ":5:5: axes[0]: an axis needs exactly one of");
    check("  - zip:\n      - {key: hardware.tp, values: [1, 2]}\n      - {key: "
          "workload.concurrency, values: [1]}\n",
          ":7:15: axes[0].zip[1].key: zipped axis 'workload.concurrency' has 1 values");
    check("  - key: hardware.tp\n    values: [2]\n    step: 1\n",
          ":7:5: axes[0].step: unknown key");
}

// An inline base gives the same figures as the same scenario in a file; a range counts from
// start to stop inclusive.
TEST(Sweep, InlineBaseAndRanges) {
    TempDir d("inline");
    std::string base = slurp(src("examples/llama70b-2xh200.yaml"));
    std::string indented;
    for (const auto& l : lines(base)) {
        indented += (l.empty() ? "" : "  " + l) + "\n";
    }
    const std::string axes =
        "axes:\n  - key: workload.concurrency\n    range: {start: 16, stop: 64, step: 16}\n";
    write(d.path / "inline.yaml", "id: i\ncommand: estimate\nbase:\n" + indented + axes);
    write(d.path / "file.yaml",
          "id: i\ncommand: estimate\nbase: " + src("examples/llama70b-2xh200.yaml") + "\n" + axes);
    const auto a =
        run("sweep " + (d.path / "inline.yaml").string() + " -o " + (d.path / "a.csv").string());
    ASSERT_EQ(a.exit_code, 0) << a.out;
    const auto b =
        run("sweep " + (d.path / "file.yaml").string() + " -o " + (d.path / "b.csv").string());
    ASSERT_EQ(b.exit_code, 0) << b.out;
    const auto ja = lines(slurp(d.path / "a.jsonl")), jb = lines(slurp(d.path / "b.jsonl"));
    ASSERT_EQ(ja.size(), 4u); // 16, 32, 48, 64
    ASSERT_EQ(jb.size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) {
        const auto x = nlohmann::json::parse(ja[i]), y = nlohmann::json::parse(jb[i]);
        EXPECT_EQ(x["result"], y["result"]);
        EXPECT_EQ(x["values"]["workload.concurrency"], std::to_string(16 * (i + 1)));
    }
    // The inline base's point is reproduced by its own shard of one point.
    EXPECT_NE(ja[2].find("sweep " + (d.path / "inline.yaml").string() + " --shard 2/4"),
              std::string::npos)
        << ja[2];
    // An error in the inline base names the spec's own line: line 9 of the spec is "  tp: 2".
    std::string broken = indented;
    broken.replace(broken.find("  tp: 2"), 7, "  tp: x");
    write(d.path / "broken.yaml", "id: i\ncommand: estimate\nbase:\n" + broken + axes);
    const auto e =
        run("sweep " + (d.path / "broken.yaml").string() + " -o " + (d.path / "e.csv").string());
    EXPECT_EQ(e.exit_code, 2) << e.out;
    EXPECT_NE(e.out.find((d.path / "broken.yaml").string() + ":13:9: hardware.tp:"),
              std::string::npos)
        << e.out;
}

// SIGINT stops at the next point and keeps the rows done: complete rows, the same bytes as a
// full run's first rows, and --resume finishes the table.
TEST(Sweep, SigintKeepsTheFinishedRowsAndResumeFinishes) {
    TempDir d("sigint");
    const fs::path spec = d.path / "sim.yaml";
    write(spec,
          "id: s\ncommand: simulate\nbase: " + src("examples/llama70b-2xh200.yaml") +
              "\nset:\n  workload.requests: 20000\n  workload.concurrency: null\naxes:\n"
              "  - key: workload.requests_per_s\n    range: {start: 1.3, stop: 2, step: 0.1}\n");
    const fs::path out = d.path / "a.csv";
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::execl("/usr/bin/env", "env", "-u", "SLURM_ARRAY_TASK_ID", "-u", "JOB_COMPLETION_INDEX",
                GPUPLAN_CLI, "sweep", spec.c_str(), "-o", out.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    // 8 points of 20,000 requests: several seconds; the signal comes after 1 s, mid-sweep (on a
    // loaded machine possibly before the first point finished: then no row is kept, also right).
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    ::kill(pid, SIGINT);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 0) {
        GTEST_SKIP() << "the sweep finished within 1 s, before the signal; nothing to check";
    }
    ASSERT_EQ(WEXITSTATUS(status), 130);
    const auto partial = lines(slurp(out));
    ASSERT_GE(partial.size(), 1u) << "the header is written even when no point finished";
    ASSERT_LT(partial.size(), 9u);
    const auto resumed = run("sweep " + spec.string() + " -o " + out.string() + " --resume");
    ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
    EXPECT_NE(resumed.out.find(std::to_string(partial.size() - 1) + " skipped"), std::string::npos)
        << resumed.out;
    const fs::path full = d.path / "full.csv";
    ASSERT_EQ(run("sweep " + spec.string() + " -o " + full.string()).exit_code, 0);
    EXPECT_EQ(slurp(out), slurp(full));
    EXPECT_EQ(slurp(d.path / "a.jsonl"), slurp(d.path / "full.jsonl"));
    const auto all = lines(slurp(full));
    for (std::size_t i = 0; i < partial.size(); ++i) {
        EXPECT_EQ(partial[i], all[i]); // the rows kept at the signal were complete
    }
}

// Regression: a --set key the scenario does not have named the scenario file without a line;
// it names the flag.
TEST(Sweep, SetUnknownKeyNamesTheFlag) {
    const auto r =
        run("estimate " + src("examples/llama70b-2xh200.yaml") + " --set workload.concurency=8");
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("--set workload.concurency=8: workload.concurency: unknown key; did you "
                         "mean 'concurrency'?"),
              std::string::npos)
        << r.out;
}

// A point the scenario's own checks refuse (tp 3 does not divide Llama-3.1-70B's 64 attention
// heads) is a row with the error and empty figures; the other points run. When every point is
// refused, the base is wrong and the sweep stops with exit 2.
TEST(Sweep, RefusedPointsAreRowsWithTheirError) {
    TempDir d("refused");
    const std::string head =
        "id: t\ncommand: cost\nbase: " + src("examples/llama70b-2xh200.yaml") + "\naxes:\n";
    write(d.path / "a.yaml", head + "  - key: hardware.tp\n    values: [2, 3, 4]\n");
    const auto r =
        run("sweep " + (d.path / "a.yaml").string() + " -o " + (d.path / "a.csv").string());
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("1 with an error"), std::string::npos) << r.out;
    const auto rows = lines(slurp(d.path / "a.jsonl"));
    ASSERT_EQ(rows.size(), 3u);
    const auto bad = nlohmann::json::parse(rows[1]);
    EXPECT_NE(bad["error"].get<std::string>().find("tp 3 does not divide the 64 attention heads"),
              std::string::npos);
    EXPECT_TRUE(bad["result"].is_null());
    EXPECT_TRUE(nlohmann::json::parse(rows[2])["error"].is_null());
    EXPECT_EQ(nlohmann::json::parse(rows[2])["result"]["tp"], 4);
    write(d.path / "b.yaml", head + "  - key: hardware.tp\n    values: [3, 5]\n");
    const auto all =
        run("sweep " + (d.path / "b.yaml").string() + " -o " + (d.path / "b.csv").string());
    EXPECT_EQ(all.exit_code, 2) << all.out;
    EXPECT_NE(all.out.find("tp 3 does not divide"), std::string::npos) << all.out;
    EXPECT_FALSE(fs::exists(d.path / "b.csv"));
}

// Every shipped sweep spec runs, every point without an error.
TEST(Sweep, EveryExampleSpecRuns) {
    TempDir d("examples");
    int count = 0;
    for (const auto& e : fs::directory_iterator(src("examples"))) {
        const std::string name = e.path().filename().string();
        if (name.rfind("sweep-", 0) != 0 || e.path().extension() != ".yaml") {
            continue;
        }
        SCOPED_TRACE(name);
        const fs::path out = d.path / (name + ".csv");
        const auto r = run("sweep " + e.path().string() + " -o " + out.string());
        EXPECT_EQ(r.exit_code, 0) << r.out;
        EXPECT_EQ(r.out.find("with an error"), std::string::npos) << r.out;
        ++count;
    }
    EXPECT_GE(count, 2);
}

// train and cost points are the commands' own --json too: point 3 of the train example is
// micro-batch 2 (3 = 1*2 + 1) with selective recomputation.
TEST(Sweep, TrainAndCostRowsAreTheCommandsOwnAnswer) {
    TempDir d("train");
    const auto r = run("sweep " + src("examples/sweep-train-llama70b.yaml") + " -o " +
                       (d.path / "t.csv").string());
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto row = nlohmann::json::parse(lines(slurp(d.path / "t.jsonl")).at(3));
    EXPECT_EQ(row["values"],
              (nlohmann::json{{"training.micro_batch", "2"}, {"training.recompute", "selective"}}));
    const auto own = run("train " + src("examples/train-llama70b-2x8xh100.yaml") +
                         " --set training.micro_batch=2 --set training.recompute=selective --json");
    ASSERT_EQ(own.exit_code, 0) << own.out;
    EXPECT_EQ(nlohmann::json::parse(own.out), row["result"]);
    write(d.path / "c.yaml", "id: c\ncommand: cost\nbase: " + src("examples/llama70b-2xh200.yaml") +
                                 "\naxes:\n  - key: hardware.tp\n    values: [2, 4]\n");
    ASSERT_EQ(run("sweep " + (d.path / "c.yaml").string() + " -o " + (d.path / "c.csv").string())
                  .exit_code,
              0);
    const auto cost_row = nlohmann::json::parse(lines(slurp(d.path / "c.jsonl")).at(1));
    const auto cost =
        run("cost " + src("examples/llama70b-2xh200.yaml") + " --set hardware.tp=4 --json");
    ASSERT_EQ(cost.exit_code, 0) << cost.out;
    EXPECT_EQ(nlohmann::json::parse(cost.out), cost_row["result"]);
}
