// The event kernel: ordering, clock, stop, and the RNG's determinism and moments.
#include "model/error.hpp"
#include "sim/event_queue.hpp"
#include "sim/rng.hpp"
#include "sim/simulation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stop_token>
#include <vector>

namespace gpuplan::sim {
namespace {

struct Recorder final : EventHandler {
    explicit Recorder(Simulation* s = nullptr) : sim(s) {}
    Simulation* sim;
    std::vector<std::pair<Tick, std::uint64_t>> seen;
    void on_event(std::uint32_t /*kind*/, std::uint64_t data) override {
        seen.emplace_back(sim ? sim->now() : 0, data);
    }
};

TEST(EventQueue, PopsByTickThenInsertionOrder) {
    EventQueue q;
    Recorder r;
    // Ties at tick 5 must come out in the order they were pushed.
    q.push(5, &r, 0, 1);
    q.push(3, &r, 0, 2);
    q.push(5, &r, 0, 3);
    q.push(1, &r, 0, 4);
    q.push(5, &r, 0, 5);
    q.push(3, &r, 0, 6);
    std::vector<std::uint64_t> order;
    while (!q.empty()) {
        order.push_back(q.pop().data);
    }
    EXPECT_EQ(order, (std::vector<std::uint64_t>{4, 2, 6, 1, 3, 5}));
}

TEST(EventQueue, ManyEqualTicksKeepFifoOrder) {
    EventQueue q;
    Recorder r;
    Rng rng(3);
    std::vector<std::pair<Tick, std::uint64_t>> pushed;
    for (std::uint64_t i = 0; i < 5000; ++i) {
        const Tick t = static_cast<Tick>(rng.below(20));
        q.push(t, &r, 0, i);
        pushed.emplace_back(t, i);
    }
    std::stable_sort(pushed.begin(), pushed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [t, i] : pushed) {
        const Event e = q.pop();
        ASSERT_EQ(e.tick, t);
        ASSERT_EQ(e.data, i);
    }
}

TEST(Simulation, RunsEventsInOrderAndAdvancesTheClock) {
    Simulation sim;
    Recorder r(&sim);
    sim.schedule_at(100, r, 0, 1);
    sim.schedule_at(50, r, 0, 2);
    sim.schedule_at(100, r, 0, 3);
    const RunOutcome out = sim.run();
    EXPECT_TRUE(out.drained);
    EXPECT_EQ(out.events, 3u);
    ASSERT_EQ(r.seen.size(), 3u);
    EXPECT_EQ(r.seen[0], (std::pair<Tick, std::uint64_t>{50, 2}));
    EXPECT_EQ(r.seen[1], (std::pair<Tick, std::uint64_t>{100, 1}));
    EXPECT_EQ(r.seen[2], (std::pair<Tick, std::uint64_t>{100, 3}));
    EXPECT_EQ(sim.now(), 100);
}

TEST(Simulation, StopsAtTheHorizonAndRefusesThePast) {
    Simulation sim;
    Recorder r(&sim);
    sim.schedule_at(10, r, 0, 1);
    sim.schedule_at(30, r, 0, 2);
    const RunOutcome out = sim.run(20);
    EXPECT_FALSE(out.drained);
    EXPECT_EQ(r.seen.size(), 1u);
    EXPECT_EQ(sim.now(), 20);
    EXPECT_THROW(sim.schedule_at(5, r, 0, 3), InternalError);
    sim.run();
    EXPECT_EQ(r.seen.size(), 2u);
}

struct Chain final : EventHandler {
    explicit Chain(Simulation& s) : sim(s) {}
    Simulation& sim;
    std::uint64_t count = 0;
    void on_event(std::uint32_t, std::uint64_t) override {
        ++count;
        sim.schedule_in(1, *this, 0);
    }
};

TEST(Simulation, HonoursTheStopToken) {
    Simulation sim;
    Chain c(sim);
    sim.schedule_at(0, c, 0);
    std::stop_source src;
    int calls = 0;
    const RunOutcome out = sim.run(kNever, src.get_token(), [&](Tick) {
        if (++calls == 3) {
            src.request_stop();
        }
    });
    EXPECT_TRUE(out.stopped);
    EXPECT_GE(c.count, 3u * 4096u);
    EXPECT_LT(c.count, 5u * 4096u);
}

TEST(Tick, ConvertsSecondsByRoundingToNanoseconds) {
    EXPECT_EQ(to_tick(Seconds(1.5), "t"), 1'500'000'000);
    EXPECT_EQ(to_tick(Seconds(2.4e-9), "t"), 2);
    EXPECT_EQ(to_tick(Seconds(-1e-10), "t"), 0); // rounds to 0 ns
    EXPECT_DOUBLE_EQ(to_seconds(250'000'000).si(), 0.25);
}

// Issue 12: every duration converted to ticks is range-checked, naming the key.
TEST(Tick, RefusesNegativeNonFiniteAndOutOfRangeDurationsNamingTheKey) {
    const auto message = [](double s) {
        try {
            (void)to_tick(Seconds(s), "workload.duration");
        } catch (const gpuplan::InvalidArgument& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message(-1), "workload.duration: -1 s is not a duration; give a finite time >= 0 s");
    EXPECT_EQ(message(std::nan("")).rfind("workload.duration: ", 0), 0u);
    EXPECT_NE(message(std::nan("")).find(" is not a duration; give a finite time >= 0 s"),
              std::string::npos);
    EXPECT_EQ(message(1e12),
              "workload.duration: 1e+12 s is beyond the simulator's clock (about 292 years); give "
              "a shorter time");
    // 2^63 - 1 ns is about 9.22e9 s: just below converts.
    EXPECT_EQ(to_tick(Seconds(9.2e9), "t"), 9'200'000'000'000'000'000);
}

TEST(Tick, AddTicksSaturatesInsteadOfWrapping) {
    EXPECT_EQ(add_ticks(5, 7), 12);
    EXPECT_EQ(add_ticks(kNever - 1, 2), kNever);
    EXPECT_EQ(add_ticks(kNever, kNever), kNever);
    EXPECT_EQ(add_ticks(kNever / 2 + 1, kNever / 2 + 1), kNever);
}

TEST(Rng, SameSeedSameStreamAndForksDiffer) {
    Rng a(42);
    Rng b(42);
    for (int i = 0; i < 100; ++i) {
        ASSERT_EQ(a.next(), b.next());
    }
    Rng f1 = a.fork(1);
    Rng f2 = a.fork(2);
    EXPECT_NE(f1.next(), f2.next());
}

TEST(Rng, DistributionsHaveTheirMoments) {
    Rng r(9);
    constexpr int n = 200000;
    double se = 0, sn = 0, sn2 = 0, sg = 0, sg2 = 0, su = 0;
    for (int i = 0; i < n; ++i) {
        se += r.exponential(2.0);
        const double x = r.normal(3.0, 2.0);
        sn += x;
        sn2 += x * x;
        const double g = r.gamma(0.25, 4.0); // mean 1, variance 4 (cv 2)
        sg += g;
        sg2 += g * g;
        su += static_cast<double>(r.below(10));
    }
    EXPECT_NEAR(se / n, 2.0, 0.02);
    EXPECT_NEAR(sn / n, 3.0, 0.02);
    EXPECT_NEAR(std::sqrt(sn2 / n - (sn / n) * (sn / n)), 2.0, 0.02);
    EXPECT_NEAR(sg / n, 1.0, 0.02);
    EXPECT_NEAR(sg2 / n - (sg / n) * (sg / n), 4.0, 0.2);
    EXPECT_NEAR(su / n, 4.5, 0.03);
}

} // namespace
} // namespace gpuplan::sim
