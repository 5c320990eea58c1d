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

#include <signal.h>

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
  if (mode != "same" && mode != "dies" && mode != "stuck") {
    std::fprintf(stderr, "usage: tc-mpi-check same | dies RANK | stuck RANK\n");
    return 2;
  }
  auto mpi = MpiTransport::start(&argc, &argv);
  if (!mpi.ok()) {
    std::fprintf(stderr, "tc-mpi-check: %s\n", mpi.error().message.c_str());
    return 1;
  }
  MpiTransport& transport = **mpi;
  ClusterOptions options;
  options.measure_on_rank0 = false;
  options.silence_timeout_seconds = 3;
  options.candidate_timeout_seconds = mode == "stuck" ? 1 : 60;
  options.notify = [](const std::string& line) { std::printf("note: %s\n", line.c_str()); };

  if (transport.rank() != 0) {
    testing::Faults faults;
    if (transport.rank() == victim && mode == "dies") faults.die_on = 2;
    if (transport.rank() == victim && mode == "stuck") faults.stall_seconds = 30;
    const ServeEnd end = serve(
        transport,
        [&](std::string_view) -> collage::Result<std::unique_ptr<Measurer>> {
          return std::unique_ptr<Measurer>(std::make_unique<testing::ToyMeasurer>(faults, [] { ::raise(SIGKILL); }));
        },
        options.silence_timeout_seconds);
    return transport.end(end == ServeEnd::stopped ? 0 : 1, end == ServeEnd::stopped);
  }

  auto local = testing::toy_oracle();
  const testing::ToyAnswers alone = testing::toy_partition(*local);
  Cluster cluster(transport, options);
  cluster.join("toy setup", "toy");
  SpreadOracle<Graph> oracle(testing::toy_oracle(), cluster);
  const testing::ToyAnswers spread = testing::toy_partition(oracle);
  for (const std::string& line : spread.costs) std::printf("candidate %s\n", line.c_str());
  std::printf("partitioning %s\n", spread.parts.c_str());
  std::printf("ranks %s\n", cluster.describe().c_str());
  const std::string why =
      mode == "same"   ? testing::differences(alone, spread, 0)
      : mode == "dies" ? testing::differences(alone, spread, victim, "nothing heard from it for")
                       : testing::differences(alone, spread, victim, "it spent over 1 s on one candidate");
  const bool ok = why.empty();
  std::printf("verdict: %s\n", ok ? "ok" : ("wrong: " + why).c_str());
  std::fflush(stdout);
  return transport.end(ok ? 0 : 1, cluster.finish());
}
