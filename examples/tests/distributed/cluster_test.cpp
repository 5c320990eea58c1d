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
#include "tests/support/local_transport.hpp"
#include "tests/support/toy_measurer.hpp"

namespace tc {
namespace {

using Clock = std::chrono::steady_clock;
using testing::Faults;
using testing::toy_oracle;

/// What a spread partitioning gave, and how the ranks fared.
struct Outcome {
  testing::ToyAnswers answers;
  std::vector<std::string> notes;
  std::vector<int> lost;
  bool clean = true;
  double seconds = 0;
};

class Spread : public ::testing::Test {
 protected:
  Spread() : alone_(testing::toy_partition(*toy_oracle())) {}

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
      out.answers = testing::toy_partition(oracle);
      out.clean = cluster.finish(3);
      out.lost = cluster.lost();
    }
    out.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    for (std::thread& t : servers) t.join();
    return out;
  }

  /// The answers of one process.
  const testing::ToyAnswers alone_;
};

TEST_F(Spread, TheSameCostsAndPartitioningWhateverTheNumberOfRanks) {
  ASSERT_GT(alone_.costs.size(), 10u);
  ASSERT_FALSE(alone_.errors.empty());  // the refusing backend's candidates, Invalid with the reason
  for (int ranks = 1; ranks <= 4; ++ranks) {
    for (bool rank0_measures : {true, false}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks, rank 0 measures: " + (rank0_measures ? "yes" : "no"));
      ClusterOptions options;
      options.measure_on_rank0 = rank0_measures;
      const Outcome out = spread(ranks, {}, options);
      EXPECT_EQ(out.answers.costs, alone_.costs);
      EXPECT_EQ(out.answers.parts, alone_.parts);
      EXPECT_EQ(out.answers.errors, alone_.errors);
      EXPECT_TRUE(out.clean);
      EXPECT_TRUE(out.notes.empty());
    }
  }
}

TEST_F(Spread, ARankThatDiesCostsOnlyTheCandidateItWasMeasuring) {
  ClusterOptions options;
  options.silence_timeout_seconds = 0.5;
  Faults dies;
  dies.die_on = 2;
  const Outcome out = spread(3, {{2, dies}}, options);
  EXPECT_LT(out.seconds, 10.0);
  EXPECT_FALSE(out.clean);
  EXPECT_EQ(out.lost, std::vector<int>{2});
  EXPECT_EQ(testing::differences(alone_, out.answers, 2, "nothing heard from it for"), "");
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
  EXPECT_EQ(testing::differences(alone_, out.answers, 1, "it spent over 0.3 s on one candidate"), "");
}

TEST_F(Spread, RanksThatMeasureOtherwiseOrCannotSetUpAreLeftOutSayingWhy) {
  Faults other;
  other.identity = "toy on another GPU";
  Faults refuses;
  refuses.refuse = true;
  const Outcome out = spread(4, {{1, other}, {3, refuses}});
  EXPECT_EQ(testing::differences(alone_, out.answers, 0), "");
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

// A rank measures the candidates rank 0 queued at it together, as one process measures a batch
// (the measuring oracle times a batch's CPU candidates in turns), and answers each under its own
// sequence number, in order; a stop that came behind them is taken up after.
TEST(Serve, MeasuresTheCandidatesItHoldsTogether) {
  class Recording final : public Measurer {
   public:
    explicit Recording(std::vector<std::size_t>& batches) : batches_(batches) {}
    std::string identity() const override { return "toy"; }
    collage::Result<collage::Measurement> measure(std::string_view record) override {
      return collage::Measurement{collage::Cost::value(static_cast<double>(record.size())), 0.0, 1};
    }
    std::vector<collage::Result<collage::Measurement>> measure_batch(const std::vector<std::string>& records) override {
      batches_.push_back(records.size());
      return Measurer::measure_batch(records);
    }

   private:
    std::vector<std::size_t>& batches_;
  };
  testing::LocalNetwork net(2);
  std::vector<std::size_t> batches;
  std::thread server([&] {
    serve(net.endpoint(1), [&](std::string_view) -> collage::Result<std::unique_ptr<Measurer>> {
      return std::unique_ptr<Measurer>(std::make_unique<Recording>(batches));
    }, 5.0);
  });
  Transport& zero = net.endpoint(0);
  auto next = [&zero]() -> Message {
    for (int tries = 0; tries < 100; ++tries) {
      if (std::optional<Envelope> e = zero.receive(0.05)) return *decode(e->bytes);
    }
    return Message{};
  };
  Message setup;
  setup.kind = MessageKind::setup;
  zero.send(1, encode(setup));
  EXPECT_EQ(next().kind, MessageKind::ready);
  for (std::uint64_t seq : {7, 8, 9}) {
    Message m;
    m.kind = MessageKind::measure;
    m.seq = seq;
    m.text = std::string(seq - 6, 'x');
    zero.send(1, encode(m));
  }
  Message stop;
  stop.kind = MessageKind::stop;
  zero.send(1, encode(stop));
  for (std::uint64_t seq : {7, 8, 9}) {
    const Message answer = next();
    EXPECT_EQ(answer.kind, MessageKind::answer);
    EXPECT_EQ(answer.seq, seq);
    ASSERT_TRUE(answer.ok);
    EXPECT_EQ(answer.measurement.cost, collage::Cost::value(static_cast<double>(seq - 6)));
  }
  EXPECT_EQ(next().kind, MessageKind::bye);
  server.join();
  EXPECT_EQ(batches, std::vector<std::size_t>{3});
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
