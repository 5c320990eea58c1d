// tc-mpi-check: distributed measurement over real MPI ranks, with the toy oracle so that answers
// can be compared exactly; run by mpi_check.sh under mpirun. Rank 0 partitions the residual block
// in one process, then spread over the ranks (which measure everything: rank 0 does not), prints
// every candidate's answer and the partitioning, and a verdict line.
//
//   mpirun -np N tc-mpi-check same       every answer and the partitioning as in one process
//   mpirun --enable-recovery -np N tc-mpi-check dies R
//                                        rank R is killed (SIGKILL) during its second candidate:
//                                        that candidate is Invalid naming rank R, the rest the same
//   mpirun -np N tc-mpi-check stuck R    rank R sleeps in its first candidate beyond the 1 s
//                                        candidate timeout: likewise, and the job still ends
//   mpirun -np N tc-mpi-check pace MS COUNT
//                                        throughput: COUNT candidates that take MS milliseconds
//                                        each (sleeping, as a rank waits for its own device), on
//                                        every rank, rank 0 included; prints candidates per second

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "distributed/cluster.hpp"
#include "distributed/mpi_transport.hpp"
#include "distributed/serve.hpp"
#include "distributed/spread_oracle.hpp"
#include "tests/support/toy_measurer.hpp"

using namespace tc;

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const int victim = argc > 2 ? std::atoi(argv[2]) : 0;
  if (mode != "same" && mode != "dies" && mode != "stuck" && mode != "pace") {
    std::fprintf(stderr, "usage: tc-mpi-check same | dies RANK | stuck RANK | pace MS COUNT\n");
    return 2;
  }
  const double pace_seconds = mode == "pace" && argc > 2 ? std::atof(argv[2]) / 1000 : 0;
  const std::size_t count = mode == "pace" && argc > 3 ? static_cast<std::size_t>(std::atol(argv[3])) : 0;
  auto mpi = MpiTransport::start(&argc, &argv);
  if (!mpi.ok()) {
    std::fprintf(stderr, "tc-mpi-check: %s\n", mpi.error().message.c_str());
    return 1;
  }
  MpiTransport& transport = **mpi;
  ClusterOptions options;
  options.measure_on_rank0 = mode == "pace";
  options.silence_timeout_seconds = 3;
  options.candidate_timeout_seconds = mode == "stuck" ? 1 : 60;
  options.notify = [](const std::string& line) { std::printf("note: %s\n", line.c_str()); };

  if (transport.rank() != 0) {
    tc::testing::Faults faults;
    if (transport.rank() == victim && mode == "dies") faults.die_on = 2;
    if (transport.rank() == victim && mode == "stuck") faults.stall_seconds = 30;
    faults.pace_seconds = pace_seconds;
    const ServeEnd end = serve(
        transport,
        [&](std::string_view) -> collage::Result<std::unique_ptr<Measurer>> {
          return std::unique_ptr<Measurer>(std::make_unique<tc::testing::ToyMeasurer>(faults, [] { ::raise(SIGKILL); }));
        },
        options.silence_timeout_seconds);
    return transport.end(end == ServeEnd::stopped ? 0 : 1, end == ServeEnd::stopped);
  }

  Cluster cluster(transport, options);
  cluster.join("toy setup", "toy");
  if (mode == "pace") {
    const Graph model = tc::testing::residual_block();
    const auto dataflow = *collage::DataflowGraph<Graph>::build(model);
    const std::vector<collage::Candidate> all = tc::testing::toy_backends().find("general")->spec().all_candidates(dataflow);
    std::vector<const collage::Candidate*> batch;
    while (batch.size() < count) batch.push_back(&all[batch.size() % all.size()]);
    SpreadOracle<Graph> oracle(tc::testing::toy_oracle(pace_seconds), cluster);
    const auto started = std::chrono::steady_clock::now();
    const auto answers = oracle.measure_batch(dataflow, batch);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const auto failed = std::count_if(answers.begin(), answers.end(), [](const auto& a) { return !a.ok(); });
    std::printf("pace: %d ranks, %zu candidates of %g ms in %.3f s: %.1f candidates/s (%.2f of %d ranks' ideal); %ld "
                "failed\n",
                transport.size(), batch.size(), pace_seconds * 1000, seconds, static_cast<double>(batch.size()) / seconds,
                pace_seconds * static_cast<double>(batch.size()) / seconds / transport.size(), transport.size(),
                static_cast<long>(failed));
    std::printf("ranks %s\n", cluster.describe().c_str());
    std::fflush(stdout);
    return transport.end(0, cluster.finish());
  }
  auto local = tc::testing::toy_oracle();
  const tc::testing::ToyAnswers alone = tc::testing::toy_partition(*local);
  SpreadOracle<Graph> oracle(tc::testing::toy_oracle(), cluster);
  const tc::testing::ToyAnswers spread = tc::testing::toy_partition(oracle);
  for (const std::string& line : spread.costs) std::printf("candidate %s\n", line.c_str());
  std::printf("partitioning %s\n", spread.parts.c_str());
  std::printf("ranks %s\n", cluster.describe().c_str());
  const std::string why =
      mode == "same"   ? tc::testing::differences(alone, spread, 0)
      : mode == "dies" ? tc::testing::differences(alone, spread, victim, "nothing heard from it for")
                       : tc::testing::differences(alone, spread, victim, "it spent over 1 s on one candidate");
  const bool ok = why.empty();
  std::printf("verdict: %s\n", ok ? "ok" : ("wrong: " + why).c_str());
  std::fflush(stdout);
  return transport.end(ok ? 0 : 1, cluster.finish());
}
