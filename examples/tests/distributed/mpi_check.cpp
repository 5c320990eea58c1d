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

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "distributed/cluster.hpp"
#include "distributed/mpi_transport.hpp"
#include "distributed/serve.hpp"
#include "distributed/spread_oracle.hpp"
#include "driver/configurations.hpp"
#include "tests/support/toy_measurer.hpp"

namespace {

using namespace tc;

struct Answers {
  std::vector<std::string> costs;
  std::vector<std::string> errors;
  std::string parts;
};

Answers partition(collage::CostOracle<Graph>& oracle) {
  static const Graph model = testing::residual_block();
  static const collage::DataflowGraph<Graph> dataflow = *collage::DataflowGraph<Graph>::build(model);
  static const BackendSet backends = testing::toy_backends();
  Answers out;
  Configuration config{"collage", {"refusing", "general"}, collage::SearchAlgorithm::exact};
  auto r = partition_model(dataflow, backends, config, oracle);
  if (!r.ok()) {
    out.parts = "error: " + r.error().message;
    return out;
  }
  for (const collage::Candidate& c : r->candidates) out.costs.push_back(c.to_string() + " " + c.cost->to_string());
  for (const collage::Candidate& c : r->partitioning.parts) out.parts += c.to_string() + "; ";
  out.parts += "total " + r->partitioning.total.to_string();
  out.errors = r->oracle_errors;
  return out;
}

/// Whether `spread` is `alone` but for at most the one candidate rank `victim` was given up on.
bool same_but_one(const Answers& alone, const Answers& spread, int victim, std::string& why) {
  if (spread.costs.size() != alone.costs.size()) return why = "another number of candidates", false;
  std::size_t differ = 0;
  for (std::size_t k = 0; k < alone.costs.size(); ++k) differ += alone.costs[k] != spread.costs[k] ? 1 : 0;
  if (differ > (victim > 0 ? 1u : 0u)) return why = std::to_string(differ) + " answers differ", false;
  std::size_t named = 0;
  const std::string given_up = "rank " + std::to_string(victim) + " (" + host_name() + ") was given up while measuring it";
  for (const std::string& e : spread.errors) {
    if (victim > 0 && e.find(given_up) != std::string::npos) {
      ++named;
    } else if (std::find(alone.errors.begin(), alone.errors.end(), e) == alone.errors.end()) {
      return why = "an error one process did not have: " + e, false;
    }
  }
  if (named != (victim > 0 ? 1u : 0u)) return why = std::to_string(named) + " candidates name the rank given up", false;
  return true;
}

}  // namespace

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
  const Answers alone = partition(*local);
  Cluster cluster(transport, options);
  cluster.join("toy setup", "toy");
  SpreadOracle<Graph> oracle(testing::toy_oracle(), cluster);
  const Answers spread = partition(oracle);
  for (const std::string& line : spread.costs) std::printf("candidate %s\n", line.c_str());
  std::printf("partitioning %s\n", spread.parts.c_str());
  std::printf("ranks %s\n", cluster.describe().c_str());
  std::string why;
  const bool ok = same_but_one(alone, spread, mode == "same" ? 0 : victim, why);
  std::printf("verdict: %s\n", ok ? "ok" : ("wrong: " + why).c_str());
  std::fflush(stdout);
  return transport.end(ok ? 0 : 1, cluster.finish());
}
