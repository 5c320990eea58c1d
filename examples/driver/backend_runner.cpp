#include "driver/backend_runner.hpp"

#include "costing/analytic_cost.hpp"
#include "executor/executable.hpp"

namespace tc {

collage::Result<std::vector<Tensor>> run_configuration(const Graph& graph, const std::vector<Tensor>& inputs,
                                                       const Configuration& configuration, const BackendSet& backends,
                                                       const DeviceSet& devices) {
  auto dataflow = collage::DataflowGraph<Graph>::build(graph);
  if (!dataflow.ok()) return dataflow.error();
  auto oracle = make_analytic_oracle(backends, devices, default_analytic_rates());
  auto partitioned = partition_model(*dataflow, backends, configuration, *oracle);
  if (!partitioned.ok()) return partitioned.error();
  auto exe = Executable::compile(*dataflow, partitioned->partitioning, backends, devices);
  if (!exe.ok()) return exe.error();
  return exe->run(inputs);
}

}  // namespace tc
