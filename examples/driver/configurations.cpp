#include "driver/configurations.hpp"

namespace tc {

Configuration single_backend_configuration(const std::string& backend) {
  Configuration c;
  c.name = backend;
  c.targets = {backend};
  if (backend != kFallbackBackend) c.targets.push_back(kFallbackBackend);
  c.algorithm = collage::SearchAlgorithm::greedy;
  return c;
}

std::vector<Configuration> standard_configurations(const BackendSet& backends) {
  std::vector<Configuration> out;
  for (const std::string& name : backends.names()) out.push_back(single_backend_configuration(name));
  out.push_back(Configuration{"greedy", backends.names(), collage::SearchAlgorithm::greedy});
  out.push_back(Configuration{"collage", backends.names(), collage::SearchAlgorithm::exact});
  return out;
}

collage::Result<collage::PartitionResult> partition_model(const collage::DataflowGraph<Graph>& dataflow,
                                                          const BackendSet& backends,
                                                          const Configuration& configuration,
                                                          collage::CostOracle<Graph>& oracle,
                                                          collage::PartitionerOptions options) {
  std::vector<collage::PartitionSpec<Graph>> specs;
  for (const std::string& target : configuration.targets) {
    const Backend* backend = backends.find(target);
    if (backend == nullptr) {
      return collage::Error{collage::ErrorCode::invalid_argument,
                            "configuration '" + configuration.name + "': no backend named '" + target + "'"};
    }
    specs.push_back(backend->spec());
  }
  options.algorithm = configuration.algorithm;
  return collage::partition(dataflow, specs, oracle, options);
}

}  // namespace tc
