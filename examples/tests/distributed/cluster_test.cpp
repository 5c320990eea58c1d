#include "distributed/cluster.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <thread>

#include "distributed/serve.hpp"
#include "distributed/spread_oracle.hpp"
#include "distributed/wire.hpp"
#include "driver/configurations.hpp"
#include "tests/support/local_transport.hpp"
#include "tests/support/toy_measurer.hpp"

namespace tc {
namespace {

using Clock = std::chrono::steady_clock;
using testing::Faults;
using testing::toy_oracle;

/// What one partitioning gave.
struct Outcome {
  std::vector<std::string> costs;  // every candidate's, in order
  std::string parts;
  std::vector<std::string> errors;
  std::vector<std::string> notes;
  std::vector<int> lost;
  bool clean = true;
  double seconds = 0;
};

class Spread : public ::testing::Test {
 protected:
  Spread()
      : model_(testing::residual_block()), dataflow_(*collage::DataflowGraph<Graph>::build(model_)),
        backends_(testing::toy_backends()) {}

  Outcome partition(collage::CostOracle<Graph>& oracle) {
    Outcome out;
    Configuration config{"collage", {"refusing", "general"}, collage::SearchAlgorithm::exact};
    auto r = partition_model(dataflow_, backends_, config, oracle);
    EXPECT_TRUE(r.ok()) << r.error().message;
    if (!r.ok()) return out;
    for (const collage::Candidate& c : r->candidates) out.costs.push_back(c.to_string() + " " + c.cost->to_string());
    for (const collage::Candidate& c : r->partitioning.parts) out.parts += c.to_string() + ";";
    out.parts += " total " + r->partitioning.total.to_string();
    out.errors = r->oracle_errors;
    return out;
  }

  /// Partitions over `ranks` ranks (threads), rank r misbehaving as faults[r] says.
  Outcome spread(int ranks, std::map<int, Faults> faults = {}, ClusterOptions options = {}) {
    testing::LocalNetwork net(ranks);
    std::vector<std::thread> servers;
    for (int r = 1; r < ranks; ++r) {
      servers.emplace_back([&net, r, f = faults[r]] {
        serve(net.endpoint(r), [&](std::string_view setup) -> collage::Result<std::unique_ptr<Measurer>> {
          if (f.refuse) return collage::Error{collage::ErrorCode::io, "no device here"};
          if (setup != "toy setup") return collage::Error{collage::ErrorCode::parse, "unexpected setup"};
          return std::unique_ptr<Measurer>(std::make_unique<testing::ToyMeasurer>(f, [&net, r] { net.kill(r); }));
        }, 1.0);
      });
    }
    Outcome out;
    options.notify = [&out](const std::string& line) { out.notes.push_back(line); };
    const auto started = Clock::now();
    {
      Cluster cluster(net.endpoint(0), options);
      cluster.join("toy setup", "toy");
      SpreadOracle<Graph> oracle(toy_oracle(), cluster);
      Outcome result = partition(oracle);
      out.costs = result.costs;
      out.parts = result.parts;
      out.errors = result.errors;
      out.clean = cluster.finish(3);
      out.lost = cluster.lost();
    }
    out.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    for (std::thread& t : servers) t.join();
    return out;
  }

  Graph model_;
  collage::DataflowGraph<Graph> dataflow_;
  BackendSet backends_;
};

TEST_F(Spread, TheSameCostsAndPartitioningWhateverTheNumberOfRanks) {
  auto local = toy_oracle();
  const Outcome alone = partition(*local);
  ASSERT_GT(alone.costs.size(), 10u);
  ASSERT_FALSE(alone.errors.empty());  // the refusing backend's candidates, Invalid with the reason
  for (int ranks = 1; ranks <= 4; ++ranks) {
    for (bool rank0_measures : {true, false}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks, rank 0 measures: " + (rank0_measures ? "yes" : "no"));
      ClusterOptions options;
      options.measure_on_rank0 = rank0_measures;
      const Outcome spread_out = spread(ranks, {}, options);
      EXPECT_EQ(spread_out.costs, alone.costs);
      EXPECT_EQ(spread_out.parts, alone.parts);
      EXPECT_EQ(spread_out.errors, alone.errors);
      EXPECT_TRUE(spread_out.clean);
      EXPECT_TRUE(spread_out.notes.empty());
    }
  }
}

TEST_F(Spread, ARankThatDiesCostsOnlyTheCandidateItWasMeasuring) {
  auto local = toy_oracle();
  const Outcome alone = partition(*local);
  ClusterOptions options;
  options.silence_timeout_seconds = 0.5;
  Faults dies;
  dies.die_on = 2;
  const Outcome out = spread(3, {{2, dies}}, options);
  EXPECT_LT(out.seconds, 10.0);
  EXPECT_FALSE(out.clean);
  EXPECT_EQ(out.lost, std::vector<int>{2});
  // The candidate it died on is Invalid with the reason; every other answer is the same.
  ASSERT_EQ(out.costs.size(), alone.costs.size());
  std::size_t differ = 0;
  for (std::size_t k = 0; k < out.costs.size(); ++k) differ += out.costs[k] != alone.costs[k] ? 1 : 0;
  EXPECT_LE(differ, 1u);  // 0 when it was one the refusing backend fails anyway
  std::vector<std::string> reasons;
  for (const std::string& e : out.errors) {
    if (e.find("rank 2") == std::string::npos) {
      EXPECT_NE(std::find(alone.errors.begin(), alone.errors.end(), e), alone.errors.end()) << e;
    } else {
      reasons.push_back(e);
    }
  }
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_NE(reasons[0].find("rank 2 (" + host_name() + ") was given up while measuring it: nothing heard from it for"),
            std::string::npos)
      << reasons[0];
  ASSERT_EQ(out.notes.size(), 1u);
  EXPECT_NE(out.notes[0].find("rank 2 (" + host_name() + ") given up"), std::string::npos) << out.notes[0];
}

TEST_F(Spread, AStuckRankIsGivenUpAfterTheCandidateTimeout) {
  ClusterOptions options;
  options.candidate_timeout_seconds = 0.3;
  Faults stuck;
  stuck.stall_seconds = 1.5;
  const Outcome out = spread(2, {{1, stuck}}, options);
  EXPECT_LT(out.seconds, 10.0);
  EXPECT_FALSE(out.clean);
  EXPECT_EQ(out.lost, std::vector<int>{1});
  bool named = false;
  for (const std::string& e : out.errors) {
    named |= e.find("rank 1 (" + host_name() + ") was given up while measuring it: it spent over 0.3 s on one "
                    "candidate") != std::string::npos;
  }
  EXPECT_TRUE(named);
}

TEST_F(Spread, RanksThatMeasureOtherwiseOrCannotSetUpAreLeftOutSayingWhy) {
  auto local = toy_oracle();
  const Outcome alone = partition(*local);
  Faults other;
  other.identity = "toy on another GPU";
  Faults refuses;
  refuses.refuse = true;
  const Outcome out = spread(4, {{1, other}, {3, refuses}});
  EXPECT_EQ(out.costs, alone.costs);
  EXPECT_TRUE(out.clean);  // left out, not lost: they stop when told
  std::vector<std::string> notes = out.notes;  // in the order the ranks answered
  std::sort(notes.begin(), notes.end());
  const std::string host = " (" + host_name() + ")";
  EXPECT_EQ(notes, (std::vector<std::string>{
                       "rank 1" + host + " left out: it measures as 'toy on another GPU', rank 0 as 'toy'",
                       "rank 3" + host + " left out: no device here"}));
}

TEST(Serve, GivesUpWhenRankZeroIsSilent) {
  testing::LocalNetwork net(2);
  net.kill(0);
  std::string why;
  const auto started = Clock::now();
  const ServeEnd end = serve(net.endpoint(1), [](std::string_view) -> collage::Result<std::unique_ptr<Measurer>> {
    return collage::Error{collage::ErrorCode::io, "unused"};
  }, 0.3, &why);
  EXPECT_EQ(end, ServeEnd::rank0_lost);
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(3));
  EXPECT_NE(why.find("rank 0 was silent"), std::string::npos) << why;
}

TEST(Wire, EveryMessageRoundTripsBitForBit) {
  for (collage::Cost cost : {collage::Cost::value(1.0 / 3.0), collage::Cost::value(0), collage::Cost::invalid(),
                             collage::Cost::unknown()}) {
    Message m;
    m.kind = MessageKind::answer;
    m.seq = 0x0102030405060708ULL;
    m.ok = true;
    m.measurement = {cost, 0.125, 17};
    m.text = std::string("any\0bytes\n", 10);
    m.host = "h";
    auto back = decode(encode(m));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->kind, m.kind);
    EXPECT_EQ(back->seq, m.seq);
    EXPECT_EQ(back->ok, m.ok);
    EXPECT_EQ(back->measurement.cost.to_string(), cost.to_string());
    EXPECT_EQ(back->measurement.spread, 0.125);
    EXPECT_EQ(back->measurement.samples, 17u);
    EXPECT_EQ(back->text, m.text);
    EXPECT_EQ(back->host, m.host);
  }
  const Message error = answer_message(3, collage::Error{collage::ErrorCode::oracle, "onednn: cannot compile"});
  auto answer = answer_of(*decode(encode(error)));
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().message, "onednn: cannot compile");
  EXPECT_FALSE(decode("short").ok());
  EXPECT_FALSE(decode(encode(error) + "x").ok());
  const std::vector<std::string> fields{"--db", std::string("\0\1", 2), ""};
  EXPECT_EQ(*unpack(pack(fields)), fields);
  EXPECT_FALSE(unpack("\x05").ok());
}

}  // namespace
}  // namespace tc
